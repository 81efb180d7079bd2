"""The long-lived process of a sandbox: a fork server that never holds a job (its messages: __init__.py).

It imports the heavy modules (numpy) once, hands each job to its supervisor, and forks from itself
every process that runs student code: each is a copy of one that never read a job, a submission, a
test or a result. It reaps them, kills what they leave behind (it is their subreaper), and after each
job empties /tmp and /dev/shm.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import socket
import struct
import sys
import time
import traceback
from contextlib import suppress

from . import child
from ..core.protocol import SESSION, Job, Limits
from .seccomp import prctl
from .supervisor import Forker, SessionSupervisor, Supervisor, close_fds, force, send_signal

PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE = 36, 4

# Imported once here, shared by every fork: exercises then never pay for these imports again.
ALWAYS = ("math", "cmath", "random", "secrets", "statistics", "itertools", "functools", "collections",
          "json", "re", "time", "fractions", "decimal", "copy", "string", "operator", "heapq", "bisect")
WITH = {"numpy": ("numpy.random", "numpy.linalg")}


# -- processes below this one --------------------------------------------------------------------
def _children(pid: int) -> list[int] | None:
    """The kernel's children lists of `pid`'s threads; None when this kernel has none."""
    try:
        found = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(x) for x in f.read().split()]
        return found
    except FileNotFoundError:
        return [] if os.path.exists(f"/proc/{pid}") else None
    except (OSError, ValueError):
        return []


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with suppress(OSError, ValueError, IndexError), open(f"/proc/{entry}/stat", "rb") as f:
            data = f.read()
            # The command name may hold spaces and parentheses: the fields start after the last ')'.
            parents[int(entry)] = int(data[data.rindex(b")") + 2:].split()[1])
    return parents


def _descendants(keep: frozenset[int]) -> list[int]:
    """Every process below this one except `keep` and theirs. Orphans of the student's code are
    re-parented to us (we are their subreaper), so the kernel's children lists find them all."""
    table = _parents() if _children(os.getpid()) is None else None  # no children lists: the whole table
    found, frontier = [], [os.getpid()]
    while frontier:
        parent = frontier.pop()
        below = _children(parent) or [] if table is None else [p for p, pp in table.items() if pp == parent]
        for pid in below:
            if pid not in found and pid not in keep:
                found.append(pid)
                frontier.append(pid)
    return found


def sweep(keep: frozenset[int] = frozenset()) -> None:
    for _ in range(2000):
        pids = _descendants(keep)
        if not pids:
            break
        for pid in pids:
            send_signal(pid, signal.SIGKILL)
        reaped = 0
        for pid in pids:  # ours once their parents die (we are the subreaper); others ECHILD
            with suppress(ChildProcessError):
                reaped += os.waitpid(pid, os.WNOHANG)[0] != 0
        if not reaped:
            time.sleep(0.001)


def _mount_points() -> set[str]:
    try:
        with open("/proc/self/mountinfo") as f:
            return {line.split()[4].replace("\\040", " ") for line in f}
    except OSError:
        return set()


def remove_files(keep: str) -> None:
    """Remove what a job left in /tmp and /dev/shm (host RAM, and the next student's code would see it),
    but `keep` (the supervisor wipes each run's folder, with its bounds check) and whatever holds a
    mount point (Python itself may be bound under /tmp); never follows a link."""
    protected = {os.path.normpath(keep)}
    for point in _mount_points():  # every mount point, and every folder above one
        while point not in ("/", ""):
            protected.add(point)
            point = os.path.dirname(point)
    for top in ("/tmp", "/dev/shm"):
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            if entry.path not in protected:
                with suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, onerror=force)
                    else:
                        os.unlink(entry.path)


