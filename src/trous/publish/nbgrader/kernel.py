"""The kernel of `nbgrader autograde`, inside bubblewrap: never source/, the gradebook, the exchange or
another student's folder. It sees its folder as read-only copies in a private tmpfs, the notebooks
reduced to their answer cells (no hidden test to find); a bounded /tmp; no other process; no network
(unix sockets in a directory it can no longer write once bound); as root, a uid of its own. An
interrupt is a message the kernel answers by signalling its own group: SIGINT sent to bubblewrap's
would kill it, and nbgrader would drop the assignment. Without bubblewrap it does not start; `sandbox = "none"` only when asked, never as root.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from ...inputs.answers import nbgrader_meta
from ...inputs.bundle import TROUS_KEY
from ...sandbox import backend as sandbox_mod
from ...sandbox import uids
from ...core.wording import french_number
from .incell import IN_KERNEL_SANDBOX
from .preprocessors import VerifyGrades, grade_cells

COPY_LIMIT = 256 * 1024 * 1024
FILES_LIMIT = 10_000
TMPFS_BYTES = 256 * 1024 * 1024  # the kernel's own folder, and its /tmp
KERNEL_ENV = {**sandbox_mod.BWRAP_ENV, "USER": "eleve", IN_KERNEL_SANDBOX: "1"}
_warned = False


def _kept(cell: dict) -> bool:
    # The check cell's public bundle is the release's, which students have.
    nbgrader = nbgrader_meta(cell)
    return bool(nbgrader.get("solution")) or (_is_check_cell(cell) and not nbgrader.get("grade"))


def _is_check_cell(cell: dict) -> bool:
    trous = (cell.get("metadata") or {}).get(TROUS_KEY)
    return isinstance(trous, dict) and "verification" in trous


def strip_notebook(data: bytes) -> bytes:
    """Its answer cells and its check cell, no grade cell (nbgrader restored their hidden tests)."""
    try:
        nb = json.loads(data)
        cells = [c for c in nb.get("cells", []) if isinstance(c, dict) and _kept(c)]
    except (ValueError, AttributeError, TypeError):
        return b"{}"
    for cell in cells:
        cell["outputs"] = [] if cell.get("cell_type") == "code" else cell.get("outputs", [])
        if not nbgrader_meta(cell).get("solution"):
            cell["source"] = ""  # the check cell: its metadata is what is read, never its code
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def private_copy(folder: str, dest: str) -> None:
    total, count = 0, 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel = os.path.relpath(root, folder)
        target_dir = os.path.join(dest, rel) if rel != "." else dest
        os.makedirs(target_dir, exist_ok=True)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d)) and d != ".ipynb_checkpoints"]
        for name in files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            count += 1
            if not stat.S_ISREG(info.st_mode) or count > FILES_LIMIT or total + info.st_size > COPY_LIMIT:
                continue
            total += info.st_size
            data = Path(path).read_bytes()
            target = Path(target_dir, name)
            target.write_bytes(strip_notebook(data) if name.endswith(".ipynb") else data)
            target.chmod(0o644)
        os.chmod(target_dir, 0o755)


def bwrap_argv(inner: list[str], env: dict[str, str], folder: tuple[str, str], sockets: str,
               root: bool) -> list[str]:
    """`folder`: (private copy, path the kernel sees it at). No --new-session: kernel_entry makes the
    kernel lead its own process group, which a session leader cannot."""
    copy, seen_at = folder
    size = TMPFS_BYTES
    mounts = [("--perms", "1777", "--size", str(size), "--tmpfs", seen_at),
              *(("--ro-bind", os.path.join(copy, name), os.path.join(seen_at, name))
                for name in sorted(os.listdir(copy))),
              ("--bind", sockets, sockets)]
    return sandbox_mod.bwrap_argv(inner, env, tmpfs=(size, size), tmp_perms="1777", hostname="noyau",
                                  extra_etc=("/etc/ssl", "/etc/mime.types"), mounts=mounts, chdir=seen_at,
                                  caps=("CAP_SETUID", "CAP_SETGID") if root else (), new_session=False)


_bwrap_works = functools.cache(sandbox_mod.bwrap_available)


class SandboxedKernelManager(AsyncKernelManager):
    sandbox = Unicode("auto", help="auto ou bwrap : bubblewrap, sinon le noyau refuse de démarrer ; none : sans "
                                   "isolation (jamais en root)").tag(config=True)
    memory_mb = Integer(4096, help="mémoire (espace d'adressage) du noyau, en Mo").tag(config=True)
    processes = Integer(256, help="processus simultanés du noyau (quand nbgrader tourne en root)").tag(config=True)
    file_mb = Integer(256, help="plus gros fichier que le noyau peut écrire, en Mo").tag(config=True)

    _private: str | None = None
    _lease: uids.Lease | None = None  # the kernel's own uid, as root (leased like the runners')
    _isolated = Bool(False)

    def _use_bwrap(self) -> bool:
        global _warned
        if self.sandbox == "none":
            if os.geteuid() == 0:
                raise RuntimeError("noyau sans isolation (sandbox = \"none\") refusé en root : le code des élèves "
                                   "aurait tous les droits sur la machine. " + sandbox_mod.INSTALL_HINT)
            if not _warned:
                _warned = True
                self.log.warning("AUCUNE ISOLATION DU NOYAU (sandbox = \"none\") : le code des élèves s'exécute avec "
                                 "vos droits et peut lire source/ et le carnet de notes.")
            return False
        if self.sandbox not in ("auto", "bwrap"):
            raise RuntimeError(f"bac à sable du noyau inconnu « {self.sandbox} » (possibles : auto, bwrap, none)")
        if _bwrap_works():
            return True
        raise RuntimeError("le noyau de nbgrader autograde ne démarre pas sans bubblewrap : le code des élèves "
                           "aurait vos droits (source/, carnet de notes, autres copies). " + sandbox_mod.INSTALL_HINT
                           + " Ou corrigez avec « trous grade . », qui n'a pas besoin de noyau.")

    async def _async_pre_start_kernel(self, **kw):
        self._isolated = self._use_bwrap()
        if self._isolated:
            self._private = tempfile.mkdtemp(prefix="trous-noyau-")
            os.chmod(self._private, 0o755)
            sockets = os.path.join(self._private, "canal")
            os.mkdir(sockets)
            self.transport = "ipc"
            self.ip = os.path.join(sockets, "noyau")
            self.connection_file = os.path.join(sockets, "connexion.json")
            if self.kernel_spec is not None:  # see the module's docstring
                self.kernel_spec.interrupt_mode = "message"
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if not self._isolated:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        cwd = os.path.realpath(kw.get("cwd") or os.getcwd())
        work = os.path.join(self._private, "dossier")
        private_copy(cwd, work)
        sockets = os.path.dirname(self.connection_file)
        uid = None
        if os.geteuid() == 0:
            self._lease = self._lease or uids.Lease()
            uid = self._lease.uids[0]
            # Writable by the kernel's group while it binds its sockets; kernel_entry then removes
            # that right as the directory's owner, before any student code runs.
            os.chown(sockets, 0, uid)
            os.chmod(sockets, 0o770)
            os.chown(self.connection_file, 0, uid)
            os.chmod(self.connection_file, 0o640)
        outer_env = kw.get("env") or {}
        passed = ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "JPY_SESSION_NAME")
        env = {**KERNEL_ENV, **{key: outer_env[key] for key in passed if key in outer_env}}
        config = {"uid": uid, "memory_mb": self.memory_mb, "processes": self.processes, "file_mb": self.file_mb,
                  "sockets": sockets}
        inner = sandbox_mod.python_module("trous.publish.nbgrader.kernel_entry", json.dumps(config), "--", *kernel_cmd)
        argv = bwrap_argv(inner, env, (work, cwd), sockets, uid is not None)
        kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        kw.setdefault("stdout", subprocess.DEVNULL)  # ipykernel's banner about Ctrl-C, once per notebook
        return await super()._async_launch_kernel(argv, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._private and not restart:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None
        if self._lease is not None and not restart:
            self._lease.release()
            self._lease = None

    # AsyncKernelManager binds its public name to the base class's coroutine, and nbclient calls it
    # (after a kernel that died, only it): this class's must run.
    cleanup_resources = _async_cleanup_resources

    def kill_now(self) -> None:
        """A kernel stuck after an interrupt: bubblewrap, whose pid namespace dies with it."""
        process = getattr(self.provisioner, "process", None)
        if process is not None:
            with contextlib.suppress(OSError):
                process.kill()


# The errors a cell the kernel did not finish ends with.
KERNEL_DIED, NOT_RUN_NAME, TIMEOUT_NAME = "NoyauArrete", "NonExecutee", "TempsEcoule"
_REST = "les cellules suivantes n'ont pas été exécutées ; chaque trou est noté quand même, hors du noyau"
DEAD = (KERNEL_DIED, "le noyau s'est arrêté pendant cette cellule (os._exit, plantage ou mémoire épuisée) : " + _REST)
NOT_RUN = (NOT_RUN_NAME, "cellule non exécutée : le noyau s'était arrêté plus haut")
TIMED_OUT = ("cette cellule s'exécutait encore après {seconds} s, la limite de temps {whose} : elle a été "
             "interrompue, et la suite du carnet exécutée")
NOT_RERUN = (NOT_RUN_NAME, "cellule non exécutée dans le noyau : une cellule plus haut a dépassé sa limite de temps, "
             "et cette cellule relancerait le même programme ; ce qu'elle vérifie est corrigé hors du noyau")
LATE = ("les sorties de cette cellule n'avaient pas fini d'arriver {seconds} s après sa fin : le noyau a été arrêté, "
        + _REST)
STUCK = ("cette cellule s'exécutait encore après {seconds} s, la limite de temps {whose}, et le noyau n'a pas "
         "répondu à l'interruption : il a été arrêté, " + _REST)


class SandboxedExecute(Execute):
    """A student's cell runs for the exercise's `timeout`, or `Execute.timeout` if shorter. A kernel that
    dies or does not come back from the interrupt would make nbgrader drop the whole assignment: the
    cells left get an error output instead. With VerifyGrades next, grade cells never run in the kernel
    (the student's code owns it); after a timeout, nor does the check cell (the same program again)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    @staticmethod
    def _error(cell, name: str, message: str) -> None:
        cell.outputs = list(cell.get("outputs", [])) + [
            nbformat.v4.new_output("error", ename=name, evalue=message, traceback=[f"{name}: {message}"])]

    @staticmethod
    def _runs_engine(cell) -> bool:
        """trous's engine runs there, under its own bounds."""
        return bool(nbgrader_meta(cell).get("grade")) or _is_check_cell(cell)

    def _exercise_limit(self, cell) -> float | None:
        """For a student's cell: not the engine's, nor the locked preparation."""
        if cell is None or self._runs_engine(cell):
            return None
        if nbgrader_meta(cell).get("locked") and "%load_ext trous.publish.nbgrader" in cell.get("source", ""):
            return None
        return self._exercise_timeout

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        limit = self._exercise_limit(cell)
        return limit if limit is not None and (timeout is None or limit < timeout) else timeout

    def _whose(self, cell, seconds) -> str:
        limit = self._exercise_limit(cell)
        return "de l'exercice" if limit is not None and seconds == limit else "des cellules (Execute.timeout)"

    async def _async_handle_timeout(self, timeout, cell=None):
        self.log.warning("cellule arrêtée au bout de %s s (temps écoulé) : interruption du noyau", french_number(timeout))
        reply = await super()._async_handle_timeout(timeout, cell)
        if reply is not None:
            text = TIMED_OUT.format(seconds=french_number(timeout), whose=self._whose(cell, timeout))
            reply["content"].update(ename=TIMEOUT_NAME, evalue=text, traceback=[f"{TIMEOUT_NAME}: {text}"])
        self._timed_out = True
        self._interrupted = cell
        return reply

    def _verified(self) -> bool:
        """VerifyGrades runs after this preprocessor (nbconvert's exporter is our parent)."""
        return any(isinstance(p, VerifyGrades) and p.enabled for p in getattr(self.parent, "_preprocessors", []))

    def preprocess_cell(self, cell, resources, index):
        if id(cell) in self._outside:
            return cell, resources
        if self._dead:
            if cell.cell_type == "code" and cell.source.strip():
                self._error(cell, *NOT_RUN)
            return cell, resources
        if self._timed_out and cell.cell_type == "code" and self._runs_engine(cell) and self._verified():
            self._error(cell, *NOT_RERUN)
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._dead = True
            self._error(cell, *DEAD)
            self.log.warning("le noyau s'est arrêté dans la cellule %s : la suite n'est pas exécutée", index)
            return cell, resources
        except CellTimeoutError:
            # No end of the cell's outputs, after an interrupt (SIGINT ignored…) or after its reply:
            # nbclient raises, and nbgrader would drop the assignment.
            self._dead = True
            if isinstance(self.km, SandboxedKernelManager):
                self.km.kill_now()
            if self._interrupted is cell:
                seconds = self._get_timeout(cell)
                text = STUCK.format(seconds=french_number(seconds or 0), whose=self._whose(cell, seconds))
            else:
                text = LATE.format(seconds=french_number(self.iopub_timeout))
            self._error(cell, TIMEOUT_NAME, text)
            self.log.warning("cellule %s : le noyau ne répond plus ; arrêté, la suite n'est pas exécutée", index)
            return cell, resources

    def preprocess(self, nb, resources=None, km=None):
        self._dead = self._timed_out = False
        self._interrupted = None  # the cell nbclient last interrupted
        cells = grade_cells(nb)
        # the grade cells VerifyGrades writes (their id())
        self._outside = {id(c) for entries in cells.values() for c, _, _ in entries} if self._verified() else set()
        limits = [b.exercise.get("timeout") for entries in cells.values() for _, _, b in entries]
        limits = [float(t) for t in limits if isinstance(t, (int, float)) and t > 0]
        self._exercise_timeout = max(limits) if limits else None
        return super().preprocess(nb, resources, km)
