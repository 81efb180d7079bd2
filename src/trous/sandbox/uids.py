"""Unprivileged user ids for student code, leased machine-wide while a sandbox lives (root only).

The kernel counts processes (RLIMIT_NPROC) per uid: two sandboxes sharing one would let one student's
fork bomb starve another's, across concurrent `trous grade` runs or Dask workers too. So each runner
(and nbgrader kernel) leases its uid: a lock file per uid in a root-only directory, held with flock(2),
which the kernel drops when the process dies, however it dies. The range is far from the ids
distributions hand out (systemd's dynamic users are 61184–65519, subordinate ids from 100000).
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import stat
from contextlib import suppress

FIRST = 2_130_000_000  # below 2**31: no signedness surprises in tools that print ids
COUNT = 8192
LOCK_DIRS = ("/run/trous/uids", "/var/lock/trous-uids", "/tmp/.trous-uids-0")


class LeaseError(RuntimeError):
    pass


def _lock_dir() -> int:
    """A directory descriptor only root can write in (created if needed, refused if anyone else could
    have prepared it: a lock file planted by another user would let them hold our uids)."""
    problems = []
    for path in LOCK_DIRS:
        parent = os.path.dirname(path)
        try:
            if not os.path.isdir(parent):
                if os.path.dirname(parent) in ("/run", "/var/lock"):
                    os.makedirs(parent, mode=0o755, exist_ok=True)
                else:
                    continue
            with suppress(FileExistsError):
                os.mkdir(path, 0o700)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            problems.append(f"{path} : {exc.strerror}")
            continue
        info = os.fstat(fd)
        if info.st_uid != 0 or stat.S_IMODE(info.st_mode) & 0o022:
            os.close(fd)
            problems.append(f"{path} : n'appartient pas à root ou est modifiable par d'autres")
            continue
        return fd
    raise LeaseError("aucun dossier de verrous pour les identifiants des bacs à sable : " + " ; ".join(problems))


def _known(uid: int) -> bool:
    try:
        return bool(pwd.getpwuid(uid))
    except KeyError:
        return False


class Lease:
    """`uids`, one uid held until `release()` (or until this process ends)."""

    def __init__(self):
        self.uids: tuple[int, ...] = ()
        self._fd: int | None = None
        directory = _lock_dir()
        try:
            for uid in range(FIRST, FIRST + COUNT):
                if _known(uid):
                    continue
                fd = os.open(str(uid), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=directory)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    os.close(fd)
                    if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                        continue
                    raise
                self._fd, self.uids = fd, (uid,)
                return
            raise LeaseError(f"plus d'identifiants libres pour les bacs à sable ({COUNT} déjà pris sur cette machine)")
        finally:
            os.close(directory)

    def release(self) -> None:
        if self._fd is not None:
            with suppress(OSError):
                os.close(self._fd)
        self._fd, self.uids = None, ()

    def __del__(self) -> None:
        self.release()

