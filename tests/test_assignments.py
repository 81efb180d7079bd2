"""One assignment at a time: which assignments a run grades, which each copy hands in, the
nbgrader input's own say, and the terminal table that never cuts a name or a number."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from conftest import ROOT
from trous.core import Course
from trous.grade import assignments
from trous.core.grades import PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
from trous.core.submission import Submission


@pytest.fixture(scope="module")
def course() -> Course:
    return Course.load(ROOT)


def template(course: Course, exercise_id: str) -> bytes:
    return course.exercise(exercise_id).template_path.read_bytes()


def solution(course: Course, exercise_id: str) -> bytes:
    return course.exercise(exercise_id).solution_path.read_bytes()


def copy(student: str, files: dict[str, bytes | None], **kw) -> Submission:
    return Submission(student, files, **kw)


def test_only_assignments_someone_worked_on_are_graded(course):
    # A student edition holds every exercise: untouched templates are not work handed in.
    everything = {e.id: template(course, e.id) for e in course.exercises}
    alice = copy("alice", {**everything, "01_toux": solution(course, "01_toux")})
    bob = copy("bob", {**everything, "06_moyenne": template(course, "06_moyenne").replace(b"\n", b"\r\n")})
    scope = assignments.resolve(course, [alice, bob], None)
    assert scope.assignments == ("partie5",) and not scope.chosen
    assert {a for a, _ in scope.left_out} == {"lecon-attention", "tete-attention", "a-la-main"}
    assert scope.per_copy == {"alice": ("partie5",), "bob": ("partie5",)}
    assert scope.exercises(course) == [e.id for e in course.exercises if e.assignment.id == "partie5"]


def test_each_copy_is_graded_on_what_it_hands_in(course):
    alice = copy("alice", {"01_toux": solution(course, "01_toux"), "06_moyenne": solution(course, "06_moyenne")})
    bob = copy("bob", {"02_places": b"x = 1\n"})  # worked: not the template
    empty = copy("chloe", {})
    scope = assignments.resolve(course, [alice, bob, empty], None)
    assert scope.assignments == ("partie5", "lecon-attention")
    assert scope.per_copy == {"alice": ("partie5", "lecon-attention"), "bob": ("partie5",),
                              "chloe": ("partie5", "lecon-attention")}  # sent, with nothing in it: all, at 0
    restricted = assignments.restrict_files(course, bob, scope.per_copy["bob"])
    assert list(restricted.files) == [e.id for e in course.exercises if e.assignment.id == "partie5"]
    assert restricted.digest != assignments.restrict_files(course, bob, scope.assignments).digest


def test_asked_assignments_and_typos(course):
    alice = copy("alice", {"01_toux": solution(course, "01_toux"), "06_moyenne": solution(course, "06_moyenne")})
    scope = assignments.resolve(course, [alice], ["lecon-attention"])
    assert scope.chosen and scope.assignments == ("lecon-attention",) and scope.per_copy == {"alice": ("lecon-attention",)}
    with pytest.raises(assignments.ScopeError, match="« partie5 »"):
        assignments.resolve(course, [alice], ["partie6"])


def test_the_input_may_say_what_each_copy_hands_in(course):
    # nbgrader: submitted/<student>/<assignment>/ says it, even for an empty or unreadable notebook.
    alice = copy("alice", {e.id: None for e in course.exercises}, assignments=("partie5",))
    bob = copy("bob", {e.id: None for e in course.exercises}, assignments=())
    scope = assignments.resolve(course, [alice, bob], None)
    assert scope.assignments == ("partie5",) and scope.per_copy == {"alice": ("partie5",), "bob": ()}
    asked = assignments.resolve(course, [alice, bob], ["tete-attention"])
    assert asked.per_copy == {"alice": (), "bob": ()}


def test_files_of_other_assignments_are_named_not_graded(course):
    alice = copy("alice", {"01_toux": b"a", "06_moyenne": b"b"},
                 origins={"01_toux": "exercises/01_toux.py", "06_moyenne": "exercises/06_moyenne.py"})
    restricted = assignments.restrict_files(course, alice, ("partie5",))
    assert restricted.origins == {"01_toux": "exercises/01_toux.py"}
    [other] = restricted.ignored
    assert other.path == "exercises/06_moyenne.py" and other.exercise == "06_moyenne"
    assert "pas corrigé avec Partie 5" in other.reason


def test_a_results_folder_keeps_one_scope(course, tmp_path):
    partie5 = assignments.Scope(("partie5",), True)
    whole = assignments.Scope(("partie5", "lecon-attention"), False)
    assignments.check_results(tmp_path, partie5)  # a new folder: anything goes
    assignments.record_results(tmp_path, partie5)
    assignments.check_results(tmp_path, partie5)
    with pytest.raises(assignments.ScopeError, match="devoir partie5"):
        assignments.check_results(tmp_path, whole)
    with pytest.raises(assignments.ScopeError):
        assignments.check_results(tmp_path, assignments.Scope(("lecon-attention",), True))
    other = tmp_path / "tout"
    other.mkdir()
    assignments.record_results(other, whole)
    assignments.check_results(other, assignments.Scope(("partie5",), False))  # the class hands in more later


def test_nbgrader_submitted_folders_say_the_assignments(course, tmp_path):
    pytest.importorskip("nbgrader")
    from trous.inputs import standalone as nb_intake

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    for student, folders in (("alice", ("partie5",)), ("bob", ("partie5", "lecon-attention")), ("chloe", ())):
        (tmp_path / "submitted" / student).mkdir(parents=True)
        for folder in folders:
            (tmp_path / "submitted" / student / folder).mkdir()
            (tmp_path / "submitted" / student / folder / "timestamp.txt").write_text("2026-01-01 00:00:00")
    found = nb_intake.load_submitted(tmp_path, course)
    by = {s.student: s.assignments for s in found.submissions}
    assert by == {"alice": ("partie5",), "bob": ("lecon-attention", "partie5"), "chloe": ()}


def test_nbgrader_gradebook_gets_only_the_assignments_graded(course, tmp_path, monkeypatch):
    pytest.importorskip("nbgrader")
    from trous.outputs import nbgrader as nb_gradebook
    from trous.outputs import writing
    from trous.outputs.gradebook import Gradebook, default_url
    from trous.outputs.overrides import WriteReport

    seen = []
    # The boundary: nbgrader's gradebook writer (tested with real nbgrader in test_nbgrader_e2e).
    monkeypatch.setattr(nb_gradebook, "write", lambda root, grades, assignments_of:
                        seen.append(sorted(assignments_of(None))) or WriteReport(root))
    grade = SubmissionGrade("alice", course.id, "v", [ExerciseGrade("01_toux", "t", 1, 3, "blanks", [])])
    for assignments in (None, ["partie5"]):
        with Gradebook(default_url(tmp_path / "res")) as book:
            sink = writing.GradebookSink(tmp_path, course, assignments, book, [grade.student])
            sink.consume(grade)
            sink.settle()
    assert seen == [["partie5"], ["partie5"]]


# -- the terminal table --------------------------------------------------------------------------
def _grade(course: Course, student: str, ids: list[str]) -> SubmissionGrade:
    exercises = []
    for exercise_id in ids:
        spec = course.exercise(exercise_id)
        blanks = [BlankGrade(b.id, i + 1, b.points, b.points, PASSED) for i, b in enumerate(spec.blanks)]
        exercises.append(ExerciseGrade(spec.id, spec.title, spec.points, spec.points, "blanks", blanks))
    return SubmissionGrade(student, course.id, "v", exercises)


@pytest.mark.parametrize("width", [80, 120])
def test_the_table_fits_the_terminal_and_cuts_nothing(course, width):
    from rich.console import Console

    from trous.outputs import run as cli
    from trous.inputs import intake

    everything = [e.id for e in course.exercises]
    partie5 = [e.id for e in course.exercises if e.assignment.id == "partie5"]
    long_name = "Marie-Élisabeth de La Rochefoucauld Montmorency"  # words shorter than the column
    copies = [Submission("etudiante_au_nom_de_dossier_tres_long_2026", {}, name=long_name), Submission("bob", {})]
    grades = [_grade(course, copies[0].student, everything), _grade(course, "bob", partie5)]
    scope = assignments.Scope(tuple(a.id for a in course.spec.assignments), False,
                              per_copy={copies[0].student: tuple(a.id for a in course.spec.assignments),
                                        "bob": ("partie5",)})
    outcome = cli.Outcome(intake.Intake("dossier", Path("copies"), copies), grades, [], [], {}, "", scope=scope)
    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False, color_system=None)
    for table in cli._tables(course, outcome, console):
        console.print(table)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    flat = re.sub(r"\s+", "", text)
    # Wrapped, never cut: every word of the name is there whole, every character of the id in order.
    assert all(word in text for word in long_name.split())
    assert re.search(".*".join(map(re.escape, copies[0].student)), flat)
    tables = len(re.findall(r"\(\d/\d\)", text)) or 1
    assert tables <= 3  # 13 exercises and 4 totals: a few tables, not one per column
    for exercise in course.exercises:
        assert f"/{exercise.points:g}" in text
    for assignment in course.spec.assignments:  # one total per assignment
        total = sum(e.points for e in course.exercises if e.assignment.id == assignment.id)
        assert assignment.id in flat and f"/{total:g}" in text
    assert text.count("nonrendu") + flat.count("nonrendu") >= 3  # bob's three other assignments


def test_one_nbgrader_assignment_reads_only_its_own_moodle_folders(course, tmp_path, monkeypatch):
    """zip_collect leaves each assignment's Moodle folders in downloaded/<assignment>/extracted/: a
    participant number of another assignment is another participant, never a conflict of this one."""
    pytest.importorskip("nbgrader")
    from trous.inputs import intake, kinds
    from trous.outputs import run

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    (tmp_path / "submitted" / "4711" / "partie5").mkdir(parents=True)
    (tmp_path / "submitted" / "4711" / "partie5" / "timestamp.txt").write_text("2026-01-01 00:00:00")
    for assignment, folder in (("partie5", "Camille Durand_4711_assignsubmission_file_"),
                               ("lecon-attention", "Léo Martin_4711_assignsubmission_file_")):
        (tmp_path / "downloaded" / assignment / "extracted" / folder).mkdir(parents=True)
    chosen = kinds.load(tmp_path, course, assignments=["partie5"]).moodle
    assert chosen.conflicts == {} and chosen.participants["4711"].name == "Camille Durand"
    assert "4711" in kinds.load(tmp_path, course).moodle.conflicts  # no --devoir: the whole course
    # `trous grade <course> --devoir partie5` asks for that assignment's folders only.
    asked = []

    def load(*args, **kw):
        asked.append(kw.get("assignments"))
        raise intake.IntakeError("assez")

    monkeypatch.setattr(kinds, "load", load)
    with pytest.raises(intake.IntakeError, match="assez"):
        run.grade_class(course, run.GradeOptions(tmp_path, results=tmp_path / "r", scheduler="dask",
                                                 assignments=["partie5"]))
    assert asked == [["partie5"]]
