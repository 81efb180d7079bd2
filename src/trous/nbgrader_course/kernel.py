"""The kernel of `nbgrader autograde`, started inside bubblewrap.

`SandboxedExecute` is nbgrader's Execute preprocessor with `SandboxedKernelManager` (nbgrader's
Execute forces its kernel manager class, so the class is chosen here, and the generated
nbgrader_config.py names this preprocessor). The kernel then sees:
- a read-only system and Python (the same directories as trous's runner sandbox);
- its own folder (the notebook's directory) as a small private tmpfs holding read-only copies of
  the folder's files, the notebooks reduced to their answer cells (no hidden test to find there):
  the student's code may write files next to them, bounded in size, and nothing is written back;
- a private, bounded /tmp; no network (the kernel talks to nbgrader over unix sockets in a private
  directory that it can no longer write once they are bound); no other process; as root, an
  unprivileged user id of its own with process, memory and file-size bounds.
It never sees source/, the gradebook, the exchange, or another student's folder.

Without bubblewrap the kernel does not start (auto and bwrap): `nbgrader autograde` would run every
student's notebook with the grader's rights. `sandbox = "none"` starts it as nbgrader does, when asked
for explicitly, never as root, with a warning. (`trous grade` on nbgrader's submitted/ needs no kernel
and also isolates with the kernel's namespaces when bubblewrap is missing.)
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from ..runner import sandbox as sandbox_mod
from ..runner import uids

COPY_LIMIT = 256 * 1024 * 1024
FILES_LIMIT = 10_000
TMPFS_BYTES = 256 * 1024 * 1024  # the kernel's own folder, and its /tmp
_warned = False


def _kept(cell: dict) -> bool:
    # The answer cells, and the check cell (its public bundle: the release's, which students have).
    meta = cell.get("metadata") or {}
    if (meta.get("nbgrader") or {}).get("solution"):
        return True
    return isinstance(meta.get("trous"), dict) and "verification" in meta["trous"] and not (
        (meta.get("nbgrader") or {}).get("grade"))


def strip_notebook(data: bytes) -> bytes:
    """A notebook reduced to its answer cells (nbgrader `solution: true`) and its check cell: what the
    kernel may read. Grade cells, whose hidden tests nbgrader restored, never reach it."""
    try:
        nb = json.loads(data)
        cells = [c for c in nb.get("cells", []) if isinstance(c, dict) and _kept(c)]
    except (ValueError, AttributeError, TypeError):
        return b"{}"
    for cell in cells:
        cell["outputs"] = [] if cell.get("cell_type") == "code" else cell.get("outputs", [])
        if not (cell.get("metadata") or {}).get("nbgrader", {}).get("solution"):
            cell["source"] = ""  # the check cell: its metadata is what is read, never its code
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def private_copy(folder: str, dest: str) -> None:
    """Copy `folder` (regular files and directories only, bounded) into `dest`, notebooks stripped."""
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
            with open(path, "rb") as f:
                data = f.read()
            if name.endswith(".ipynb"):
                data = strip_notebook(data)
            target = os.path.join(target_dir, name)
            with open(target, "wb") as f:
                f.write(data)
            os.chmod(target, 0o644)
        os.chmod(target_dir, 0o755)


def bwrap_argv(inner: list[str], env: dict[str, str], folder: tuple[str, str], sockets: str,
               root: bool) -> list[str]:
    """`folder`: (private copy, path the kernel sees it at); `sockets`: the directory of the kernel's
    unix sockets and connection file, bound at the same path."""
    argv = [shutil.which(sandbox_mod.BWRAP) or sandbox_mod.BWRAP, "--die-with-parent",
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--hostname", "noyau"]
    argv += sandbox_mod.system_mounts(extra_etc=("/etc/ssl", "/etc/mime.types"))
    made: set[str] = set()

    def parents(path: str) -> list[str]:
        # bwrap creates missing parents as 0700: the kernel's unprivileged user could not reach inside.
        out = []
        for parent in reversed([str(p) for p in Path(path).parents if str(p) != "/"]):
            if parent not in made:
                made.add(parent)
                out += ["--perms", "0755", "--dir", parent]
        return out

    # The private /tmp first: Python may live under /tmp (a venv in a fresh clone), and a later tmpfs
    # would hide it.
    size = str(TMPFS_BYTES)
    # A bounded /dev (bubblewrap's --dev is an unbounded tmpfs the kernel's user could fill).
    argv += ["--proc", "/proc", *sandbox_mod.bwrap_args(sandbox_mod.dev_plan()), "--perms", "1777", "--size", size,
             "--tmpfs", "/tmp", "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    made.add("/tmp")
    for path in sandbox_mod._python_dirs():
        if not any(path == t or path.startswith(t + "/") for t in ("/usr", "/bin", "/lib", "/lib64")):
            argv += parents(path) + ["--ro-bind", path, path]
    copy, seen_at = folder
    argv += parents(seen_at) + ["--perms", "1777", "--size", size, "--tmpfs", seen_at]
    for name in sorted(os.listdir(copy)):
        argv += ["--ro-bind", os.path.join(copy, name), os.path.join(seen_at, name)]
    argv += parents(sockets) + ["--bind", sockets, sockets]
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]  # only the bounded tmpfs stay writable
    argv += ["--chdir", seen_at, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if root:
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return argv + ["--"] + inner


@functools.lru_cache(maxsize=1)
def _bwrap_works() -> bool:
    return sandbox_mod.bwrap_available()


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
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if not self._isolated:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        cwd = os.path.realpath(kw.get("cwd") or os.getcwd())
        work = os.path.join(self._private, "dossier")
        private_copy(cwd, work)
        sockets = os.path.dirname(self.connection_file)
        root = os.geteuid() == 0
        uid = None
        if root:
            if self._lease is None:
                self._lease = uids.lease(1)
            uid = self._lease.uids[0]
        if uid is not None:
            # Writable by the kernel's group while it binds its sockets; kernel_entry then removes
            # that right as the directory's owner, before any student code runs.
            os.chown(sockets, 0, uid)
            os.chmod(sockets, 0o770)
            os.chown(self.connection_file, 0, uid)
            os.chmod(self.connection_file, 0o640)
        outer_env = kw.get("env") or {}
        env = dict(sandbox_mod.THREAD_ENV)
        env.update({"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "USER": "eleve",
                    "TROUS_NOYAU_ISOLE": "1"})
        for key in ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "JPY_SESSION_NAME"):
            if key in outer_env:
                env[key] = outer_env[key]
        config = {"uid": uid, "memory_mb": self.memory_mb, "processes": self.processes, "file_mb": self.file_mb,
                  "sockets": sockets}
        inner = [sys.executable, "-I", "-m", "trous.nbgrader_course.kernel_entry", json.dumps(config), "--",
                 *kernel_cmd]
        argv = bwrap_argv(inner, env, (work, cwd), sockets, root)
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


DEAD = ("NoyauArrete", "le noyau s'est arrêté pendant cette cellule (os._exit, plantage ou mémoire épuisée) : "
        "les cellules suivantes n'ont pas été exécutées")
NOT_RUN = ("NonExecutee", "cellule non exécutée : le noyau s'était arrêté plus haut")


class SandboxedExecute(Execute):
    """nbgrader's Execute, whose kernel starts inside bubblewrap.

    A kernel killed by the student's code (`os._exit`) makes plain nbgrader drop the student's whole
    assignment; here the cells left get an error output instead, and VerifyGrades, which does not
    need the kernel, gives each blank the engine's grade."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self._dead = False

    @staticmethod
    def _error(cell, name: str, message: str) -> None:
        cell.outputs = list(cell.get("outputs", [])) + [
            nbformat.v4.new_output("error", ename=name, evalue=message, traceback=[f"{name}: {message}"])]

    def preprocess_cell(self, cell, resources, index):
        if self._dead:
            if cell.cell_type == "code" and cell.source.strip():
                self._error(cell, *NOT_RUN)
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._dead = True
            self._error(cell, *DEAD)
            self.log.warning("le noyau s'est arrêté dans la cellule %s : la suite n'est pas exécutée", index)
            return cell, resources

    def preprocess(self, nb, resources=None, km=None):
        self._dead = False
        return super().preprocess(nb, resources, km)
