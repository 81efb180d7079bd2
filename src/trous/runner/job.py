"""The supervisor of one job: forks the processes that run student code, owns the clock, reports.

It never runs student code itself. For each run of units sharing a process key it forks a child
(child.py), reads that child's events and output, and kills it when a unit or a probe outlives its
time. A probe that hangs or crashes costs only that probe: the unit is run again in a new child from
the next probe on. A program that hangs or crashes costs its unit and the later units of its group.
Results go to the parent as JSON lines, one per unit, then {"done": true}.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import stat
import tempfile
import time

from . import child as child_mod
from .confine import Confinement, apply
from .protocol import CRASH, ERROR, EXIT, OK, SKIPPED, TIMEOUT, Job, Limits, Unit

MAX_EVENT_LINE = 32 * 1024 * 1024
MAX_RESUMES = 4
GRACE = 0.5  # seconds a child gets to stop the student's code before it is killed
PROBE_FLOOR = 0.25  # even after the program used its time, each probe gets this long
OVERRUN = 1.5  # how far past its wall time a unit's probes may go, in all


def probe_wall(limits: Limits) -> float:
    return max(1.0, min(limits.wall, 3.0))


class _UnitState:
    def __init__(self, unit: Unit):
        self.unit = unit
        self.status: str | None = None
        self.error: dict | None = None
        self.probes: dict[int, dict] = {}
        self.output = bytearray()
        self.output_total = 0
        self.started = 0.0
        self.seconds = 0.0
        self.resumes = 0

    def result(self) -> dict:
        n = len(self.unit.probes)
        probes = [self.probes.get(j) for j in range(n)]
        return {
            "status": self.status or CRASH,
            "error": self.error,
            "probes": probes,
            "output": self.output.decode("utf-8", "replace"),
            "seconds": round(self.seconds, 4),
        }


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Supervisor:
    def __init__(self, job: Job, out_fd: int, workroot: str, confinement: Confinement):
        self.job = job
        self.out_fd = out_fd
        self.workroot = workroot
        self.confinement = confinement
        self.states = [_UnitState(u) for u in job.units]
        self.poisoned: dict[str, str] = {}  # group → why its later units are not run

    def _poison(self, state: _UnitState) -> None:
        """The same program would fail the same way on its other inputs: skip them, saying why."""
        if state.unit.group:
            self.poisoned.setdefault(state.unit.group, (state.error or {}).get("message", "échec"))

    # -- reporting -----------------------------------------------------------------------------
    def send(self, message: dict) -> None:
        child_mod.emit(self.out_fd, message)

    def finish(self, index: int) -> None:
        self.send({"i": index, "result": self.states[index].result()})

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> None:
        units = self.job.units
        index = 0
        while index < len(units):
            state = self.states[index]
            group = units[index].group
            if group and group in self.poisoned:
                state.status = SKIPPED
                state.error = {"kind": "skipped", "message": "non exécuté, car sur une autre entrée : "
                                                               + self.poisoned[group]}
                self.finish(index)
                index += 1
                continue
            batch = [index]
            while (batch[-1] + 1 < len(units) and units[batch[-1] + 1].process == units[index].process
                   and not (units[batch[-1] + 1].group and units[batch[-1] + 1].group in self.poisoned)):
                batch.append(batch[-1] + 1)
            first_probe = len(state.probes) if state.status is not None else 0
            index = self.run_batch(batch, first_probe)
        self.send({"done": True})

    def run_batch(self, batch: list[int], first_probe: int) -> int:
        """Run units `batch` in one child; return the index to continue from."""
        outcome = self._supervise(batch, first_probe)
        done, stopped_at, phase, reason, detail = outcome
        for index in done:
            self.finish(index)
        if stopped_at is None:  # all done, or stopped early because the rest is skipped
            return done[-1] + 1 if done else batch[-1] + 1
        state = self.states[stopped_at]
        message = self._message(reason, detail)
        if phase == "budget":  # keep what was evaluated; the rest of the probes are not
            if state.status in (None, OK, ERROR, EXIT):
                state.error = state.error if state.status not in (None, OK) else {"kind": "timeout", "message": message}
                state.status = state.status if state.status not in (None, OK) else TIMEOUT
            for j in range(len(state.unit.probes)):
                state.probes.setdefault(j, {"error": {"kind": "timeout", "message": message}})
            state.seconds = time.monotonic() - state.started
            self._poison(state)
            self.finish(stopped_at)
            return stopped_at + 1
        if phase == "probe":
            probe_index = detail["probe"]
            state.probes[probe_index] = {"error": {"kind": reason, "message": message,
                                                   **self._location(state.unit, detail.get("line"))}}
            state.resumes += 1
            if state.resumes <= MAX_RESUMES and probe_index + 1 < len(state.unit.probes):
                return stopped_at  # run this unit again, from the next probe on
            state.seconds = time.monotonic() - state.started
            self.finish(stopped_at)
            return stopped_at + 1
        # The program itself (or the child's start) failed: the unit is lost, and its group.
        state.status = TIMEOUT if reason == "timeout" else CRASH
        state.error = {"kind": reason, "message": message, **self._location(state.unit, detail.get("line"))}
        state.seconds = time.monotonic() - state.started if state.started else 0.0
        self._poison(state)
        self.finish(stopped_at)
        return stopped_at + 1

    def _timed_out(self, unit: Unit, seconds: float, line: int | None, reported) -> dict:
        if line is None and isinstance(reported, dict) and isinstance(reported.get("line"), int):
            line = reported["line"]
        return {"kind": "timeout", "message": self._message("timeout", {"seconds": seconds, "line": line}),
                **self._location(unit, line)}

    @staticmethod
    def _location(unit: Unit, line: int | None) -> dict:
        if not line:
            return {}
        lines = unit.source.split("\n")
        return {"line": line, "text": lines[line - 1].rstrip() if 0 < line <= len(lines) else None}

    def _message(self, reason: str, detail: dict) -> str:
        limits = self.job.limits
        if reason == "timeout":
            seconds = detail.get("seconds", limits.wall)
            where = f" à la ligne {detail['line']}" if detail.get("line") else ""
            shown = f"{seconds:.1f}".rstrip("0").rstrip(".")
            return f"temps dépassé : arrêté{where} après {shown} s (boucle sans fin ?)"
        if reason == "output":
            return f"sortie trop volumineuse : arrêté après {detail.get('bytes', 0) // 1024} Kio d'affichage"
        if reason == "protocol":
            return "le programme a perturbé le correcteur (écriture sur un canal réservé)"
        code = detail.get("code")
        if code is not None and code < 0:
            name = _signal_name(-code)
            if name == "SIGXCPU":
                return f"temps de calcul dépassé (limite {limits.cpu} s de processeur)"
            if name == "SIGKILL":
                return f"processus tué (SIGKILL) : mémoire épuisée (limite {limits.memory_mb} Mo) ou arrêt forcé"
            if name == "SIGSEGV":
                return "le programme a planté (SIGSEGV)"
            return f"le programme a été arrêté par le signal {name}"
        if code is not None:
            return f"le programme s'est arrêté brutalement (code de sortie {code}, os._exit ?) avant la fin"
        return "le programme s'est arrêté brutalement avant la fin"

    # -- one child -----------------------------------------------------------------------------
    def _supervise(self, batch: list[int], first_probe: int):
        limits = self.job.limits
        workdir = tempfile.mkdtemp(prefix="run-", dir=self.workroot)
        os.chmod(workdir, 0o777)
        ev_r, ev_w = os.pipe()
        out_r, out_w = os.pipe()
        gc.freeze()  # the child then copies fewer pages (see zygote.py)
        pid = os.fork()
        if pid == 0:  # the child: confine, then run the student's code
            try:
                os.close(ev_r)
                os.close(out_r)
                self._become_child(workdir, ev_w, out_w, batch, first_probe)
            finally:
                os._exit(70)
        os.close(ev_w)
        os.close(out_w)
        os.set_blocking(out_r, False)
        done: list[int] = []
        current: int | None = None
        phase = "start"
        probe_index = -1
        deadline = time.monotonic() + limits.wall + 2.0  # start-up included
        allowed = limits.wall
        buffer = bytearray()
        stopped = None  # (reason, detail)
        open_fds = {ev_r, out_r}
        output_cap = limits.output_kb * 1024
        hard_output_cap = max(16 * 1024 * 1024, 64 * output_cap)
        resumed = first_probe > 0
        unit_deadline = deadline
        interrupting = False  # time is up; the child was asked to stop the student's code
        where_line: int | None = None
        try:
            while ev_r in open_fds and stopped is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if interrupting or current is None:
                        stopped = ("timeout", {"seconds": allowed, "line": where_line})
                        break
                    interrupting, where_line = True, None
                    try:
                        os.kill(pid, signal.SIGUSR1)
                    except (ProcessLookupError, PermissionError):
                        pass
                    deadline = time.monotonic() + GRACE
                    continue
                ready, _, _ = select.select(list(open_fds), [], [], remaining)
                for fd in ready:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        chunk = None
                    if fd == out_r:
                        if chunk is None:
                            continue
                        if not chunk:
                            open_fds.discard(out_r)
                            continue
                        if current is not None and not resumed:
                            state = self.states[current]
                            state.output_total += len(chunk)
                            room = output_cap - len(state.output)
                            if room > 0:
                                state.output += chunk[:room]
                            if state.output_total > hard_output_cap:
                                stopped = ("output", {"bytes": state.output_total})
                        continue
                    if not chunk:
                        open_fds.discard(ev_r)
                        continue
                    buffer += chunk
                    if len(buffer) > MAX_EVENT_LINE:
                        stopped = ("protocol", {})
                        break
                    while b"\n" in buffer and stopped is None:
                        line, _, rest = bytes(buffer).partition(b"\n")
                        buffer = bytearray(rest)
                        event = _parse(line)
                        if event is None or event.get("i") not in batch:
                            stopped = ("protocol", {})
                            break
                        kind, i = event["ev"], event["i"]
                        state = self.states[i]
                        now = time.monotonic()
                        if kind == "where":
                            line_no = event.get("line")
                            where_line = line_no if isinstance(line_no, int) and not isinstance(line_no, bool) else None
                        elif kind == "start":
                            current, phase = i, "module"
                            if state.status is None:
                                state.started = now
                            wall = self.job.units[i].wall or limits.wall
                            unit_deadline = now + wall
                            deadline, allowed = unit_deadline, wall
                        elif kind == "module" and i == current:
                            status = event.get("status")
                            if state.status is None:
                                if interrupting or status == TIMEOUT:
                                    state.status = TIMEOUT
                                    state.error = self._timed_out(state.unit, allowed, where_line, event.get("error"))
                                    self._poison(state)
                                else:
                                    state.status = status if status in (OK, ERROR, EXIT) else ERROR
                                    state.error = event.get("error") if isinstance(event.get("error"), dict) else None
                            interrupting = False
                            phase = "probe"
                            deadline = max(now + PROBE_FLOOR, unit_deadline + OVERRUN)
                        elif kind == "probe-start" and i == current and isinstance(event.get("j"), int):
                            probe_index = event["j"]
                            if now >= unit_deadline + OVERRUN:  # the unit's time is spent
                                stopped = ("timeout", {"seconds": self.job.units[i].wall or limits.wall, "budget": True})
                                break
                            allowed = max(PROBE_FLOOR, min(probe_wall(limits), unit_deadline - now))
                            deadline = min(now + allowed, unit_deadline + OVERRUN)
                        elif kind == "probe" and i == current and event.get("j") == probe_index:
                            result = event.get("result")
                            if interrupting:
                                result = {"error": self._timed_out(state.unit, allowed, where_line,
                                                                   (result or {}).get("error") if isinstance(result, dict) else None)}
                            state.probes[probe_index] = result if isinstance(result, dict) else {
                                "error": {"kind": "protocol", "message": "résultat illisible"}}
                            interrupting = False
                            deadline = max(now + PROBE_FLOOR, unit_deadline + OVERRUN)
                        elif kind == "end" and i == current:
                            if not resumed:
                                self._drain(out_r, state, output_cap)
                            state.seconds = now - state.started
                            done.append(i)
                            current, phase, resumed = None, "start", False
                            deadline, allowed = now + limits.wall + 2.0, limits.wall
                            later = [j for j in batch if j > i]
                            if not later or (self.job.units[later[0]].group in self.poisoned
                                             and self.job.units[later[0]].group):
                                open_fds.discard(ev_r)  # done, or the rest of the batch is skipped
                        else:
                            stopped = ("protocol", {})
            if stopped is None and len(done) < len(batch):
                following = self.job.units[next(j for j in batch if j not in done)].group
                if current is not None or not (following and following in self.poisoned):
                    stopped = ("crash", {})
        finally:
            code = self._reap(pid)
            for fd in (ev_r, out_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            violation = _check_and_wipe(workdir, limits)
        if violation:
            for i in done:
                state = self.states[i]
                if state.status == OK:
                    state.status = ERROR
                    state.error = {"kind": "files", "message": violation}
                # A broken bound voids what the run computed: its values must not earn credit.
                state.probes = {j: {"error": {"kind": "files", "message": violation}}
                                for j in range(len(state.unit.probes))}
        if stopped is None:
            return done, None, None, None, {}
        reason, detail = stopped
        if reason == "crash":
            detail = {"code": code}
        stopped_at = current if current is not None else next(i for i in batch if i not in done)
        if detail.get("budget"):
            return done, stopped_at, "budget", reason, detail
        if phase == "probe" and probe_index >= 0 and current is not None:
            detail["probe"] = probe_index
            return done, stopped_at, "probe", reason, detail
        return done, stopped_at, "module", reason, detail

    @staticmethod
    def _drain(fd: int, state: _UnitState, cap: int) -> None:
        # The child flushes before reporting a unit's end: what it printed is already in the pipe.
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            state.output_total += len(chunk)
            room = cap - len(state.output)
            if room > 0:
                state.output += chunk[:room]

    def _become_child(self, workdir, ev_w, out_w, batch, first_probe):
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.dup2(ev_w, 3)
        os.closerange(4, _max_fd())
        os.chdir(workdir)
        apply(self.job.limits, self.confinement)
        import io  # noqa: PLC0415
        import sys  # noqa: PLC0415
        sys.stdin = open(os.devnull)  # noqa: SIM115
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace",
                                      line_buffering=False, write_through=False)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace",
                                      line_buffering=False, write_through=False)
        sys.argv = [self.job.units[batch[0]].filename]
        child_mod.run_units([(i, self.job.units[i]) for i in batch], 3, first_probe)
        child_mod._flush()
        os._exit(0)

    def _reap(self, pid: int) -> int | None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, status = os.waitpid(pid, 0)
        if _has_children():  # processes the run left behind (the supervisor is their subreaper)
            from .zygote import sweep  # noqa: PLC0415

            sweep()
        if os.WIFSIGNALED(status):
            return -os.WTERMSIG(status)
        return os.WEXITSTATUS(status)


def _has_children() -> bool:
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as f:
                if f.read().strip():
                    return True
        return False
    except OSError:
        return True  # cannot tell: sweep anyway


def _parse(line: bytes) -> dict | None:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("ev"), str) or not isinstance(event.get("i"), int):
        return None
    return event


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 65536)
    except (ValueError, OSError):
        return 4096


def _check_and_wipe(workdir: str, limits: Limits) -> str | None:
    """Count what the code left behind, then remove it all (symlinks are removed, never followed)."""
    files, total = 0, 0
    for root, dirs, names in os.walk(workdir, followlinks=False):
        for name in names + dirs:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            files += 1
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
        if files > 10 * limits.files:
            break

    def force(func, path, _exc):
        try:
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
        except OSError:
            pass
        try:
            func(path)
        except OSError:
            pass

    shutil.rmtree(workdir, onerror=force)
    if files > limits.files:
        return f"trop de fichiers écrits ({files}, limite {limits.files})"
    if total > limits.file_mb * 1024 * 1024 * 4:
        return f"trop de données écrites sur le disque ({total // (1024 * 1024)} Mo)"
    return None


def run_job(job: Job, out_fd: int, workroot: str, confinement: Confinement) -> None:
    Supervisor(job, out_fd, workroot, confinement).run()
