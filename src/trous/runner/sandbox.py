"""How the runner process is started: inside bubblewrap when it is there, else with limits alone.

Under bubblewrap the runner sees a read-only system and Python, its own empty /tmp, no network, no
other process, and nothing of the course: not graders/, not solutions/, not the gradebook, not the
submissions (code reaches it through a pipe). Without bubblewrap, the same runner runs as a plain
process in a private temporary directory with the kernel's resource limits, and says so once.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import trous

from .confine import Confinement

BWRAP = "bwrap"
FALLBACK = "fallback"
SLOT_UID_BASE = 61000  # unprivileged user ids for student code, one per sandbox slot (root only)

THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "MPLBACKEND": "Agg",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


@dataclass
class SandboxSpec:
    kind: str
    argv: list[str]
    env: dict[str, str]
    confinement: Confinement
    cleanup: list[str] = field(default_factory=list)  # directories to remove when the runner stops
    cgroup: str | None = None

    @property
    def description(self) -> str:
        if self.kind == BWRAP:
            return "bubblewrap : système en lecture seule, sans réseau, sans accès au cours ni aux autres copies"
        return ("AUCUNE ISOLATION FORTE : bubblewrap (bwrap) est introuvable ; le code des étudiants tourne avec "
                "de simples limites de ressources dans un dossier temporaire. Installez bubblewrap "
                "(apt-get install bubblewrap) avant de corriger des copies inconnues.")


def bwrap_available() -> bool:
    path = shutil.which(BWRAP)
    if not path or not sys.platform.startswith("linux"):
        return False
    import subprocess  # noqa: PLC0415

    try:
        probe = subprocess.run([path, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--proc", "/proc",
                                "--dev", "/dev", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _python_dirs() -> list[str]:
    """What the runner must see to start Python and import trous and numpy, and nothing more."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable))}
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(trous.__file__)))
    wanted.add(package_parent)
    dirs = []
    for path in sorted({os.path.realpath(p) for p in wanted}):
        if path in ("/", "") or _looks_like_course(path):
            continue
        if not any(path.startswith(d + os.sep) for d in dirs):
            dirs.append(path)
    return dirs


def _looks_like_course(path: str) -> bool:
    # Never expose a directory holding a course: graders and solutions would be readable.
    p = Path(path)
    return any((p / name).exists() for name in ("course.yaml", "graders", "solutions"))


def system_mounts(extra_etc: tuple[str, ...] = ()) -> list[str]:
    """bubblewrap arguments for a read-only system: /usr and its kin, and the few /etc files that
    the dynamic linker and Python read (nothing else of /etc: no passwords, no host configuration)."""
    argv: list[str] = []
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                "/etc/alternatives", "/etc/nsswitch.conf", *extra_etc):
        if os.path.exists(etc):
            argv += ["--ro-bind", etc, etc]
    return argv


def _bwrap_argv(inner: list[str], env: dict[str, str], root: bool) -> list[str]:
    argv = [shutil.which(BWRAP) or BWRAP, "--die-with-parent", "--new-session",
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--hostname", "sandbox"]
    argv += system_mounts()
    # The private /tmp first: Python may live under /tmp (a venv in a fresh clone), and a later tmpfs
    # would hide it.
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    made: set[str] = set()
    for path in _python_dirs():
        if not any(path == t or path.startswith(t + "/") for t in ("/usr", "/bin", "/lib", "/lib64")):
            # bwrap creates missing parents as 0700: the unprivileged uid running student code could then
            # import nothing that was not preloaded (numpy.random, most of the standard library).
            for parent in reversed([str(p) for p in Path(path).parents if str(p) != "/"]):
                if parent not in made:
                    made.add(parent)
                    argv += ["--perms", "0755", "--dir", parent]
            argv += ["--ro-bind", path, path]
    argv += ["--chdir", "/tmp", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if root:
        argv += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN"):
            argv += ["--cap-add", cap]
    return argv + ["--"] + inner


def _cgroup_for(slot: int) -> str | None:
    """A pids cgroup directory we may create (root without bubblewrap), or None."""
    if os.geteuid() != 0:
        return None
    candidates = ["/sys/fs/cgroup/pids"]
    for base in candidates:
        if os.path.isfile(os.path.join(base, "cgroup.procs")) and os.access(base, os.W_OK):
            return os.path.join(base, "trous", f"{os.getpid()}-{slot}")
    v2 = "/sys/fs/cgroup"
    try:
        with open(os.path.join(v2, "cgroup.subtree_control")) as f:
            if "pids" in f.read().split() and os.access(v2, os.W_OK):
                return os.path.join(v2, "trous", f"{os.getpid()}-{slot}")
    except OSError:
        pass
    return None


def build(mode: str = "auto", slot: int = 0, preload: tuple[str, ...] = ("numpy",),
          processes: int = 32) -> SandboxSpec:
    """The command line of a runner for sandbox `mode` ("auto", "bwrap" or "fallback")."""
    use_bwrap = mode == BWRAP or (mode == "auto" and bwrap_available())
    if mode == BWRAP and not bwrap_available():
        raise RuntimeError("bubblewrap (bwrap) est demandé mais ne fonctionne pas sur cette machine")
    root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    env = dict(THREAD_ENV)
    if use_bwrap:
        env.update({"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp"})
        confinement = Confinement(run_as=SLOT_UID_BASE + slot if root else None, sweep=True)
        config = {"preload": list(preload), "confinement": confinement.to_json(), "workroot": "/tmp/runs"}
        inner = [sys.executable, "-I", "-m", "trous.runner.zygote", json.dumps(config)]
        return SandboxSpec(BWRAP, _bwrap_argv(inner, env, root), env, confinement)
    workroot = tempfile.mkdtemp(prefix="trous-runs-")
    env.update({"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workroot, "TMPDIR": workroot})
    if sys.platform == "win32":  # pragma: no cover
        env.update({k: v for k, v in os.environ.items() if k.upper() in ("SYSTEMROOT", "WINDIR")})
    cgroup = _cgroup_for(slot) if root else None
    confinement = Confinement(cgroup=cgroup)
    config = {"preload": list(preload), "confinement": confinement.to_json(), "workroot": workroot,
              "pids_max": processes + 4}
    argv = [sys.executable, "-I", "-m", "trous.runner.zygote", json.dumps(config)]
    return SandboxSpec(FALLBACK, argv, env, confinement, cleanup=[workroot], cgroup=cgroup)
