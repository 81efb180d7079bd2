"""The data flow between blanks, computed from the exercise file itself (core/flow.py)."""

from __future__ import annotations

import pytest

from conftest import ROOT
from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.core import flow

SOFTMAX = '''\
import math


def softmax(s):
    m = ___
    e = [math.exp(v - m) for v in s]
    return [___ for v in e]


x = [1, 2]
scores = ___
poids = softmax(scores)
doubles = [2 * p for p in poids]
seul = x[0] + 1

if __name__ == "__main__":
    scores = ___
'''


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_inputs_follow_lines_and_functions():
    f = flow.analyse(SOFTMAX)
    shift, normalise, scores, main = f.blanks
    assert shift.inputs == set() and shift.scope == "softmax"
    assert normalise.inputs == {0}  # e reads m, which the first blank defines
    assert scores.inputs == set() and scores.scope == ""
    assert normalise.reads == {"e"} and shift.statement == (line_of(SOFTMAX, "m = ___"),) * 2


def test_an_expression_depends_on_what_reaches_it():
    f = flow.analyse(SOFTMAX)
    assert f.depends("doubles") == {0, 1, 2}  # doubles ← poids ← softmax (two blanks) and scores
    assert f.depends("softmax([1, 2])") == {0, 1}
    assert f.depends("poids[0] + seul") == {0, 1, 2}
    assert f.depends("seul") == set() and f.depends("x") == set()
    assert f.depends("[v for v in scores]") == {2}
    # setup code runs first, in the same namespace: its helpers read the program's names
    assert f.depends("_aide()", setup="def _aide():\n    return sum(scores)") == {2}
    assert f.depends("not python (") == set()


def test_values_the_program_computed_versus_calls_made_by_the_check():
    f = flow.analyse(SOFTMAX)
    assert f.value_depends("doubles") == {0, 1, 2}  # poids = softmax(scores), computed by the program
    assert f.value_depends("softmax([1, 2])") == set()  # softmax called by the check itself
    assert f.value_depends("softmax(scores)") == {2} and f.depends("softmax(scores)") == {0, 1, 2}
    assert f.value_depends("softmax") == {0, 1}  # the function as a value, not called


def test_the_main_block_is_not_part_of_the_checked_program():
    f = flow.analyse(SOFTMAX)
    assert f.depends("scores") == {2}  # the reassignment under __main__ never runs in a check


def test_assigned_and_changed_top_level_names():
    text = ('D = [1, 2]\nacc, total = [], 0\n\n\ndef f(v):\n    return ___\n\n\n'
            'for d in D:\n    v = ___\n    acc.append(f(v + ___))\n    total += v * ___\nq, k = ___\ntable = {}\ntable["a"] = ___\n')
    f = flow.analyse(text)
    assert [b.assigns for b in f.blanks] == [{"f"}, {"v"}, set(), {"total"}, {"q", "k"}, set()]
    assert [b.changes for b in f.blanks] == [set(), set(), {"acc"}, set(), set(), {"table"}]
    appended = f.blanks[2]
    assert appended.inputs == {0, 1}  # calls f (its blank), reads v from the same turn and acc from the previous
    assert f.depends("acc") == {0, 1, 2}
    assert f.depends("total") == {1, 3}  # the loop's second turn sees v


def test_order_a_function_that_receives_a_blank_processes_it():
    f = flow.analyse(SOFTMAX)
    assert f.feeds(2, 0) and f.feeds(2, 1)  # scores is softmax's argument
    assert f.feeds(0, 1) and not f.feeds(1, 0)  # within softmax: m, then the normalisation
    assert f.last_processors({0, 1, 2}) == [1]
    assert f.last_processors({0, 2}) == [0]


def test_a_line_only_blames_blanks_that_reach_it():
    f = flow.analyse(SOFTMAX)
    exp_line = line_of(SOFTMAX, "e = [math.exp")
    assert f.cannot_cause(exp_line) == {1}  # the normalisation runs after that line
    assert f.cannot_cause(line_of(SOFTMAX, "m = ___")) == {1}
    assert f.cannot_cause(line_of(SOFTMAX, "poids = softmax")) == set()
    assert f.cannot_cause(line_of(SOFTMAX, "x = [1, 2]")) == {2}
    assert f.blanks[3].scope == flow.MAIN and f.blanks[3].inputs == set()
    assert f.cannot_cause(999) == set()


