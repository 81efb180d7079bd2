"""The gradebook: every grade ever given, and each student's current one.

SQLAlchemy 2, portable SQL (PostgreSQL too: `--carnet postgresql+psycopg://…`); by default an
embedded SQLite file in WAL mode, `<results>/gradebook.db`. `gradings` are never updated: the
history, with each whole results document; `current_grades` says which one counts.

Resumable: a student's grading, its blank rows and the move of its current grade are ONE
transaction, so a run killed at any moment leaves each student fully recorded or untouched, and a
re-run grades only the (student, digest, grader version) not graded yet. A new grader version (the
engine's fingerprint) matches no grading: every student is graded again, the older gradings stay.
"""

from __future__ import annotations

import itertools
from contextlib import AbstractContextManager
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import (JSON, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint,
                        create_engine, event, insert, select, update)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import trous

from ..core.grades import SubmissionGrade
from ..core.submission import Submission

SCHEMA_VERSION = 1
CURRENT_BATCH = 200  # grades fetched at a time by each_current


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class StudentRow(Base):
    __tablename__ = "students"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(255), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    course: Mapped[str] = mapped_column(String(100))
    grader_version: Mapped[str] = mapped_column(String(64))
    trous_version: Mapped[str] = mapped_column(String(40))
    sandbox: Mapped[str] = mapped_column(String(40), default="")
    source: Mapped[str] = mapped_column(Text, default="")
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    submissions: Mapped[int] = mapped_column(Integer, default=0)
    graded: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)


