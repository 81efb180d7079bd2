"""The graders' test functions: found once, run blank by blank, each one more expectation of its blank.

Each test runs, from a fresh run of the program, in a session (sandbox/supervisor.py) on the program
the engine grades its blank with, public tests first; a hidden test is shown by its description, an
error of the student's code by its type only. Every test first runs on the reference solution with a
copy's bounds and must pass there: so a test that then fails on a copy, however (its exception, its
time or memory, its worker dead: cause "overrun"), costs that copy the test and is an `incident`.

A pytest session is not made for threads, so each grading thread has a *worker*: a process of the
teacher's account (it runs the graders, never a student's code) where pytest collects the tests once,
then runs one when asked. A test's `eleve(...)` is asked of the grading thread, which asks the
sandbox; the answer comes back as JSON data: the student's code never reaches the worker, nor the
worker the sandbox. The worker handles a copy's values, so it is bounded (pytest_graders.CpuBudget):
after collection its address space grows by at most the course's memory bound, each test has `cpu`
seconds of CPU, and a test that blocks is killed with its worker. Answers are read under the copy's
bounds (core/wire.py).

The worker is started with {"root": course root, "files": [test files], "memory_mb": n} as its argument.
Protocol (JSON lines; the worker's stdin and a copy of its stdout, pytest's own output going to stderr):
    worker → engine   {"collected": {"items": [TestInfo…], "errors": [...]}}
    engine → worker   {"run": nodeid, "cpu": seconds, "value_kb": n}
    worker → engine   {"ask": {"expr": ..., "overrides": [[name, text], ...]}}   zero or more times, each
    engine → worker   {"result": {"status", "error", "probes": [...]}}       answered before the next
    worker → engine   {"done": {"outcome": ..., "cause": ..., "info": ..., "detail": ..., "asked": n, "cpu": s}}
The worker ends when its stdin closes.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol  # to run one item on demand

from ..core.course import Course, Exercise, memory_bound
from ..core.checks import TestInfo, TestResult
from ..core.protocol import SKIPPED, Limits, UnitResult
from ..core.wire import Bounds, WireError, parse_line
from ..sandbox.pool import LineReader, Session
from .eleve import Eleve
from .pytest_graders import BACKEND, CAUSE, INFO, PATIENCE, CpuBudget, limit_memory, skip_reason

START_TIMEOUT = 120.0
# A line from the worker: a question's variables (eleve.MAX_TEXT each) or a test's report.
MAX_LINE = 64 << 20


class WorkerFailed(RuntimeError):
    """The worker died, or a test kept it busy too long (whose fault: see TestFunctions.run)."""

    def __init__(self, message: str, why: str = ""):
        super().__init__(message)
        self.why = why or message  # without the test's name


# -- in the worker ----------------------------------------------------------------------------------
def result_json(result: UnitResult) -> dict:
    return {"status": result.status, "error": result.error and asdict(result.error),
            "probes": [({"value": p.value} if p.error is None else {"error": asdict(p.error)}) if p.evaluated else None
                       for p in result.probes]}


class Serve:
    """The worker session's plugin: collect, then run what the engine asks; `eleve` asks the engine."""

    worker = True

    def __init__(self, channel_in, channel_out, memory_mb: int | None = None):
        self.channel_in, self.channel_out = channel_in, channel_out
        self.errors: list[dict] = []
        self.items: dict = {}
        self.asked = 0
        self.memory_mb = memory_mb
        self.bounds = Bounds()

    def eleve(self, info, path) -> Eleve:
        def ask(expr: str, overrides) -> UnitResult:
            with CpuBudget.held():  # the engine's and the sandbox's time, not the test's
                self.asked += 1
                self.send({"ask": {"expr": expr, "overrides": [list(p) for p in overrides]}})
                reply = self.receive()
                if reply is None:  # the engine is gone: nothing left to do
                    os._exit(0)
                result = reply.get("result")
                return UnitResult.from_json(result if isinstance(result, dict) else {}, 1, bounds=self.bounds)

        return Eleve(ask, blank=info.blank or "")

    def send(self, message: dict) -> None:
        self.channel_out.write((json.dumps(message) + "\n").encode())
        self.channel_out.flush()

    def receive(self) -> dict | None:
        line = self.channel_in.readline()
        return json.loads(line) if line else None

    @pytest.hookimpl(tryfirst=True)  # before the graders plugin's own, which asks who answers eleve
    def pytest_configure(self, config):
        config.stash[BACKEND] = self

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append({"nodeid": report.nodeid, "detail": report.longreprtext[-4000:]})

    def pytest_collection_finish(self, session):
        self.items = {item.nodeid: item for item in session.items}
        infos = [item.stash[INFO].to_json() for item in session.items if INFO in item.stash]
        # The graders and what they import are loaded: from here on, the tests' own memory is bounded.
        limit_memory(self.memory_mb)
        self.send({"collected": {"items": infos, "errors": self.errors}})

    def pytest_runtestloop(self, session):
        while True:
            request = self.receive()
            if request is None:
                return True
            item = self.items.get(request.get("run"))
            if item is None:
                self.send({"done": {"outcome": "bug", "cause": "bug", "detail": "test introuvable"}})
                continue
            self.asked = 0
            value_kb = request.get("value_kb")
            self.bounds = Bounds.of(Limits(value_kb=value_kb)) if type(value_kb) is int and value_kb > 0 else Bounds()
            cpu = request.get("cpu")
            started = time.process_time()
            with CpuBudget(float(cpu) if type(cpu) in (int, float) and cpu > 0 else 0.0):
                reports = runtestprotocol(item, log=False, nextitem=None)
            done = self.outcome(item, reports)
            done["cpu"] = round(time.process_time() - started, 4)
            self.send({"done": done})

    def outcome(self, item, reports) -> dict:
        cause, info = item.stash.get(CAUSE, ("", {}))
        item.stash[CAUSE] = ("", {})
        failed = next((r for r in reports if r.failed), None)
        skipped = next((r for r in reports if r.skipped), None)
        if failed is not None:
            return {"outcome": "bug" if cause in ("bug", "") else "failed", "cause": cause or "bug", "info": info,
                    "detail": failed.longreprtext[-6000:], "asked": self.asked}
        if skipped is not None:
            return {"outcome": "skipped", "detail": skip_reason(skipped)[:500], "asked": self.asked}
        return {"outcome": "passed", "asked": self.asked}


