"""nbgrader's gradebook written by a process of its own while `trous grade` grades (writing.py).

Real nbgrader, real gradebook, the real `trous` command: the writing process started with the command
writes the same points as the grader's own process does when that process fails, it never touches
the gradebook of a run that stops before grading, and it never outlives the command.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")
pytest.importorskip("jupytext")

import nbformat  # noqa: E402
from conftest import run_trous  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, env, nbgrader  # noqa: E402

from trous.publish.nbgrader.build import build  # noqa: E402

EXERCISE, ASSIGNMENT = "01_toux", "partie5"
# Blank by blank: the solution's fill, a wrong one, or left `___`.
CHOICES = {"alice": {0: SOLUTION, 1: SOLUTION, 2: SOLUTION}, "bob": {0: SOLUTION, 1: "0", 2: None},
           "chloe": {0: "0", 1: SOLUTION, 2: SOLUTION}, "dan": {}}


@pytest.fixture(scope="module")
def pristine(course, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ecriture") / "cours"
    build(course, root, exchange=str(root.parent / "echange"), only=[EXERCISE])
    result = nbgrader(root, "generate_assignment", ASSIGNMENT)
    assert result.returncode == 0, result.stdout + result.stderr
    author = Author(nbformat.read(root / "source" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4),
                    nbformat.read(root / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4))
    for n, (student, choices) in enumerate(CHOICES.items()):
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(f"2026-11-0{n + 1} 10:00:00.000000 UTC")
        nbformat.write(author.notebook(choices), folder / f"{EXERCISE}.ipynb")
    return root


@pytest.fixture
def copy_of(pristine, tmp_path):
    def make(name: str) -> Path:
        root = tmp_path / name / "cours"
        shutil.copytree(pristine, root)
        return root
    return make


def _writers(root: Path) -> list[str]:
    """Writing processes of this course still running."""
    found = subprocess.run(["pgrep", "-af", f"trous.outputs.writing {root}"], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def _grade(root: Path, extra_env: dict[str, str] | None = None, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "trous"), "grade", ".", *args], cwd=root,
                          env={**env(), **(extra_env or {})}, capture_output=True, text=True, timeout=600)


def test_the_writing_process_writes_what_the_grader_s_own_process_writes(copy_of, tmp_path):
    background = copy_of("en-parallele")
    result = _grade(background)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "carnet de notes nbgrader : 4 copies enregistrées" in result.stdout
    points = blank_scores(background, "attention")

    # The same run, its writing process made to fail as it starts: the grader writes in its own.
    broken = copy_of("sans-processus")
    hook = tmp_path / "site-casse"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os\n"
        "with open('/proc/self/cmdline', 'rb') as f:\n"
        "    if b'trous.outputs.writing' in f.read():\n"
        "        os._exit(3)\n", encoding="utf-8")
    fallback = _grade(broken, {"PYTHONPATH": str(hook)})
    assert fallback.returncode == 0, fallback.stdout + fallback.stderr
    assert "carnet de notes nbgrader : 4 copies enregistrées" in fallback.stdout
    assert "écriture reprise ici" in fallback.stderr and "code de sortie 3" in fallback.stderr
    assert blank_scores(broken, "attention") == points
    # Every blank of every student is there, and they are not all the same.
    assert set(points) == set(CHOICES) and all(len(cells) == 3 for cells in points.values())
    assert points["alice"] != points["dan"]
    assert (background / "autograded" / "bob" / ASSIGNMENT / f"{EXERCISE}.ipynb").is_file()
    assert not _writers(background) and not _writers(broken)


def test_a_run_refused_before_grading_leaves_nbgrader_s_gradebook_as_it_was(copy_of):
    root = copy_of("refus")
    before = hashlib.sha256((root / "gradebook.db").read_bytes()).hexdigest()
    # An assignment the course does not have: refused after the writing process has started.
    result = run_trous(root, "grade", ".", "--devoir", "partie99")
    assert result.returncode != 0 and "partie99" in result.stdout + result.stderr
    assert hashlib.sha256((root / "gradebook.db").read_bytes()).hexdigest() == before
    assert not (root / "autograded").exists()
    assert not _writers(root)


def test_one_assignment_graded_in_the_course_folder_with_formgrader_s_grades_kept(copy_of):
    """What `trous nbgrader grade DIR --devoir X` did, `trous grade DIR --devoir X` does: the points in
    nbgrader's gradebook and autograded/, a teacher's manual score in formgrader kept when graded
    again, the entries of submitted/ that are no student listed; its own results in trous-resultats/X/."""
    from nbgrader.api import Gradebook

    root = copy_of("un-devoir")
    (root / "submitted" / "LISEZMOI.txt").write_text("pas une copie")
    first = _grade(root, None, "--devoir", ASSIGNMENT)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "LISEZMOI.txt : pas un dossier d'élève de nbgrader" in " ".join(first.stdout.split()), first.stdout
    points = blank_scores(root, "attention")
    by_hand = {"alice": (1, 1, 1), "bob": (1, 0, 0), "chloe": (0, 1, 1), "dan": (0, 0, 0)}  # CHOICES, blank by blank
    assert {s: tuple(points[s][f"{EXERCISE}-trou-{b}"] for b in ("somme_exp", "scores", "nouveau"))
            for s in points} == by_hand
    assert (root / "autograded" / "dan" / ASSIGNMENT / f"{EXERCISE}.ipynb").is_file()
    assert (root / "trous-resultats" / ASSIGNMENT / "grades.csv").is_file()
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attention") as gradebook:  # formgrader, by hand
        gradebook.find_grade(f"{EXERCISE}-trou-scores", EXERCISE, ASSIGNMENT, "bob").manual_score = 1.0
        gradebook.db.commit()
    again = _grade(root, None, "--devoir", ASSIGNMENT)
    assert again.returncode == 0, again.stdout + again.stderr
    said = " ".join(again.stdout.split())
    assert "bob — 01_toux, trou 2 « scores » : 1 point donné(s) à la main dans formgrader" in said, said
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", "attention") as gradebook:
        kept = gradebook.find_grade(f"{EXERCISE}-trou-scores", EXERCISE, ASSIGNMENT, "bob")
        assert (kept.auto_score, kept.manual_score) == (0.0, 1.0)


def test_without_the_writing_process_the_class_is_written_in_its_order(course, tmp_path, monkeypatch):
    """The grader's own write (the writing process failed) reads the grades back from trous's gradebook
    in the class's order, whatever the order they were graded and consumed in."""
    from trous.core.grades import ExerciseGrade, SubmissionGrade
    from trous.core.submission import Submission
    from trous.outputs import nbgrader as nb_gradebook, writing
    from trous.outputs.gradebook import Gradebook, default_url
    from trous.outputs.overrides import WriteReport

    written = []
    # The boundary: nbgrader's gradebook writer (the test above writes with real nbgrader).
    monkeypatch.setattr(nb_gradebook, "write", lambda root, grades, assignments_of:
                        written.extend(g.student for g in grades) or WriteReport(root))
    in_class = ["alice", "bob", "chloe", "dan"]
    with Gradebook(default_url(tmp_path / "res")) as book:
        sink = writing.GradebookSink(tmp_path, course, None, book, in_class)
        run = book.start_run(course.id, "v")
        for student in ("chloe", "alice", "dan", "bob"):  # as the grading threads finish them
            grade = SubmissionGrade(student, course.id, "v", [ExerciseGrade(EXERCISE, "t", 1, 3, "blanks", [])])
            book.record(run, Submission(student, {EXERCISE: student.encode()}), grade)
            sink.consume(grade)
        sink.settle()
    assert written == in_class
