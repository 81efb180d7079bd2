"""What one job may leave behind in its sandbox, removed before the next job starts.

The zygote calls `after_job()` once every process of the job is gone (after its sweep). System V IPC
objects live in the sandbox's IPC namespace until removed, and files in /tmp and /dev/shm (tmpfs:
host RAM) until deleted: the next student's code could see them, and they hold host memory. The
run's own folder is the supervisor's to wipe, with its bounds check. Only in a sandbox of its own
(bubblewrap): elsewhere these are the host's, and nothing here is touched.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from contextlib import suppress

from .seccomp import libc

IPC_RMID = 0
SYSV = {"shm": "shmid", "sem": "semid", "msg": "msqid"}  # /proc/sysvipc/KIND and its id column
SHARED_DIRS = ("/tmp", "/dev/shm")


def _objects(kind: str) -> list[tuple[int, int]]:
    """(id, creator's uid) of the System V objects of `kind` visible in this IPC namespace."""
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            header, *lines = [line.split() for line in f.read().splitlines()] or [[]]
        ident, creator = header.index(SYSV[kind]), header.index("cuid")
    except (OSError, ValueError):
        return []
    found = []
    for fields in lines:
        try:
            found.append((int(fields[ident]), int(fields[creator])))
        except (IndexError, ValueError):
            continue
    return found


def _remove(kind: str, ident: int) -> bool:
    rmid = ctypes.c_int(IPC_RMID)
    if kind == "sem":
        return libc().semctl(ctypes.c_int(ident), ctypes.c_int(0), rmid) == 0
    return getattr(libc(), f"{kind}ctl")(ctypes.c_int(ident), rmid, None) == 0


def remove_ipc() -> int:
    """Remove every System V shared memory segment, semaphore set and message queue; return how many.

    That takes the creator's uid or CAP_SYS_ADMIN, which the runner does not keep: as root (of the
    sandbox) it takes the creator's uid for the call (its saved uid brings it back)."""
    removed = 0
    as_root = os.geteuid() == 0
    for kind in SYSV:
        for ident, creator in _objects(kind):
            switched = as_root and creator != 0
            try:
                if switched:
                    os.seteuid(creator)
                removed += _remove(kind, ident)
            except OSError:
                pass
            finally:
                if switched:
                    os.seteuid(0)
    return removed


def _mount_points() -> set[str]:
    try:
        with open("/proc/self/mountinfo") as f:
            return {line.split()[4].replace("\\040", " ") for line in f}
    except OSError:
        return set()


def force(func, path, _exc) -> None:
    """shutil.rmtree's error handler: a run may leave folders it made unreadable or unwritable, so
    open them up and retry (never through a link)."""
    with suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        if not os.path.islink(path):
            os.chmod(path, 0o700)
    with suppress(OSError):
        func(path)


def remove_files(keep: str, dirs: tuple[str, ...] = SHARED_DIRS) -> int:
    """Remove what is in `dirs`, except `keep` (the runner's work root) and whatever holds a mount
    point (Python itself may be bound under /tmp); never follows a link. Returns entries removed."""
    protected = {os.path.normpath(keep)}
    for point in _mount_points():  # every mount point, and every folder above one
        while point not in ("/", ""):
            protected.add(point)
            point = os.path.dirname(point)
    removed = 0
    for top in dirs:
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            if entry.path in protected:
                continue
            with suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, onerror=force)
                else:
                    os.unlink(entry.path)
                removed += 1
    return removed


def after_job(workroot: str, private: bool) -> dict[str, int]:
    """Called by the zygote after each job's sweep; `private`: the runner has a sandbox of its own."""
    if not private:
        return {}
    return {"ipc": remove_ipc(), "files": remove_files(workroot)}
