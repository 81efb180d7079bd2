"""Bounds applied to the process that runs student code, just before it does.

Wall time is not here: the supervisor owns the clock and kills. Here are the bounds the kernel
enforces by itself: address space, CPU seconds, file size, open files, processes. Linux never applies
RLIMIT_NPROC to root, so a root runner hands student code to an unprivileged uid of its own (leased
per sandbox, uids.py: two sandboxes never share a count), which also keeps that code from signalling
or tracing the supervisor.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
from contextlib import suppress

from . import seccomp
from ..core.protocol import Limits
from .seccomp import PR_SET_NO_NEW_PRIVS, libc

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
# Securebits, locked: uid 0 never regains capabilities through execve, ambient ones cannot be raised.
SECUREBITS_LOCKED = 0b11000011  # NOROOT, NOROOT_LOCKED, NO_CAP_AMBIENT_RAISE, NO_CAP_AMBIENT_RAISE_LOCKED
CAPABILITY_VERSION_3 = 0x20080522


def prctl(option: int, value: int, arg3: int = 0) -> bool:
    return libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(arg3),
                        ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0


try:  # read once, in the zygote: its children inherit it
    with open("/proc/sys/kernel/cap_last_cap") as f:
        _LAST_CAPABILITY = int(f.read())
except (OSError, ValueError):
    _LAST_CAPABILITY = 40  # CAP_CHECKPOINT_RESTORE, the last one Linux 6.x knows


def drop_capabilities() -> bool:
    """Drop every capability from every set, and the bounding set where allowed (it needs
    CAP_SETPCAP, gone once the uid is unprivileged: then no_new_privs keeps execve from granting
    any). Whether the sets are now empty. The runner as root keeps some (backend.py); student code none."""
    prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED)  # while CAP_SETPCAP is there
    for cap in range(_LAST_CAPABILITY + 1):
        if not prctl(PR_CAPBSET_DROP, cap) and ctypes.get_errno() == errno.EPERM:
            break  # no CAP_SETPCAP: none of them can go (EINVAL, for one this kernel lacks, is fine)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)  # struct __user_cap_header_struct
    data = (ctypes.c_uint32 * 6)()  # two struct __user_cap_data_struct, all zero
    return hasattr(libc(), "capset") and libc().capset(header, data) == 0


def make_undumpable() -> None:
    """Processes of the same user can then neither trace this one nor read its memory."""
    prctl(PR_SET_DUMPABLE, 0)


def _address_space() -> int:
    """Bytes this process maps now (/proc/self/statm), 0 when unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _processes_of(uid: int) -> int:
    try:
        return sum(1 for entry in os.scandir("/proc") if entry.name.isdigit() and _owned(entry, uid))
    except OSError:
        return 0


def _owned(entry: os.DirEntry, uid: int) -> bool:
    try:
        return entry.stat().st_uid == uid
    except OSError:
        return False


def _set(limit: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    with suppress(ValueError, OSError):
        current_hard = resource.getrlimit(limit)[1]
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(limit, (soft, hard))


def apply(limits: Limits, run_as: int | None) -> None:
    """Confine the current process (a fresh child that is about to run student code); `run_as`: the
    unprivileged uid (and gid) it takes when the runner is root (backend.py decides)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    # A write past the file-size bound then fails with an error the student sees, not a silent kill.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_CPU, limits.cpu, limits.cpu + 1)
    _set(resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024)
    _set(resource.RLIMIT_NOFILE, 256)
    _set(resource.RLIMIT_AS, _address_space() + limits.memory_mb * 1024 * 1024)
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
