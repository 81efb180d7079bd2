"""The long-lived process of a sandbox: a fork server that never holds a job.

Started once per sandbox (`python -I -m trous.runner.zygote CONFIG`), it imports the heavy modules
(numpy) once, then waits on its control socket (fd 0). For each job the parent sends two pipe ends
with the message b"J": the zygote forks a supervisor (supervisor.py) that reads the job from the
first and writes results to the second. When that supervisor needs a process to run student code,
it asks the zygote (b"C" on their private socket, with the child's pipe ends), and the zygote forks
one from itself (child.py). So every process that runs student code is a copy of a process that
never read a job, a submission, a test or a result: nothing of another unit, another variant or
another student is in its memory.

The zygote reaps every child, tells the supervisor how each one ended (b"X": status and CPU
seconds), and kills what a child left behind (it is their subreaper) before the next one starts.
After each job it sweeps again, then answers b"E", the supervisor's exit status and the strays.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import traceback

from .confine import Confinement, join_cgroup, make_undumpable, prctl
from .protocol import Limits

PR_SET_CHILD_SUBREAPER = 36

# Imported once here, shared by every fork: exercises then never pay for these imports again.
ALWAYS = ("math", "cmath", "random", "secrets", "statistics", "itertools", "functools", "collections",
          "json", "re", "time", "fractions", "decimal", "copy", "string", "operator", "heapq", "bisect")
WITH = {"numpy": ("numpy.random", "numpy.linalg")}


# -- processes below this one --------------------------------------------------------------------
def _children(pid: int) -> list[int] | None:
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


def _descendants(root: int, keep: frozenset[int] = frozenset()) -> list[int]:
    """Every process below `root` except `keep` and theirs. Orphans of the student's code are
    re-parented to us (we are their subreaper), so the kernel's children lists find them all."""
    if _children(os.getpid()) is None:  # no children lists on this kernel: read the whole table
        return _descendants_by_table(root, keep)
    found, frontier = [], [root]
    while frontier:
        for child in _children(frontier.pop()) or []:
            if child not in found and child not in keep:
                found.append(child)
                frontier.append(child)
    return found


def _descendants_by_table(root: int, keep: frozenset[int]) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
            # The command name may hold spaces and parentheses: the fields start after the last ')'.
            fields = data[data.rindex(b")") + 2:].split()
            parents[int(entry)] = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found and pid not in keep:
                found.append(pid)
                frontier.append(pid)
    return found