def test_fills_read_names_too():
    template = "a = 1\nb = ___\nc = ___\n"
    copy = "a = 1\nb = a * 2\nc = b + a\n"
    fills = blanks_mod.align(template, copy)
    f = flow.analyse(copy, [(x.begin, x.stop) for x in fills])
    assert f.blanks[1].inputs == {0} and f.blanks[1].reads == {"a", "b"}
    assert flow.analyse(template).blanks[1].inputs == set()


def test_columns_after_accented_text_find_the_right_blank():
    # ast counts UTF-8 bytes, the spans count characters: « é » is two bytes, one character.
    text = 'mot = "été"; n = len(mot) + ___\nautre = n * ___\n'
    f = flow.analyse(text)
    assert f.blanks[0].reads == {"len", "mot"} and f.blanks[0].assigns == {"n"}
    assert f.blanks[1].inputs == {0}


def test_recursion_and_unreadable_files_do_not_break_it():
    f = flow.analyse("def f(n):\n    return ___ if n else f(n - 1)\n\ny = f(3)\n")
    assert f.depends("y") == {0}
    broken = flow.analyse("x = (___\n")
    assert not broken.known and broken.depends("x") == set() and broken.cannot_cause(1) == set()


# -- the course's own exercises ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def course() -> Course:
    return Course.load(ROOT)


def exercise_flow(course, exercise_id, solved=False):
    exercise = course.exercise(exercise_id)
    template = exercise.path.read_text(encoding="utf-8")
    if not solved:
        return exercise, flow.analyse(template)
    solution = exercise.solution_path.read_text(encoding="utf-8")
    fills = blanks_mod.align(template, solution)
    return exercise, flow.analyse(solution, [(x.begin, x.stop) for x in fills])


def ids(exercise, indexes):
    return {exercise.blanks[i].id for i in indexes}


def test_course_09_scaling_goes_through_poids_max_moyen(course):
    exercise, f = exercise_flow(course, "09_racine_d", solved=True)
    i = {b.id: n for n, b in enumerate(exercise.blanks)}
    assert ids(exercise, f.blanks[i["echelle"]].inputs) == {"max_moyen", "produits"}
    assert f.feeds(i["echelle"], i["max_moyen"])  # the scaled scores are poids_max_moyen's argument
    assert ids(exercise, f.depends("poids_max_moyen(np.array([[0.0, 0.0], [0.0, 100.0]]))")) == {"max_moyen"}
    assert ids(exercise, f.depends("avec_echelle")) == {"max_moyen", "produits", "echelle"}
    assert f.blanks[i["ecart_type"]].changes == {"ecarts_types"}


def test_course_13_a_check_of_the_shift_goes_through_the_normalisation(course):
    exercise, f = exercise_flow(course, "13_a_la_main")
    i = {b.id: n for n, b in enumerate(exercise.blanks)}
    assert ids(exercise, f.depends("softmax([1000.0, 999.0, 0.0])")) == {"shift", "normalisation"}
    assert f.last_processors([i["shift"], i["normalisation"]]) == [i["normalisation"]]
    assert ids(exercise, f.depends("melange([0.5, 0.25, 0.25], values)")) == {"sortie"}


def test_course_05_sortie_uses_the_division(course):
    exercise, f = exercise_flow(course, "05_qkv")
    i = {b.id: n for n, b in enumerate(exercise.blanks)}
    assert ids(exercise, f.depends("sortie")) == {"couche", "racine", "sortie"}
    assert ids(exercise, f.depends("Q")) == {"couche"}
    assert f.blanks[i["racine"]].assigns == {"scores"}


CALLED = '''\
def attention(X, i):
    return X[i][0] * 2


xp = ___
xp2 = ___
sortie = attention(xp, 0)
autre = attention(xp2, 0)
'''


def test_a_stop_inside_a_function_is_reached_by_what_its_callers_pass():
    f = flow.analyse(CALLED)
    assert f.could_stop(line_of(CALLED, "return X[i][0]")) == {0, 1}
    assert f.could_stop(line_of(CALLED, "sortie = attention")) == {0}
    assert f.could_stop(line_of(CALLED, "xp2 = ___")) == {1}
    assert f.could_stop(999) == set()
