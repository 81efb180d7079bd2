"""Inside the process that runs a student's code: the only place where student code executes.

A fresh fork of the zygote, which never held a job: it receives each unit's program compiled (never
as text) and each probe only when its turn comes, so nothing it has not been asked to run is in its
memory, and no frame above the student's names a test, an expected value or another variant's
inputs. The supervisor owns the clock and kills this process when a unit runs too long: nothing here
has to be trusted to stop. Events go to fd 3, one JSON line each; commands arrive on fd 0 as frames
(a type byte, a 4-byte big-endian length, the payload):
    U  {"i", "filename", "module_name", "value_limit"}   a new unit: a fresh namespace (no event)
    M  marshalled code object                            the unit's program, from the top
    P  marshalled (j, setup code or None, expression code)  one probe
    S  {"names": [...]}                                  the program's top-level variables
    E  (empty)                                           end of the unit ("kept": MiB past the floor)
"""

from __future__ import annotations

import builtins
import ctypes
import errno
import gc
import io
import json
import marshal
import os
import resource
import signal
import struct
import sys
import time
import traceback
from contextlib import suppress

from . import seccomp
from ..core.encode import encode, state
from .seccomp import PR_SET_NO_NEW_PRIVS, libc, prctl

EVENTS = 3
_write = os.write
_dumps = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode
_owner = {"pid": None}  # the process that speaks for the runner; a fork of it must stay silent
_current = {"index": -1, "filename": "", "running": False, "cpu": 0.0}  # cpu: when the command began
# MiB mapped once confined (start), the floor a unit's end is measured from (raised by the modules a
# unit imports), and the number of modules loaded when the unit began.
_memory: dict = {"start": 0, "floor": 0, "modules": 0, "fd": None}
_PAGE = os.sysconf("SC_PAGE_SIZE")


class TimeoutInterrupt(BaseException):
    """Raised into the student's code when its time is up, so that what it computed so far can
    still be checked. Code that swallows it is killed a moment later anyway."""


def emit(event: dict) -> None:
    if _owner["pid"] is not None and os.getpid() != _owner["pid"]:
        # A copy made by the student's own os.fork() came back into the runner: it must not report.
        os._exit(0)
    data = (_dumps(event) + "\n").encode()
    while data:
        data = data[_write(EVENTS, data):]


# -- where the student's code is --------------------------------------------------------------
def _frames_of(filename: str, frames) -> tuple[int | None, int | None]:
    """(innermost line, top-level statement line) of the student's program among (frame, line) pairs."""
    line = statement = None
    for frame, lineno in frames:
        if frame.f_code.co_filename == filename:
            if line is None:
                line = lineno
            if frame.f_code.co_name == "<module>":
                statement = lineno
    return line, statement


def describe(exc: BaseException, filename: str) -> dict:
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        line, statement = exc.lineno, exc.lineno
    else:
        line, statement = _frames_of(filename, reversed(list(traceback.walk_tb(exc.__traceback__))))
    if isinstance(exc, SyntaxError):
        kind, message = "syntax", exc.msg or "syntaxe invalide"
    elif isinstance(exc, MemoryError):
        # What the program held when it asked for more: the grader says it with the bound.
        kind, message = "memory", str(max(0, (_mapped() >> 20) - _memory["start"]))
    elif isinstance(exc, SystemExit):
        kind, message = "exit", _exit_code(exc)
    else:
        kind = "exception"
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - a hostile __str__
            message = ""
    try:
        type_name = type(exc).__name__
    except Exception:  # noqa: BLE001
        type_name = "Exception"
    return {"kind": kind, "type": str(type_name)[:200], "message": str(message)[:2000], "line": line,
            "statement": statement}


def _exit_code(exc: SystemExit) -> str:
    code = exc.code
    if code is None:
        return "sys.exit()"
    if isinstance(code, int) and not isinstance(code, bool):
        return f"sys.exit({int.__int__(code)})"
    return "sys.exit(…)"  # text given to sys.exit is the student's: never echoed


def _on_time_up(signum, frame):
    """SIGUSR1 (time is up): say which line of the student's program runs, then interrupt it."""
    line, statement = _frames_of(_current["filename"], traceback.walk_stack(frame))
    # With the CPU it used meanwhile: a program that waited (time.sleep…) did not loop.
    emit({"ev": "where", "i": _current["index"], "line": line, "statement": statement,
          "cpu": round(time.process_time() - _current["cpu"], 3)})
    if _current["running"]:
        raise TimeoutInterrupt()


