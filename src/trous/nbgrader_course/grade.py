"""`trous nbgrader grade DIR ASSIGNMENT`: the engine grades nbgrader's submitted notebooks of one
assignment, in parallel and sandboxed, and the grades go into nbgrader's gradebook and autograded/,
ready for `nbgrader generate_feedback` and `nbgrader export` (no trous reports: `trous grade DIR`
writes both)."""

from __future__ import annotations

import os
from pathlib import Path

from ..course.definition import Course
from ..grading.engine import Grader
from ..runner.pool import RunnerPool
from .gradebook import write
from .intake import load


def grade(course: Course, root: Path, assignment: str, students: list[str] | None = None,
          sandbox: str = "auto", jobs: int | None = None):
    intake = load(root, course, assignments=[assignment], students=students)
    only = [e.id for e in course.exercises if e.assignment.id == assignment]
    if not only:
        raise KeyError(f"devoir « {assignment} » inconnu du cours")
    with RunnerPool(jobs or os.cpu_count() or 1, sandbox) as pool:
        grader = Grader(course, pool, only=only)
        grades = list(grader.grade_many((s.student, s.files) for s in intake.submissions))
    order = {s.student: i for i, s in enumerate(intake.submissions)}
    grades.sort(key=lambda g: order[g.student])
    report = write(root, grades, [assignment])
    return intake, grades, report


def run(course: Course, root: Path, assignment: str, students=None, sandbox="auto", jobs=None) -> int:
    intake, grades, report = grade(course, root, assignment, students, sandbox, jobs)
    for submission in intake.submissions:
        for warning in submission.warnings:
            print(f"remarque ({submission.student}) : {warning}")
    for problem in report.problems:
        print(f"problème : {problem}")
    width = max([len("élève")] + [len(g.student) for g in grades])
    for g in grades:
        blanks = " ".join("✔" if b.score >= b.max_score else "✘" for e in g.exercises for b in e.blanks)
        score = f"{g.score:g}/{g.max_score:g}".replace(".", ",")  # French: a decimal comma
        print(f"{g.student:<{width}}  {score}  {blanks}")
    print(f"{len(report.written)} copie(s) enregistrée(s) dans le carnet de notes de nbgrader ({report.root}) ; "
          f"ensuite : nbgrader generate_feedback {assignment} && nbgrader export")
    return 0 if not report.problems else 1
