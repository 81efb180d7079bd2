"""Bounds applied to the process that runs student code, just before it does.

Wall time is not here: the supervisor (supervisor.py) owns the clock and kills. Here are the bounds the
kernel enforces by itself: address space, CPU seconds, file size, open files, and the number of
processes. The process limit needs care: Linux never applies RLIMIT_NPROC to root, so when the
runner is root it hands the student's code to an unprivileged user id of its own (one per sandbox
slot, so that two sandboxes never share a count), which also stops that code from signalling or
tracing the supervisor.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import signal
from dataclasses import asdict, dataclass

from . import seccomp
from .isolate import drop_capabilities
from .protocol import Limits

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38


@dataclass(frozen=True)
class Confinement:
    """How the runner confines student code on this machine (decided by sandbox.py)."""

    run_as: int | None = None  # unprivileged uid (and gid) for student code, when the runner is root
    sweep: bool = False  # the runner is alone in a pid namespace and may kill every stray process
    cgroup: str | None = None  # a pids cgroup directory the runner joins (root without uid switch)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Confinement":
        return cls(run_as=data.get("run_as"), sweep=bool(data.get("sweep")), cgroup=data.get("cgroup"))


@functools.lru_cache(maxsize=None)
def _libc():
    # Loaded once, in the zygote: every process forked from it then calls prctl without reloading it.
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - not Linux
        return None


def prctl(option: int, value: int) -> bool:
    libc = _libc()
    return bool(libc) and libc.prctl(option, value, 0, 0, 0) == 0


def make_undumpable() -> None:
    """Processes of the same user can then neither trace this one nor read its memory."""
    prctl(PR_SET_DUMPABLE, 0)


def _address_space() -> int:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _processes_of(uid: int) -> int:
    count = 0
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        count += 1
                except OSError:
                    pass
    except OSError:
        return 0
    return count


def _set(limit: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    try:
        current_soft, current_hard = resource.getrlimit(limit)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(limit, (soft, hard))
    except (ValueError, OSError):
        pass


def apply(limits: Limits, confinement: Confinement) -> None:
    """Confine the current process (a fresh child that is about to run student code)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    # A write past the file-size bound then fails with an error the student sees, not a silent kill.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_CPU, limits.cpu, limits.cpu + 1)
    _set(resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024)
    _set(resource.RLIMIT_NOFILE, 256)
    _set(resource.RLIMIT_AS, _address_space() + limits.memory_mb * 1024 * 1024)
    if confinement.run_as is not None and os.geteuid() == 0:
        uid = confinement.run_as
        _set(resource.RLIMIT_NPROC, limits.processes + 1)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    elif os.geteuid() != 0:
        # The count is per user (per user namespace inside bubblewrap): allow what exists, plus the bound.
        _set(resource.RLIMIT_NPROC, _processes_of(os.geteuid()) + limits.processes)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    drop_capabilities()
    seccomp.install()


def join_cgroup(path: str, pids_max: int) -> bool:
    """Put the current process (and so its future children) under a pids bound. Root only."""
    try:
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "pids.max"), "w") as f:
            f.write(str(pids_max))
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return True
    except OSError:
        return False