def main() -> int:
    # The protocol gets its own copy of stdout; whatever pytest or a test prints goes to stderr.
    channel_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    channel_in = sys.stdin.buffer
    start = json.loads(sys.argv[1])
    root = start.get("root") or "."
    os.chdir(root)
    memory = start.get("memory_mb")
    plugin = Serve(channel_in, channel_out, memory if type(memory) is int else None)
    args = ["-p", "trous.grade.pytest_graders", "-p", "no:cacheprovider", "--import-mode=importlib",
            "-c", os.devnull, "--rootdir", root, "--confcutdir", root, "-q", "-s", "--no-header",
            "-W", "ignore::pytest.PytestAssertRewriteWarning", *start.get("files", [])]
    return int(pytest.main(args, plugins=[plugin]))


# -- in the engine ----------------------------------------------------------------------------------
class Worker:
    """The engine's end of one worker process."""

    def __init__(self, root: Path, files: list[Path], memory_mb: int | None = None):
        started = time.monotonic()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
        # Only trous's plugin: the worker's session must not depend on what else is installed here.
        env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
        start = {"root": str(root), "files": [str(f) for f in files], "memory_mb": memory_mb}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trous.grade.testworker", json.dumps(start)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=None if os.environ.get("TROUS_DEBUG") else subprocess.DEVNULL, env=env,
            cwd=str(root), start_new_session=True)
        self.reader = LineReader(self.process.stdout.fileno(), MAX_LINE)  # its output closed (eof): it is ending
        self.garbled = False  # it wrote a line that is not a message
        self._finalizer = weakref.finalize(self, _stop, self.process)
        message = self._receive(time.monotonic() + START_TIMEOUT)
        if message is None or "collected" not in message:
            self.close()
            raise WorkerFailed("le processus des tests des correcteurs n'a pas démarré (pytest ne collecte pas "
                               "les correcteurs ; lancez « pytest graders/ » pour voir pourquoi)")
        self.items: list[dict] = message["collected"].get("items", [])
        self.errors: list[dict] = message["collected"].get("errors", [])
        self.start_seconds = time.monotonic() - started  # from its launch to its collection

    def _send(self, message: dict) -> None:
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except (OSError, ValueError):
            raise WorkerFailed("le processus des tests des correcteurs s'est arrêté") from None

    def _receive(self, deadline: float) -> dict | None:
        line = self.reader.next(deadline)
        if line is None:
            return None
        try:
            return parse_line(line, MAX_LINE)
        except WireError:
            self.garbled = True
            return None

    def run(self, nodeid: str, ask: Callable[[str, tuple], UnitResult], patience: float, cpu: float = 0.0,
            value_kb: int | None = None) -> dict:
        """Run one test; `ask` answers its questions. `patience`: seconds the test's own code may take
        (answering its questions not counted); `cpu`: seconds of CPU it may use (0: no bound)."""
        self._send({"run": nodeid, "cpu": cpu, "value_kb": value_kb})
        deadline = time.monotonic() + patience
        while True:
            message = self._receive(deadline)
            if message is None:
                if self.reader.eof:  # it is ending: let it be reaped, to say how
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.process.wait(timeout=2)
                alive = self.process.poll() is None
                if self.reader.lines.overflow or self.garbled:
                    why = "le processus des tests des correcteurs a écrit une ligne illisible ou démesurée"
                elif alive:
                    why = f"le test ne rend pas la main après {patience:.0f} s"
                else:
                    code = self.process.returncode
                    why = "le processus des tests des correcteurs s'est arrêté" + (
                        f" (signal {-code})" if code is not None and code < 0 else
                        f" (code de sortie {code})" if code else "")
                if alive:  # stuck in a test, or past its bounds: it is not given its five seconds to end
                    self.process.kill()
                self.close()
                raise WorkerFailed(f"{nodeid} : {why}", why)
            if "ask" in message:
                question = message["ask"]
                started = time.monotonic()
                overrides = tuple((str(k), str(v)) for k, v in question.get("overrides", ()))
                result = ask(str(question.get("expr", "")), overrides)
                self._send({"result": result_json(result)})
                deadline += time.monotonic() - started
                continue
            if "done" in message:
                return message["done"]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        self._finalizer()