# -- commands ------------------------------------------------------------------------------
def read_exact(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _guarded(compute) -> dict:
    """{"value": compute()}, run as the student's code (interruptible), or {"error": …}."""
    try:
        _current["running"] = True
        return {"value": compute()}
    except TimeoutInterrupt as exc:
        return {"error": {**describe(exc, _current["filename"]), "kind": "timeout"}}
    except BaseException as exc:  # noqa: BLE001 - report anything the student's code raised
        return {"error": describe(exc, _current["filename"])}
    finally:
        _current["running"] = False


def _run(code, namespace: dict) -> tuple[str, dict | None]:
    error = _guarded(lambda: exec(code, namespace)).get("error")  # noqa: S102 - this is the sandboxed runner
    _flush()
    if error is None:
        return "ok", None
    return error["kind"] if error["kind"] in ("timeout", "exit") else "error", error


def _probe(setup, expr, namespace: dict, limit: int) -> dict:
    if setup is not None and (error := _run(setup, namespace)[1]) is not None:
        return {"error": error}
    result = _guarded(lambda: eval(expr, namespace))  # noqa: S307
    try:
        if "error" in result:
            return result
        try:
            encoded = encode(result["value"])
        except OverflowError:  # more elements than any check reads
            return {"error": _too_big("plus de 200 000 éléments")}
        size = len(_dumps(encoded))
    except BaseException as exc:  # noqa: BLE001
        return {"error": describe(exc, _current["filename"])}
    finally:
        _flush()
    if size > limit:
        return {"error": _too_big(f"{size // 1024} Kio, limite {limit // 1024} Kio")}
    return {"value": encoded}


def _too_big(said: str) -> dict:
    return {"kind": "too_big", "type": "", "message": said, "line": None, "statement": None}


def serve() -> None:
    signal.signal(signal.SIGUSR1, _on_time_up)
    _owner["pid"] = os.getpid()
    namespace: dict = {}
    index, limit = -1, 1 << 20
    while True:
        try:
            kind, length = struct.unpack("!cI", read_exact(0, 5))
            payload = read_exact(0, length)
        except (EOFError, OSError, struct.error):
            return
        _current["cpu"] = time.process_time()
        if kind == b"U":
            if namespace:  # a session's new run of the program: the previous one's is let go first
                namespace = _forget(namespace)
            header = json.loads(payload)
            _memory["modules"] = len(sys.modules)
            index, limit = int(header["i"]), int(header.get("value_limit", limit))
            _current.update(index=index, filename=str(header["filename"]))
            namespace = {"__name__": str(header.get("module_name", "__trous__")), "__file__": _current["filename"],
                         "__builtins__": builtins}
        elif kind == b"M":
            status, error = _run(marshal.loads(payload), namespace)
            emit({"ev": "module", "i": index, "status": status, "error": error})
        elif kind == b"P":
            j, setup, expr = marshal.loads(payload)
            emit({"ev": "probe", "i": index, "j": j, "result": _probe(setup, expr, namespace, limit)})
        elif kind == b"S":
            names = json.loads(payload).get("names") or ()
            # Within the bound of one value, less what the names and a described variable take.
            result = _guarded(lambda: state(namespace, names, budget=limit - (64 << 10)))
            emit({"ev": "state", "i": index, "result": result})
        elif kind == b"E":
            _flush()
            namespace = _forget(namespace)
            emit({"ev": "end", "i": index, "kept": _kept()})
        del payload


def _forget(namespace: dict) -> dict:
    """Empty the namespace and collect its cycles, so that the memory bound is each run's (the zygote
    froze its own objects: only what this process made since its fork is visited)."""
    with suppress(BaseException):  # a __del__ of the student's may run here, and raise
        namespace.clear()
    gc.collect()
    return {}


def _kept() -> int:
    """MiB mapped past the floor once the namespace is gone: what the unit kept elsewhere (builtins, a
    module), past which the supervisor runs the next unit in a fresh child. Imports raise the floor."""
    now = _mapped() >> 20
    if len(sys.modules) > _memory["modules"]:
        _memory["floor"] = max(_memory["floor"], now)
    return now - _memory["floor"]


def _mapped() -> int:
    """Bytes mapped now, 0 when unknown: /proc/self/statm opened once (a unit's end costs one call)."""
    try:
        if _memory.get("fd") is None:
            _memory["fd"] = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        return int(os.pread(_memory["fd"], 128, 0).split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(BaseException):  # the student may have replaced or closed them
            stream.flush()


# -- confinement, before any student code ------------------------------------------------------
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
# Securebits, locked: uid 0 never regains capabilities through execve, ambient ones cannot be raised.
SECUREBITS_LOCKED = 0b11000011  # NOROOT, NOROOT_LOCKED, NO_CAP_AMBIENT_RAISE, NO_CAP_AMBIENT_RAISE_LOCKED
CAPABILITY_VERSION_3 = 0x20080522


try:  # read once, in the zygote: its children inherit it
    with open("/proc/sys/kernel/cap_last_cap") as f:
        _LAST_CAPABILITY = int(f.read())
except (OSError, ValueError):
    _LAST_CAPABILITY = 40  # CAP_CHECKPOINT_RESTORE, the last one Linux 6.x knows


def drop_capabilities() -> bool:
    """Drop every capability, and the bounding set where allowed (it needs CAP_SETPCAP, gone once the
    uid is unprivileged: then no_new_privs keeps execve from granting any). Whether the sets are empty."""
    prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED)  # while CAP_SETPCAP is there
    for cap in range(_LAST_CAPABILITY + 1):
        if not prctl(PR_CAPBSET_DROP, cap) and ctypes.get_errno() == errno.EPERM:
            break  # no CAP_SETPCAP: none of them can go (EINVAL, for one this kernel lacks, is fine)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)  # struct __user_cap_header_struct
    data = (ctypes.c_uint32 * 6)()  # two struct __user_cap_data_struct, all zero
    return hasattr(libc(), "capset") and libc().capset(header, data) == 0


def _processes_of(uid: int) -> int:
    count = 0
    with suppress(OSError):
        for entry in os.scandir("/proc"):
            with suppress(OSError):  # a process that ended meanwhile
                count += entry.name.isdigit() and entry.stat().st_uid == uid
    return count


def _set(limit: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    with suppress(ValueError, OSError):
        current_hard = resource.getrlimit(limit)[1]
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(limit, (soft, hard))


def confine(limits, run_as: int | None) -> None:
    """Bound what the kernel bounds by itself (address space, CPU seconds, file size, open files,
    processes), then no capability and the seccomp filter. Linux never applies RLIMIT_NPROC to root,
    so a root runner hands student code to `run_as`, an unprivileged uid leased per sandbox (uids.py:
    two sandboxes never share a count), which also keeps it from signalling or tracing the supervisor."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    # A write past the file-size bound then fails with an error the student sees, not a silent kill.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_CPU, limits.cpu, limits.cpu + 1)
    _set(resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024)
    _set(resource.RLIMIT_NOFILE, 256)
    _set(resource.RLIMIT_AS, _mapped() + limits.memory_mb * 1024 * 1024)
    if run_as is not None and os.geteuid() == 0:
        _set(resource.RLIMIT_NPROC, limits.processes + 1)
        os.setgroups([])
        os.setresgid(run_as, run_as, run_as)
        os.setresuid(run_as, run_as, run_as)
    elif os.geteuid() != 0:
        # The count is per user (per user namespace inside bubblewrap): allow what exists, plus the bound.
        _set(resource.RLIMIT_NPROC, _processes_of(os.geteuid()) + limits.processes)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    drop_capabilities()
    seccomp.install()


def _text_stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="replace")


def main(limits, run_as: int | None) -> None:
    """In a fresh fork of the zygote whose fds 0-3 are set. Never returns."""
    status = 0
    try:
        confine(limits, run_as)
        _memory["start"] = _memory["floor"] = _mapped() >> 20
        sys.stdin = open(os.devnull)  # noqa: SIM115
        sys.stdout, sys.stderr = _text_stream(1), _text_stream(2)
        sys.argv = ["programme.py"]
        # The start is over: from here on the time is the student's (the supervisor's start allowance
        # ends now, so an endless loop costs its wall time, not that plus the allowance).
        emit({"ev": "ready"})
        serve()
        _flush()
    except BaseException as exc:  # noqa: BLE001 - our own failure: say so, never pass for the student's
        try:
            emit({"ev": "internal", "i": _current["index"], "message": f"{type(exc).__name__}: {exc}"[:500]})
        except BaseException:  # noqa: BLE001
            status = 3
    os._exit(status)
