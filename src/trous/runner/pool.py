"""The grader's side of the runner: start sandboxed runners, hand them jobs, collect results.

A `Runner` is one sandboxed zygote, used by one thread at a time. Whatever happens inside (a
supervisor killed by the student's code, a runner frozen, a sandbox that dies), `Runner.run` returns
one result per unit: units already reported keep their result, the unit in progress is marked as a
crash, and the rest is run again in a fresh runner.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from . import sandbox as sandbox_mod
from .supervisor import probe_wall
from .protocol import CRASH, TIMEOUT, Job, UnitResult

START_TIMEOUT = 120.0
PIPE_ROOM = 60_000  # a pipe holds 64 KiB before a write blocks
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trous-sandbox-spawner")


class RunnerError(RuntimeError):
    pass


class Runner:
    def __init__(self, mode: str = "auto", slot: int = 0, preload: tuple[str, ...] = ("numpy",),
                 memory_mb: int | None = None):
        self.mode, self.slot, self.preload, self.memory_mb = mode, slot, preload, memory_mb
        self.spec: sandbox_mod.SandboxSpec | None = None
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.ready = False  # the zygote said it is ready (b"R")
        self.interrupted = False  # interrupt(): no sandbox is started any more
        self.restarts = 0
        self.strays = 0

    # -- life cycle ----------------------------------------------------------------------------
    def want(self, modules) -> None:
        """Also import these in the zygote (from its next start): every job then has them for free."""
        self.preload = tuple(dict.fromkeys([*self.preload, *modules]))

    @property
    def kind(self) -> str:
        if self.spec is None:
            self.spec = sandbox_mod.build(self.mode, self.slot, self.preload, memory_mb=self.memory_mb)
        return self.spec.kind

    def launch(self) -> None:
        """Start the sandbox without waiting for it to be ready: it imports numpy while the caller
        goes on (the self-check collects meanwhile); the first job waits for it (`start`)."""
        if self.process is not None and self.process.poll() is None:
            return
        self._stop_process()
        if self.interrupted:
            raise RunnerError("le correcteur a été arrêté")
        if self.spec is None or self.spec.cleanup:  # a limits-only runner gets a new private directory
            if self.spec is not None:
                self.spec.release()
            self.spec = sandbox_mod.build(self.mode, self.slot, self.preload, memory_mb=self.memory_mb)
        parent, child = socket.socketpair()
        try:
            # bwrap's --die-with-parent follows the *thread* that started it: started from a worker
            # thread, the sandbox would be killed when that thread ends. One long-lived thread starts them all.
            self.process = _SPAWNER.submit(
                subprocess.Popen, self.spec.argv, stdin=child.fileno(), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL if not os.environ.get("TROUS_DEBUG") else None,
                env=self.spec.env, close_fds=True, start_new_session=True).result()
        finally:
            child.close()
        self.control = parent
        self.ready = False

    def start(self) -> None:
        self.launch()
        if self.ready:
            return
        parent = self.control
        parent.settimeout(START_TIMEOUT)
        try:
            ready = parent.recv(1)
        except OSError:
            ready = b""
        if ready != b"R" or self.interrupted:
            self._stop_process()
            raise RunnerError("le correcteur a été arrêté" if self.interrupted
                              else f"le bac à sable ({self.spec.kind}) n'a pas démarré")
        self.ready = True

    def interrupt(self) -> None:
        """From another thread: end the job in progress now (its sandbox is killed: its units not yet
        reported end as crashes) and start no other sandbox (run() then fails with RunnerError).
        close() still releases the rest."""
        self.interrupted = True
        self.ready = False
        process = self.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        self._stop_process()
        if self.spec is not None:
            self.spec.release()  # its private directory, cgroup and leased uids
            self.spec = None

    def _stop_process(self) -> None:
        self.ready = False
        if self.control is not None:
            try:
                self.control.close()
            except OSError:
                pass
            self.control = None
        if self.process is not None:
            if self.process.poll() is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            self.process = None

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- jobs ----------------------------------------------------------------------------------
    def run(self, job: Job) -> list[UnitResult]:
        results: dict[int, UnitResult] = {}
        remaining = list(range(len(job.units)))
        while remaining:
            sub = Job(tuple(job.units[i] for i in remaining), job.limits, job.capture_output)
            got, finished = self._attempt(sub)
            for local, result in got.items():
                results[remaining[local]] = result
            if finished and len(got) == len(remaining):
                break
            # The supervisor or the runner died: the first unit without a result is the culprit.
            lost = next(i for i in remaining if i not in results)
            unit = job.units[lost]
            results[lost] = UnitResult.failed(
                CRASH, "crash", "le programme a interrompu le correcteur (processus de supervision tué)",
                len(unit.probes))
            remaining = [i for i in remaining if i not in results]
            if unit.group:  # the same program would do it again for its other variants
                for i in list(remaining):
                    if job.units[i].group == unit.group:
                        results[i] = UnitResult.failed(
                            "skipped", "skipped", "non exécuté, car sur une autre entrée : " + results[lost].error.message,
                            len(job.units[i].probes))
                remaining = [i for i in remaining if i not in results]
        return [results[i] for i in range(len(job.units))]

    def _deadline(self, job: Job) -> float:
        budget = sum((u.wall or job.limits.wall) + 2.0 + len(u.probes) * probe_wall(job.limits) for u in job.units)
        return time.monotonic() + budget + 10.0

    def _attempt(self, job: Job) -> tuple[dict[int, UnitResult], bool]:
        self.start()
        assert self.control is not None
        payload = job.to_bytes()
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        try:
            socket.send_fds(self.control, [b"J"], [job_r, res_w])
        except OSError:
            for fd in (job_r, job_w, res_r, res_w):
                os.close(fd)
            self._stop_process()
            self.restarts += 1
            return {}, False
        os.close(job_r)
        os.close(res_w)
        if len(payload) <= PIPE_ROOM:  # fits in the pipe: no thread needed
            _write_all(job_w, payload)
            writer = None
        else:
            writer = threading.Thread(target=_write_all, args=(job_w, payload), daemon=True)
            writer.start()
        results: dict[int, UnitResult] = {}
        finished = False
        deadline = self._deadline(job)
        buffer = b""
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                ready, _, _ = select.select([res_r], [], [], remaining)
                if not ready:
                    continue
                chunk = os.read(res_r, 1 << 20)
                if not chunk:
                    break
                buffer += chunk
                lines = buffer.split(b"\n")
                buffer = lines.pop()  # what follows the last end of line: the start of the next one
                for line in lines:
                    message = _parse(line)
                    if message is None:
                        continue
                    if message.get("done") is True:
                        finished = True
                    index = message.get("i")
                    if isinstance(index, int) and 0 <= index < len(job.units) and isinstance(message.get("result"), dict):
                        results[index] = UnitResult.from_json(message["result"], len(job.units[index].probes),
                                                              size=len(line))
        finally:
            os.close(res_r)
        healthy = self._await_end(deadline)
        if not healthy:
            self._stop_process()
            self.restarts += 1
            if not finished and len(results) < len(job.units):
                # The runner was stuck (frozen by the student, or out of time): that is a timeout.
                lost = next(i for i in range(len(job.units)) if i not in results)
                results[lost] = UnitResult.failed(TIMEOUT, "timeout", "temps dépassé : le correcteur a dû être "
                                                  "redémarré", len(job.units[lost].probes))
        if writer is not None:
            writer.join(timeout=1)
        return results, finished

    def _await_end(self, deadline: float) -> bool:
        assert self.control is not None
        self.control.settimeout(max(1.0, deadline - time.monotonic()))
        try:
            reply = _recv_exact(self.control, 9)
        except OSError:
            return False
        if len(reply) != 9 or reply[:1] != b"E":
            return False
        _, strays = struct.unpack("!ii", reply[1:])
        self.strays += strays
        return True


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError:
        pass
    finally:
        os.close(fd)


def _parse(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class RunnerPool:
    """`size` runners, each in its own sandbox slot, fed from one queue of jobs."""

    def __init__(self, size: int | None = None, mode: str = "auto", preload: tuple[str, ...] = ("numpy",),
                 slots: tuple[int, ...] | None = None, memory_mb: int | None = None):
        # Each runner leases its own uids (uids.py): pools sharing a machine never share a process count.
        # `memory_mb`: the memory bound the sandboxes' tmpfs sizes follow (sandbox.tmpfs_bytes).
        self.size = len(slots) if slots else max(1, size or os.cpu_count() or 1)
        self.runners = [Runner(mode, slot, preload, memory_mb) for slot in (slots or range(self.size))]
        self._free: list[Runner] = list(self.runners)
        self._lock = threading.Lock()

    @property
    def kind(self) -> str:
        return self.runners[0].kind

    def want(self, modules) -> None:
        for runner in self.runners:
            runner.want(modules)

    def _take(self) -> Runner:
        with self._lock:
            return self._free.pop()

    def _give(self, runner: Runner) -> None:
        with self._lock:
            self._free.append(runner)

    def run(self, job: Job) -> list[UnitResult]:
        runner = self._take()
        try:
            return runner.run(job)
        finally:
            self._give(runner)

    def map(self, jobs: Iterable[Job], on_done: Callable[[int, list[UnitResult]], None] | None = None
            ) -> Iterator[tuple[int, list[UnitResult]]]:
        """Run jobs in parallel; yield (position, results) as each finishes."""
        with ThreadPoolExecutor(max_workers=self.size) as executor:
            futures = {executor.submit(self.run, job): i for i, job in enumerate(jobs)}
            from concurrent.futures import as_completed  # noqa: PLC0415

            for future in as_completed(futures):
                position = futures[future]
                results = future.result()
                if on_done:
                    on_done(position, results)
                yield position, results

    def close(self) -> None:
        for runner in self.runners:
            runner.close()

    def __enter__(self) -> "RunnerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
