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
from dataclasses import asdict
from pathlib import Path

from ..core.grades import SubmissionGrade
from ..grade.assignments import graded_assignments
from .overrides import Final, WriteReport, apply, describe, say


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
