"""The self-check blames the right blank (issue 9, part 2): a blank whose checks go through a wrong
or unfilled blank waits for it instead of being reported wrong, and `pytest exercises/`, `trous
check`, `trous hint` and `trous watch` point at the blank that is actually wrong.

Real subprocesses on a student's copy; each case is the reference solution with one fill changed.
The assertions hold whether the public checks catch the wrong fill themselves (it is then « faux »)
or only through the blanks that use it (it is then « à revoir »).
"""

from __future__ import annotations

import os
import select
import subprocess
import time

from conftest import BIN, run_pytest, run_trous
from student_support import internal_traceback, solution_with, statuses

NOT_RIGHT = {"failed", "suspect"}


def test_09_a_wrong_max_moyen_is_not_right_and_echelle_waits_for_it(course, student_copy):
    exercise = course.exercise("09_racine_d")
    solution_with(student_copy, exercise, ("softmax(scores).max(axis=-1).mean()", "softmax(scores).max(axis=0).mean()"))
    out = run_pytest(student_copy, "exercises/09_racine_d.py", "-v").stdout
    found = statuses(out, exercise)
    assert found["max_moyen"] in NOT_RIGHT
    assert found["echelle"] == "depends" and "« echelle » : dépend de « max_moyen »" in out
    assert found["produits"] == "passed" and found["ecart_type"] == "passed"
    hint = run_trous(student_copy, "hint", "09_racine_d")
    assert "trou 1 « max_moyen »" in hint.stdout and exercise.blank("max_moyen").hints[0] in hint.stdout
    check = run_trous(student_copy, "check", "09_racine_d")
    assert check.returncode == 1 and "d'abord : trou 1 « max_moyen »" in check.stdout
    assert not internal_traceback(out + check.stdout)


def test_13_a_wrong_normalisation_fails_alone(course, student_copy):
    exercise = course.exercise("13_a_la_main")
    solution_with(student_copy, exercise, ("[w / sum(weights) for w in weights]", "[w / len(weights) for w in weights]"))
    out = run_pytest(student_copy, "exercises/13_a_la_main.py", "-v").stdout
    found = statuses(out, exercise)
    assert found["normalisation"] == "failed"
    assert found["scores"] == "passed"
    # Their checks go through softmax's normalisation: right or not, they are not « juste » yet
    # (sortie's own melange(...) check passes, but its check of `output` could not tell).
    for blank in ("shift", "x10", "valeurs", "sortie"):
        assert found[blank] == "depends", (blank, found)
    assert "« shift » : dépend de « normalisation »" in out
    hint = run_trous(student_copy, "hint", "13_a_la_main")
    assert "« normalisation »" in hint.stdout and exercise.blank("normalisation").hints[0] in hint.stdout
    assert "« shift »" not in hint.stdout


def test_13_a_wrong_argument_of_softmax_is_blamed_not_softmax(course, student_copy):
    """`weights` shows softmax right on the course's scores: when `softmax(___)` is wrong, its fill is."""
    exercise = course.exercise("13_a_la_main")
    solution_with(student_copy, exercise, ("softmax([10 * s for s in scores])", "softmax(scores)"))
    out = run_pytest(student_copy, "exercises/13_a_la_main.py", "-v").stdout
    found = statuses(out, exercise)
    assert found["x10"] == "failed"
    assert {found[b] for b in ("scores", "shift", "normalisation", "sortie", "valeurs")} == {"passed"}


def test_05_a_wrong_division_does_not_fail_sortie(course, student_copy):
    exercise = course.exercise("05_qkv")
    solution_with(student_copy, exercise, ("/ math.sqrt(d) for k in K]", "/ math.sqrt(len(x[0])) for k in K]"))
    out = run_pytest(student_copy, "exercises/05_qkv.py", "-v").stdout
    found = statuses(out, exercise)
    assert found == {"couche": "passed", "nb_poids": "passed", "racine": "failed", "sortie": "depends"}
    assert "« sortie » : dépend de « racine »" in out
    assert "corrige d'abord « racine »" in out


def test_a_program_that_stops_on_a_blank_makes_the_later_ones_wait(course, student_copy):
    exercise = course.exercise("01_toux")
    text = solution_with(student_copy, exercise, ("sum(a * b for a, b in zip(t, toux))", "sum(t * toux)"))
    out = run_pytest(student_copy, "exercises/01_toux.py", "-v").stdout
    assert statuses(out, exercise) == {"somme_exp": "passed", "scores": "failed", "nouveau": "depends"}
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "sum(t * toux)" in ln)
    assert out.count("TypeError: can't multiply sequence by non-int of type 'list'") == 1  # said once
    assert f"non vérifié : le programme s'arrête ligne {line}, sur l'erreur ci-dessus" in out


def test_watch_points_at_the_blank_that_is_actually_wrong(course, student_copy):
    exercise = course.exercise("09_racine_d")
    solution_with(student_copy, exercise, ("softmax(scores).max(axis=-1).mean()", "softmax(scores).max(axis=0).mean()"))
    proc = subprocess.Popen([str(BIN / "trous"), "watch", "09_racine_d", "--polling", "--interval", "0.2"],
                            cwd=student_copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen, deadline = "", time.time() + 60
    try:
        while time.time() < deadline and "j'attends" not in seen:
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if ready:
                seen += os.read(proc.stdout.fileno(), 65536).decode("utf-8", "replace")
    finally:
        proc.kill()
        proc.wait()
    assert "d'abord : trou 1 « max_moyen »" in seen, seen
    assert "« echelle » : dépend de « max_moyen »" in seen
