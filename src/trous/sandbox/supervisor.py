"""The supervisor of one job: holds the job, feeds the processes that run student code, owns the clock.

It never runs student code itself, and it never forks the processes that do: it asks the zygote,
which never held a job, for a fresh child (zygote.py), then feeds that child one command at a time
(child.py): the unit's program compiled here (the child never sees source text), then each probe
once the previous one has answered, then the state, then the end. So the child's memory holds
nothing it has not been asked to run yet.

It reads the child's events and output, and stops the child when a unit or a probe outlives its
time. A probe that hangs or crashes costs only that probe: the unit is run again in a new child
from the next probe on. A program that hangs or crashes costs its unit and the later units of its
group. A unit that kept memory past its end (its child says how much) has the next one run in a
new child, so that each unit has its whole memory bound. Results go to the parent as JSON lines,
one per unit, then {"done": true}; the parent reads them under bounds of its own (wire.py), since
what the child sent is in them.
"""

from __future__ import annotations

import ast
import collections
import functools
import json
import marshal
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import tempfile
import time
from dataclasses import asdict, dataclass, replace

from ..core import wire
from ..core.protocol import CRASH, ERROR, EXIT, OK, SKIPPED, TIMEOUT, Job, Limits, Unit

def kept_bound(limits: Limits) -> int:
    """MiB a child may map past its start after a unit (namespace emptied) and still run the next:
    beyond, the next unit would not have its whole memory bound."""
    return max(32, limits.memory_mb // 16)


def event_line_bytes(limits: Limits) -> int:
    """The longest event line a child may write: one value or one state (each at most value_kb once
    encoded, in characters: up to 4 bytes each in UTF-8), and the texts of an error."""
    return 4 * limits.value_kb * 1024 + (256 << 10)

MAX_RESUMES = 4
GRACE = 0.5  # seconds a child gets to stop the student's code before it is killed
PROBE_FLOOR = 0.25  # even after the program used its time, each probe gets this long
OVERRUN = 1.5  # how far past its wall time a unit's probes may go, in all
START = 2.0  # a new child's first unit also gets this long to start


def probe_wall(limits: Limits) -> float:
    return max(1.0, min(limits.wall, 3.0))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# -- compiling, here and not in the child ---------------------------------------------------------
class OverrideError(LookupError):
    pass


def compile_unit(unit: Unit):
    """The unit's program as a code object, its variant's values written in place of the values of
    the top-level assignments they override (so the child holds no table of hidden inputs).
    Raises SyntaxError, or OverrideError naming a variable the program does not assign."""
    if not unit.overrides:
        # Straight from the text: the same code object, without the Python-level syntax tree that
        # ast.parse builds and compile() converts back (2.5 times the cost, on every file run as is).
        return compile(unit.source, unit.filename, "exec", dont_inherit=True)
    tree = _parsed(unit.source, unit.filename)
    overrides = dict(unit.overrides)
    replaced: list[tuple[ast.AST, ast.AST]] = []  # (statement, its own value), put back below
    try:
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                name = _target_name(node)
                if name in overrides:
                    value = ast.parse(overrides[name], "<variante>", mode="eval").body
                    for sub in ast.walk(value):  # errors in it point at the line it replaces
                        if "lineno" in sub._attributes:
                            sub.lineno, sub.col_offset = node.value.lineno, node.value.col_offset
                            sub.end_lineno, sub.end_col_offset = node.value.end_lineno, node.value.end_col_offset
                    replaced.append((node, node.value))
                    node.value = value
        missing = sorted(set(overrides) - {_target_name(node) for node, _ in replaced})
        if missing:
            raise OverrideError(", ".join(missing))
        return compile(tree, unit.filename, "exec", dont_inherit=True)
    finally:
        for node, value in replaced:
            node.value = value


@functools.lru_cache(maxsize=64)
def _parsed(source: str, filename: str) -> ast.Module:
    # The variants of a blank run the same program: parsed once, their values swapped in and out.
    return ast.parse(source, filename)


def _target_name(node) -> str | None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    return None


@functools.lru_cache(maxsize=4096)
def _probe_code(expr: str, setup: str | None, j: int) -> bytes:
    # The same checks come back for every student: compiled once per supervisor's life.
    code = compile(setup, "<vérification>", "exec", dont_inherit=True) if setup else None
    return marshal.dumps((j, code, compile(expr, "<vérification>", "eval", dont_inherit=True)))


# -- the zygote, which forks children --------------------------------------------------------------
@dataclass(frozen=True)
class Exit:
    status: int | None  # as os.waitpid gives it; None when unknown
    cpu: float  # seconds of CPU the child used
    strays: int  # processes it left behind, killed by the zygote
    killed: bool = False  # by the supervisor (a status of SIGKILL then says nothing about the program)

    @property
    def code(self) -> int | None:
        if self.status is None:
            return None
        if os.WIFSIGNALED(self.status):
            return -os.WTERMSIG(self.status)
        return os.WEXITSTATUS(self.status)


class Forker:
    """The supervisor's end of its line to the zygote."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.exits: dict[int, Exit] = {}

    def spawn(self, workdir: str, fds: list[int], limits: Limits) -> int | None:
        request = json.dumps({"workdir": workdir, "limits": asdict(limits)}).encode()
        try:
            socket.send_fds(self.sock, [b"C" + request], fds)
            while True:
                reply = self.sock.recv(256)
                if reply[:1] == b"P":
                    return struct.unpack("!i", reply[1:5])[0]
                if reply[:1] == b"X":
                    self._exit(reply)
                    continue
                return None
        except OSError:
            return None

    def _exit(self, reply: bytes) -> None:
        pid, status, cpu, strays = struct.unpack("!iidi", reply[1:21])
        self.exits[pid] = Exit(status, cpu, strays)

    def wait(self, pid: int, timeout: float = 30.0) -> Exit:
        deadline = time.monotonic() + timeout
        while pid not in self.exits:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Exit(None, 0.0, 0)
            self.sock.settimeout(remaining)
            try:
                reply = self.sock.recv(256)
            except OSError:
                return Exit(None, 0.0, 0)
            if not reply:
                return Exit(None, 0.0, 0)
            if reply[:1] == b"X":
                self._exit(reply)
        return self.exits.pop(pid)


# -- one job ---------------------------------------------------------------------------------------
class _UnitState:
    def __init__(self, unit: Unit):
        self.unit = unit
        self.status: str | None = None
        self.error: dict | None = None
        self.probes: dict[int, dict] = {}
        self.state: dict | None = None
        self.output = bytearray()
        self.output_total = 0
        self.started = 0.0
        self.seconds = 0.0
        self.resumes = 0

    def result(self) -> dict:
        n = len(self.unit.probes)
        return {
            "status": self.status or CRASH,
            "error": self.error,
            "probes": [self.probes.get(j) for j in range(n)],
            "state": self.state,
            "output": self.output.decode("utf-8", "replace"),
            "seconds": round(self.seconds, 4),
        }


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_EXPECTED = {b"M": "module", b"P": "probe", b"S": "state", b"E": "end"}


class Supervisor:
    def __init__(self, job: Job, out_fd: int, workroot: str, forker: Forker):
        self.job = job
        self.out_fd = out_fd
        self.workroot = workroot
        self.forker = forker
        self.states = [_UnitState(u) for u in job.units]
        self.poisoned: dict[str, str] = {}  # group → why its later units are not run
        self.codes: dict[int, bytes | dict] = {}  # unit index → marshalled program, or its error

    def _poison(self, state: _UnitState) -> None:
        """The same program would fail the same way on its other inputs: skip them, saying why."""
        if state.unit.group:
            self.poisoned.setdefault(state.unit.group, (state.error or {}).get("message", "échec"))

    # -- reporting -----------------------------------------------------------------------------
    def send(self, message: dict) -> None:
        _write_all(self.out_fd, (json.dumps(message, allow_nan=False) + "\n").encode())

    def finish(self, index: int) -> None:
        self.send({"i": index, "result": self.states[index].result()})

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> None:
        units = self.job.units
        index = 0
        while index < len(units):
            state = self.states[index]
            group = units[index].group
            if group and group in self.poisoned:
                state.status = SKIPPED
                state.error = {"kind": "skipped", "message": "non exécuté, car sur une autre entrée : "
                                                               + self.poisoned[group]}
                self.finish(index)
                index += 1
                continue
            batch = [index]
            while (batch[-1] + 1 < len(units) and units[batch[-1] + 1].process == units[index].process
                   and not (units[batch[-1] + 1].group and units[batch[-1] + 1].group in self.poisoned)):
                batch.append(batch[-1] + 1)
            first_probe = len(state.probes) if state.status is not None else 0
            index = self.run_batch(batch, first_probe)
        self.send({"done": True})

    def _code(self, index: int) -> bytes | dict:
        if index not in self.codes:
            unit = self.job.units[index]
            try:
                self.codes[index] = marshal.dumps(compile_unit(unit))
            except SyntaxError as exc:
                line = exc.lineno if exc.filename == unit.filename else None
                self.codes[index] = {"kind": "syntax", "type": "SyntaxError", "message": exc.msg or "syntaxe invalide",
                                     **self._location(unit, line)}
            except OverrideError as exc:
                self.codes[index] = {"kind": "override", "type": "LookupError",
                                     "message": f"variable(s) introuvable(s) au premier niveau du fichier : {exc}"}
            except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
                self.codes[index] = {"kind": "syntax", "type": type(exc).__name__,
                                     "message": "programme impossible à compiler"}
        return self.codes[index]

    def run_batch(self, batch: list[int], first_probe: int) -> int:
        """Run units `batch` in one child; return the index to continue from."""
        done, stopped_at, phase, reason, detail = ChildRun(self, batch, first_probe).run()
        for index in done:
            self.finish(index)
        if stopped_at is None:  # all done, or stopped early because the rest is skipped
            return done[-1] + 1 if done else batch[-1] + 1
        state = self.states[stopped_at]
        message = self._message(reason, detail)
        if phase == "budget":  # keep what was evaluated; the rest of the probes are not
            if state.status in (None, OK, ERROR, EXIT):
                state.error = state.error if state.status not in (None, OK) else {"kind": "timeout", "message": message}
                state.status = state.status if state.status not in (None, OK) else TIMEOUT
            for j in range(len(state.unit.probes)):
                state.probes.setdefault(j, {"error": {"kind": "timeout", "message": message}})
            state.seconds = time.monotonic() - state.started
            self._poison(state)
            self.finish(stopped_at)
            return stopped_at + 1
        if phase == "probe":
            probe_index = detail["probe"]
            state.probes[probe_index] = {"error": {"kind": reason, "message": message,
                                                   **self._location(state.unit, detail.get("line"))}}
            state.resumes += 1
            if state.resumes <= MAX_RESUMES and probe_index + 1 < len(state.unit.probes):
                return stopped_at  # run this unit again, from the next probe on
            state.seconds = time.monotonic() - state.started
            self.finish(stopped_at)
            return stopped_at + 1
        if phase in ("state", "end"):  # the program and its probes are done: keep them
            if phase == "state":
                state.state = {"$error": {"kind": reason, "message": message}}
            state.seconds = time.monotonic() - state.started
            self.finish(stopped_at)
            return stopped_at + 1
        # The program itself (or the child's start) failed: the unit is lost, and its group.
        state.status = TIMEOUT if reason == "timeout" else CRASH
        state.error = {"kind": reason, "message": message, **self._location(state.unit, detail.get("line")),
                       "statement": detail.get("statement")}
        state.seconds = time.monotonic() - state.started if state.started else 0.0
        self._poison(state)
        self.finish(stopped_at)
        return stopped_at + 1

    def _timed_out(self, unit: Unit, seconds: float, where: dict | None, reported) -> dict:
        return timed_out(unit, seconds, where, reported, self.job.limits)

    @staticmethod
    def _location(unit: Unit, line) -> dict:
        if not isinstance(line, int) or isinstance(line, bool) or line <= 0:
            return {}
        lines = unit.source.split("\n")
        return {"line": line, "text": lines[line - 1].rstrip() if line <= len(lines) else None}

    def _message(self, reason: str, detail: dict) -> str:
        return stop_message(reason, detail, self.job.limits)

    # -- one child -----------------------------------------------------------------------------
    def _plan(self, batch: list[int], first_probe: int) -> list[tuple[int, bytes, bytes, bool]]:
        """The commands for the batch, in order: (unit index, type, payload, secret)."""
        steps = []
        for position, index in enumerate(batch):
            unit = self.job.units[index]
            header = {"i": index, "filename": unit.filename, "module_name": unit.module_name,
                      "value_limit": self.job.limits.value_kb * 1024}
            steps.append((index, b"U", json.dumps(header).encode(), False))
            code = self._code(index)
            if isinstance(code, bytes):
                steps.append((index, b"M", code, False))
            skip = first_probe if position == 0 else 0
            for j, probe in enumerate(unit.probes):
                if j >= skip:
                    steps.append((index, b"P", _probe_code(probe.expr, probe.setup, j), probe.secret))
            if unit.state is not None:
                steps.append((index, b"S", json.dumps({"names": list(unit.state)}).encode(), False))
            steps.append((index, b"E", b"", False))
        return steps

    def _stop_child(self, pid: int | None, patience: float = 0.0) -> Exit | None:
        """Kill the child (after `patience` seconds to end by itself) and say how it ended."""
        if pid is None:
            return None
        if patience:
            ended = self.forker.wait(pid, patience)
            if ended.status is not None:
                return ended
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return replace(self.forker.wait(pid), killed=True)

    @staticmethod
    def _drain(fd: int, state: _UnitState, cap: int) -> None:
        # The child flushes before reporting a unit's end: what it printed is already in the pipe.
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            state.output_total += len(chunk)
            room = cap - len(state.output)
            if room > 0:
                state.output += chunk[:room]


class ChildRun:
    """One child running a batch of units: one explicit state, one loop, one clock.

    The state: the commands still to send (`steps[step:]`), those sent and not yet answered
    (`pending`, oldest first), the unit being run (`current`) and what the child runs now (`phase`:
    start, module, probe, state, end), and one deadline (for the command at the head of `pending`,
    within the unit's own `unit_deadline`). The loop waits for the child's events or output, or for
    the deadline: then the child is asked to stop the student's code (SIGUSR1, `interrupting`), and
    is killed GRACE seconds later if it has not answered. `stopped`, (reason, detail), ends the run;
    `run()` then says which units were done and where and why it stopped."""

    def __init__(self, supervisor: Supervisor, batch: list[int], first_probe: int):
        self.sup, self.batch, self.first_probe = supervisor, batch, first_probe
        self.units, self.states, self.limits = supervisor.job.units, supervisor.states, supervisor.job.limits
        self.steps: list[tuple[int, bytes, bytes, bool]] = []
        self.done: list[int] = []
        self.stopped: tuple[str, dict] | None = None
        self.step = 0  # next command to send
        # Commands sent and not yet answered, in order: (unit, event expected, probe j, public).
        self.pending: collections.deque[tuple[int, str, int | None, bool]] = collections.deque()
        self.current: int | None = None
        self.phase = "start"
        self.probe_index = -1
        self.deadline = time.monotonic() + self.limits.wall + START
        self.unit_deadline = self.deadline
        self.allowed: float = self.limits.wall
        self.events = wire.Lines(event_line_bytes(self.limits))
        # What the program prints is kept only when asked (the self-check shows it; grading does not,
        # and keeps nothing it will not show); it is always counted, to stop a flood.
        self.output_cap = self.limits.output_kb * 1024 if supervisor.job.capture_output else 0
        self.hard_output_cap = max(16 * 1024 * 1024, 64 * self.limits.output_kb * 1024)
        self.resumed = first_probe > 0  # its output was kept by the run it resumes
        self.interrupting = False  # time is up; the child was asked to stop the student's code
        self.where: dict | None = None  # where the child said the code was, when interrupted
        self.first_unit = True
        self.renew = False  # the rest of the batch goes to a fresh child
        self.child_started = False  # the child said its start is over (once, before any student code)

    def run(self) -> tuple[list[int], int | None, str | None, str | None, dict]:
        """(units done, unit stopped at, its phase, reason, detail): see Supervisor.run_batch."""
        workdir = tempfile.mkdtemp(prefix="run-", dir=self.sup.workroot)
        os.chmod(workdir, 0o777)
        cmd_r, self.cmd_w = os.pipe()
        self.ev_r, ev_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.open_fds = {self.ev_r, self.out_r}
        try:
            self.steps = self.sup._plan(self.batch, self.first_probe)
            self.pid = self.sup.forker.spawn(workdir, [cmd_r, ev_w, out_w], self.limits)
            if self.pid is None:
                self.stopped = ("start", {})
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # a probe that does not compile
            self.pid, self.stopped = None, ("protocol", {"message": f"vérification illisible : {type(exc).__name__}"})
        for fd in (cmd_r, ev_w, out_w):
            os.close(fd)
        os.set_blocking(self.out_r, False)
        if self.pid is None:
            self.steps = []
        try:
            self._loop()
        except _Stop as stop:
            self.stopped = (stop.reason, stop.detail)
        except (BrokenPipeError, OSError):  # the child stopped reading its commands
            self.stopped = self.stopped or ("crash", {})
        finally:
            _close(self.cmd_w)
            patience = 0.5 if self.stopped and self.stopped[0] == "channel" else 0.0
            ended = self.sup._stop_child(self.pid, patience)
            _close(self.ev_r)
            _close(self.out_r)
            violation = _check_and_wipe(workdir, self.limits)
        if violation:
            self._void(violation)
        return self._outcome(ended)

    # -- the loop ----------------------------------------------------------------------------------
    def _loop(self) -> None:
        if self.steps:
            self._send_next()
        while self.stopped is None and (self.pending or self.step < len(self.steps)):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self._time_up()
                continue
            ready, _, _ = select.select(list(self.open_fds), [], [], remaining)
            for fd in ready:
                if not self._read(fd):
                    break
        if self.stopped is None and not self.pending and len(self.done) < len(self.batch) and not self.renew:
            following = self.units[next(k for k in self.batch if k not in self.done)].group
            if self.current is not None or not (following and following in self.sup.poisoned):
                self.stopped = ("crash", {})

    def _time_up(self) -> None:
        """The deadline passed: ask the child to stop the student's code, or, if it was asked
        already (or runs none now), stop the run."""
        if self.interrupting or self.phase not in ("module", "probe", "state"):
            self.stopped = ("timeout", {"seconds": self.allowed, **(self.where or {})})
            return
        self.interrupting, self.where = True, None
        try:
            os.kill(self.pid, signal.SIGUSR1)
        except (ProcessLookupError, PermissionError):
            pass
        self.deadline = time.monotonic() + GRACE

    def _send_next(self) -> None:
        """Send what may be sent now. Commands go several at a time, but never a new unit while the
        previous one is not over, and never a hidden check while a public command (the program, a
        public check) is unanswered: what the student's code returns to a public check can then
        carry nothing it has not been asked yet."""
        while self.step < len(self.steps):
            index, kind, payload, secret = self.steps[self.step]
            if kind == b"U" and self.pending:
                break
            if secret and any(public for _, _, _, public in self.pending):
                break
            self.step += 1
            _write_all(self.cmd_w, struct.pack("!cI", kind, len(payload)) + payload)
            now = time.monotonic()
            if kind == b"U":
                self._start_unit(index, now)
                continue  # a new namespace runs nothing of the student's: what follows goes at once
            j = marshal.loads(payload)[0] if kind == b"P" else None
            self.pending.append((index, _EXPECTED[kind], j, kind == b"M" or (kind == b"P" and not secret)))
            if len(self.pending) == 1:
                self._arm(now)

    def _start_unit(self, index: int, now: float) -> None:
        state = self.states[index]
        self.current, self.phase = index, "module"
        if state.status is None:
            state.started = now
            code = self.sup.codes.get(index)
            if isinstance(code, dict):  # it does not compile: its probes still run, on nothing
                state.status, state.error = ERROR, code
        wall = self.units[index].wall or self.limits.wall
        self.unit_deadline = now + wall + (START if self.first_unit else 0.0)
        self.first_unit = False

    def _arm(self, now: float) -> None:
        """The clock for the command at the head of the queue, which the child runs now."""
        index, expected, j, _ = self.pending[0]
        wall = self.units[index].wall or self.limits.wall
        if expected == "module":
            self.phase, self.deadline, self.allowed = "module", self.unit_deadline, wall
        elif expected in ("probe", "state"):
            if now >= self.unit_deadline + OVERRUN:  # the unit's time is spent
                raise _Stop("timeout", {"seconds": wall, "budget": True})
            self.phase = expected
            if expected == "probe":
                self.probe_index = j
            self.allowed = max(PROBE_FLOOR, min(probe_wall(self.limits), self.unit_deadline - now))
            self.deadline = min(now + self.allowed, self.unit_deadline + OVERRUN)
        else:
            self.phase, self.deadline = "end", now + 2.0

    # -- what the child sends ----------------------------------------------------------------------
    def _read(self, fd: int) -> bool:
        """Take what `fd` has; False when nothing more is to be read this round."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            chunk = None
        if fd == self.out_r:
            if chunk:
                self._output(chunk)
            elif chunk is not None:
                self.open_fds.discard(self.out_r)
            return True
        if not chunk:
            self.open_fds.discard(self.ev_r)
            self.stopped = ("channel", {})
            return False
        self.events.feed(chunk)
        if self.events.overflow:
            self.stopped = ("protocol", {})
            return False
        while self.stopped is None and (line := self.events.pop()) is not None:
            event = _parse(line)
            if event is None:
                self.stopped = ("protocol", {})
            elif not self._event(event):
                break
        return True

    def _output(self, chunk: bytes) -> None:
        if self.current is None or self.resumed:
            return
        state = self.states[self.current]
        state.output_total += len(chunk)
        room = self.output_cap - len(state.output)
        if room > 0:
            state.output += chunk[:room]
        if state.output_total > self.hard_output_cap:
            self.stopped = ("output", {"bytes": state.output_total})

    def _event(self, event: dict) -> bool:
        """Apply one event of the child; False when the events left are not to be read now."""
        kind = event["ev"]
        if kind == "ready":
            if self.child_started:
                self.stopped = ("protocol", {})
                return True
            self.child_started = True
            if self.current is not None:  # the start allowance ends: the unit's wall runs from now
                wall = self.units[self.current].wall or self.limits.wall
                self.unit_deadline = min(self.unit_deadline, time.monotonic() + wall)
                if not self.interrupting and self.pending and self.pending[0][1] == "module":
                    self.deadline = self.unit_deadline
            return True
        if kind == "where":
            if self.interrupting:
                self.where = where_of(event)
            return True
        if kind == "internal":
            self.stopped = ("protocol", {})
            return True
        index, expected, j, _ = self.pending[0] if self.pending else (None, None, None, False)
        if kind != expected or event.get("i") != index or (expected == "probe" and event.get("j") != j):
            self.stopped = ("protocol", {})
            return True
        self.pending.popleft()
        state, now = self.states[index], time.monotonic()
        if kind == "module":
            self._module(state, event)
        elif kind == "probe":
            self._probe(state, j, event.get("result"))
        elif kind == "state":
            self._state(state, event.get("result"))
        elif not self._end(index, state, event, now):
            return False
        # A program that timed out still has its probes asked, on what it computed.
        self.interrupting, self.where = False, None
        self._send_next()
        if self.pending:
            self._arm(time.monotonic())
        return True

    def _module(self, state: _UnitState, event: dict) -> None:
        status = event.get("status")
        if state.status is not None:
            return
        if self.interrupting or status == TIMEOUT:
            state.status = TIMEOUT
            state.error = self.sup._timed_out(state.unit, self.allowed, self.where, event.get("error"))
            self.sup._poison(state)
        else:
            state.status = status if status in (OK, ERROR, EXIT) else ERROR
            state.error = _error_with_text(state.unit, event.get("error"), self.sup)

    def _probe(self, state: _UnitState, j: int | None, result) -> None:
        if self.interrupting:
            reported = result.get("error") if isinstance(result, dict) else None
            result = {"error": self.sup._timed_out(state.unit, self.allowed, self.where, reported)}
        elif isinstance(result, dict) and isinstance(result.get("error"), dict):
            result = {"error": _error_with_text(state.unit, result["error"], self.sup)}
        state.probes[j] = result if isinstance(result, dict) else {
            "error": {"kind": "protocol", "message": "résultat illisible"}}

    def _state(self, state: _UnitState, result) -> None:
        result = result if isinstance(result, dict) else {}
        if self.interrupting:
            state.state = {"$error": {"kind": "timeout", "message": self.sup._message(
                "timeout", {"seconds": self.allowed, **(self.where or {})})}}
        elif isinstance(result.get("value"), dict):
            state.state = result["value"]
        else:
            error = _error_with_text(state.unit, result.get("error"), self.sup)
            state.state = {"$error": error or {"kind": "protocol"}}

    def _end(self, index: int, state: _UnitState, event: dict, now: float) -> bool:
        """The unit is over; False when this child runs no more of the batch."""
        if not self.resumed:
            self.sup._drain(self.out_r, state, self.output_cap)
        state.seconds = now - state.started
        self.done.append(index)
        self.current, self.phase, self.resumed = None, "start", False
        later = [k for k in self.batch if k > index]
        if not later or (self.units[later[0]].group in self.sup.poisoned and self.units[later[0]].group):
            self.step = len(self.steps)  # done, or the rest of the batch is skipped
            return False
        kept = event.get("kept")
        if type(kept) is int and kept > kept_bound(self.limits):
            # This unit kept memory out of its namespace: the next starts afresh.
            self.step, self.renew = len(self.steps), True
            return False
        return True

    # -- the outcome -------------------------------------------------------------------------------
    def _void(self, violation: str) -> None:
        """A broken bound on files voids what the run computed: its values must not earn credit."""
        for i in self.done:
            state = self.states[i]
            if state.status == OK:
                state.status = ERROR
                state.error = {"kind": "files", "message": violation}
            state.probes = {j: {"error": {"kind": "files", "message": violation}}
                            for j in range(len(state.unit.probes))}
            if state.state is not None:
                state.state = {"$error": {"kind": "files", "message": violation}}

    def _outcome(self, ended: Exit | None):
        if self.stopped is None:
            return self.done, None, None, None, {}
        reason, detail = self.stopped
        if reason in ("crash", "channel") and ended is not None:
            if reason == "channel" and not ended.killed:
                reason = "crash"  # the pipe closed because the child ended by itself: say how
            detail = {**detail, "code": ended.code, "cpu": ended.cpu}
        current = self.current
        stopped_at = current if current is not None else next((i for i in self.batch if i not in self.done),
                                                               self.batch[-1])
        if detail.get("budget"):
            return self.done, stopped_at, "budget", reason, detail
        if self.phase == "probe" and self.probe_index >= 0 and current is not None:
            detail["probe"] = self.probe_index
            return self.done, stopped_at, "probe", reason, detail
        if self.phase in ("state", "end") and current is not None:
            return self.done, stopped_at, self.phase, reason, detail
        return self.done, stopped_at, "module", reason, detail


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


WAITED = 0.25  # share of its wall time a program computed below which it waited rather than looped


def where_of(event: dict) -> dict:
    """What a child says when its time is up: the line of the student's program that ran, the
    top-level statement, and the CPU seconds it used since the command began."""
    where = {k: event.get(k) for k in ("line", "statement") if type(event.get(k)) is int}
    cpu = event.get("cpu")
    if type(cpu) in (int, float) and 0 <= cpu < 1e6:
        where["cpu"] = float(cpu)
    return where


def timed_out(unit: Unit, seconds: float, where: dict | None, reported, limits: Limits) -> dict:
    """The error of a run stopped at its wall time, said where it was and whether it computed."""
    where = dict(where or {})
    if where.get("line") is None and isinstance(reported, dict) and type(reported.get("line")) is int:
        where = {**where, "line": reported["line"], "statement": reported.get("statement")}
    line = where.get("line") if type(where.get("line")) is int else None
    detail = {"seconds": seconds, "line": line, "cpu": where.get("cpu")}
    return {"kind": "timeout", "message": stop_message("timeout", detail, limits),
            **Supervisor._location(unit, line), "statement": where.get("statement")}


def _shown_seconds(seconds: float) -> str:
    return f"{seconds:.1f}".rstrip("0").rstrip(".").replace(".", ",")


def stop_message(reason: str, detail: dict, limits: Limits) -> str:
    """Why a run was stopped, in French."""
    if reason == "timeout":
        seconds = detail.get("seconds", limits.wall)
        where = f" à la ligne {detail['line']}" if detail.get("line") else ""
        cpu = detail.get("cpu")
        if type(cpu) is float and cpu < WAITED * seconds:  # it hardly computed: it was waiting
            computed = ("il n'a presque pas calculé" if cpu < 0.05 else
                        f"il n'a calculé que {f'{cpu:.2f}'.rstrip('0').rstrip('.').replace('.', ',')} s")
            return (f"temps dépassé : les {_shown_seconds(seconds)} s accordées se sont écoulées pendant que le "
                    f"programme attendait{where} ({computed} : time.sleep, input, une attente ?)")
        return f"temps dépassé : arrêté{where} après {_shown_seconds(seconds)} s (boucle sans fin ?)"
    if reason == "output":
        return f"sortie trop volumineuse : arrêté après {detail.get('bytes', 0) // 1024} Kio d'affichage"
    if reason == "protocol":
        return "le programme a perturbé le correcteur (message inattendu sur son canal)"
    if reason == "channel":
        return "le programme a fermé ou détourné le canal du correcteur"
    if reason == "start":
        return "le correcteur n'a pas pu lancer le programme"
    code, cpu = detail.get("code"), detail.get("cpu")
    if code is not None and code < 0:
        name = _signal_name(-code)
        if name == "SIGXCPU":
            used = f"{cpu:.0f}" if cpu else "?"
            if cpu is not None and cpu + 1 < limits.cpu:  # the program lowered its own limit
                return f"temps de calcul dépassé (SIGXCPU après {used} s de processeur)"
            return f"temps de calcul dépassé : {used} s de processeur (limite {limits.cpu} s)"
        if name == "SIGKILL":
            spent = f" après {cpu:.1f} s de processeur".replace(".", ",") if cpu is not None else ""
            return f"le programme a été tué (SIGKILL){spent}, par lui-même ou par le système"
        if name == "SIGSEGV":
            return "le programme a planté (SIGSEGV)"
        return f"le programme a été arrêté par le signal {name}"
    if code is not None:
        return f"le programme s'est arrêté de lui-même avant la fin (code de sortie {code}, os._exit ?)"
    return "le programme s'est arrêté brutalement avant la fin"


class _Stop(Exception):
    def __init__(self, reason: str, detail: dict):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


# What a child reports of an error of the student's code. Messages of the other kinds (a timeout, a
# crash…) are shown whatever a check discloses, so their text is the supervisor's own, never the
# child's: a child that wrote one could carry into a page what a hidden run read. (A timeout the
# supervisor did not ask for is the student's code raising the child's own interruption.)
CHILD_KINDS = ("syntax", "exception", "memory", "exit", "too_big")
TOO_BIG_SAID = re.compile(r"plus de 200 000 éléments|\d{1,9} Kio, limite \d{1,9} Kio")


def _error_with_text(unit: Unit, error, supervisor: Supervisor) -> dict | None:
    """The child reports lines only; the text of a line comes from the source, which it never had.
    A kind the child does not report is a message no child writes; a too_big, its own words only."""
    if not isinstance(error, dict):
        return None
    error = {k: v for k, v in error.items() if k != "text"}
    kind = error.get("kind")
    if kind not in CHILD_KINDS:  # no child writes that: its channel was written to by other code
        return {"kind": "protocol", "message": stop_message("protocol", {}, Limits())}
    elif kind == "too_big" and not (isinstance(error.get("message"), str) and TOO_BIG_SAID.fullmatch(error["message"])):
        error["message"] = ""
    return {**error, **supervisor._location(unit, error.get("line"))}


def _parse(line: bytes) -> dict | None:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("ev"), str):
        return None
    return event


def _check_and_wipe(workdir: str, limits: Limits) -> str | None:
    """Count what the code left behind, then remove it all (symlinks are removed, never followed)."""
    violation = files_violation(workdir, limits)
    wipe(workdir)
    return violation


def files_violation(workdir: str, limits: Limits) -> str | None:
    """What the code wrote in its folder, when it is more than the bounds allow (links never followed)."""
    files, total = 0, 0
    for root, dirs, names in os.walk(workdir, followlinks=False):
        for name in names + dirs:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            files += 1
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
        if files > 10 * limits.files:
            break
    if files > limits.files:
        return f"trop de fichiers écrits ({files}, limite {limits.files})"
    if total > limits.file_mb * 1024 * 1024 * 4:
        return f"trop de données écrites sur le disque ({total // (1024 * 1024)} Mo)"
    return None


def wipe(workdir: str) -> None:
    def force(func, path, _exc):
        try:
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
        except OSError:
            pass
        try:
            func(path)
        except OSError:
            pass

    shutil.rmtree(workdir, onerror=force)
