"""nbgrader's gradebook written by a process of its own, while the engine grades.

Writing nbgrader's gradebook and autograded/ (nbgrader.py) in the grader's process would cost
seconds after the last grade: importing nbgrader (which also takes the interpreter's lock from the
grading threads), then every notebook in turn. Here a second process imports nbgrader as soon as the
copies are read and writes each student as soon as its grade is recorded. It opens the gradebook at
the first grade it gets, so a run stopped before grading leaves it untouched; if it fails,
`finish()` returns None and the caller writes in its own process: no grade depends on it.

Protocol (JSON lines on the child's stdin): {"grade": SubmissionGrade.to_json(), "assignments": [...]}
per student (again when its grade changed), then {"end": true}; the child writes its report (one
JSON document) on the file descriptor named on its command line. A stdin closed without "end" (the
grader was stopped) ends it without a report.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import queue
import site
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.grades import SubmissionGrade
from ..grade.assignments import graded_assignments
from ..core.wording import count


# -- nbgrader's word: what a teacher changed in formgrader counts in trous's reports too -----------
# nbgrader keeps, per grade cell, the autograder's score and formgrader's manual score (which wins in
# nbgrader and survives a new grading), plus extra credit and late penalties. Once nbgrader's gradebook
# is written, they are read back (nbgrader.py) and applied to the grades trous reports, each change said
# with the engine's score beside it; trous's own gradebook keeps the engine's grades.
@dataclass
class Final:
    """nbgrader's word on one submitted notebook (one exercise of one student)."""

    manual: dict[str, float] = field(default_factory=dict)  # grade cell → manual score (formgrader)
    extra: float = 0.0  # extra credit given in formgrader, over the notebook
    penalty: float = 0.0  # late penalty (AssignLatePenalties)


@dataclass
class WriteReport:
    """What a write of nbgrader's gradebook did (here or in the writing process)."""

    root: Path
    written: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment)
    problems: list[str] = field(default_factory=list)
    final: dict[tuple[str, str], Final] = field(default_factory=dict)  # (student, notebook) → nbgrader's word


def say(report: WriteReport) -> WriteReport:
    for problem in report.problems:
        print(f"nbgrader : {problem}")
    print(f"carnet de notes nbgrader : {count(len(report.written), 'copie enregistrée', 'copies enregistrées')} "
          f"dans {report.root / 'gradebook.db'}")
    return report


def _points(value: float) -> str:
    return count(value, "point")


def cell_id(exercise_id: str, blank_id: str) -> str:
    return f"{exercise_id}-trou-{blank_id}"  # notebooks.grade_id(exercise, "trou", blank)


def apply(grade: SubmissionGrade, final: dict[tuple[str, str], Final]) -> list[tuple[str, str, str]]:
    """Make `grade` say what nbgrader's gradebook says; the changes: (student, exercise, what in French)."""
    changes = []
    for exercise in grade.exercises:
        word = final.get((grade.student, exercise.id))
        if word is None:
            continue
        notes = []
        for blank in exercise.blanks:
            manual = word.manual.get(cell_id(exercise.id, blank.id))
            if manual is None or manual == blank.score:
                continue
            text = (f"trou {blank.number} « {blank.id} » : {_points(manual)} donné(s) à la main dans formgrader "
                    f"(correction automatique : {_points(blank.score)})")
            blank.score = float(manual)
            notes.append(text)
        if word.extra:
            notes.append(f"bonus donné dans formgrader : {_points(word.extra)}")
        if word.penalty:
            notes.append(f"pénalité de retard (nbgrader) : −{_points(word.penalty)}")
        if not notes:
            continue
        total = sum(b.score for b in exercise.blanks) + word.extra - word.penalty
        exercise.score = round(max(0.0, total), 6)
        exercise.notes = list(exercise.notes) + [f"carnet de notes de nbgrader : {n}" for n in notes]
        changes += [(grade.student, exercise.id, n) for n in notes]
    return changes