# -- the supervisor and the children it asks for ---------------------------------------------
class Server:
    """Jobs go through one long-lived supervisor: it never runs student code (children fork from here),
    so living long costs no secrecy and saves a fork per job. If it dies (killed by a student's process
    under the same uid), the job in progress ends without results and the next job starts a new one."""

    def __init__(self, control: socket.socket, workroot: str, private: bool, run_as: int | None):
        self.control, self.workroot, self.private, self.run_as = control, workroot, private, run_as
        self.supervisor: int | None = None
        self.line: socket.socket | None = None
        self.children: set[int] = set()
        self.busy = False  # a job is being run
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wakeup fd is written
        signal.set_wakeup_fd(wake_w)

    def _start_supervisor(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # the supervisor
            status = 0
            try:
                # Only its line to us: a job's pipe ends open here (the job that made us start it)
                # would keep the grader waiting for an end of file that never comes.
                signal.set_wakeup_fd(-1)
                keep = theirs.fileno()
                for sock in (mine, self.control):
                    sock.detach()
                os.close(0)
                os.open(os.devnull, os.O_RDONLY)  # fd 0 again, so that no received fd takes it
                os.closerange(3, keep)
                os.closerange(keep + 1, _max_fd())
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                # A child may end (os._exit) while its commands are being written: the write must fail
                # (EPIPE, the run is that child's end), not kill the supervisor with the zygote's SIG_DFL.
                signal.signal(signal.SIGPIPE, signal.SIG_IGN)
                serve_jobs(theirs, self.workroot)
            except BaseException:  # noqa: BLE001 - report, never hang the zygote
                traceback.print_exc()
                status = 3
            finally:
                os._exit(status)
        theirs.close()
        self.supervisor, self.line = pid, mine

    def _end_job(self) -> None:
        sweep(keep=frozenset({self.supervisor} if self.supervisor else ()))
        if self.private:  # a sandbox of our own: its /tmp and /dev/shm are not the host's
            remove_files(self.workroot)
        self.control.sendall(b"E")
        self.busy = False

    def serve(self) -> None:
        while True:
            self._reaped()
            watched = [self.control, self.wake_r] + ([self.line] if self.line is not None else [])
            ready, _, _ = select.select(watched, [], [], 1.0)  # retried after SIGCHLD's handler (PEP 475)
            if self.wake_r in ready:
                with suppress(BlockingIOError):
                    os.read(self.wake_r, 4096)
            if self.line is not None and self.line in ready:
                self._from_supervisor()
            if self.control in ready and not self.busy and not self._take_job():
                return

    def _take_job(self) -> bool:
        """False when the grader is gone."""
        try:
            message, fds, _, _ = socket.recv_fds(self.control, 16, 4)
        except OSError:
            return False
        if not message:
            return False
        try:
            if message == b"J" and len(fds) == 2:
                if self.supervisor is None:
                    self._start_supervisor()
                socket.send_fds(self.line, [b"J"], fds)
                self.busy = True
        except OSError:
            self._end_job()
        finally:
            close_fds(*fds)
        return True

    def _from_supervisor(self) -> None:
        try:
            message, fds, _, _ = socket.recv_fds(self.line, 1 << 16, 4)
        except OSError:
            message, fds = b"", []
        if message[:1] == b"C" and len(fds) == 3:
            self._spawn(json.loads(message[1:]), fds)
            return
        close_fds(*fds)
        if message[:1] == b"C":
            self.line.send(b"F")
        elif message[:1] == b"D":
            self._end_job()
        elif not message:  # the supervisor is gone: it is reaped, and the job ends without it
            self.line.close()
            self.line = None

    def _spawn(self, request: dict, fds: list[int]) -> None:
        pid = os.fork()
        if pid == 0:  # a child for student code: fds 0 (commands), 1 and 2 (output), 3 (events)
            try:
                cmd, events, output = fds
                for fd, target in ((cmd, 0), (output, 1), (output, 2), (events, 3)):
                    os.dup2(fd, target)
                os.closerange(4, _max_fd())
                signal.set_wakeup_fd(-1)
                os.chdir(request["workdir"])
                child.main(Limits.from_dict(request.get("limits", {})), self.run_as)
            finally:
                os._exit(70)
        close_fds(*fds)
        self.children.add(pid)
        self.line.send(b"P" + struct.pack("!i", pid))

    def _reaped(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.children:
                self.children.discard(pid)
                sweep(keep=frozenset({self.supervisor, *self.children} - {None}))
                if self.line is not None:
                    with suppress(OSError):
                        self.line.send(b"X" + struct.pack("!iid", pid, status, usage.ru_utime + usage.ru_stime))
            elif pid == self.supervisor:
                self.supervisor = None
                if self.line is not None:
                    self.line.close()
                    self.line = None
                if self.busy:
                    self._end_job()


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 65536)
    except (ValueError, OSError):
        return 4096


def serve_jobs(sock: socket.socket, workroot: str) -> None:
    """The supervisor: run each job handed over (a batch, or a session), then say b"D"."""
    forker = Forker(sock)
    while True:
        sock.settimeout(None)
        try:
            message, fds, _, _ = socket.recv_fds(sock, 256, 4)
        except OSError:
            return
        if not message:
            return
        if message[:1] == b"X":  # a late report of a child already given up on
            forker.exited(message)
            continue
        if message != b"J" or len(fds) != 2:
            close_fds(*fds)
            continue
        job_in, job_out = fds
        try:
            first = os.read(job_in, 1)
            if first == SESSION:  # an interactive unit: questions keep coming until the stream closes
                SessionSupervisor(job_in, job_out, workroot, forker).run()
            else:
                with open(job_in, "rb") as stream:
                    job = Job.from_bytes(first + stream.read())
                Supervisor(job, job_out, workroot, forker).run()
        except (ValueError, KeyError, TypeError, OSError):
            pass  # an unreadable job: the grader sees no results
        finally:
            close_fds(job_out)
        forker.exits.clear()
        sock.send(b"D")


def join_cgroup(path: str, pids_max: int) -> None:
    """Put this process and its future children under a pids bound, where it can (root only)."""
    with suppress(OSError):
        os.makedirs(path, exist_ok=True)
    # cgroup v2: a cgroup has pids.max only if its parent enables the controller for its children (v1
    # has no such file; there the write fails and nothing is needed).
    with suppress(OSError), open(os.path.join(os.path.dirname(path), "cgroup.subtree_control"), "w") as f:
        f.write("+pids")
    with suppress(OSError):
        with open(os.path.join(path, "pids.max"), "w") as f:
            f.write(str(pids_max))
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))


def main(argv: list[str] | None = None) -> None:
    config = json.loads((argv or sys.argv[1:])[0])
    if config.get("cgroup"):
        join_cgroup(config["cgroup"], int(config.get("pids_max", 64)))
    wanted = list(ALWAYS)
    for name in config.get("preload", []):
        wanted += [name, *WITH.get(name, ())]
    for name in wanted:
        with suppress(Exception):  # a missing optional module is the student's concern
            __import__(name)
    prctl(PR_SET_DUMPABLE, 0)  # processes of the same user can neither trace this one nor read its memory
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    workroot = config.get("workroot") or "/tmp/trous-runs"
    os.makedirs(workroot, exist_ok=True)
    os.chmod(workroot, 0o711)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Forks share memory until they write to it, and a garbage collection writes to every object
    # it visits: frozen objects are never visited, so a fork stays cheap (no copy of numpy's pages).
    gc.collect()
    gc.freeze()
    control = socket.socket(fileno=0)
    control.sendall(b"R")
    Server(control, workroot, bool(config.get("private")), config.get("run_as")).serve()


if __name__ == "__main__":
    main()