class SubmissionRow(Base):
    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("student_id", "digest", name="uq_submission_content"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id"))
    digest: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(Text, default="")
    warnings: Mapped[list] = mapped_column(JSON, default=list)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class GradingRow(Base):
    __tablename__ = "gradings"
    __table_args__ = (Index("ix_gradings_lookup", "submission_id", "grader_version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"))
    grader_version: Mapped[str] = mapped_column(String(64))
    graded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    score: Mapped[float] = mapped_column(Float)
    max_score: Mapped[float] = mapped_column(Float)
    result: Mapped[dict] = mapped_column(JSON)  # SubmissionGrade.to_json()


class BlankGradeRow(Base):
    __tablename__ = "blank_grades"
    __table_args__ = (Index("ix_blank_grades_grading", "grading_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    grading_id: Mapped[int] = mapped_column(ForeignKey("gradings.id"))
    exercise: Mapped[str] = mapped_column(String(60))
    blank: Mapped[str] = mapped_column(String(40))
    score: Mapped[float] = mapped_column(Float)
    max_score: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    message: Mapped[str] = mapped_column(Text, default="")


class CurrentGradeRow(Base):
    __tablename__ = "current_grades"
    student_id: Mapped[int] = mapped_column(ForeignKey("students.id"), primary_key=True)
    grading_id: Mapped[int] = mapped_column(ForeignKey("gradings.id"))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MetaRow(Base):
    __tablename__ = "trous_meta"
    key: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


def default_url(results_dir: str | Path) -> str:
    return f"sqlite:///{Path(results_dir).resolve() / 'gradebook.db'}"


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        # Let SQLAlchemy decide where transactions begin (pysqlite would delay BEGIN until the first
        # write, so a transaction's reads would not be isolated), and make writes crash-safe.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: a killed process loses nothing committed
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN")

    return engine


class Gradebook(AbstractContextManager):
    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite"):
            database = url.split("///", 1)[1] if "///" in url else ""
            if database and database != ":memory:":
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            self.engine = _sqlite_engine(url)
        else:
            self.engine = create_engine(url, pool_pre_ping=True)
        Base.metadata.create_all(self.engine)
        with Session(self.engine) as session, session.begin():
            if session.get(MetaRow, "schema") is None:
                session.add(MetaRow(key="schema", value=str(SCHEMA_VERSION)))

    def close(self) -> None:
        self.engine.dispose()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def path(self) -> str:
        """What to show people: the SQLite file, or the URL without its password."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            return url.database
        return url.render_as_string(hide_password=True)

    # -- runs ------------------------------------------------------------------------------------
    def start_run(self, course: str, grader_version: str, sandbox: str = "", source: str = "",
                  submissions: int = 0) -> int:
        with Session(self.engine) as session, session.begin():
            run = RunRow(course=course, grader_version=grader_version, trous_version=trous.__version__,
                         sandbox=sandbox, source=source, started_at=_now(), submissions=submissions)
            session.add(run)
            session.flush()
            return run.id

    def finish_run(self, run_id: int, graded: int, skipped: int) -> None:
        with Session(self.engine) as session, session.begin():
            run = session.get(RunRow, run_id)
            run.finished_at, run.graded, run.skipped = _now(), graded, skipped

    # -- what is already done ---------------------------------------------------------------------
    def graded(self, submissions: Iterable[Submission], grader_version: str) -> dict[str, int]:
        """Student → id of an existing grading of exactly this content by this grader version."""
        wanted = {s.student: s.digest for s in submissions}
        if not wanted:
            return {}
        query = (select(StudentRow.key, SubmissionRow.digest, GradingRow.id)
                 .join(SubmissionRow, SubmissionRow.student_id == StudentRow.id)
                 .join(GradingRow, GradingRow.submission_id == SubmissionRow.id)
                 .where(GradingRow.grader_version == grader_version)
                 .order_by(GradingRow.id))
        found: dict[str, int] = {}
        with Session(self.engine) as session:
            for key, digest, grading_id in session.execute(query):
                if wanted.get(key) == digest:
                    found[key] = grading_id  # the latest one wins (ordered by id)
        return found

    # -- writing: one transaction per student -----------------------------------------------------
    # Core statements, not the ORM's unit of work, whose bookkeeping cost 7 ms a student.
    def _student(self, conn: Connection, submission: Submission) -> int:
        students = StudentRow.__table__
        # FOR UPDATE (PostgreSQL): two graders sharing the gradebook record a student one after the other.
        found = conn.execute(select(students.c.id, students.c.name).where(students.c.key == submission.student)
                             .with_for_update()).first()
        if found is None:
            return conn.execute(insert(students).values(key=submission.student, name=submission.name or "")
                                ).inserted_primary_key[0]
        if submission.name and found.name != submission.name:
            conn.execute(update(students).where(students.c.id == found.id).values(name=submission.name))
        return found.id

    def _submission(self, conn: Connection, student_id: int, submission: Submission) -> int:
        table = SubmissionRow.__table__
        warnings = list(submission.warnings)
        found = conn.execute(select(table.c.id, table.c.source, table.c.warnings)
                             .where(table.c.student_id == student_id, table.c.digest == submission.digest)).first()
        if found is None:
            return conn.execute(insert(table).values(student_id=student_id, digest=submission.digest,
                                                     source=submission.source, warnings=warnings,
                                                     first_seen=_now())).inserted_primary_key[0]
        if found.source != submission.source or list(found.warnings or []) != warnings:
            conn.execute(update(table).where(table.c.id == found.id)
                         .values(source=submission.source, warnings=warnings))
        return found.id

    def _make_current(self, conn: Connection, student_id: int, grading_id: int) -> None:
        table = CurrentGradeRow.__table__
        current = conn.execute(select(table.c.grading_id).where(table.c.student_id == student_id)).first()
        if current is None:
            conn.execute(insert(table).values(student_id=student_id, grading_id=grading_id, updated_at=_now()))
        elif current.grading_id != grading_id:
            conn.execute(update(table).where(table.c.student_id == student_id)
                         .values(grading_id=grading_id, updated_at=_now()))

    def record(self, run_id: int, submission: Submission, grade: SubmissionGrade, once: bool = False) -> int:
        """Store a new grading and make it the student's current grade, all or nothing. `once`: if this
        (student, content, grader version) is graded already (by another grader sharing this gradebook),
        make that grading current instead (without it, `--force`, every call adds to the history)."""
        if grade.student != submission.student:
            raise ValueError(f"la note de {grade.student} ne correspond pas à la copie de {submission.student}")
        try:
            return self._record(run_id, submission, grade, once)
        except IntegrityError:
            # Another grader created this student or this content at the same moment (unique keys):
            # it is committed now, so a second attempt finds it.
            return self._record(run_id, submission, grade, once)

    def _record(self, run_id: int, submission: Submission, grade: SubmissionGrade, once: bool) -> int:
        gradings = GradingRow.__table__
        with self.engine.begin() as conn:
            student_id = self._student(conn, submission)
            submission_id = self._submission(conn, student_id, submission)
            if once:
                done = conn.execute(select(gradings.c.id).where(gradings.c.submission_id == submission_id,
                                                                gradings.c.grader_version == grade.grader_version)
                                    .order_by(gradings.c.id.desc())).first()
                if done is not None:
                    self._make_current(conn, student_id, done.id)
                    return done.id
            grading_id = conn.execute(insert(gradings).values(
                submission_id=submission_id, run_id=run_id, grader_version=grade.grader_version, graded_at=_now(),
                score=grade.score, max_score=grade.max_score, result=grade.to_json())).inserted_primary_key[0]
            rows = [{"grading_id": grading_id, "exercise": e.id, "blank": b.id, "score": b.score,
                     "max_score": b.max_score, "status": b.status, "message": b.message or ""}
                    for e in grade.exercises for b in e.blanks]
            if rows:  # one executemany
                conn.execute(insert(BlankGradeRow.__table__), rows)
            self._make_current(conn, student_id, grading_id)
            return grading_id

    def reuse(self, submissions: Iterable[Submission], found: dict[str, int]) -> None:
        """Submissions graded before by this grader (`found`: student → grading): make those gradings
        current (a student who went back to an older version), refresh names and intake notes. Only
        what differs is written, in one transaction: each change stands on its own."""
        wanted = [s for s in submissions if s.student in found]
        if not wanted:
            return
        query = (select(StudentRow, SubmissionRow, CurrentGradeRow)
                 .join(SubmissionRow, SubmissionRow.student_id == StudentRow.id)
                 .join(GradingRow, GradingRow.submission_id == SubmissionRow.id)
                 .outerjoin(CurrentGradeRow, CurrentGradeRow.student_id == StudentRow.id)
                 .where(GradingRow.id.in_([found[s.student] for s in wanted])))
        with Session(self.engine) as session, session.begin():
            rows = {student.key: (student, row, current) for student, row, current in session.execute(query)}
            for submission in wanted:
                if submission.student not in rows:
                    raise ValueError(f"{submission.student} : notation {found[submission.student]} introuvable")
                student, row, current = rows[submission.student]
                if submission.name and student.name != submission.name:
                    student.name = submission.name
                if row.source != submission.source or list(row.warnings or []) != list(submission.warnings):
                    row.source, row.warnings = submission.source, list(submission.warnings)
                grading_id = found[submission.student]
                if current is None:
                    session.add(CurrentGradeRow(student_id=student.id, grading_id=grading_id, updated_at=_now()))
                elif current.grading_id != grading_id:
                    current.grading_id, current.updated_at = grading_id, _now()

    # -- reading ---------------------------------------------------------------------------------
    def each_current(self, students: Iterable[str] | None = None) -> Iterator[tuple[str, SubmissionGrade]]:
        """(student, current grade), fetched in batches: a class is never all in memory at once. Those
        of `students` (everyone's by default) in their order, those without a grade left out."""
        query = (select(StudentRow.key, GradingRow.result)
                 .join(CurrentGradeRow, CurrentGradeRow.student_id == StudentRow.id)
                 .join(GradingRow, GradingRow.id == CurrentGradeRow.grading_id))
        with Session(self.engine) as session:
            wanted = iter(session.scalars(select(StudentRow.key)).all() if students is None else students)
            while batch := list(itertools.islice(wanted, CURRENT_BATCH)):
                found = dict(session.execute(query.where(StudentRow.key.in_(batch))).all())
                yield from ((key, SubmissionGrade.from_json(found[key])) for key in batch if key in found)