def sweep(keep: frozenset[int] = frozenset()) -> int:
    """Kill everything below this process but `keep`; return how many strays there were."""
    import time  # noqa: PLC0415

    me, seen = os.getpid(), set()
    for _ in range(2000):
        pids = _descendants(me, keep)
        if not pids:
            break
        seen.update(pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reaped = 0
        for pid in pids:  # ours once their parents die (we are the subreaper); others ECHILD
            try:
                reaped += os.waitpid(pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                pass
        if not reaped:
            time.sleep(0.001)
    return len(seen)


# -- one job ---------------------------------------------------------------------------------------
class _Job:
    """A supervisor and the children it asked for."""

    def __init__(self, control: socket.socket, workroot: str, confinement: Confinement, wake: int):
        self.control, self.workroot, self.confinement, self.wake = control, workroot, confinement, wake
        self.supervisor: int | None = None
        self.children: set[int] = set()
        self.line: socket.socket | None = None

    def run(self, job_in: int, job_out: int) -> tuple[int, int]:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # the supervisor
            status = 0
            try:
                mine.close()
                self.control.close()
                os.close(self.wake)
                signal.set_wakeup_fd(-1)
                from .supervisor import main  # noqa: PLC0415

                main(job_in, job_out, theirs, self.workroot)
            except BaseException:  # noqa: BLE001 - report, never hang the parent
                traceback.print_exc()
                status = 3
            finally:
                os._exit(status)
        os.close(job_in)
        os.close(job_out)
        theirs.close()
        self.supervisor, self.line = pid, mine
        status = self._serve()
        mine.close()
        strays = sweep()
        return status, strays

    def _serve(self) -> int:
        """Fork children on request and report their ends, until the supervisor is gone."""
        assert self.line is not None and self.supervisor is not None
        line_open = True
        while True:
            ended = self._reap()
            if self.supervisor in ended:
                return ended[self.supervisor][0]
            for pid, (status, cpu) in ended.items():
                strays = sweep(keep=frozenset({self.supervisor, *self.children}))
                if line_open:
                    try:
                        self.line.send(b"X" + struct.pack("!iidi", pid, status, cpu, strays))
                    except OSError:
                        line_open = False
            watched = [self.wake] + ([self.line] if line_open else [])
            ready, _, _ = select.select(watched, [], [], 1.0)
            if self.wake in ready:
                try:
                    os.read(self.wake, 4096)
                except BlockingIOError:
                    pass
            if line_open and self.line in ready:
                try:
                    message, fds, _, _ = socket.recv_fds(self.line, 1 << 16, 4)
                except OSError:
                    message, fds = b"", []
                if not message:
                    line_open = False  # the supervisor is ending (or was killed): wait for it
                    for fd in fds:
                        os.close(fd)
                    continue
                self._spawn(message, fds)

    def _spawn(self, message: bytes, fds: list[int]) -> None:
        assert self.line is not None
        if message[:1] != b"C" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            self.line.send(b"F")
            return
        request = json.loads(message[1:])
        pid = os.fork()
        if pid == 0:  # a child for student code: fds 0 (commands), 1 and 2 (output), 3 (events)
            try:
                cmd, events, output = fds
                os.dup2(cmd, 0)
                os.dup2(output, 1)
                os.dup2(output, 2)
                os.dup2(events, 3)
                os.closerange(4, _max_fd())
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.chdir(request["workdir"])
                from . import child  # noqa: PLC0415

                child.main(Limits.from_dict(request.get("limits", {})), self.confinement)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        self.children.add(pid)
        self.line.send(b"P" + struct.pack("!i", pid))

    def _reap(self) -> dict[int, tuple[int, float]]:
        """Children and supervisor that ended: pid → (status, CPU seconds). Strays are reaped too."""
        ended = {}
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == self.supervisor or pid in self.children:
                self.children.discard(pid)
                ended[pid] = (status, usage.ru_utime + usage.ru_stime)
        return ended


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 65536)
    except (ValueError, OSError):
        return 4096


def serve(control: socket.socket, workroot: str, confinement: Confinement) -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wakeup fd is written
    signal.set_wakeup_fd(wake_w)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 16, 4)
        except InterruptedError:
            continue
        except OSError:
            return
        if not message:
            return
        if message != b"J" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        status, strays = _Job(control, workroot, confinement, wake_r).run(*fds)
        control.sendall(b"E" + struct.pack("!ii", status, strays))


def main(argv: list[str] | None = None) -> None:
    config = json.loads((argv or sys.argv[1:])[0])
    confinement = Confinement.from_json(config.get("confinement", {}))
    if confinement.cgroup:
        join_cgroup(confinement.cgroup, int(config.get("pids_max", 64)))
    wanted = list(ALWAYS)
    for name in config.get("preload", []):
        wanted += [name, *WITH.get(name, ())]
    for name in wanted:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a missing optional module is the student's concern
            pass
    # Import what every job needs now, so that forks share it and no later import can fail.
    from . import child, encode, protocol, supervisor  # noqa: F401, PLC0415

    make_undumpable()
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    workroot = config.get("workroot") or "/tmp/trous-runs"
    os.makedirs(workroot, exist_ok=True)
    os.chmod(workroot, 0o711)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Forks share memory until they write to it, and a garbage collection writes to every object
    # it visits: frozen objects are never visited, so a fork stays cheap (no copy of numpy's pages).
    import gc  # noqa: PLC0415

    gc.collect()
    gc.freeze()
    control = socket.socket(fileno=0)
    control.sendall(b"R")
    serve(control, workroot, confinement)


if __name__ == "__main__":
    main()
