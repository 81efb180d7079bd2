"""Every report of a class written at once, from its grades (`trous grade` writes them as the grades
come: reports.ResultFiles)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from trous.core.course import Course
from trous.core.grades import SubmissionGrade
from trous.outputs import reports


def write_all(results_dir: Path, course: Course, grades: list[SubmissionGrade], gradebook=None, *,
              submissions: Iterable | None = None, not_handed_in: dict[str, tuple[str, ...]] | None = None,
              early: reports.ResultFiles | None = None, **class_files) -> dict[str, Path]:
    """Write every report; return their paths by kind ("grades_csv", "results", "class_report"…).

    `submissions` (anything with `student`, `name`, `warnings`): names, intake notes, files not graded;
    `not_handed_in`: student → the run's assignments not handed in; `early`: the per-student files
    already written during the run; `class_files`: write_class's keywords."""
    students = [grade.student for grade in grades]
    if len(set(students)) != len(students):
        twice = next(s for s in students if students.count(s) > 1)
        raise ValueError(f"deux copies portent le même identifiant « {twice} »")
    files = early or reports.ResultFiles(results_dir, course, submissions, not_handed_in)
    files.stems = reports.file_stems([*files.stems, *students])  # the same when `early` knows every student
    for grade in grades:
        files.consume(grade)
    return files.settle(students, gradebook=gradebook, submissions=submissions, **class_files)