def describe(changes: list[tuple[str, str, str]]) -> list[str]:
    if not changes:
        return []
    lines = [f"formgrader (carnet de notes de nbgrader) : {count(len(changes), 'note changée', 'notes changées')} "
             "à la main ou par nbgrader ; le carnet de nbgrader l'emporte : elles comptent dans grades.csv, les "
             "pages, le rapport de classe et l'export de nbgrader :"]
    lines += [f"  {student} — {exercise}, {what}" for student, exercise, what in changes]
    return lines


class BackgroundWriter:  # the grader's side
    def __init__(self, root: Path):
        self.root = Path(root)
        self.sent: dict[str, bytes] = {}  # student → digest of the grade's JSON last sent
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self.process: subprocess.Popen | None = None
        self._report_r: int | None = None
        self._feeder: threading.Thread | None = None
        self.failure = ""  # why finish() gave no report, in French

    def start(self) -> "BackgroundWriter":
        report_r, report_w = os.pipe()
        env = dict(os.environ)
        package_parent = str(Path(__file__).resolve().parents[2])  # the folder that holds trous/
        if package_parent not in site.getsitepackages():  # a source tree (tests, benchmarks): named
            env["PYTHONPATH"] = os.pathsep.join([package_parent, *filter(None, [env.get("PYTHONPATH")])])
        try:
            # A session of its own: Ctrl-C reaches the grader, which closes the stream; the writer then
            # ends after the student it is writing.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "trous.outputs.writing", str(self.root), str(report_w)],
                stdin=subprocess.PIPE, pass_fds=(report_w,), env=env, cwd=str(self.root), start_new_session=True)
        except OSError:  # then no process: finish() says so, and the caller writes
            os.close(report_r)
            return self
        finally:
            os.close(report_w)
        self._report_r = report_r
        # Writes go through a thread: the child reads nothing while it imports nbgrader, and a full
        # pipe must never block the grader's loop.
        self._feeder = threading.Thread(target=self._feed, name="nbgrader-writer-feed", daemon=True)
        self._feeder.start()
        return self

    def _feed(self) -> None:
        with contextlib.suppress(OSError), self.process.stdin as stdin:  # OSError: the child is gone
            while (data := self._queue.get()) is not None:
                stdin.write(data)
                stdin.flush()

    def send(self, grade: SubmissionGrade, assignments: list[str]) -> None:
        """Again only if it changed since it was sent."""
        if self.process is None:
            return
        text = json.dumps(grade.to_json(), sort_keys=True, allow_nan=False)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        if self.sent.get(grade.student) == digest:
            return
        self.sent[grade.student] = digest
        line = f'{{"grade": {text}, "assignments": {json.dumps(list(assignments))}}}\n'
        self._queue.put(line.encode("utf-8"))

    def finish(self):
        """Wait for the writing to end: its WriteReport, or None when the process did not give one."""
        if self.process is None:
            self.failure = "pas de processus"
            return None
        self._queue.put(b'{"end": true}\n')
        self._queue.put(None)
        with os.fdopen(self._report_r, "rb") as f:
            data = f.read()
        self._report_r = None
        code = self.process.wait()
        self._feeder.join()
        if code != 0 or not data:
            self.failure = f"code de sortie {code}"
            return None
        try:
            sent = json.loads(data)
            return WriteReport(Path(sent["root"]), [tuple(pair) for pair in sent["written"]], list(sent["problems"]),
                               {(student, notebook): Final(**final) for student, notebook, final in sent["final"]})
        except (ValueError, KeyError, TypeError):
            self.failure = "compte rendu illisible"
            return None

    def abandon(self) -> None:
        """The run stops without settling: a child that got no grade has touched nothing and is
        stopped at once; one that did ends after the student it is writing."""
        if self.process is None:
            return
        if not self.sent:
            self.process.kill()
        self._queue.put(None)
        if self._report_r is not None:
            os.close(self._report_r)
            self._report_r = None
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._feeder.join()
        self.process = None


# -- started with the command ---------------------------------------------------------------------
# `trous grade` on what looks like an nbgrader course starts the writing process first (cli.main) and
# the intake claims it; a wrong guess costs the second nbgrader takes to import, nothing more.
_early: BackgroundWriter | None = None


def prestart(root: Path) -> None:
    global _early
    release()
    _early = BackgroundWriter(root).start()


