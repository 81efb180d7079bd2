"""What crosses between the grader and the process that runs a student's code: plain JSON, never pickle.

A *job* is a list of *units*: one program each (a student's file, or the solution with one blank
replaced by the student's fill), run in a fresh namespace with some top-level assignments
overridden (a hidden variant), then *probes* (expressions whose values come back as JSON) and
optionally its *state* (its top-level variables). Values are compared in the grader, so nothing a
student's object claims about itself counts. A *session* (stream starting with `SESSION`) keeps one
program's namespace and answers questions (`Ask` frames) one at a time, until the stream ends.
"""

from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from . import wire
from .wire import Bounds


@dataclass(frozen=True)
class Limits:
    """Bounds for the code of one unit-group (one exercise of one student)."""

    wall: float = 10.0  # seconds per unit
    cpu: int = 30  # seconds of CPU for one process
    memory_mb: int = 1024  # address space added on top of what the runner already maps
    processes: int = 32  # simultaneous processes the student's code may create
    output_kb: int = 64  # captured stdout+stderr kept per process; the rest is counted, not kept
    file_mb: int = 16  # largest file the code may write
    files: int = 64  # files it may leave in its working directory
    value_kb: int = 1024  # largest value a probe may send back, once encoded

    @classmethod
    def from_dict(cls, data: dict) -> "Limits":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class Probe:
    expr: str
    setup: str | None = None  # statements run before the expression, in the same namespace
    # A hidden check's: sent to the process only once everything public it was sent is answered, so
    # that nothing it returns for a public check can carry what a hidden one asks.
    secret: bool = False


