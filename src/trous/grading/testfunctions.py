"""The graders' test functions, as the grading engine sees them: found once, run blank by blank.

A test function is one more expectation of its blank. For each blank a copy filled, the engine opens
a session (runner/session.py) on the very program it grades that blank with (the reference with only
that blank replaced), and runs the blank's tests one after the other in a worker (testworker.py):
public tests first, then hidden ones, each from a fresh run of the program. A test's questions are
secret when the test is a hidden grader's, and take their time from the copy's budget.

What a student reads of a test follows the disclosure rules: a hidden test is named by its docstring
(else its name in words), never by its parameters or its asserts' values; an error of the student's
code by its type only. A test that fails through no fault of the student's (a setup error, a name
that does not exist, a misuse of `eleve`) is a bug of the grader, never the student's failure:
`GraderError`. So is a test that does not pass on the reference solution, found before any copy is
graded (`check_reference`); hence an exception the test raises while reading a copy's values (a
TypeError on a None the copy returned…) is the copy's failure, since the same test reads the
reference's values without one.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..course.definition import Course, Exercise
from ..runner.protocol import SKIPPED, ErrorInfo, UnitResult
from ..student.checking import Verdict, describe_error
from .pytest_graders import TestInfo
from .testworker import WorkerFailed, WorkerPool

PATIENCE = 60.0  # seconds a test's own code (not the student's) may run before it is called stuck
# How a failed test reads to the student (hidden tests: never a value, never a message of the code).
SAID = {
    "assert": "ne passe pas",
    "reading": "ce que donne ton code ne permet pas de la vérifier ({type})",
}
# The student's code gave no answer for one of these: a matter of this run, not of the program.
TRANSIENT = ("timeout", "crash", "skipped", "start", "channel", "output", "protocol", "files")


@dataclass(frozen=True)
class TestFunction:
    __test__ = False

    nodeid: str
    path: str
    name: str
    exercise: str
    blank: str
    hidden: bool
    description: str

    @property
    def label(self) -> str:
        return f"{'vérification cachée' if self.hidden else 'vérification'} « {self.description} »"


@dataclass
class Outcome:
    test: TestFunction
    outcome: str  # "passed", "failed", "skipped" or "bug"
    cause: str = ""  # failed: "assert", "student", "stopped", "reading"; bug: "bug"
    info: dict = field(default_factory=dict)
    detail: str = ""  # for the teacher: pytest's own report of the failure
    asked: int = 0
    ran: bool = True  # False: not run, the program having already hung or crashed, or no time left

    @classmethod
    def of(cls, test: TestFunction, done: dict) -> "Outcome":
        info = done.get("info") if isinstance(done.get("info"), dict) else {}
        return cls(test, str(done.get("outcome", "bug")), str(done.get("cause", "")), info,
                   str(done.get("detail", "")), int(done.get("asked") or 0))

    @classmethod
    def stopped(cls, test: TestFunction, error: ErrorInfo | None) -> "Outcome":
        error = error or ErrorInfo("skipped", message="non exécuté")
        return cls(test, "failed", "stopped", {"kind": error.kind, "message": error.message, "line": error.line,
                                               "type": error.type}, ran=False)

    @property
    def definitive(self) -> bool:
        """The same program would give the same outcome again (worth keeping for another copy)."""
        if self.outcome == "bug":
            return False
        return not (self.cause == "stopped" and self.info.get("kind") in TRANSIENT)

    def verdict(self, line: Callable[[int | None], int | None] = lambda n: n) -> Verdict | None:
        """What the blank's grade says of this test (None: skipped, it says nothing)."""
        if self.outcome == "passed":
            return Verdict(True)
        if self.outcome == "skipped":
            return None
        label = self.test.label
        if self.cause == "student":
            where = line(self.info.get("line"))
            said = f"ton code lève {self.info.get('type') or 'une erreur'}" + (f" (ligne {where})" if where else "")
            return Verdict(False, f"{label} : {said}", where)
        if self.cause == "stopped":
            error = ErrorInfo(kind=str(self.info.get("kind") or "crash"), type=str(self.info.get("type") or ""),
                              message=str(self.info.get("message") or ""), line=line(self.info.get("line")))
            return Verdict(False, f"{label} : {describe_error(error, message=False)}", error.line)
        said = SAID.get(self.cause, SAID["assert"]).format(type=self.info.get("type") or "erreur")
        return Verdict(False, f"{label} : {said}", kind="value" if self.cause == "assert" else "error")

    def problem(self) -> str:
        """For the teacher: why this test is a bug of the grader."""
        return f"{self.test.path}::{self.test.name} (trou « {self.test.blank} ») : " + (self.detail or self.cause)


