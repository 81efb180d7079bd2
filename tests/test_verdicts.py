"""Issue 9, part 1: a blank's point requires that its fill works where it is used, and the grade
says whether the student's file, simply run, reaches its end.

Each reproduction puts one fill into an otherwise correct copy of the real course, grades it for
real (sandbox, hidden graders), and also runs the file with `python` as a student would: the grade
must lose exactly the blank that caused the trouble, say why in French, and report the same stop
(line and exception) as the plain run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.grade.engine import Grader
from trous.core.grades import FAILED, PASSED
from trous.outputs.reports import SCHEMA_FILE
from trous.sandbox.pool import RunnerPool

ROOT = Path(__file__).resolve().parent.parent
COURSE = Course.load(ROOT)
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
# (exercise, blank, fill, what the student's own file does when run: (exception type, line content))
REPRODUCTIONS = {
    "06_liste_de_listes": ("06_moyenne", "triangle",
                           "[[1.0 if j <= i else 0.0 for j in range(T)] for i in range(T)]",
                           ("AttributeError", "triangle.sum")),
    "07_scores_en_liste": ("07_requete_cle", "scores", "[float(kk @ q_guang) for kk in k]",
                           ("AttributeError", "s.max()")),
    "08_masque_en_liste": ("08_masque_causal", "masque", "[[j <= i for j in range(T)] for i in range(T)]", None),
}


def copy_with(exercise_id: str, fills: dict[str, str]) -> str:
    exercise = COURSE.exercise(exercise_id)
    template = exercise.template_path.read_text(encoding="utf-8")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    return blanks_mod.splice(solution, blanks_mod.align(template, solution),
                             {exercise.blank_index(b): f for b, f in fills.items()})


def run_as_a_student(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`python exercises/NN.py`, from a folder like the student's."""
    (tmp_path / "exercises").mkdir(exist_ok=True)
    path = tmp_path / "exercises" / "copie.py"
    path.write_text(source, encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "MPLBACKEND": "Agg"})


@pytest.fixture(scope="module")
def grader():
    with RunnerPool(2, "auto") as pool:
        yield Grader(COURSE, pool, only=sorted({r[0] for r in REPRODUCTIONS.values()} | {"05_qkv", "09_racine_d"}))


@pytest.mark.parametrize("case", REPRODUCTIONS, ids=list(REPRODUCTIONS))
def test_a_fill_that_breaks_what_follows_loses_exactly_its_blank(grader, case, tmp_path):
    exercise_id, blank_id, fill, stops = REPRODUCTIONS[case]
    source = copy_with(exercise_id, {blank_id: fill})
    grade = grader.grade("eleve", {exercise_id: source.encode()})
    jsonschema.validate(grade.to_json(), SCHEMA)
    result = grade.exercise(exercise_id)
    by_blank = {b.id: b for b in result.blanks}
    assert by_blank[blank_id].status == FAILED and by_blank[blank_id].score == 0.0
    assert {b.id for b in result.blanks if b.status != PASSED} == {blank_id}, "only the blank that caused it"
    message = by_blank[blank_id].message
    assert "tableau NumPy" in message and "liste" in message, message  # the kind, in French

    plain = run_as_a_student(source, tmp_path)
    if stops is None:
        assert plain.returncode == 0, plain.stderr
        assert result.run == {"ok": True}
        return
    kind, where = stops
    assert plain.returncode != 0 and kind in plain.stderr, plain.stderr
    # The grade reports the same stop as the plain run: the same line, the same exception.
    line = int(plain.stderr.split(f'copie.py", line ')[-1].split(",")[0])
    assert result.run["ok"] is False
    assert (result.run["line"], result.run["error"].split(":")[0]) == (line, kind), result.run
    assert where in result.run["text"]
    # The blank's message names the line of the student's file where what follows broke.
    assert "la suite du programme s'arrête" in message
    following = int(re.search(r"la suite du programme s'arrête ligne (\d+)", message).group(1))
    assert source.split("\n")[following - 1].strip() in message


def test_the_student_file_that_uses_lists_throughout_runs_and_is_still_told(grader, tmp_path):
    """08 as the issue found it: the mask as a list, and the student's own next line uses `~masque`.
    The file dies; the mask loses its point (a list where the course builds an array); the next
    blank, right in itself, keeps its point; the grade says the file stops, where, and why."""
    source = copy_with("08_masque_causal", {
        "masque": "[[j <= i for j in range(T)] for i in range(T)]",
        "scores_masques": "np.where(~np.asarray(masque), -np.inf, scores)"})
    source = source.replace("np.where(~np.asarray(masque), -np.inf, scores)", "np.where(~masque, -np.inf, scores)")
    plain = run_as_a_student(source, tmp_path)
    assert plain.returncode != 0 and "TypeError" in plain.stderr
    grade = grader.grade("eleve", {"08_masque_causal": source.encode()})
    result = grade.exercise("08_masque_causal")
    statuses = {b.id: b.status for b in result.blanks}
    assert statuses["masque"] == FAILED
    assert result.run["ok"] is False and result.run["error"].startswith("TypeError")
    assert "~masque" in result.run["text"]


def test_the_reference_itself_and_a_number_of_another_kind_that_nothing_minds(grader):
    """The solution keeps every point and runs to its end; a right value of another number kind
    that what follows does not mind (24.0 where the course counts 24 weights) costs nothing."""
    solutions = {e: COURSE.exercise(e).solution_path.read_bytes() for e in grader.checks}
    grade = grader.grade("reference", solutions)
    assert grade.score == grade.max_score
    assert all(e.run == {"ok": True} for e in grade.exercises)
    source = copy_with("05_qkv", {"nb_poids": "3.0 * len(W_q) * len(W_q[0])"})
    result = grader.grade("flottant", {"05_qkv": source.encode()}).exercise("05_qkv")
    assert result.score == result.max_score, [(b.id, b.message) for b in result.blanks]


def test_a_stop_later_in_the_same_loop_costs_the_blank(grader):
    """09: the blank's own values are complete, then the next line of the same loop breaks (on the
    last turn). The program does not reach its end: the blank loses its point, and the message names
    the line of the loop where it stopped."""
    fill = "(scores.std(), d == D[-1] and globals().__setitem__('poids_max_moyen', None))[0]"
    source = copy_with("09_racine_d", {"ecart_type": fill})
    grade = grader.grade("boucle", {"09_racine_d": source.encode()})
    blank = next(b for b in grade.exercise("09_racine_d").blanks if b.id == "ecart_type")
    assert blank.status == FAILED, blank.message
    assert "la suite du programme s'arrête" in blank.message and "TypeError" in blank.message, blank.message
    assert "sans_echelle.append" in blank.message
    assert grade.exercise("09_racine_d").run["ok"] is False
