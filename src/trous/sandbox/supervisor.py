"""The supervisor: holds a job, feeds the processes that run student code, owns the clock.

It never runs student code nor forks the processes that do: the zygote, which never held a job,
forks each child, and the supervisor feeds it one command at a time (child.py), the programs compiled
here (the child never sees source text), each probe once the previous one has answered: a child's
memory holds nothing it has not been asked to run yet. In a batch job a probe that hangs or crashes
costs only that probe (the unit runs again in a new child from the next probe on); a program that
does costs its unit and the later units of its group; a unit that kept memory past its end has the
next one run in a new child, so that each unit has its whole memory bound.
"""

from __future__ import annotations

import ast
import collections
import contextlib
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
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple

from ..core import wire
from ..core.protocol import CRASH, ERROR, EXIT, MAX_FRAME, OK, SKIPPED, TIMEOUT, Ask, Job, Limits, Unit
from .child import read_exact


MAX_RESUMES = 4
GRACE = 0.5  # seconds a child gets to stop the student's code before it is killed
PROBE_FLOOR = 0.25  # even after the program used its time, each probe gets this long
OVERRUN = 1.5  # how far past its wall time a unit's probes may go, in all
START = 2.0  # a new child's first unit also gets this long to start
# A busy machine's time is not the student's: when a unit's child was ready to run but waited for a
# processor (/proc/PID/schedstat) more than LOADED of the time (more than the grading's own processes
# make it wait), that wait is added to its clock, up to LOAD_CREDIT times its wall time.
LOADED, LOAD_CREDIT = 0.5, 2.0


def probe_wall(limits: Limits) -> float:
    return max(1.0, min(limits.wall, 3.0))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def send_line(fd: int, message: dict) -> None:
    _write_all(fd, (json.dumps(message, allow_nan=False) + "\n").encode())


# -- compiling, here and not in the child ---------------------------------------------------------
class OverrideError(LookupError):
    pass


def compile_unit(unit: Unit):
    """The program, its variant's values in place of those of the top-level assignments they override
    (so the child holds no table of hidden inputs); SyntaxError, or OverrideError naming a missing one."""
    if not unit.overrides:  # straight from the text: a syntax tree would cost 2.5 times as much
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
                        ast.copy_location(sub, node.value)
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


def compiled(unit: Unit) -> bytes | dict:
    """The unit's program, marshalled for the child; or, when it does not compile, its error."""
    try:
        return marshal.dumps(compile_unit(unit))
    except SyntaxError as exc:
        line = exc.lineno if exc.filename == unit.filename else None
        return {"kind": "syntax", "type": "SyntaxError", "message": exc.msg or "syntaxe invalide",
                **location(unit, line)}
    except OverrideError as exc:
        return {"kind": "override", "type": "LookupError",
                "message": f"variable(s) introuvable(s) au premier niveau du fichier : {exc}"}
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return {"kind": "syntax", "type": type(exc).__name__, "message": "programme impossible à compiler"}


class Step(NamedTuple):
    """One command for a child (child.py): U, M, P, S or E, for the unit `index`."""
    index: int
    kind: bytes
    payload: bytes = b""
    secret: bool = False  # a hidden check's probe
    j: int | None = None  # a probe's number within its unit


def begin(index: int, unit: Unit, limits: Limits) -> Step:
    """A unit's first command: a fresh namespace."""
    header = {"i": index, "filename": unit.filename, "module_name": unit.module_name,
              "value_limit": limits.value_kb * 1024}
    return Step(index, b"U", json.dumps(header).encode())


def probe_step(index: int, j: int, expr: str, setup: str | None, secret: bool, state: "_UnitState") -> Step | None:
    """The command that asks probe `j`; None when the check does not compile (its error is that probe's)."""
    try:
        return Step(index, b"P", _probe_code(expr, setup, j), secret, j)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        state.probes[j] = {"error": {"kind": "protocol", "message": f"vérification illisible : {type(exc).__name__}"}}
        return None


