"""What one job may leave behind in its sandbox, removed before the next job starts.

The zygote calls `after_job()` once every process of the job is gone (after its sweep). A run must
leave nothing that the next student's code could see or that keeps host memory: System V IPC objects
(shared memory, semaphores, message queues) live in the sandbox's IPC namespace until removed, and
files in /tmp and /dev/shm (tmpfs: host RAM) stay until deleted. The run's own folder, inside the
runner's work root, is the supervisor's to wipe (job.py), with its bounds check.

Only in a sandbox of its own (bubblewrap: a private /tmp, /dev/shm and IPC namespace): without one,
these are the host's, shared with everything else the user runs, and nothing here is touched.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat

IPC_RMID = 0
SYSV = ("shm", "sem", "msg")
SHARED_DIRS = ("/tmp", "/dev/shm")

_libc_handle = None


def _libc():
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None, use_errno=True)
    return _libc_handle


def _objects(kind: str) -> list[tuple[int, int]]:
    """(id, creator's uid) of the System V objects of `kind` visible in this IPC namespace."""
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    if not lines:
        return []
    header = lines[0].split()
    try:
        ident, creator = header.index("shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"), \
            header.index("cuid")
    except ValueError:
        return []
    found = []
    for line in lines[1:]:
        fields = line.split()
        try:
            found.append((int(fields[ident]), int(fields[creator])))
        except (IndexError, ValueError):
            continue
    return found


def _remove(kind: str, ident: int) -> bool:
    libc = _libc()
    if kind == "shm":
        result = libc.shmctl(ctypes.c_int(ident), ctypes.c_int(IPC_RMID), None)
    elif kind == "sem":
        result = libc.semctl(ctypes.c_int(ident), ctypes.c_int(0), ctypes.c_int(IPC_RMID))
    else:
        result = libc.msgctl(ctypes.c_int(ident), ctypes.c_int(IPC_RMID), None)
    return result == 0


def remove_ipc() -> int:
    """Remove every System V shared memory segment, semaphore set and message queue; return how many.

    Removing one takes its creator's uid or CAP_SYS_ADMIN, which the runner does not keep: as root
    (of the sandbox), it takes the creator's uid for the call (its saved uid brings it back)."""
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
    points = set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                points.add(line.split()[4].replace("\\040", " "))
    except OSError:
        pass
    return points


def _force(func, path, _exc) -> None:
    # A run may leave folders it made unreadable or unwritable: open them up, then retry.
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if not os.path.islink(path):
            os.chmod(path, 0o700)
    except OSError:
        pass
    try:
        func(path)
    except OSError:
        pass


def remove_files(keep: str, dirs: tuple[str, ...] = SHARED_DIRS) -> int:
    """Remove what is in `dirs`, except `keep` (the runner's work root) and whatever holds a mount
    point (Python itself may be bound under /tmp); never follows a link. Returns entries removed."""
    points = _mount_points()
    protected = {os.path.normpath(keep)}
    for point in points:  # every mount point, and every folder above one
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
            try:
                if entry.is_dir(follow_symlinks=False) and not stat.S_ISLNK(entry.stat(follow_symlinks=False).st_mode):
                    shutil.rmtree(entry.path, onerror=_force)
                else:
                    os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def after_job(workroot: str, private: bool) -> dict[str, int]:
    """Called by the zygote after each job's sweep; `private`: the runner has a sandbox of its own."""
    if not private:
        return {}
    return {"ipc": remove_ipc(), "files": remove_files(workroot)}
