"""The grader's side of the sandbox: a `Runner` is one sandboxed zygote, used by one thread at a time.

Whatever happens inside (a supervisor killed by the student's code, a runner frozen, a sandbox that
dies), `Runner.run` returns one result per unit (the unit in progress a crash, the rest run again in
a fresh runner), and `Session.ask` answers, never raises.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import replace

from . import backend as sandbox_mod
from ..core import wire
from .supervisor import GRACE, START, close_fds, probe_wall
from ..core.protocol import CRASH, SESSION, TIMEOUT, Ask, Job, Limits, Unit, UnitResult, frame
from ..core.wire import Bounds

START_TIMEOUT = 120.0
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trous-sandbox-spawner")


class RunnerError(RuntimeError):
    pass


class Runner(AbstractContextManager):
    def __init__(self, mode: str = "auto", slot: int = 0, preload: tuple[str, ...] = ("numpy",),
                 memory_mb: int | None = None):
        self.mode, self.slot, self.preload, self.memory_mb = mode, slot, preload, memory_mb
        self.spec: sandbox_mod.SandboxSpec | None = None
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.ready = False  # the zygote said it is ready (b"R")
        self.interrupted = False  # interrupt(): no sandbox is started any more
        self.restarts = 0

    # -- life cycle ----------------------------------------------------------------------------
    def want(self, modules) -> None:
        """Also import these in the zygote (from its next start): every job then has them for free."""
        self.preload = tuple(dict.fromkeys([*self.preload, *modules]))

    @property
    def kind(self) -> str:
        self.spec = self.spec or self._build()
        return self.spec.kind

    def _build(self) -> sandbox_mod.SandboxSpec:
        return sandbox_mod.build(self.mode, self.slot, self.preload, memory_mb=self.memory_mb)

    def launch(self) -> None:
        """Start the sandbox without waiting: it imports numpy while the self-check collects."""
        if self.process is not None and self.process.poll() is None:
            return
        self._stop_process()
        if self.interrupted:
            raise RunnerError("le correcteur a été arrêté")
        if self.spec is None or self.spec.workroot:  # a limits-only runner gets a new private directory
            self.close()
            self.spec = self._build()
        parent, child = socket.socketpair()
        try:
            # bwrap's --die-with-parent follows the *thread* that started it: started from a worker
            # thread, the sandbox would be killed when that thread ends. One long-lived thread starts them all.
            self.process = _SPAWNER.submit(
                subprocess.Popen, self.spec.argv, stdin=child.fileno(), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL if not os.environ.get("TROUS_DEBUG") else None,
                env=self.spec.env, close_fds=True, start_new_session=True).result()
        finally:
            child.close()
        self.control = parent

    def start(self) -> None:
        self.launch()
        if self.ready:
            return
        self.control.settimeout(START_TIMEOUT)
        try:
            ready = self.control.recv(1)
        except OSError:
            ready = b""
        if ready != b"R" or self.interrupted:
            self._stop_process()
            raise RunnerError("le correcteur a été arrêté" if self.interrupted
                              else f"le bac à sable ({self.spec.kind}) n'a pas démarré")
        self.ready = True

    def interrupt(self) -> None:
        """From another thread: kill the sandbox (the job's units not yet reported end as crashes) and
        start no other (run() then fails with RunnerError)."""
        self.interrupted = True
        self.ready = False
        _kill(self.process)

    def close(self) -> None:
        self._stop_process()
        if self.spec is not None:
            self.spec.release()  # its private directory, cgroup and leased uids
            self.spec = None

    def restart(self) -> None:
        """This runner cannot be trusted with another job: the next one starts a fresh one."""
        self._stop_process()
        self.restarts += 1

    def _stop_process(self) -> None:
        self.ready = False
        if self.control is not None:
            with suppress(OSError):
                self.control.close()
            self.control = None
        if self.process is not None:
            _kill(self.process)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            self.process = None

    def __exit__(self, *exc) -> None:
        self.close()

    # -- jobs ----------------------------------------------------------------------------------
    def run(self, job: Job) -> list[UnitResult]:
        results: dict[int, UnitResult] = {}
        remaining = list(range(len(job.units)))
        while remaining:
            sub = Job(tuple(job.units[i] for i in remaining), job.limits, job.capture_output)
            got, broken, stuck = self._attempt(sub)
            for local, result in got.items():
                results[remaining[local]] = result
            if len(got) == len(remaining):  # every unit has its result (the last one, maybe, a timeout)
                break
            # The first unit without a result is the culprit; the rest is run again in a fresh runner.
            lost = next(i for i in remaining if i not in results)
            group = job.units[lost].group
            status, kind, said = _failure(broken, stuck)
            results[lost] = UnitResult.failed(status, kind, said, len(job.units[lost].probes))
            for i in remaining:  # the same program would do it again for its other variants
                if group and i not in results and job.units[i].group == group:
                    why = "non exécuté, car sur une autre entrée : " + said
                    results[i] = UnitResult.failed("skipped", "skipped", why, len(job.units[i].probes))
            remaining = [i for i in remaining if i not in results]
        return [results[i] for i in range(len(job.units))]

    def open_channel(self) -> tuple[int, int] | None:
        """A new job's (job writer, result reader), their other ends handed to the zygote; or None."""
        self.start()
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        try:
            socket.send_fds(self.control, [b"J"], [job_r, res_w])
        except OSError:
            close_fds(job_r, job_w, res_r, res_w)
            return None
        close_fds(job_r, res_w)
        return job_w, res_r

    def _attempt(self, job: Job) -> tuple[dict[int, UnitResult], str | None, bool]:
        """(results by unit, why the stream was refused, whether the runner was stuck)."""
        payload = job.to_bytes()
        channel = self.open_channel()
        if channel is None:
            self.restart()
            return {}, None, False
        job_w, res_r = channel
        results: dict[int, UnitResult] = {}
        broken: str | None = None  # a line no supervisor writes: the sandbox's word is refused from there on
        deadline = time.monotonic() + 10.0 + sum((u.wall or job.limits.wall) + 2.0 + len(u.probes)
                                                 * probe_wall(job.limits) for u in job.units)
        # The supervisor reads the whole job before it runs any of it: written first, within the deadline.
        try:
            written = _write_within(job_w, payload, deadline)
        except OSError:  # the supervisor is gone: its stream of results ends at once
            written = True
        os.close(job_w)
        bounds = Bounds.of(job.limits)
        # The longest line for one unit: its probes' values and its state, its captured output and error texts.
        values = max((len(u.probes) + (u.state is not None) for u in job.units), default=1)
        output = job.limits.output_kb * 1024 if job.capture_output else 0
        reader = LineReader(res_r, bounds.line_bytes(values, output + (64 << 10)))
        try:
            while broken is None and (line := reader.next(deadline)) is not None:
                try:
                    message = wire.parse_line(line, reader.lines.limit)
                except wire.WireError as exc:
                    broken = exc.reason
                    break
                index = message.get("i")
                if type(index) is int and 0 <= index < len(job.units) and isinstance(message.get("result"), dict):
                    results[index] = UnitResult.from_json(message["result"], len(job.units[index].probes),
                                                          size=len(line), bounds=bounds)
            broken = broken or reader.overflowed()
        finally:
            os.close(res_r)
        stuck = not written or (broken is None and not self._await_end(deadline))
        if broken or stuck:
            self.restart()
        return results, broken, stuck

    def session(self, unit: Unit, limits: Limits | None = None) -> "Session":
        """An interactive unit on `unit`'s program (its probes are ignored): ask, then ask again."""
        return Session(self, unit, limits or Limits())

    def _await_end(self, deadline: float) -> bool:
        self.control.settimeout(max(1.0, deadline - time.monotonic()))
        try:
            return self.control.recv(1) == b"E"  # the job is over, and what it left is gone
        except OSError:
            return False


class Session(AbstractContextManager):
    """The grader's end of a session: one question at a time, each answered before the next."""

    SLACK = 5.0  # seconds past the supervisor's own clocks before the runner is deemed stuck

    def __init__(self, runner: Runner, unit: Unit, limits: Limits):
        self.runner, self.unit, self.limits = runner, unit, limits
        self.failure: tuple[str, str, str] | None = None  # (status, kind, message): why no question can be answered
        self.bounds = Bounds.of(limits)
        channel = runner.open_channel()
        self.job_w, res_r = channel or (-1, -1)
        # An answer carries one value (the program's error texts and the question's besides).
        self.reader = LineReader(res_r, self.bounds.line_bytes(1, 64 << 10))
        if channel is None:
            self._break((CRASH, "crash", "le correcteur n'a pas pu ouvrir la session"))
        self._write(SESSION + frame({"unit": replace(unit, probes=(), overrides=(), state=None).to_json(),
                                     "limits": limits.__dict__}))

    def _write(self, data: bytes) -> None:
        """Within a deadline: a frame larger than the pipe holds would block for good a thread whose
        supervisor the copy stopped."""
        if self.failure:
            return
        try:
            written = _write_within(self.job_w, data, time.monotonic() + 10.0 + self.SLACK)
        except OSError:  # the supervisor is gone
            written = None
        if not written:
            self._break(_failure(None, stuck=written is False))

    def _break(self, failure: tuple[str, str, str]) -> None:
        if self.failure is None:
            self.failure = failure
            self.runner.restart()
        if self.job_w >= 0:
            os.close(self.job_w)
            self.job_w = -1
        self.reader.close()

    def ask(self, expr: str, *, setup: str | None = None, overrides: tuple[tuple[str, str], ...] = (),
            secret: bool = False, fresh: bool = False, wall: float | None = None) -> UnitResult:
        """`expr` in the program run with `overrides` (run anew when they change, or `fresh`): a
        `UnitResult` whose only probe is that value."""
        self._write(frame(Ask(expr, setup, tuple(overrides), secret, fresh, wall).to_json()))
        if self.failure:
            return UnitResult.failed(*self.failure, 1)
        unit_wall = self.unit.wall or self.limits.wall
        allowed = min(unit_wall, wall) if wall is not None else unit_wall
        deadline = time.monotonic() + allowed + START + probe_wall(self.limits) + 2 * GRACE + self.SLACK
        line = self.reader.next(deadline)
        if line is None:
            return self._fail(self.reader.overflowed(), stuck=not self.reader.eof)
        try:
            message = wire.parse_line(line, self.reader.lines.limit)
        except wire.WireError as exc:
            return self._fail(exc.reason)
        if "status" not in message:
            return self._fail("réponse illisible")
        return UnitResult.from_json(message, 1, size=len(line), bounds=self.bounds)

    def _fail(self, broken: str | None, stuck: bool = False) -> UnitResult:
        self._break(_failure(broken, stuck))
        return UnitResult.failed(*self.failure, 1)

    def close(self) -> None:
        """End the session: the supervisor stops the child and wipes its folder, the zygote sweeps."""
        if self.failure:
            return
        os.close(self.job_w)
        self.job_w = -1
        deadline = time.monotonic() + 10.0 + GRACE
        while self.reader.next(deadline) is not None:  # to the end of the stream: the supervisor is done
            pass
        self.reader.close()
        if not self.runner._await_end(deadline + self.SLACK):
            self.runner.restart()

    def __exit__(self, *exc) -> None:
        self.close()


STUCK = "temps dépassé : le correcteur a dû être redémarré"


def _failure(broken: str | None, stuck: bool) -> tuple[str, str, str]:
    """(status, kind, message) of a unit or question left without an answer: the supervisor sent a
    line none writes (`broken`), did not answer within all its clocks (`stuck`), or is gone."""
    if broken:
        return CRASH, "protocol", f"le programme a perturbé le correcteur ({broken})"
    if stuck:
        return TIMEOUT, "timeout", STUCK
    return CRASH, "crash", "le programme a interrompu le correcteur (processus de supervision tué)"


class LineReader:
    """The lines a process sends back on a pipe (a supervisor's, the test worker's), each bounded."""

    def __init__(self, fd: int, limit: int):
        self.fd, self.lines, self.eof = fd, wire.Lines(limit), False

    def next(self, deadline: float) -> bytes | None:
        """The next line; None past the deadline, at the end, or once a line went past its bound."""
        while (line := self.lines.pop()) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof or self.lines.overflow:
                return None
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
                return None
            self.lines.feed(chunk)
        return line

    def overflowed(self) -> str | None:
        return f"réponse de plus de {self.lines.limit >> 20} Mio" if self.lines.overflow else None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _write_within(fd: int, data: bytes, deadline: float) -> bool:
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([], [fd], [], remaining)[1]:
            return False
        with suppress(BlockingIOError):
            view = view[os.write(fd, view):]
    return True


def _kill(process: subprocess.Popen | None) -> None:
    if process is not None and process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()


class RunnerPool(AbstractContextManager):
    """`size` runners, each in its own sandbox slot, fed from one queue of jobs."""

    def __init__(self, size: int | None = None, mode: str = "auto", preload: tuple[str, ...] = ("numpy",),
                 memory_mb: int | None = None):
        # `memory_mb`: the memory bound the sandboxes' tmpfs sizes follow (backend.tmpfs_bytes).
        self.size = max(1, size or os.cpu_count() or 1)
        self.runners = [Runner(mode, slot, preload, memory_mb) for slot in range(self.size)]
        self._free: queue.LifoQueue[Runner] = queue.LifoQueue()  # waits while every runner is taken
        for runner in self.runners:
            self._free.put(runner)

    @property
    def kind(self) -> str:
        return self.runners[0].kind

    def want(self, modules) -> None:
        for runner in self.runners:
            runner.want(modules)

    def run(self, job: Job) -> list[UnitResult]:
        runner = self._free.get()
        try:
            return runner.run(job)
        finally:
            self._free.put(runner)

    @contextmanager
    def session(self, unit: Unit, limits: Limits | None = None) -> Iterator[Session]:
        """A session on one of the pool's runners, held until the session ends."""
        runner = self._free.get()
        try:
            with runner.session(unit, limits) as session:
                yield session
        finally:
            self._free.put(runner)

    def map(self, jobs: Iterable[Job]) -> Iterator[tuple[int, list[UnitResult]]]:
        """(position, results) of each job, as each finishes."""
        with ThreadPoolExecutor(max_workers=self.size) as executor:
            futures = {executor.submit(self.run, job): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def close(self) -> None:
        for runner in self.runners:
            runner.close()

    def __exit__(self, *exc) -> None:
        self.close()