def _stop(process: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    with contextlib.suppress(OSError):
        process.stdout.close()


class WorkerPool:
    """One worker per grading thread at most, replaced when one dies. A start costs about a second of
    CPU, a test tens of milliseconds: a thread finding no free worker waits for a busy one as long as
    the last start took (rent or buy), then has one started (one at a time) and takes the first free."""

    def __init__(self, root: Path, files: list[Path], size: int, memory_mb: int | None = None):
        self.root, self.files, self.size = root, files, max(1, size)
        self.memory_mb = memory_mb
        self.free: list[Worker] = []
        self.started = 0  # workers alive or starting
        self.starting = False
        self.failure: WorkerFailed | None = None  # why the last start failed
        self.lock = threading.Condition()
        self.closed = False
        self.start_seconds = 0.0  # how long the last successful start took: the patience of a take

    def take(self) -> Worker:
        with self.lock:
            since = time.monotonic()
            while True:
                if self.closed:
                    raise WorkerFailed("les tests des correcteurs sont arrêtés (correction interrompue)")
                while self.free and not self.free[-1].alive:
                    self.free.pop().close()
                    self.started -= 1
                if self.free:
                    return self.free.pop()
                if self.started == 0 and self.failure is not None and not self.starting:
                    failure, self.failure = self.failure, None
                    raise failure
                # After a failed start, the running workers go on alone; with none left, the failure
                # is said once, and the next take tries again.
                if self.started < self.size and not self.starting and self.failure is None:
                    patience = self.start_seconds if self.started else 0.0
                    waited = time.monotonic() - since
                    if waited < patience:  # a busy one is likely given back before a new one collects
                        self.lock.wait(patience - waited)
                        continue
                    self.started += 1
                    self.starting = True
                    threading.Thread(target=self._start_one, name="trous-test-worker-start", daemon=True).start()
                self.lock.wait()

    def _start_one(self) -> None:
        worker, failure = None, None
        try:
            worker = _claim(self.root, self.files, self.memory_mb) or Worker(self.root, self.files, self.memory_mb)
        except BaseException as exc:  # noqa: BLE001 - said to the threads that wait for a worker
            failure = exc if isinstance(exc, WorkerFailed) else WorkerFailed(str(exc))
        with self.lock:
            self.starting, self.failure = False, failure
            if worker is not None and not self.closed:
                self.start_seconds = worker.start_seconds
                self.free.append(worker)
            else:
                self.started -= 1
                if worker is not None:
                    worker.close()
            self.lock.notify_all()

    def give(self, worker: Worker) -> None:
        with self.lock:
            if worker.alive:
                self.free.append(worker)
            else:
                worker.close()
                self.started -= 1
            self.lock.notify_all()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for worker in self.free:
                worker.close()
            self.started -= len(self.free)
            self.free.clear()


# -- started ahead -----------------------------------------------------------------------------------
# `trous grade` starts a worker collecting the graders while the copies are read and the sandboxes
# start; the first pool on the same graders takes it.
_ahead: dict[tuple, Future] = {}
_ahead_lock = threading.Lock()


def _key(root: Path, files: list[Path], memory_mb: int | None = None) -> tuple:
    return str(Path(root).resolve()), tuple(str(Path(f).resolve()) for f in files), memory_mb


def start_ahead(root: Path, files: list[Path], memory_mb: int | None = None) -> None:
    """Start collecting these graders now, in the background (nothing when there are none)."""
    if not files:
        return
    key = _key(root, files, memory_mb)
    with _ahead_lock:
        if key in _ahead:
            return
        future: Future = Future()
        _ahead[key] = future

    def start() -> None:
        try:
            future.set_result(Worker(root, files, memory_mb))
        except BaseException as exc:  # noqa: BLE001 - said again by the start that replaces it
            future.set_exception(exc)

    threading.Thread(target=start, name="trous-test-worker-ahead", daemon=True).start()


def _claim(root: Path, files: list[Path], memory_mb: int | None) -> Worker | None:
    """The worker started ahead on these graders; None if none or it failed (a new start says why)."""
    with _ahead_lock:
        future = _ahead.pop(_key(root, files, memory_mb), None)
    if future is None:
        return None
    try:
        return future.result()
    except BaseException:  # noqa: BLE001
        return None


def drop_ahead() -> None:
    """Stop the workers started ahead that no pool took (a refused run, or fewer exercises)."""
    with _ahead_lock:
        futures = list(_ahead.values())
        _ahead.clear()
    for future in futures:
        future.add_done_callback(lambda f: f.exception() is None and f.result().close())


# -- the engine's view: outcomes, and the tests of each blank --------------------------------------
# CPU seconds a test may use on a copy: this many times what it used on the reference, within these.
CPU_FACTOR, CPU_FLOOR = 20.0, 5.0


def has_tests(path: Path) -> bool:
    """Does this module hold what pytest collects (`def test…`, `class Test…`, imported or not)? Read,
    not imported."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return True  # let pytest say what is wrong with it
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
               or isinstance(node, ast.ClassDef) and node.name.startswith("Test")
               or isinstance(node, (ast.Import, ast.ImportFrom))
               and any((a.asname or a.name).startswith(("test", "Test")) for a in node.names)
               for node in tree.body)


@dataclass
class Clock:
    """A copy's time budget (seconds of the student's code), and what is said past it."""

    budget: float
    message: str = ""
    spent: float = 0.0

    def left(self) -> float:
        return self.budget - self.spent


def test_files(exercises: list[Exercise], *, public_only: bool = False) -> list[Path]:
    """What a worker collects."""
    paths = [p for e in exercises for p in ((e.checks_path,) if public_only else (e.checks_path, e.grader_path))]
    return [p for p in paths if p.exists() and has_tests(p)]


class TestFunctions:
    """A grader's test functions; `problems` refuse the grader. `public_only`: the self-check's (a
    student has no graders)."""

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
                found[n] = replace(found[n], description=description)
        for test in sorted(found, key=lambda t: t.hidden):  # public tests first (a stable sort)
            self.by_blank.setdefault((test.exercise, test.blank), []).append(test)

    def __bool__(self) -> bool:
        return bool(self.by_blank)

    def of(self, exercise_id: str, blank_id: str) -> list[TestInfo]:
        return self.by_blank.get((exercise_id, blank_id), [])

    def run(self, tests: list[TestInfo], session, clock: Clock | None = None, *, reference: bool = False,
            value_kb: int | None = None) -> list[TestResult]:
        """`tests` in a worker, asking `session`, within what `clock` has left (None: no budget). A worker
        dying under a test: on the reference, the test's bug; on a copy, the copy's "overrun"."""
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
                    outcome = TestResult.of(test, worker.run(test.nodeid, asker(lambda: session, clock, test.hidden),
                                                          PATIENCE, cpu=cpu, value_kb=value_kb))
                except WorkerFailed as exc:
                    self.workers.give(worker)  # dead or killed: the pool replaces it
                    worker = None
                    outcome = (TestResult(test, "bug", "bug", detail=str(exc)) if reference else
                               TestResult(test, "failed", "overrun", {"kind": "worker", "message": exc.why}, str(exc)))
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
        return min(PATIENCE, max(CPU_FLOOR, CPU_FACTOR * self.reference_cpu.get(test.nodeid, PATIENCE)))

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()


def asker(session: Callable[[], Session], clock: Clock, secret: bool) -> Callable[[str, tuple], UnitResult]:
    """A test's questions to `session()`, the first from a fresh run (no test sees what another did),
    timed by `clock`; CpuBudget.held() keeps the sandbox's time out of the test's CPU seconds. Also
    `pytest graders --copie`'s (author/copie.py)."""
    fresh = True

    def ask(expr: str, overrides) -> UnitResult:
        nonlocal fresh
        left = clock.left()
        if left <= 0.05:
            return UnitResult.failed(SKIPPED, "skipped", clock.message, 1)
        started = time.monotonic()
        wall = left if left != float("inf") else None  # None: the unit's own limit
        with CpuBudget.held():
            result = session().ask(expr, overrides=overrides, secret=secret, fresh=fresh, wall=wall)
        clock.spent += time.monotonic() - started
        fresh = False
        return result

    return ask


if __name__ == "__main__":
    sys.exit(main())
