"""Issue 12 with issue 9: a public check written as a test function (`@pytest.mark.trou` in
exercises/test_*.py) counts in `trous check` as it counts in `pytest exercises/` and in the grade.

Here only the test function looks beyond the course's own sentence: a `nouveau` hard-coded to the
course's values passes every declaration, and must still be wrong in the self-check."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from grading_support import mini_course
from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.check.selfcheck import FAILED, PASSED
from trous.check.checker import Checker

PUBLIC = '''
import pytest

from trous.spec import blank, expect

somme_exp = blank("somme_exp", expect("softmax([1, 1, 2])", [0.21, 0.21, 0.58], decimals=2))
scores = blank("scores", expect("scores", [1, 1, 2]))
nouveau = blank("nouveau", expect("nouveau", [0.79, 0.79], decimals=2))


@pytest.mark.trou("nouveau")
def test_nouveau_sur_quatre_tokens(eleve):
    """le nouveau vecteur avec quatre tokens et des poids donnés"""
    # By hand: 0.4 × [1, 2] + 0.3 × [0, 1] + 0.2 × [2, 1] + 0.1 × [1, 1] = [0.9, 1.4].
    obtenu = eleve("nouveau", x=[[1, 2], [0, 1], [2, 1], [1, 1]], poids=[0.4, 0.3, 0.2, 0.1])
    assert list(obtenu) == pytest.approx([0.9, 1.4])
'''


@pytest.fixture
def course(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    (root / "exercises" / "test_01_toux.py").write_text(PUBLIC, encoding="utf-8")
    return Course.load(root)


def student_file(course: Course, fill: str | None) -> None:
    """The student's exercises/01_toux.py: the solution, with `nouveau` filled by `fill` if given."""
    exercise = course.exercise("01_toux")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    if fill is not None:
        fills = blanks_mod.align(exercise.template_path.read_text(encoding="utf-8"), solution)
        solution = blanks_mod.splice(solution, fills, {exercise.blank_index("nouveau"): fill})
    exercise.path.write_text(solution, encoding="utf-8")


def statuses(result) -> dict[str, str]:
    return {b.spec.id: b.status for b in result.blanks}


def test_a_fill_only_the_test_function_refuses_is_wrong_in_trous_check(course):
    student_file(course, "0.79")
    with Checker() as checker:
        result = checker.check(course.exercise("01_toux"))
    assert statuses(result) == {"somme_exp": PASSED, "scores": PASSED, "nouveau": FAILED}
    nouveau = next(b for b in result.blanks if b.spec.id == "nouveau")
    assert nouveau.problems == ["vérification « le nouveau vecteur avec quatre tokens et des poids donnés » : "
                                "ne passe pas"]
    assert not result.passed and result.first_to_fix is nouveau


def test_the_solution_passes_its_test_functions(course):
    student_file(course, None)
    with Checker() as checker:
        result = checker.check(course.exercise("01_toux"))
    assert result.passed, [b.problems for b in result.blanks]


