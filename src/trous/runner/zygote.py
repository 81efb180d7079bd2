"""The long-lived process that forks one supervisor per job, from a clean state.

Started once per sandbox (`python -I -m trous.runner.zygote CONFIG`), it imports the heavy modules
(numpy) once, then waits on its control socket (fd 0). For each job the parent sends two pipe ends
with the message b"J": the zygote forks a supervisor that reads the job from the first and writes
results to the second. The zygote itself never reads a job, a submission or a result, so nothing of
one student is in the memory that the next student's processes are copied from. After each job it
kills every process left below it (it is their subreaper), then answers b"E" and the exit status.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import traceback

from . import cleanup
from .confine import Confinement, join_cgroup, make_undumpable, prctl

PR_SET_CHILD_SUBREAPER = 36

# Imported once here, shared by every fork: exercises then never pay for these imports again.
ALWAYS = ("math", "cmath", "random", "secrets", "statistics", "itertools", "functools", "collections",
          "json", "re", "time", "fractions", "decimal", "copy", "string", "operator", "heapq", "bisect")
WITH = {"numpy": ("numpy.random", "numpy.linalg")}


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


def _descendants(root: int) -> list[int]:
    """Every process below `root`. Orphans of the student's code are re-parented to us (we are
    their subreaper), so following the kernel's children lists finds them all, cheaply."""
    if _children(os.getpid()) is None:  # no children lists on this kernel: read the whole table
        return _descendants_by_table(root)
    found, frontier = [], [root]
    while frontier:
        for child in _children(frontier.pop()) or []:
            if child not in found:
                found.append(child)
                frontier.append(child)
    return found


def _descendants_by_table(root: int) -> list[int]:
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
            if ppid == parent and pid not in found:
                found.append(pid)
                frontier.append(pid)
    return found


def sweep() -> int:
    """Kill everything below this process; return how many strays there were."""
    me, strays = os.getpid(), 0
    for _ in range(200):
        pids = _descendants(me)
        if not pids:
            break
        strays += len(pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        _reap()
    _reap()
    return strays


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def serve(control: socket.socket, workroot: str, confinement: Confinement) -> None:
    from .job import run_job  # noqa: PLC0415
    from .protocol import Job  # noqa: PLC0415

    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 16, 4)
        except OSError:
            return
        if not message:
            return
        if message != b"J" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        job_in, job_out = fds
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                control.close()
                # Orphans of the student's processes come back to the supervisor, which sweeps them
                # after each run: a fork bomb in one exercise must not outlive it into the next.
                prctl(PR_SET_CHILD_SUBREAPER, 1)
                job = Job.from_bytes(_read_all(job_in))
                run_job(job, job_out, workroot, confinement)
            except BaseException:  # noqa: BLE001 - report, never hang the parent
                traceback.print_exc()
                status = 3
            finally:
                os._exit(status)
        os.close(job_in)
        os.close(job_out)
        _, status = os.waitpid(pid, 0)
        strays = sweep()
        cleanup.after_job(workroot, private=confinement.sweep)  # /tmp, /dev/shm, System V IPC
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
    from . import child, encode, job, protocol  # noqa: F401, PLC0415

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
