"""The gradebook read as the tests check it: current grades, names, intake notes, history, runs
(`trous grade` itself only reads `each_current`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from trous.core.grades import SubmissionGrade
from trous.outputs import gradebook
from trous.outputs.gradebook import CurrentGradeRow, GradingRow, RunRow, StudentRow, SubmissionRow


@dataclass(frozen=True)
class HistoryItem:
    run: int
    grader_version: str
    graded_at: datetime
    digest: str
    score: float
    max_score: float
    current: bool


class Gradebook(gradebook.Gradebook):
    def current(self, students: Iterable[str] | None = None) -> dict[str, SubmissionGrade]:
        return dict(self.each_current(students))

    def names(self) -> dict[str, str]:
        with Session(self.engine) as session:
            return {key: name for key, name in session.execute(select(StudentRow.key, StudentRow.name)) if name}

    def warnings(self) -> dict[str, tuple[str, ...]]:
        """Intake notes of each student's current submission."""
        query = (select(StudentRow.key, SubmissionRow.warnings)
                 .join(CurrentGradeRow, CurrentGradeRow.student_id == StudentRow.id)
                 .join(GradingRow, GradingRow.id == CurrentGradeRow.grading_id)
                 .join(SubmissionRow, SubmissionRow.id == GradingRow.submission_id))
        with Session(self.engine) as session:
            return {key: tuple(notes or ()) for key, notes in session.execute(query)}

    def history(self, student: str) -> list[HistoryItem]:
        query = (select(GradingRow, SubmissionRow.digest, CurrentGradeRow.grading_id)
                 .join(SubmissionRow, SubmissionRow.id == GradingRow.submission_id)
                 .join(StudentRow, StudentRow.id == SubmissionRow.student_id)
                 .outerjoin(CurrentGradeRow, CurrentGradeRow.student_id == StudentRow.id)
                 .where(StudentRow.key == student)
                 .order_by(GradingRow.id))
        with Session(self.engine) as session:
            return [HistoryItem(g.run_id, g.grader_version, g.graded_at, digest, g.score, g.max_score,
                                current == g.id) for g, digest, current in session.execute(query)]

    def runs(self) -> list[RunRow]:
        with Session(self.engine, expire_on_commit=False) as session:
            return list(session.scalars(select(RunRow).order_by(RunRow.id)))
