"""The graders' test functions, as the grading engine sees them: found once, run blank by blank.

A test function is one more expectation of its blank. For each blank a copy filled, the engine opens
a session (sandbox/session.py) on the program it grades that blank with, and runs the blank's tests
one after the other in a worker (testworker.py), public ones first, each from a fresh run of the
program. What a student reads of a test follows the disclosure rules: a hidden test is named by its
description, never by its parameters or its asserts' values; an error of the student's code by its
type only.

Every test is first run on the reference solution (`reference=True`), with the bounds a copy's test
gets; one that does not pass there stops grading. So a test that then fails on a copy, however it
fails (its own exception on the copy's values, past its time or memory, its worker dead: cause
"overrun"), fails on what that copy gave it: it costs the copy that test, and is an `incident` of the
copy's grade for the teacher.
"""

from __future__ import annotations

import ast
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.course import Course, Exercise, memory_bound
from ..core.judge import Verdict, describe_error
from ..core.protocol import SKIPPED, ErrorInfo, UnitResult
from .pytest_graders import PATIENCE, TestInfo
from .testworker import WorkerFailed, WorkerPool

# CPU seconds a test may use on a copy: this many times what it used on the reference, within these.
CPU_FACTOR, CPU_FLOOR = 20.0, 5.0
# How a failed test reads to the student (hidden tests: never a value, never a message of the code).
SAID = {
    "assert": "ne passe pas",
    "reading": "ce que donne ton code ne permet pas de la vérifier ({type})",
}
# The student's code gave no answer for one of these: a matter of this run, not of the program.
TRANSIENT = ("timeout", "crash", "skipped", "start", "channel", "output", "protocol", "files")


@dataclass
class Outcome:
    test: TestInfo
    outcome: str  # "passed", "failed", "skipped" or "bug"
    cause: str = ""  # failed: "assert", "student", "stopped", "reading", "overrun"; bug: "bug"
    info: dict = field(default_factory=dict)
    detail: str = ""  # for the teacher: pytest's own report of the failure
    asked: int = 0
    ran: bool = True  # False: not run, the program having already hung or crashed, or no time left
    cpu: float = 0.0  # seconds of CPU the test used in its worker

    @classmethod
    def of(cls, test: TestInfo, done: dict) -> "Outcome":
        info = done.get("info") if isinstance(done.get("info"), dict) else {}
        cpu = done.get("cpu")
        return cls(test, str(done.get("outcome", "bug")), str(done.get("cause", "")), info,
                   str(done.get("detail", "")), int(done.get("asked") or 0),
                   cpu=float(cpu) if type(cpu) in (int, float) and cpu >= 0 else 0.0)

    @classmethod
    def stopped(cls, test: TestInfo, error: ErrorInfo | None) -> "Outcome":
        error = error or ErrorInfo("skipped", message="non exécuté")
        return cls(test, "failed", "stopped", {"kind": error.kind, "message": error.message, "line": error.line,
                                               "type": error.type}, ran=False)

    @property
    def definitive(self) -> bool:
        """The same program would give the same outcome again (worth keeping for another copy)."""
        if self.outcome == "bug" or self.cause == "overrun":
            return False
        return not (self.cause == "stopped" and self.info.get("kind") in TRANSIENT)

    def verdict(self, line: Callable[[int | None], int | None] = lambda n: n) -> Verdict | None:
        """What the blank's grade says of this test (None: skipped, it says nothing)."""
        if self.outcome == "passed":
            return Verdict(True)
        if self.outcome == "skipped":
            return None
        label = self.test.label
        if self.outcome == "bug":  # on a copy: the test passes on the reference, these values took it elsewhere
            return Verdict(False, f"{label} : le test n'a pas pu se servir de ce que donne ton code", kind="error")
        if self.cause == "overrun":
            return Verdict(False, f"{label} : {self.overrun()}", kind="error")
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

    def overrun(self) -> str:
        """How the test went past its bounds on the copy's values (French, shown to the student)."""
        kind = self.info.get("kind")
        if kind == "memory":
            return "le test a manqué de mémoire sur ce que donne ton code"
        if kind == "time":
            return (f"le test n'a pas fini sur ce que donne ton code (plus de {seconds(self.info.get('seconds'))} "
                    "de calcul)")
        return "le test n'a pas fini sur ce que donne ton code (son processus a dû être arrêté)"

    def incident(self) -> str | None:
        """For the teacher, on a copy: a test that did not behave as on the reference (None: it did)."""
        where = f"{self.test.path}::{self.test.name} (trou « {self.test.blank} »)"
        if self.outcome == "bug":
            last = [line for line in self.detail.splitlines() if line.strip()][-3:]
            return (f"{where} : erreur du test lui-même sur cette copie, alors qu'il passe sur la solution — "
                    f"compté faux pour la copie ; à vérifier : {' | '.join(last) or self.cause}")
        if self.cause == "overrun":
            said = {"memory": "a manqué de mémoire", "time": f"a dépassé {seconds(self.info.get('seconds'))} de calcul"
                    }.get(self.info.get("kind"), str(self.info.get("message") or "n'a pas fini"))
            return f"{where} : {said} sur cette copie (compté faux pour elle)"
        return None


def seconds(value) -> str:
    """A number of seconds in French (« 2 s », « 0,5 s »)."""
    if type(value) not in (int, float):
        return "?"
    return f"{value:.0f} s" if value == int(value) else f"{value:.1f} s".replace(".", ",")