def has_tests(path: Path) -> bool:
    """Does this check module hold test functions or test classes, as pytest collects them
    (top-level `def test…`, `class Test…`, or such names imported)? Read, not imported."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return True  # let pytest say what is wrong with it
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            return True
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name).startswith(("test", "Test")) for a in node.names):
                return True
    return False


class Clock:
    """What is left of a copy's time budget (seconds of the student's code)."""

    def __init__(self, budget: float, spent: float = 0.0):
        self.budget, self.spent = budget, spent

    def left(self) -> float:
        return self.budget - self.spent

    def spend(self, seconds: float) -> None:
        self.spent += seconds


def test_files(exercises: list[Exercise], *, public_only: bool = False) -> list[Path]:
    """The check modules of these exercises that hold test functions: what a worker collects."""
    paths = (lambda e: (e.checks_path,)) if public_only else (lambda e: (e.checks_path, e.grader_path))
    return [p for e in exercises for p in paths(e) if p.exists() and has_tests(p)]


class TestFunctions:
    """A grader's test functions, found by a worker's pytest session; problems refuse the grader."""

    __test__ = False

    def __init__(self, course: Course, exercises: list[Exercise], size: int = 1, *, public_only: bool = False):
        """`public_only`: the public checks' tests alone (the self-check: a student has no graders)."""
        self.by_blank: dict[tuple[str, str], list[TestFunction]] = {}
        self.problems: list[str] = []
        self.workers: WorkerPool | None = None
        files = test_files(exercises, public_only=public_only)
        if not files:
            return
        self.workers = WorkerPool(course.root, files, size)
        try:
            worker = self.workers.take()
        except WorkerFailed as exc:
            self.problems.append(str(exc))
            return
        try:
            items, errors = worker.items, worker.errors
        finally:
            self.workers.give(worker)
        wanted = {e.id for e in exercises}
        for error in errors:
            self.problems.append(f"{error.get('nodeid')} : ne se charge pas dans pytest :\n{error.get('detail', '')}")
        found: list[TestFunction] = []
        for data in items:
            info = TestInfo.from_json(data)
            if info.problem:
                self.problems.append(f"{info.path}::{info.name} : {info.problem}")
                continue
            if info.exercise in wanted:
                found.append(TestFunction(info.nodeid, info.path, info.name, info.exercise, info.blank, info.hidden,
                                          info.description))
        # The cases of a parametrized test are told apart by their number, never by their values.
        cases: dict[tuple[str, str], list[int]] = {}
        for n, test in enumerate(found):
            cases.setdefault((test.nodeid.split("[", 1)[0], test.blank), []).append(n)
        for positions in cases.values():
            if len(positions) > 1:
                for k, n in enumerate(positions, start=1):
                    t = found[n]
                    found[n] = TestFunction(t.nodeid, t.path, t.name, t.exercise, t.blank, t.hidden,
                                            f"{t.description} (cas {k} sur {len(positions)})")
        for test in sorted(found, key=lambda t: t.hidden):  # public tests first (a stable sort)
            self.by_blank.setdefault((test.exercise, test.blank), []).append(test)

    def __bool__(self) -> bool:
        return bool(self.by_blank)

    def of(self, exercise_id: str, blank_id: str) -> list[TestFunction]:
        return self.by_blank.get((exercise_id, blank_id), [])

    def run(self, tests: list[TestFunction], session, clock: Clock, spent_message: str) -> list[Outcome]:
        """Run `tests` in a worker, their questions answered by `session`, each from a fresh run of
        the program, within what `clock` has left."""
        assert self.workers is not None
        outcomes = []
        worker = self.workers.take()
        try:
            for test in tests:
                fresh = [True]

                def ask(expr: str, overrides, test=test, fresh=fresh) -> UnitResult:
                    left = clock.left()
                    if left <= 0.05:
                        return UnitResult.failed(SKIPPED, "skipped", spent_message, 1)
                    started = time.monotonic()
                    wall = left if left != float("inf") else None  # None: the unit's own limit
                    result = session.ask(expr, overrides=overrides, secret=test.hidden, fresh=fresh[0], wall=wall)
                    clock.spend(time.monotonic() - started)
                    fresh[0] = False
                    return result

                try:
                    done = worker.run(test.nodeid, ask, PATIENCE)
                except WorkerFailed as exc:
                    done = {"outcome": "bug", "cause": "bug", "detail": str(exc)}
                    self.workers.give(worker)
                    worker = self.workers.take()
                outcomes.append(Outcome.of(test, done))
        finally:
            self.workers.give(worker)
        return outcomes

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()