@dataclass(frozen=True)
class Unit:
    source: str
    filename: str  # the name tracebacks and messages show (the student's own path)
    probes: tuple[Probe, ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()  # (variable, Python expression) replacing its value
    process: str = ""  # units with the same key share a process, run one after the other
    group: str = ""  # after a timeout or a crash, later units of the same group are skipped
    module_name: str = "__trous__"  # `if __name__ == "__main__":` blocks do not run in checks
    wall: float | None = None  # seconds for this unit, instead of the job's limit
    # After the probes, send back the program's top-level variables: None for no, () for all of
    # them, or these names (missing ones are reported missing).
    state: tuple[str, ...] | None = None

    def to_json(self) -> dict:
        # Its fields as they are (json writes tuples as lists), not dataclasses.asdict (a deep copy):
        # this runs for every unit sent. The grader wrote it: read back as is, no value to distrust.
        return {**vars(self), "probes": [vars(p) for p in self.probes]}

    @classmethod
    def from_json(cls, data: dict) -> "Unit":
        state = data.get("state")
        return cls(**{**data, "probes": tuple(Probe(**p) for p in data.get("probes", ())),
                      "overrides": tuple(map(tuple, data.get("overrides", ()))),
                      "state": None if state is None else tuple(state)})


@dataclass(frozen=True)
class Job:
    units: tuple[Unit, ...]
    limits: Limits = field(default_factory=Limits)
    capture_output: bool = True

    def to_bytes(self) -> bytes:
        return json.dumps({"units": [u.to_json() for u in self.units], "limits": asdict(self.limits),
                           "capture_output": self.capture_output}).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Job":
        raw = json.loads(data)
        return cls(units=tuple(Unit.from_json(u) for u in raw["units"]),
                   limits=Limits.from_dict(raw.get("limits", {})),
                   capture_output=bool(raw.get("capture_output", True)))


# Status of a unit, and `kind` of an error.
OK, ERROR, TIMEOUT, CRASH, EXIT, SKIPPED = "ok", "error", "timeout", "crash", "exit", "skipped"


@dataclass(frozen=True)
class ErrorInfo:
    kind: str  # "syntax", "exception", "exit", "timeout", "crash", "memory", "override", "skipped"
    type: str = ""  # exception class name
    message: str = ""
    line: int | None = None  # in the unit's own source, when the error is in it
    text: str | None = None  # that line
    statement: int | None = None  # first line of the top-level statement that was running

    @classmethod
    def from_json(cls, data: dict | None, memory_mb: int | None = None) -> "ErrorInfo | None":
        """`memory_mb`: the copy's memory bound, which a memory error carries (the grader's number)."""
        if not isinstance(data, dict):
            return None
        kind = _text(data.get("kind", "crash"), 40) or "crash"
        message = _text(data.get("message", ""), 2000)
        if kind == "memory":
            message = _memory_message(message, memory_mb)
        return cls(kind=kind, type=_text(data.get("type", ""), 200), message=message,
                   line=_line(data.get("line")),
                   text=_text(data["text"], 500) if data.get("text") is not None else None,
                   statement=_line(data.get("statement")))


def _memory_message(message: str, memory_mb: int | None) -> str:
    """A memory error's message: "used/bound" in MiB (either may be missing), nothing else."""
    used, _, bound = message.partition("/")
    used = used if used.isdigit() and len(used) <= 7 else ""
    bound = str(memory_mb) if memory_mb else (bound if bound.isdigit() and len(bound) <= 7 else "")
    return f"{used}/{bound}" if bound else used


def _text(value, limit: int) -> str:
    """A text of the sandbox's, as the grader keeps it: a string (else nothing), cut, in valid UTF-8."""
    if type(value) is not str:
        return ""
    value = value[:limit]
    if not value.isascii():
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _line(value) -> int | None:
    return value if type(value) is int and 0 < value < 1 << 31 else None


def _state(state, bounds: Bounds) -> dict | None:
    """A program's variables, checked as one value: name → encoded value, or {"$error": …}."""
    if not isinstance(state, dict):
        return None
    if "$error" in state:
        error = ErrorInfo.from_json(state["$error"]) or ErrorInfo("protocol")
        return {"$error": {"kind": error.kind, "message": error.message}}
    try:
        wire.check(state, bounds, state=True)
    except wire.WireError as exc:
        return {"$error": {"kind": exc.kind, "message": f"variables du programme refusées : {exc.reason}"}}
    return state


@dataclass(frozen=True)
class ProbeResult:
    value: Any = None
    error: ErrorInfo | None = None
    evaluated: bool = True


@dataclass(frozen=True)
class UnitResult:
    status: str
    error: ErrorInfo | None = None
    probes: tuple[ProbeResult, ...] = ()
    output: str = ""
    seconds: float = 0.0
    state: dict[str, Any] | None = None  # name → encoded value, when the unit asked for it
    size: int = 0  # bytes it took on the wire: what keeping it costs the grader

    @classmethod
    def from_json(cls, data: dict, n_probes: int, size: int = 0, bounds: Bounds | None = None) -> "UnitResult":
        """A unit's result as a sandbox sent it, read under `bounds` (wire.py): a value or a state out
        of them becomes its error, before anything is rebuilt."""
        bounds = bounds or Bounds()
        probes = []
        raw = data.get("probes") if isinstance(data.get("probes"), list) else []
        for i in range(n_probes):
            p = raw[i] if i < len(raw) and isinstance(raw[i], dict) else None
            if p is None:
                probes.append(ProbeResult(evaluated=False))
            elif p.get("error") is not None:
                error = ErrorInfo.from_json(p["error"], bounds.memory_mb) or ErrorInfo("invalid", message="erreur illisible")
                probes.append(ProbeResult(error=error))
            else:
                try:
                    wire.check(p.get("value"), bounds)
                    probes.append(ProbeResult(value=p.get("value")))
                except wire.WireError as exc:
                    probes.append(ProbeResult(error=ErrorInfo(exc.kind, message=exc.reason)))
        status = data.get("status")
        if status not in (OK, ERROR, TIMEOUT, CRASH, EXIT, SKIPPED):
            status = CRASH
        seconds = data.get("seconds")
        return cls(status=status, error=ErrorInfo.from_json(data.get("error"), bounds.memory_mb),
                   probes=tuple(probes), output=_text(data.get("output", ""), 1_000_000),
                   seconds=float(seconds) if type(seconds) in (int, float) and 0 <= seconds < 1e9 else 0.0,
                   state=_state(data.get("state"), bounds), size=size)

    @classmethod
    def failed(cls, status: str, kind: str, message: str, n_probes: int) -> "UnitResult":
        return cls(status=status, error=ErrorInfo(kind=kind, message=message),
                   probes=tuple(ProbeResult(evaluated=False) for _ in range(n_probes)))


# -- sessions --------------------------------------------------------------------------------------
SESSION = b"S"  # first byte of a job's stream that opens a session (a batch job is JSON: it starts with "{")
MAX_FRAME = 64 * 1024 * 1024  # a question that big is refused (its variables are written as Python text)


def frame(data: dict) -> bytes:
    payload = json.dumps(data).encode()
    return struct.pack("!I", len(payload)) + payload


@dataclass(frozen=True)
class Ask:
    """One question of a session: the value of `expr` in the program run with `overrides`."""

    expr: str
    setup: str | None = None
    overrides: tuple[tuple[str, str], ...] = ()
    # A hidden check's: once a process has been asked one, a public question goes to a fresh process,
    # so that what a public answer shows can carry nothing a hidden question brought in.
    secret: bool = False
    fresh: bool = False  # run the program again even when the overrides are the current ones
    wall: float | None = None  # at most this long for this question, program run included

    def to_json(self) -> dict:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict) -> "Ask":
        return cls(**{**data, "overrides": tuple(map(tuple, data.get("overrides", ())))})