def has_tests(path: Path) -> bool:
    """Does this check module hold test functions or classes, as pytest collects them (top-level
    `def test…`, `class Test…`, or such names imported)? Read, not imported."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return True  # let pytest say what is wrong with it
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
               or isinstance(node, ast.ClassDef) and node.name.startswith("Test")
               or isinstance(node, (ast.Import, ast.ImportFrom))
               and any((a.asname or a.name).startswith(("test", "Test")) for a in node.names)
               for node in tree.body)


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
    paths = [p for e in exercises for p in ((e.checks_path,) if public_only else (e.checks_path, e.grader_path))]
    return [p for p in paths if p.exists() and has_tests(p)]


class TestFunctions:
    """A grader's test functions, found by a worker's pytest session; problems refuse the grader.
    `public_only`: the public checks' tests alone (the self-check: a student has no graders)."""

    __test__ = False

    def __init__(self, course: Course, exercises: list[Exercise], size: int = 1, *, public_only: bool = False):
        self.by_blank: dict[tuple[str, str], list[TestInfo]] = {}
        self.problems: list[str] = []
        self.workers: WorkerPool | None = None
        self.reference_cpu: dict[str, float] = {}  # nodeid → CPU seconds it used on the reference
        files = test_files(exercises, public_only=public_only)
        if not files:
            return
        self.workers = WorkerPool(course.root, files, size, memory_mb=memory_bound(exercises))
        try:
            worker = self.workers.take()
        except WorkerFailed as exc:
            self.problems.append(str(exc))
            return
        self.workers.give(worker)
        for error in worker.errors:
            self.problems.append(f"{error.get('nodeid')} : ne se charge pas dans pytest :\n{error.get('detail', '')}")
        wanted = {e.id for e in exercises}
        found: list[TestInfo] = []
        for info in map(TestInfo.from_json, worker.items):
            if info.problem:
                self.problems.append(f"{info.path}::{info.name} : {info.problem}")
            elif info.exercise in wanted:
                found.append(info)
        # The cases of a parametrized test are told apart by their number, never by their values.
        cases: dict[tuple[str, str], list[int]] = {}
        for n, test in enumerate(found):
            cases.setdefault((test.nodeid.split("[", 1)[0], test.blank), []).append(n)
        for positions in (p for p in cases.values() if len(p) > 1):
            for k, n in enumerate(positions, start=1):
                description = f"{found[n].description} (cas {k} sur {len(positions)})"
                found[n] = dataclasses.replace(found[n], description=description)
        for test in sorted(found, key=lambda t: t.hidden):  # public tests first (a stable sort)
            self.by_blank.setdefault((test.exercise, test.blank), []).append(test)

    def __bool__(self) -> bool:
        return bool(self.by_blank)

    def of(self, exercise_id: str, blank_id: str) -> list[TestInfo]:
        return self.by_blank.get((exercise_id, blank_id), [])

    def run(self, tests: list[TestInfo], session, clock: Clock | None = None, spent_message: str = "", *,
            reference: bool = False, value_kb: int | None = None) -> list[Outcome]:
        """Run `tests` in a worker, their questions answered by `session`, each from a fresh run of
        the program, within what `clock` has left (None: no copy's budget). On the reference, a failure
        of any kind is the test's (outcome "bug"); on a copy, a test past its bounds or a worker that
        dies under it is the copy's failure (cause "overrun")."""
        assert self.workers is not None
        outcomes = []
        worker = None
        clock = clock or Clock(float("inf"))
        try:
            for test in tests:
                if worker is None:
                    worker = self.workers.take()
                cpu = PATIENCE if reference else self.cpu_budget(test)
                try:
                    outcome = Outcome.of(test, worker.run(test.nodeid, _asker(session, clock, spent_message, test.hidden),
                                                          PATIENCE, cpu=cpu, value_kb=value_kb))
                except WorkerFailed as exc:
                    self.workers.give(worker)  # dead or killed: the pool replaces it
                    worker = None
                    outcome = (Outcome(test, "bug", "bug", detail=str(exc)) if reference else
                               Outcome(test, "failed", "overrun", {"kind": "worker", "message": exc.why}, str(exc)))
                if outcome.cause == "overrun":
                    outcome.info.setdefault("seconds", cpu)
                if reference:
                    self.reference_cpu[test.nodeid] = outcome.cpu
                outcomes.append(outcome)
        finally:
            if worker is not None:
                self.workers.give(worker)
        return outcomes

    def cpu_budget(self, test: TestInfo) -> float:
        """CPU seconds the test may use on a copy: a few times what it used on the reference."""
        return min(PATIENCE, max(CPU_FLOOR, CPU_FACTOR * self.reference_cpu.get(test.nodeid, PATIENCE)))

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()


def _asker(session, clock: Clock, spent_message: str, secret: bool) -> Callable[[str, tuple], UnitResult]:
    """A test's questions to `session`, the first from a fresh run of the program, timed by `clock`."""
    fresh = True

    def ask(expr: str, overrides) -> UnitResult:
        nonlocal fresh
        left = clock.left()
        if left <= 0.05:
            return UnitResult.failed(SKIPPED, "skipped", spent_message, 1)
        started = time.monotonic()
        wall = left if left != float("inf") else None  # None: the unit's own limit
        result = session.ask(expr, overrides=overrides, secret=secret, fresh=fresh, wall=wall)
        clock.spend(time.monotonic() - started)
        fresh = False
        return result

    return ask