def claim(root: Path) -> BackgroundWriter:
    """The writer for the course at `root`: the one started with the command, else a new one."""
    global _early
    if _early is not None and _early.root.resolve() == Path(root).resolve():
        found, _early = _early, None
        return found
    release()  # started for another course
    return BackgroundWriter(root).start()


def release() -> None:
    """The command ends: a writer started with it and never claimed is stopped."""
    global _early
    found, _early = _early, None
    if found is not None:
        found.abandon()


class GradebookSink:
    """Sink: nbgrader's gradebook and autograded/ (`trous grade` on an nbgrader course). Each grade goes
    to the `writer` process at once, none is kept; `settle` waits for it (failing that, writes here from
    trous's `gradebook`); then `current` reads the grades back with nbgrader's word applied: it wins."""

    def __init__(self, root: Path, course, assignments: list[str] | None, gradebook, students: list[str],
                 writer: "BackgroundWriter | None" = None):
        self.root, self.course, self.assignments, self.writer = root, course, assignments, writer
        self.gradebook, self.students = gradebook, students
        self.held: set[str] = set()  # the assignments of the grades consumed: a course's few

    def consume(self, grade: SubmissionGrade) -> None:
        chosen = self.assignments or graded_assignments(self.course, [grade])  # --devoir: the others untouched
        self.held.update(chosen)
        if self.writer is not None:
            self.writer.send(grade, chosen)

    def settle(self) -> dict[str, Path]:
        report = self.writer and self.writer.finish()
        if report is None:
            if self.writer is not None:
                print("nbgrader : le processus d'écriture du carnet de notes n'a pas abouti "
                      f"({self.writer.failure}) ; écriture reprise ici, pour toutes les copies", file=sys.stderr)
            from .nbgrader import write  # noqa: PLC0415 - nbgrader: only when the writing process failed

            grades = (grade for _, grade in self.gradebook.each_current(self.students))
            report = write(self.root, grades, lambda grade: self.held)
        self.writer, self.final = None, say(report).final  # settled: nothing left to stop
        return {"nbgrader_gradebook": self.root / "gradebook.db", "nbgrader_autograded": self.root / "autograded"}

    def current(self) -> Iterator[SubmissionGrade]:
        """Once settled: each grade in the class's order, nbgrader's word applied (said once all are read)."""
        changes = []
        for _, grade in self.gradebook.each_current(self.students):
            changes += apply(grade, self.final)
            yield grade
        for line in describe(changes):
            print(line)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.abandon()


# -- the writing process ----------------------------------------------------------------------------
def _grades(stream, chosen: dict[str, list[str]], ended: list[bool]):
    for raw in stream:
        message = json.loads(raw)
        if message.get("end"):
            ended.append(True)
            return
        grade = SubmissionGrade.from_json(message["grade"])
        chosen[grade.student] = list(message["assignments"])
        yield grade


def main(argv: list[str] | None = None) -> int:
    root, report_fd = (argv or sys.argv[1:])[:2]
    from . import nbgrader as gradebook  # noqa: PLC0415 - nbgrader, while the grader reads and grades

    stream = sys.stdin.buffer
    first = stream.readline()
    if not first:  # the grader stopped before any grade: nothing is touched
        return 0
    chosen: dict[str, list[str]] = {}
    ended: list[bool] = []
    grades = _grades(itertools.chain([first], stream), chosen, ended)
    # The first message may be the end already (no copy to write): the gradebook is opened anyway.
    report = gradebook.write(Path(root), grades, assignments_of=lambda grade: chosen[grade.student])
    if not ended:
        return 0
    data = {"root": str(report.root), "written": report.written, "problems": report.problems,
            "final": [[student, notebook, asdict(final)] for (student, notebook), final in report.final.items()]}
    # OSError: the grader is gone (interrupted while it waited): everything is committed anyway
    with contextlib.suppress(OSError), os.fdopen(int(report_fd), "w", encoding="utf-8") as out:
        json.dump(data, out, allow_nan=False)
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is committed and said: the interpreter's teardown of nbgrader, SQLAlchemy and their
    # objects (a quarter of a second) would only keep the grader waiting.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
