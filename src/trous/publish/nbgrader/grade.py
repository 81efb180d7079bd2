"""`trous nbgrader grade DIR --devoir ASSIGNMENT`: the engine grades nbgrader's submitted notebooks of one
assignment, in parallel and sandboxed, and the grades go into nbgrader's gradebook and autograded/,
ready for `nbgrader generate_feedback` and `nbgrader export` (no trous reports: `trous grade DIR`
writes both)."""

from __future__ import annotations

from pathlib import Path

from ...core.course import Course
from ...core.options import default_parallel
from ...grade.engine import Grader
from ...core.safetext import printable
from ...sandbox.pool import RunnerPool
from ...sandbox.backend import DESCRIPTIONS, UNISOLATED, choose
from ...outputs.nbgrader import write
from ...inputs.nbgrader import load
from ...outputs.overrides import apply, describe


def grade(course: Course, root: Path, assignment: str, students: list[str] | None = None,
          sandbox: str = "auto", jobs: int | None = None):
    # The rules of `trous grade`, before any submission is read: SandboxRefused when nothing isolates.
    kind = choose(sandbox)
    intake = load(root, course, assignments=[assignment], students=students)
    only = [e.id for e in course.exercises if e.assignment.id == assignment]
    if not only:
        raise KeyError(f"devoir « {assignment} » inconnu du cours")
    with RunnerPool(jobs or default_parallel(), kind) as pool:
        grader = Grader(course, pool, only=only)
        grades = list(grader.grade_many((s.student, s.files) for s in intake.submissions))
    for g in grades:
        g.isolation = kind  # an unisolated grade says so in each of its cells (outcome.UNISOLATED_NOTE)
    order = {s.student: i for i, s in enumerate(intake.submissions)}
    grades.sort(key=lambda g: order[g.student])
    report = write(root, grades, [assignment])
    report.changes = apply(grades, report.final)  # formgrader's manual grades win (overrides.py)
    return intake, grades, report


def run(course: Course, root: Path, assignment: str, students=None, sandbox="auto", jobs=None) -> int:
    from ...sandbox.backend import SandboxRefused  # noqa: PLC0415

    try:
        intake, grades, report = grade(course, root, assignment, students, sandbox, jobs)
    except SandboxRefused as exc:
        print(f"erreur du bac à sable : {exc}")
        return 1
    kinds = {g.isolation for g in grades}
    for kind in sorted(kinds):
        print(("ATTENTION : " if kind == UNISOLATED else "bac à sable : ") + DESCRIPTIONS.get(kind, kind))
    for item in intake.ignored:  # entries of submitted/ that are no student's folder
        print(f"non corrigé : {printable(item.path)} — {printable(item.reason)}")
    for submission in intake.submissions:
        for warning in submission.warnings:
            print(f"remarque ({printable(submission.student)}) : {printable(warning)}")
        for item in submission.ignored:  # every file of the folder nbgrader does not grade, with why
            print(f"non corrigé ({printable(submission.student)}) : {printable(item.path)} — {printable(item.reason)}")
    for problem in report.problems:
        print(f"problème : {problem}")
    for line in describe(report.changes):
        print(line)
    width = max([len("élève")] + [len(g.student) for g in grades])
    for g in grades:
        blanks = " ".join("✔" if b.score >= b.max_score else "✘" for e in g.exercises for b in e.blanks)
        score = f"{g.score:g}/{g.max_score:g}".replace(".", ",")  # French: a decimal comma
        print(f"{g.student:<{width}}  {score}  {blanks}")
    print(f"{len(report.written)} copie(s) enregistrée(s) dans le carnet de notes de nbgrader ({report.root}) ; "
          f"ensuite : nbgrader generate_feedback {assignment} && nbgrader export")
    return 0 if not report.problems else 1