# -- the zygote, which forks children --------------------------------------------------------------
class Forker:
    """The supervisor's end of its line to the zygote."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.exits: dict[int, tuple[int | None, float]] = {}  # pid → exit code, seconds of CPU

    def spawn(self, workdir: str, fds: list[int], limits: Limits) -> int | None:
        request = json.dumps({"workdir": workdir, "limits": asdict(limits)}).encode()
        try:
            socket.send_fds(self.sock, [b"C" + request], fds)
            while (reply := self.sock.recv(256))[:1] == b"X":
                self.exited(reply)
        except OSError:
            return None
        return struct.unpack("!i", reply[1:5])[0] if reply[:1] == b"P" else None

    def exited(self, reply: bytes) -> None:
        pid, status, cpu = struct.unpack("!iid", reply[1:17])
        self.exits[pid] = (os.waitstatus_to_exitcode(status), cpu)

    def wait(self, pid: int, timeout: float = 30.0) -> tuple[int | None, float]:
        deadline = time.monotonic() + timeout
        with contextlib.suppress(OSError):
            while pid not in self.exits and (remaining := deadline - time.monotonic()) > 0:
                self.sock.settimeout(remaining)
                if not (reply := self.sock.recv(256)):
                    break
                if reply[:1] == b"X":
                    self.exited(reply)
        return self.exits.pop(pid, (None, 0.0))


# -- one child, kept ---------------------------------------------------------------------------------
@dataclass(eq=False)
class _UnitState:
    unit: Unit
    status: str | None = None
    error: dict | None = None
    probes: dict[int, dict] = field(default_factory=dict)
    state: dict | None = None
    output: bytearray = field(default_factory=bytearray)
    output_total: int = 0
    started: float = 0.0
    seconds: float = 0.0
    resumes: int = 0

    def result(self) -> dict:
        return {"status": self.status or CRASH, "error": self.error,
                "probes": [self.probes.get(j) for j in range(len(self.unit.probes))], "state": self.state,
                "output": self.output.decode("utf-8", "replace"), "seconds": round(self.seconds, 4)}


_EXPECTED = {b"M": "module", b"P": "probe", b"S": "state", b"E": "end"}


class ChildRun:
    """One child and the commands it runs: one explicit state, one loop, one clock.

    A batch job feeds it a batch of units' commands at once, a session one question's at a time. The
    state: commands still to send (`steps[step:]`), those sent and unanswered (`pending`, oldest
    first), the unit being run (`current`), what the child runs now (`phase`), and one deadline, for
    the head of `pending` within the unit's `unit_deadline`: past it the child is asked to stop the
    student's code (SIGUSR1), and killed GRACE seconds later. `owner` (the batch Supervisor or the
    session) holds the units and their states by index, and says what a timeout poisons."""

    def __init__(self, owner, capture: bool = False, resumed: bool = False):
        self.owner, self.units, self.states, self.limits = owner, owner.units, owner.states, owner.limits
        self.steps: list[Step] = []
        self.step = 0  # next command to send
        # Commands sent and not yet answered, in order: (unit, event expected, probe j, public).
        self.pending: collections.deque[tuple[int, str, int | None, bool]] = collections.deque()
        self.done: list[int] = []  # units whose end the child reported
        self.stopped: tuple[str, dict] | None = None  # (reason, detail): the child's use is over
        self.current: int | None = None
        self.phase = "start"
        self.probe_index = -1
        self.deadline = self.unit_deadline = time.monotonic() + self.limits.wall + START
        self.allowed: float = self.limits.wall
        # The longest event line: one value or state (value_kb characters, 4 bytes each at most), error texts.
        self.events = wire.Lines(4 * self.limits.value_kb * 1024 + (256 << 10))
        # What the program prints is kept only when asked (the self-check shows it), always counted.
        self.output_cap = self.limits.output_kb * 1024 if capture else 0
        self.hard_output_cap = max(16 * 1024 * 1024, 64 * self.limits.output_kb * 1024)
        self.resumed = resumed  # its first unit's output was kept by the run it resumes
        self.interrupting = False  # time is up; the child was asked to stop the student's code
        self.schedstat: int | None = None  # the child's /proc/PID/schedstat, opened once
        self.credited = 0.0  # time given back to this unit (LOAD_CREDIT)
        self.counted = (time.monotonic(), 0.0)  # when the child's queue wait was last read, and its value
        self.where: dict | None = None  # where the child said the code was, when interrupted
        self.child_started = False  # the child said its start is over (once, before any student code)
        self.violation: str | None = None  # what the child wrote past the bounds on files (close)
        self.workdir = tempfile.mkdtemp(prefix="run-", dir=owner.workroot)
        os.chmod(self.workdir, 0o777)
        cmd_r, self.cmd_w = os.pipe()
        self.ev_r, ev_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.open_fds = {self.ev_r, self.out_r}
        self.pid = owner.forker.spawn(self.workdir, [cmd_r, ev_w, out_w], self.limits)
        close_fds(cmd_r, ev_w, out_w)
        os.set_blocking(self.out_r, False)
        if self.pid is None:
            self.stopped = ("start", {})

    def feed(self, steps: list[Step]) -> None:
        """Have the child run these commands; return once all are answered, or it is `stopped`."""
        self.steps, self.step = steps, 0
        try:
            if self.stopped is None:
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
        except BrokenPipeError:  # the child closed its commands' pipe: it ended, close() says how
            self.stopped = self.stopped or ("channel", {})
        except OSError:
            self.stopped = self.stopped or ("crash", {})

    def close(self) -> tuple[str, dict] | None:
        """Kill the child (a child whose channel closed gets a moment to end by itself, to say how),
        wipe its folder: why it was stopped, with how it ended; None when it was not."""
        close_fds(self.cmd_w)
        ended, killed = None, False  # killed here: a status of SIGKILL then says nothing of the program
        if self.pid is not None:
            if self.stopped and self.stopped[0] == "channel":
                ended = self.owner.forker.wait(self.pid, 0.5)
            if ended is None or ended[0] is None:
                send_signal(self.pid, signal.SIGKILL)
                ended, killed = self.owner.forker.wait(self.pid), True
        close_fds(self.ev_r, self.out_r, *([self.schedstat] if self.schedstat is not None else []))
        self.violation = files_violation(self.workdir, self.limits)
        shutil.rmtree(self.workdir, onerror=force)
        if self.stopped is None:
            return None
        reason, detail = self.stopped
        if reason in ("crash", "channel") and ended is not None:
            if reason == "channel" and not killed:
                reason = "crash"  # the pipe closed because the child ended by itself: say how
            detail = {**detail, "code": ended[0], "cpu": ended[1]}
        return reason, detail

    # -- the clock ---------------------------------------------------------------------------------
    def _time_up(self) -> None:
        """The deadline passed: give back the time the machine kept the child waiting (LOAD_CREDIT), else
        ask it to stop the student's code, else (asked already, or running none) stop the run."""
        if self.interrupting or self.phase not in ("module", "probe", "state"):
            self.stopped = ("timeout", {"seconds": self.allowed, **(self.where or {})})
            return
        (since, before), now, queued = self.counted, time.monotonic(), self._queued()
        self.counted = (now, queued)
        owed = min(queued - before, LOAD_CREDIT * self.allowed - self.credited)
        if owed > LOADED * (now - since):
            self.credited += owed
            self.deadline, self.unit_deadline = self.deadline + owed, self.unit_deadline + owed
            return
        self.interrupting, self.where = True, None
        send_signal(self.pid, signal.SIGUSR1)
        self.deadline = time.monotonic() + GRACE

    def _send_next(self) -> None:
        """Send what may be sent now: never a new unit while the previous one is not over, never a
        hidden check while a public command (the program, a public check) is unanswered, so that what
        the student's code returns to a public check carries nothing it has not been asked yet."""
        while self.step < len(self.steps) and self.stopped is None:
            index, kind, payload, secret, j = self.steps[self.step]
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
            self.pending.append((index, _EXPECTED[kind], j, kind == b"M" or (kind == b"P" and not secret)))
            if len(self.pending) == 1:
                self._arm(now)

    def _start_unit(self, index: int, now: float) -> None:
        state = self.states[index]
        self.current, self.phase = index, "module"
        state.started = state.started or now  # a unit run again from a later probe keeps its start
        wall = self.units[index].wall or self.limits.wall
        # Until the child says its start is over, the unit's time also holds the start's (`_news`).
        self.unit_deadline = now + wall + (0.0 if self.child_started else START)
        self.clock_starts(now)

    def clock_starts(self, now: float) -> None:
        """A unit's (or a session question's) time runs from now: no time given back yet."""
        self.credited, self.counted = 0.0, (now, self._queued())

    def _queued(self) -> float:
        """Seconds the child has waited for a processor while ready to run, in its life; 0 when unknown."""
        try:
            if self.schedstat is None:
                self.schedstat = os.open(f"/proc/{self.pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            return int(os.pread(self.schedstat, 128, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return 0.0

    def _arm(self, now: float) -> None:
        """The clock for the command at the head of the queue, which the child runs now."""
        index, expected, j, _ = self.pending[0]
        wall = self.units[index].wall or self.limits.wall
        if expected == "module":
            self.phase, self.deadline, self.allowed = "module", self.unit_deadline, wall
        elif expected in ("probe", "state"):
            if now >= self.unit_deadline + OVERRUN:  # the unit's time is spent
                self.stopped = ("timeout", {"seconds": wall, "budget": True})
                return
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
            if chunk is not None and not chunk:
                self.open_fds.discard(self.out_r)
            elif chunk and self.current is not None and not self.resumed:
                state = self.states[self.current]
                self._keep(state, chunk)
                if state.output_total > self.hard_output_cap:
                    self.stopped = ("output", {"bytes": state.output_total})
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
            try:  # as strictly as the grader reads the supervisor's own lines
                event = wire.parse_line(line, len(line))
            except wire.WireError:
                event = {}
            if not isinstance(event.get("ev"), str):
                self.stopped = ("protocol", {})
            elif not self._event(event):
                break
        return True

    def _drain(self, state: _UnitState) -> None:
        # The child flushes before reporting a unit's end: what it printed is already in the pipe.
        with contextlib.suppress(OSError):
            while chunk := os.read(self.out_r, 1 << 16):
                self._keep(state, chunk)

    def _keep(self, state: _UnitState, chunk: bytes) -> None:
        state.output_total += len(chunk)
        room = self.output_cap - len(state.output)
        if room > 0:
            state.output += chunk[:room]

    def _event(self, event: dict) -> bool:
        """Apply one event of the child; False when the events left are not to be read now."""
        kind = event["ev"]
        if kind in ("ready", "where", "internal"):
            self._news(kind, event)
            return True
        index, expected, j, _ = self.pending[0] if self.pending else (None, None, None, False)
        if kind != expected or event.get("i") != index or (expected == "probe" and event.get("j") != j):
            self.stopped = ("protocol", {})
            return True
        self.pending.popleft()
        state = self.states[index]
        if kind == "module":
            self._module(state, event)
        elif kind == "probe":
            self._probe(state, j, event.get("result"))
        elif kind == "state":
            self._state(state, event.get("result"))
        elif not self._end(index, state, event):
            return False
        # A program that timed out still has its probes asked, on what it computed.
        self.interrupting, self.where = False, None
        self._send_next()
        if self.pending and self.stopped is None:
            self._arm(time.monotonic())
        return True

    def _news(self, kind: str, event: dict) -> None:
        """An event that answers no command: the child's start is over (once, before any student
        code), where the student's code was when interrupted, or the child's own failure."""
        if kind == "where":
            if self.interrupting:
                # With the time it waited for a processor, measured here: a starved loop did not wait.
                self.where = {**where_of(event), "queued": self.credited}
        elif kind == "internal" or self.child_started:
            self.stopped = ("protocol", {})
        else:
            self.child_started = True
            if self.current is not None:  # the start allowance ends: the unit's wall runs from now
                wall = self.units[self.current].wall or self.limits.wall
                self.unit_deadline = min(self.unit_deadline, time.monotonic() + wall)
                if not self.interrupting and self.pending and self.pending[0][1] == "module":
                    self.deadline = self.unit_deadline

    def _module(self, state: _UnitState, event: dict) -> None:
        status = event.get("status")
        if state.status is not None:
            return
        if self.interrupting or status == TIMEOUT:
            state.status = TIMEOUT
            state.error = timed_out(state.unit, self.allowed, self.where, event.get("error"), self.limits)
            self.owner._poison(state)
        else:
            state.status = status if status in (OK, ERROR, EXIT) else ERROR
            state.error = _error_with_text(state.unit, event.get("error"))

    def _probe(self, state: _UnitState, j: int | None, result) -> None:
        if self.interrupting:
            reported = result.get("error") if isinstance(result, dict) else None
            result = {"error": timed_out(state.unit, self.allowed, self.where, reported, self.limits)}
        elif isinstance(result, dict) and isinstance(result.get("error"), dict):
            result = {"error": _error_with_text(state.unit, result["error"])}
        elif isinstance(result, dict) and "value" in result:
            result = {"value": result["value"]}  # and nothing else the child may have added
        else:
            result = {"error": {"kind": "protocol", "message": "résultat illisible"}}
        state.probes[j] = result

    def _state(self, state: _UnitState, result) -> None:
        result = result if isinstance(result, dict) else {}
        if self.interrupting:
            error = timed_out(state.unit, self.allowed, self.where, None, self.limits)
            state.state = {"$error": {"kind": "timeout", "message": error["message"]}}
        elif isinstance(result.get("value"), dict):
            state.state = result["value"]
        else:
            error = _error_with_text(state.unit, result.get("error"))
            state.state = {"$error": error or {"kind": "protocol"}}

    def _end(self, index: int, state: _UnitState, event: dict) -> bool:
        """The unit is over (a batch job's: a session sends no end); False when this child runs no
        more of the batch: it is done, the next unit is skipped, or goes to a fresh child."""
        if not self.resumed:
            self._drain(state)
        state.seconds = time.monotonic() - state.started
        self.done.append(index)
        self.current, self.phase, self.resumed = None, "start", False
        kept = event.get("kept")  # MiB mapped past its floor: beyond, the next unit lacks its whole bound
        if (self.step >= len(self.steps) or self.owner.skipped(self.steps[self.step].index)
                or type(kept) is int and kept > max(32, self.limits.memory_mb // 16)):
            self.step = len(self.steps)
            return False
        return True


def close_fds(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def send_signal(pid: int, sig: int) -> None:
    """Signal a process that may be gone already (or, past a uid switch, not ours to signal)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


# -- a batch job -------------------------------------------------------------------------------------
class Supervisor:
    """A job whose units and probes are all known in advance: run in children, a batch of units
    (those of one `process`) per child, from the first not yet run on."""

    def __init__(self, job: Job, out_fd: int, workroot: str, forker: Forker):
        self.job, self.units, self.limits = job, job.units, job.limits
        self.out_fd, self.workroot, self.forker = out_fd, workroot, forker
        self.states = [_UnitState(u) for u in job.units]
        self.poisoned: dict[str, str] = {}  # group → why its later units are not run
        self.codes: dict[int, bytes | dict] = {}  # unit index → marshalled program, or its error

    def _poison(self, state: _UnitState) -> None:
        """The same program would fail the same way on its other inputs: skip them, saying why."""
        if state.unit.group:
            self.poisoned.setdefault(state.unit.group, (state.error or {}).get("message", "échec"))

    def skipped(self, index: int) -> bool:
        group = self.units[index].group
        return bool(group) and group in self.poisoned

    def finish(self, index: int) -> None:
        send_line(self.out_fd, {"i": index, "result": self.states[index].result()})

    def run(self) -> None:
        index = 0
        while index < len(self.units):
            if self.skipped(index):
                why = "non exécuté, car sur une autre entrée : " + self.poisoned[self.units[index].group]
                self.states[index].status = SKIPPED
                self.states[index].error = {"kind": "skipped", "message": why}
                self.finish(index)
                index += 1
                continue
            end = index + 1  # the batch: the next units of the same process, up to one that is skipped
            process = self.units[index].process
            while end < len(self.units) and self.units[end].process == process and not self.skipped(end):
                end += 1
            index = self.run_batch(list(range(index, end)))

    def _plan(self, batch: list[int]) -> list[Step]:
        """The commands for the batch, in order; a unit run again skips the probes it has results for."""
        steps = []
        for index in batch:
            unit, state = self.units[index], self.states[index]
            steps.append(begin(index, unit, self.limits))
            if index not in self.codes:
                self.codes[index] = compiled(unit)
            code = self.codes[index]
            if isinstance(code, bytes):
                steps.append(Step(index, b"M", code))
            elif state.status is None:  # it does not compile: its probes still run, on nothing
                state.status, state.error = ERROR, code
            for j, probe in enumerate(unit.probes):
                if j not in state.probes and (step := probe_step(index, j, probe.expr, probe.setup, probe.secret,
                                                                 state)):
                    steps.append(step)
            if unit.state is not None:
                steps.append(Step(index, b"S", json.dumps({"names": list(unit.state)}).encode()))
            steps.append(Step(index, b"E"))
        return steps

    def run_batch(self, batch: list[int]) -> int:
        """Run units `batch` in one child; return the index to continue from."""
        run = ChildRun(self, self.job.capture_output, resumed=self.states[batch[0]].resumes > 0)
        run.feed(self._plan(batch))
        stop = run.close()
        if run.violation:
            self._void(run.done, run.violation)
        for index in run.done:
            self.finish(index)
        if stop is None:  # all done, or stopped early because the rest is skipped or goes to a fresh child
            return run.done[-1] + 1 if run.done else batch[-1] + 1
        index = run.current if run.current is not None else next((i for i in batch if i not in run.done), batch[-1])
        state, (reason, detail) = self.states[index], stop
        error = stop_error(state.unit, reason, detail, self.limits)
        state.seconds = time.monotonic() - state.started if state.started else 0.0
        if detail.get("budget"):  # keep what was evaluated; the rest of the probes are not
            if state.status in (None, OK):
                state.status, state.error = TIMEOUT, {"kind": "timeout", "message": error["message"]}
            for j in range(len(state.unit.probes)):
                state.probes.setdefault(j, {"error": {"kind": "timeout", "message": error["message"]}})
            self._poison(state)
        elif run.phase == "probe":
            state.probes[run.probe_index] = {"error": error}
            state.resumes += 1
            if state.resumes <= MAX_RESUMES and run.probe_index + 1 < len(state.unit.probes):
                return index  # run this unit again, from the next probe on
        elif run.phase == "state":  # the program and its probes are done: keep them
            state.state = {"$error": {"kind": reason, "message": error["message"]}}
        elif run.phase != "end":  # the program itself (or the child's start) failed: the unit is lost, and its group
            state.status, state.error = TIMEOUT if reason == "timeout" else CRASH, error
            self._poison(state)
        self.finish(index)
        return index + 1

    def _void(self, done: list[int], violation: str) -> None:
        """A broken bound on files voids what the run computed: its values must not earn credit."""
        error = {"kind": "files", "message": violation}
        for state in (self.states[i] for i in done):
            if state.status == OK:
                state.status, state.error = ERROR, error
            state.probes = {j: {"error": error} for j in range(len(state.unit.probes))}
            if state.state is not None:
                state.state = {"$error": error}


# -- a session ------------------------------------------------------------------------------------
class SessionSupervisor:
    """One program asked one question at a time (a grader's test function decides what to ask next
    from each answer), each fed to the same keeper as a batch job's. The child keeps the namespace
    between questions with the same overrides; a public question after a secret one goes to a new
    child; a program that hangs or crashes ends the session's use of it (« non exécuté » after)."""

    def __init__(self, job_in: int, out_fd: int, workroot: str, forker: Forker):
        self.job_in, self.out_fd, self.workroot, self.forker = job_in, out_fd, workroot, forker
        header = self._read()
        if header is None:
            raise ValueError("session sans en-tête")
        self.unit = Unit.from_json(header["unit"])
        self.limits = Limits.from_dict(header.get("limits", {}))
        # The run of the program the child holds (the keeper reads them by index), one at a time.
        self.units: dict[int, Unit] = {}
        self.states: dict[int, _UnitState] = {}
        self.runs = 0  # program runs started, the last one's index
        self.child: ChildRun | None = None
        self.key: tuple | None = None  # the overrides the child's namespace was built with
        self.heard_secret = False  # the child was asked a secret question
        self.asked = 0  # probes asked of that namespace
        self.poisoned: dict | None = None  # the error that ended this program's runs
        self.kills = 0  # children killed for a probe that hung or crashed

    # -- the grader's side --------------------------------------------------------------------
    def _read(self) -> dict | None:
        """The grader's next frame; None at the end of its stream."""
        try:
            (length,) = struct.unpack("!I", read_exact(self.job_in, 4))
            if length > MAX_FRAME:
                raise ValueError("question trop grande")
            data = json.loads(read_exact(self.job_in, length))
        except EOFError:
            return None
        if not isinstance(data, dict):
            raise ValueError("question illisible")
        return data

    def run(self) -> None:
        try:
            while (request := self._read()) is not None:
                send_line(self.out_fd, self.answer(Ask.from_json(request), time.monotonic()))
        finally:
            self._end_child()
            close_fds(self.job_in)

    # -- one question -------------------------------------------------------------------------
    def answer(self, ask: Ask, started: float) -> dict:
        if self.poisoned is not None:
            return _answer(SKIPPED, dict(self.poisoned), None, started)
        wall = self.unit.wall or self.limits.wall
        budget = wall if ask.wall is None else max(0.05, min(wall, ask.wall))
        if self.heard_secret and not ask.secret:
            self._end_child()  # a public answer must not come from a process that heard a secret
        child = self.child = self.child or ChildRun(self)
        self.heard_secret = self.heard_secret or ask.secret
        if ask.fresh or self.key != ask.overrides:
            error = self._run_program(child, ask.overrides, budget)
            if error is not None:  # it does not compile: nothing ran, nothing to ask
                return _answer(ERROR, error, None, started)
        else:  # the same namespace: this question's time runs from now
            child.unit_deadline = started + budget
            child.clock_starts(started)
        state = self.states[self.runs]
        if child.stopped is None and state.status != TIMEOUT:
            j, self.asked = self.asked, self.asked + 1
            if step := probe_step(self.runs, j, ask.expr, ask.setup, ask.secret, state):
                child.feed([step])
        if child.stopped is not None:
            return self._lost(state, started)
        if state.status == TIMEOUT:  # it did not end by itself: it would not do better for the next one
            self._end_child()
            return _answer(TIMEOUT, state.error, None, started)
        violation = files_violation(child.workdir, self.limits)
        if violation:  # a broken bound voids what the run computed
            self.poisoned = {"kind": "files", "message": violation}
            self._end_child()
            return _answer(ERROR, dict(self.poisoned), {"error": dict(self.poisoned)}, started)
        return _answer(state.status, state.error, state.probes.pop(j), started)

    def _run_program(self, child: ChildRun, overrides: tuple, budget: float) -> dict | None:
        """Run the program in a fresh namespace of the child; its compile error, if it has one."""
        self.runs += 1
        unit = replace(self.unit, overrides=overrides, probes=(), wall=budget)
        code = compiled(unit)
        if isinstance(code, dict):
            self.key = None
            return code
        self.key, self.asked = overrides, 0
        self.units.clear()
        self.states.clear()
        self.units[self.runs], self.states[self.runs] = unit, _UnitState(unit)
        child.feed([begin(self.runs, unit, self.limits), Step(self.runs, b"M", code)])
        return None

    def _poison(self, state: _UnitState) -> None:
        """The program timed out (the keeper says so): later questions are not run."""
        self.poisoned = {"kind": "skipped", "message": "non exécuté : " + (state.error or {}).get("message", "")}

    def _lost(self, state: _UnitState, started: float) -> dict:
        """The child died or was stopped while answering: say why; the next question starts afresh."""
        reason, detail = self._end_child()
        error = stop_error(self.unit, reason, detail, self.limits)
        if state.status is None or reason in ("output", "protocol"):  # while (or before) the program ran
            self.poisoned = {"kind": "skipped", "message": "non exécuté : " + error["message"]}
            return _answer(TIMEOUT if reason == "timeout" else CRASH, error, None, started)
        # A probe hung or crashed: it costs that probe; the next question runs the program again.
        self.kills += 1
        if self.kills > MAX_RESUMES:
            self.poisoned = {"kind": "skipped", "message": "non exécuté : " + error["message"]}
        return _answer(state.status, state.error, {"error": error}, started)

    def _end_child(self) -> tuple[str, dict] | None:
        """Stop the child (if any), wipe its folder: why it was stopped, if it was."""
        child, self.child, self.key, self.heard_secret = self.child, None, None, False
        if child is None:
            return None
        stopped = child.close()
        if child.violation and self.poisoned is None:
            self.poisoned = {"kind": "files", "message": child.violation}
        return stopped


def _answer(status: str, error: dict | None, probe: dict | None, started: float) -> dict:
    """One question's answer: the program's status and error, and the probe (None: not evaluated)."""
    return {"status": status, "error": error, "probes": [probe], "seconds": round(time.monotonic() - started, 4)}


# -- what is said of a run ----------------------------------------------------------------------------
WAITED = 0.25  # share of its time a program ran or was ready to run below which it waited rather than looped


def where_of(event: dict) -> dict:
    """What a child says when its time is up (line, top-level statement, CPU seconds), checked."""
    where = {k: event.get(k) for k in ("line", "statement") if type(event.get(k)) is int}
    cpu = event.get("cpu")
    if type(cpu) in (int, float) and 0 <= cpu < 1e6:
        where["cpu"] = float(cpu)
    return where


def timed_out(unit: Unit, seconds: float, where: dict | None, reported, limits: Limits) -> dict:
    where = dict(where or {})  # where_of's: its line and statement are ints
    if where.get("line") is None and isinstance(reported, dict) and type(reported.get("line")) is int:
        where.update(line=reported["line"], statement=reported.get("statement"))
    return stop_error(unit, "timeout", {"seconds": seconds, **where}, limits)


def _shown(seconds: float, digits: int = 1) -> str:
    return f"{seconds:.{digits}f}".rstrip("0").rstrip(".").replace(".", ",")


SAID = {"protocol": "le programme a perturbé le correcteur (message inattendu sur son canal)",
        "channel": "le programme a fermé ou détourné le canal du correcteur",
        "start": "le correcteur n'a pas pu lancer le programme"}


def stop_message(reason: str, detail: dict, limits: Limits) -> str:
    if reason == "timeout":
        seconds = detail.get("seconds", limits.wall)
        where = f" à la ligne {detail['line']}" if detail.get("line") else ""
        cpu, queued = detail.get("cpu"), detail.get("queued", 0.0)
        if type(cpu) is float and cpu + queued < WAITED * (seconds + queued):  # neither ran nor was ready to
            computed = ("il n'a presque pas calculé" if cpu < 0.05 else
                        f"il n'a calculé que {_shown(cpu, 2)} s")
            return (f"temps dépassé : les {_shown(seconds)} s accordées se sont écoulées pendant que le "
                    f"programme attendait{where} ({computed} : time.sleep, input, une attente ?)")
        return f"temps dépassé : arrêté{where} après {_shown(seconds)} s (boucle sans fin ?)"
    if reason == "output":
        return f"sortie trop volumineuse : arrêté après {detail.get('bytes', 0) // 1024} Kio d'affichage"
    if reason in SAID:
        return SAID[reason]
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


def stop_error(unit: Unit, reason: str, detail: dict, limits: Limits) -> dict:
    """The error of a run the supervisor stopped, or saw die: in its own words, never the child's."""
    return {"kind": reason, "message": stop_message(reason, detail, limits), **location(unit, detail.get("line")),
            "statement": detail.get("statement")}


def location(unit: Unit, line) -> dict:
    if not isinstance(line, int) or isinstance(line, bool) or line <= 0:
        return {}
    lines = unit.source.split("\n")
    return {"line": line, "text": lines[line - 1].rstrip() if line <= len(lines) else None}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# What a child reports of an error of the student's code. Messages of the other kinds (a timeout, a
# crash…) are shown whatever a check discloses, so their text is the supervisor's own, never the
# child's: a child that wrote one could carry into a page what a hidden run read. (A timeout the
# supervisor did not ask for is the student's code raising the child's own interruption.)
CHILD_KINDS = ("syntax", "exception", "memory", "exit", "too_big")
TOO_BIG_SAID = re.compile(r"plus de 200 000 éléments|\d{1,9} Kio, limite \d{1,9} Kio")


def _error_with_text(unit: Unit, error) -> dict | None:
    """The child reports lines only: their text comes from the source, which it never had."""
    if not isinstance(error, dict):
        return None
    error = {k: v for k, v in error.items() if k != "text"}
    kind = error.get("kind")
    if kind not in CHILD_KINDS:  # no child writes that: its channel was written to by other code
        return {"kind": "protocol", "message": stop_message("protocol", {}, Limits())}
    elif kind == "too_big" and not (isinstance(error.get("message"), str) and TOO_BIG_SAID.fullmatch(error["message"])):
        error["message"] = ""
    return {**error, **location(unit, error.get("line"))}


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


def force(func, path, _exc) -> None:
    """shutil.rmtree's error handler: a run may leave folders it made unreadable; open them, never
    through a link."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        if not os.path.islink(path):
            os.chmod(path, 0o700)
    with contextlib.suppress(OSError):
        func(path)
