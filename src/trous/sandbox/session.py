"""The supervisor of a session: one program, asked one question at a time by the grader.

A grader's test function does not know its probes in advance: it asks a value, looks at it, then
decides what to ask next. Its questions (`Ask`) come one at a time on the job's stream, each
answered before the next is read, fed to the same keeper as a batch job's (`ChildRun`). The child
keeps the program's namespace between questions with the same overrides; other overrides are
another run of the program, in a fresh namespace.

What a batch job guarantees still holds: a fresh fork of the zygote, compiled code only, one command
at a time. A public question after a secret one goes to a new child, so that a public answer can
carry nothing a hidden question brought in. A probe that outlives its clock is interrupted, then
the child killed; a program that hangs or crashes ends the session's use of it (later questions are
answered « non exécuté » at once). Output, files and values are bounded as in a batch job.
"""

from __future__ import annotations

import json
import os
import struct
import time
from contextlib import suppress
from dataclasses import replace

from ..core.protocol import CRASH, ERROR, MAX_FRAME, SKIPPED, TIMEOUT, Ask, Limits, Unit
from .child import read_exact
from .supervisor import (MAX_RESUMES, ChildRun, Forker, Step, _UnitState, begin, compiled, files_violation,
                         probe_step, send_line, stop_error)


class SessionSupervisor:
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
            with suppress(OSError):
                os.close(self.job_in)

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