def test_trous_check_says_it_on_the_command_line(course):
    student_file(course, "0.79")
    env = {**os.environ, "TROUS_SANDBOX": "limites"}
    done = subprocess.run([sys.executable, "-m", "trous", "check", "01_toux"], cwd=course.root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "le nouveau vecteur avec quatre tokens et des poids donnés" in done.stdout


def test_a_bound_of_the_sandbox_reached_is_not_the_refusal_a_public_test_expects(course):
    (course.exercise("01_toux").checks_path).write_text(PUBLIC.replace("from trous.spec import", "from trous.spec import StudentError,") + '''

@pytest.mark.trou("nouveau")
def test_des_poids_trop_courts(eleve):
    """des poids moins nombreux que les vecteurs sont refusés"""
    with pytest.raises(StudentError):
        eleve("nouveau", poids=[0.5])
''', encoding="utf-8")
    exercise = Course.load(course.root).exercise("01_toux")
    template = exercise.path.read_text(encoding="utf-8")  # the student's file, before she fills it
    student_file(course, "sum(poids[i] * x[i][j] for i in range(len(x))) if len(poids) == len(x) else 1 / 0")
    with Checker() as checker:
        assert checker.check(exercise).passed  # ZeroDivisionError: a refusal
    # MemoryError at once (far past the memory bound): the same rule as the grade's, no refusal.
    exercise.path.write_text(template, encoding="utf-8")
    student_file(course, "sum(poids[i] * x[i][j] for i in range(len(x))) if len(poids) == len(x) "
                         "else bytearray(10**13)")
    with Checker() as checker:
        result = checker.check(exercise)
    assert statuses(result)["nouveau"] == FAILED
    [problem] = next(b for b in result.blanks if b.spec.id == "nouveau").problems
    assert problem.startswith("vérification « des poids moins nombreux que les vecteurs sont refusés » : "
                              "mémoire épuisée (MemoryError)"), problem


def test_a_broken_public_test_is_the_courses_fault_not_the_students(course):
    (course.exercise("01_toux").checks_path).write_text(PUBLIC + '''

@pytest.mark.trou("scores")
def test_casse(eleve):
    """une vérification cassée"""
    eleve("scores")
    nom_qui_n_existe_pas
''', encoding="utf-8")
    student_file(course, None)
    with Checker() as checker:
        result = checker.check(Course.load(course.root).exercise("01_toux"))
    assert statuses(result)["scores"] == PASSED
    assert any("erreur du cours, pas la tienne" in note and "une vérification cassée" in note
               for note in result.notes), result.notes


def test_pytest_exercises_counts_the_test_function_in_its_blank(course):
    """`pytest exercises/` does not mark « nouveau » ✔ beside a failing test of its own: the test is
    part of the blank's verdict, as in `trous check` and in the grade."""
    student_file(course, "0.79")
    env = {**os.environ, "TROUS_SANDBOX": "limites", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "exercises/", "-v"],
                          cwd=course.root, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "exercises/01_toux.py::nouveau FAUX" in out and "Bravo" not in out
    assert "vérification « le nouveau vecteur avec quatre tokens et des poids donnés » : ne passe pas" in out
    assert "test_nouveau_sur_quatre_tokens" not in out  # not an item of its own beside the blank
    student_file(course, None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "exercises/"],
                          cwd=course.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Bravo : tout est juste." in done.stdout, done.stdout


def test_the_notebook_check_cell_counts_the_test_function_too(course, tmp_path):
    """The check cell gives the verdicts of `pytest exercises/` (its module's doc): « nouveau », which
    only the public test function refuses, is wrong in the notebook too, not « juste »."""
    import nbformat

    from conftest import ROOT, run_trous
    from trous.publish.notebooks import checkcell

    shutil.copytree(ROOT / "explorateur", course.root / "explorateur")  # course.yaml's explorer.files
    edition = tmp_path / "carnets"
    done = run_trous(course.root, "notebooks", str(edition))
    assert done.returncode == 0, done.stdout + done.stderr
    notebook_path = edition / "exercises" / "01_toux.ipynb"
    notebook = nbformat.read(notebook_path, as_version=4)
    for old, new in (("total = ___", "total = sum(e)"),
                     ("[___ for t in x]", "[sum(a * b for a, b in zip(t, toux)) for t in x]"),
                     ("[___ for j in range(2)]", "[0.79 for j in range(2)]")):
        cell = next(c for c in notebook.cells if c.cell_type == "code" and old in c.source)
        cell.source = cell.source.replace(old, new, 1)
    nbformat.write(notebook, notebook_path)
    report = checkcell.check("01_toux", str(notebook_path), course=Course.load(edition))
    assert statuses(report.result) == {"somme_exp": PASSED, "scores": PASSED, "nouveau": FAILED}
