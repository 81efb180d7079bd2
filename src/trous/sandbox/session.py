"""The supervisor of a session: one program, asked one question at a time by the grader.

A batch job (supervisor.py) knows all its probes in advance; a grader's test function does not: it
asks a value, looks at it, then decides what to ask next. Here the grader's questions (`Ask`) come
one at a time on the job's stream, and each is answered before the next is read. The process that
runs the student's code keeps the program's namespace between questions with the same overrides;
other overrides are another run of the program, in a fresh namespace.

What a batch job guarantees still holds. The child is a fresh fork of the zygote and receives only
compiled code, one command at a time (never the source, never a question not yet asked). A public
question after a secret one goes to a new child, so that what a public answer shows can carry
nothing a hidden question brought in. Each program run and each probe has its own clock; a probe
that outlives it is interrupted, then the child killed; a program that hangs or crashes ends the
session's use of that program (later questions are answered « non exécuté » at once, as a batch job
skips the rest of a group). Output, files and values are bounded as in a batch job.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import signal
import struct
import tempfile
import time
from dataclasses import replace

from ..core import wire
from ..core.protocol import CRASH, ERROR, EXIT, MAX_FRAME, OK, SKIPPED, TIMEOUT, Ask, Limits, Unit
from .supervisor import GRACE, MAX_RESUMES, PROBE_FLOOR, START, Forker, OverrideError, Supervisor, _error_with_text, _parse, _probe_code, _write_all, compile_unit, event_line_bytes, files_violation, probe_wall, stop_message, timed_out, where_of, wipe


class _Gone(Exception):
    """The child is dead or was killed: (reason, detail) say why."""

    def __init__(self, reason: str, detail: dict):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


class _Child:
    """One process running student code, and what it holds."""

    def __init__(self, pid: int, cmd_w: int, ev_r: int, out_r: int, workdir: str, line_bytes: int):
        self.pid, self.cmd_w, self.ev_r, self.out_r, self.workdir = pid, cmd_w, ev_r, out_r, workdir
        self.events = wire.Lines(line_bytes)
        self.saw_secret = False
        self.units = 0  # program runs started in it
        self.key: tuple | None = None  # the overrides its namespace was built with
        self.program: tuple[str, dict | None] | None = None  # (status, error) of that run
        self.probes = 0  # probes asked of that namespace
        self.ready = False  # it said its start is over (once, before any student code)


class SessionSupervisor:
    def __init__(self, job_in: int, out_fd: int, workroot: str, forker: Forker):
        self.job_in, self.out_fd, self.workroot, self.forker = job_in, out_fd, workroot, forker
        header = self._read()
        if header is None:
            raise ValueError("session sans en-tête")
        self.unit = Unit.from_json(header["unit"])
        self.limits = Limits.from_dict(header.get("limits", {}))
        self.child: _Child | None = None
        self.output_total = 0
        self.poisoned: dict | None = None  # the error that ended this program's runs
        self.kills = 0  # children killed for a probe that hung or crashed
        self.violation: str | None = None

    # -- the grader's side --------------------------------------------------------------------
    def _read_exact(self, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = os.read(self.job_in, n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _read(self) -> dict | None:
        head = self._read_exact(4)
        if head is None:
            return None
        (length,) = struct.unpack("!I", head)
        if length > MAX_FRAME:
            raise ValueError("question trop grande")
        payload = self._read_exact(length)
        if payload is None:
            return None
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise ValueError("question illisible")
        return data

    def _send(self, message: dict) -> None:
        _write_all(self.out_fd, (json.dumps(message, allow_nan=False) + "\n").encode())

    def run(self) -> None:
        try:
            while True:
                request = self._read()
                if request is None:
                    break
                self._send(self.answer(Ask.from_json(request)))
        finally:
            self._end_child()
            try:
                os.close(self.job_in)
            except OSError:
                pass
        self._send({"done": True})

    # -- one question -------------------------------------------------------------------------
    def answer(self, ask: Ask) -> dict:
        started = time.monotonic()
        if self.poisoned is not None:
            return self._result(SKIPPED, {**self.poisoned, "kind": self.poisoned.get("kind", "skipped")}, None,
                                started, evaluated=False)
        wall = self.unit.wall or self.limits.wall
        budget = wall if ask.wall is None else max(0.05, min(wall, ask.wall))
        try:
            if self.child is not None and self.child.saw_secret and not ask.secret:
                self._end_child()  # a public answer must not come from a process that heard a secret
            if self.child is None:
                self._start_child()
            child = self.child
            assert child is not None
            child.saw_secret = child.saw_secret or ask.secret
            if ask.fresh or child.key != ask.overrides or child.program is None:
                program = self._run_program(child, ask.overrides, budget)
                if program is not None:  # it does not compile: nothing ran, nothing to ask
                    return self._result(ERROR, program, None, started, evaluated=False)
            status, error = child.program
            if status in (TIMEOUT, CRASH):  # it did not end by itself: it would not do better for the next one
                self.poisoned = {"kind": "skipped", "message": "non exécuté : " + (error or {}).get("message", "")}
                self._end_child()
                return self._result(status, error, None, started, evaluated=False)
            spent = time.monotonic() - started
            probe = self._probe(child, ask, max(PROBE_FLOOR, min(probe_wall(self.limits), budget - spent)))
        except _Gone as gone:
            return self._lost(gone, started)
        violation = files_violation(child.workdir, self.limits) if self.child is child else None
        if violation:  # a broken bound voids what the run computed
            self.poisoned = {"kind": "files", "message": violation}
            self._end_child()
            return self._result(ERROR, {"kind": "files", "message": violation}, {"error": dict(self.poisoned)},
                                started)
        status, error = child.program
        return self._result(status, error, probe, started)

    def _lost(self, gone: _Gone, started: float) -> dict:
        """The child died or was killed while answering: say why; the next question starts afresh."""
        child = self.child
        phase = gone.detail.pop("phase", "program")
        exit_ = self._end_child(killed=gone.reason not in ("crash", "channel"))
        detail = dict(gone.detail)
        reason = gone.reason
        if reason in ("crash", "channel") and exit_ is not None:
            if reason == "channel" and not exit_.killed:
                reason = "crash"
            detail.update(code=exit_.code, cpu=exit_.cpu)
        error = {"kind": "timeout" if reason == "timeout" else reason,
                 "message": stop_message(reason, detail, self.limits),
                 **Supervisor._location(self.unit, detail.get("line")), "statement": detail.get("statement")}
        if phase == "program" or reason in ("output", "protocol"):
            status = TIMEOUT if reason == "timeout" else CRASH
            self.poisoned = {"kind": "skipped", "message": "non exécuté : " + error["message"]}
            return self._result(status, error, None, started, evaluated=False)
        # A probe hung or crashed: it costs that probe; the next question runs the program again.
        self.kills += 1
        if self.kills > MAX_RESUMES:
            self.poisoned = {"kind": "skipped", "message": "non exécuté : " + error["message"]}
        status, program_error = child.program if child is not None and child.program else (OK, None)
        return self._result(status, program_error, {"error": error}, started)

    def _result(self, status: str, error: dict | None, probe: dict | None, started: float,
                evaluated: bool = True) -> dict:
        return {"status": status, "error": error, "probes": [probe if evaluated else None],
                "seconds": round(time.monotonic() - started, 4)}

    # -- the child ----------------------------------------------------------------------------
    def _start_child(self) -> None:
        workdir = tempfile.mkdtemp(prefix="run-", dir=self.workroot)
        os.chmod(workdir, 0o777)
        cmd_r, cmd_w = os.pipe()
        ev_r, ev_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = self.forker.spawn(workdir, [cmd_r, ev_w, out_w], self.limits)
        for fd in (cmd_r, ev_w, out_w):
            os.close(fd)
        os.set_blocking(out_r, False)
        if pid is None:
            for fd in (cmd_w, ev_r, out_r):
                os.close(fd)
            wipe(workdir)
            raise _Gone("start", {"phase": "program"})
        self.child = _Child(pid, cmd_w, ev_r, out_r, workdir, event_line_bytes(self.limits))

    def _end_child(self, killed: bool = True):
        """Stop the child (if any), wipe its folder; how it ended."""
        child, self.child = self.child, None
        if child is None:
            return None
        try:
            os.close(child.cmd_w)
        except OSError:
            pass
        if not killed:  # it ended by itself, or is about to: let it be reaped first, to say how
            ended = self.forker.wait(child.pid, 0.5)
            exit_ = ended if ended.status is not None else None
        else:
            exit_ = None
        if exit_ is None:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            exit_ = replace(self.forker.wait(child.pid), killed=True)
        for fd in (child.ev_r, child.out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        violation = files_violation(child.workdir, self.limits)
        wipe(child.workdir)
        if violation and self.poisoned is None:
            self.poisoned = {"kind": "files", "message": violation}
        return exit_

    def _command(self, child: _Child, kind: bytes, payload: bytes) -> None:
        try:
            _write_all(child.cmd_w, struct.pack("!cI", kind, len(payload)) + payload)
        except OSError:  # it stopped reading its commands
            raise _Gone("crash", {}) from None

    def _run_program(self, child: _Child, overrides: tuple, budget: float) -> dict | None:
        """Run the program in a fresh namespace of the child; its compile error, if it has one."""
        child.units += 1
        child.key, child.program, child.probes = overrides, None, 0
        unit = replace(self.unit, overrides=overrides, probes=())
        header = {"i": child.units, "filename": unit.filename, "module_name": unit.module_name,
                  "value_limit": self.limits.value_kb * 1024}
        try:
            code = marshal.dumps(compile_unit(unit))
        except SyntaxError as exc:
            line = exc.lineno if exc.filename == unit.filename else None
            child.key = None
            return {"kind": "syntax", "type": "SyntaxError", "message": exc.msg or "syntaxe invalide",
                    **Supervisor._location(unit, line)}
        except OverrideError as exc:
            child.key = None
            return {"kind": "override", "type": "LookupError",
                    "message": f"variable(s) introuvable(s) au premier niveau du fichier : {exc}"}
        except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
            child.key = None
            return {"kind": "syntax", "type": type(exc).__name__, "message": "programme impossible à compiler"}
        self._command(child, b"U", json.dumps(header).encode())
        self._command(child, b"M", code)
        first = child.units == 1
        allowed = budget + (START if first else 0.0)
        event, interrupted, where = self._await(child, "module", None, allowed, phase="program", once_ready=budget)
        if interrupted:
            child.program = (TIMEOUT, self._timed_out(budget, where, event.get("error")))
        else:
            status = event.get("status")
            child.program = (status if status in (OK, ERROR, EXIT) else ERROR,
                             _error_with_text(self.unit, event.get("error"), Supervisor))
        return None

    def _probe(self, child: _Child, ask: Ask, allowed: float) -> dict:
        j = child.probes
        child.probes += 1
        try:
            payload = _probe_code(ask.expr, ask.setup, j)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return {"error": {"kind": "protocol", "message": f"vérification illisible : {type(exc).__name__}"}}
        self._command(child, b"P", payload)
        event, interrupted, where = self._await(child, "probe", j, allowed, phase="probe")
        result = event.get("result")
        if interrupted:
            error = result.get("error") if isinstance(result, dict) else None
            return {"error": self._timed_out(allowed, where, error)}
        if isinstance(result, dict) and isinstance(result.get("error"), dict):
            return {"error": _error_with_text(self.unit, result["error"], Supervisor)}
        if isinstance(result, dict) and "value" in result:
            return {"value": result["value"]}
        return {"error": {"kind": "protocol", "message": "résultat illisible"}}

    def _timed_out(self, seconds: float, where: dict | None, reported) -> dict:
        return timed_out(self.unit, seconds, where, reported, self.limits)

    def _await(self, child: _Child, expected: str, j: int | None, allowed: float, phase: str,
               once_ready: float | None = None):
        """The child's answer to the command just sent: (event, interrupted, where it was stopped).
        Past `allowed`, the student's code is interrupted; past the grace that follows, killed.
        `once_ready`: when the child says its start is over, the time left becomes this (the start
        allowance in `allowed` is not the student's to spend)."""
        deadline = time.monotonic() + allowed
        interrupting, where = False, None
        hard_cap = max(16 * 1024 * 1024, 64 * self.limits.output_kb * 1024)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if interrupting:
                    raise _Gone("timeout", {"seconds": allowed, "phase": phase, **(where or {})})
                interrupting = True
                try:
                    os.kill(child.pid, signal.SIGUSR1)
                except (ProcessLookupError, PermissionError):
                    pass
                deadline = time.monotonic() + GRACE
                continue
            ready, _, _ = select.select([child.ev_r, child.out_r], [], [], remaining)
            if child.out_r in ready:
                try:
                    chunk = os.read(child.out_r, 1 << 16)
                except BlockingIOError:
                    chunk = None
                if chunk:
                    # Output is not kept (grading does not show it); only counted, to stop a flood.
                    self.output_total += len(chunk)
                    if self.output_total > hard_cap:
                        raise _Gone("output", {"bytes": self.output_total, "phase": phase})
            if child.ev_r not in ready:
                continue
            chunk = os.read(child.ev_r, 1 << 16)
            if not chunk:
                raise _Gone("channel", {"phase": phase})
            child.events.feed(chunk)
            if child.events.overflow:
                raise _Gone("protocol", {"phase": phase})
            while (line := child.events.pop()) is not None:
                event = _parse(line)
                if event is None or event["ev"] == "internal":
                    raise _Gone("protocol", {"phase": phase})
                if event["ev"] == "ready":
                    if child.ready:
                        raise _Gone("protocol", {"phase": phase})
                    child.ready = True
                    if once_ready is not None and not interrupting:
                        deadline = min(deadline, time.monotonic() + once_ready)
                    continue
                if event["ev"] == "where":
                    if interrupting:
                        where = where_of(event)
                    continue
                if event["ev"] != expected or event.get("i") != child.units or (j is not None and event.get("j") != j):
                    raise _Gone("protocol", {"phase": phase})
                return event, interrupting, where
