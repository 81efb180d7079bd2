"""How the runner process is started, and which isolation grading may use (`choose`, the rule of
every grading path: `trous grade`, nbgrader, Dask workers).

- ``bwrap``, the one isolation: a read-only system and Python, bounded tmpfs /tmp and /dev/shm
  (they count against the memory bound; the zygote empties them after each job), no network, no
  other process, nothing of the course (graders/, solutions/, the gradebook, the submissions).
- ``sans-isolation``: a plain process of the grader's user with resource limits only, on explicit
  request, never as root, and every page of results says so.
- ``limites`` (``fallback``, its old name): the same, for the self-check and `trous doctor`, which
  run one's own code on one's own machine. Grading never accepts it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import trous

from . import seccomp, uids
from ..core.protocol import Limits

BWRAP = "bwrap"
UNISOLATED = "sans-isolation"
LIMITS = "limites"
FALLBACK = "fallback"  # the old name of LIMITS (self-check, doctor, TROUS_SANDBOX)
REMOVED = "espaces"  # the hand-written namespaces runtime, gone: bubblewrap does its job
ISOLATED = (BWRAP,)
GRADING_MODES = ("auto", BWRAP, UNISOLATED)
PIDS_MAX = Limits.processes + 4  # the pids cgroup's bound: student code's, and room for the zygote and its kin
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")

INSTALL_HINT = ("Installez bubblewrap : « sudo apt-get install bubblewrap » (Debian, Ubuntu), « sudo dnf install "
                "bubblewrap » (Fedora), « sudo pacman -S bubblewrap » (Arch). S'il est installé mais ne démarre "
                "pas, le noyau refuse les espaces de noms utilisateur : « sudo sysctl "
                "kernel.unprivileged_userns_clone=1 », ou sur Ubuntu 24.04 un profil AppArmor pour bwrap ; dans "
                "un conteneur, autorisez-les (Docker : --security-opt seccomp=unconfined, ou corrigez en root).")
UNISOLATED_HINT = " Sur votre propre machine, pour du code de confiance et hors root : --sans-isolation."

THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "MPLBACKEND": "Agg",
    "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
}
BWRAP_ENV = {**THREAD_ENV, "PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp"}  # the runner's and the kernel's

DESCRIPTIONS = {
    BWRAP: "bubblewrap : système en lecture seule, sans réseau, sans accès au cours ni aux autres copies",
    UNISOLATED: ("SANS ISOLATION (--sans-isolation) : le code des étudiants tourne sous votre compte, avec de "
                 "simples limites de ressources ; il peut lire et modifier tout ce que ce compte peut lire ou "
                 "modifier (le cours, les corrigés, le carnet de notes, les résultats, les autres copies) et "
                 "arrêter la correction. Réservé à du code de confiance sur votre propre machine : chaque page "
                 "de résultats le signale."),
    LIMITS: "limites de ressources seulement (autovérification, doctor)",
}


class SandboxRefused(RuntimeError):
    """Grading cannot keep its promise on this machine, or in this mode: it does not start."""


@dataclass
class SandboxSpec:
    kind: str
    argv: list[str]
    env: dict[str, str]
    workroot: str | None = None  # a limits-only runner's private directory, removed when it stops
    cgroup: str | None = None
    lease: uids.Lease | None = None  # the host uid this sandbox's student code runs under (root only)

    @property
    def description(self) -> str:
        return DESCRIPTIONS.get(self.kind, self.kind)

    def release(self) -> None:
        if self.workroot:
            shutil.rmtree(self.workroot, ignore_errors=True)
            self.workroot = None
        if self.cgroup:
            with suppress(OSError):
                os.rmdir(self.cgroup)
            self.cgroup = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


# -- what works on this machine --------------------------------------------------------------------
def bwrap_available() -> bool:
    return _bwrap_problem() is None


def _bwrap_problem() -> str | None:
    path = shutil.which(BWRAP)
    if not sys.platform.startswith("linux"):
        return "bubblewrap n'existe que sous Linux"
    if not path:
        return "bubblewrap (bwrap) est introuvable"
    try:
        # --size (bubblewrap since late 2022): the bounded tmpfs need it.
        probe = subprocess.run([path, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                                "--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp", "true"],
                               capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ne démarre pas ({exc})"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        if said and "--size" in said[-1]:  # "Unknown option --size": some long-term distributions ship older
            return f"bubblewrap est trop ancien ({said[-1]}) : il faut une version qui connaît --size, qui borne /tmp"
        return f"bubblewrap ne démarre pas ({said[-1] if said else f'code {probe.returncode}'})"
    return None


def choose(requested: str = "auto") -> str:
    """The sandbox kind grading uses for `requested`, or SandboxRefused saying why and what to do
    (before any copy is read). bubblewrap without the seccomp filter is refused too."""
    if requested in (LIMITS, FALLBACK):
        raise SandboxRefused(
            f"le bac à sable « {requested} » (limites seules) sert à l'autovérification des élèves et à trous "
            "doctor, pas à corriger des copies : choisissez --bac-a-sable auto ou bwrap (ou, sur votre "
            "propre machine et jamais en root, --sans-isolation)")
    if requested == UNISOLATED:
        if _root():
            raise SandboxRefused(
                "--sans-isolation est refusé quand le correcteur tourne en root : le code des étudiants aurait tous "
                "les droits sur la machine. Corrigez avec bubblewrap (--bac-a-sable auto), ou lancez trous sous "
                "un compte ordinaire. " + INSTALL_HINT)
        return UNISOLATED
    if requested == REMOVED:
        raise SandboxRefused("le bac à sable « espaces » n'existe plus : trous isole avec bubblewrap seul "
                             "(--bac-a-sable auto ou bwrap). " + INSTALL_HINT)
    if requested not in ("auto", BWRAP):
        raise SandboxRefused(f"bac à sable inconnu « {requested} » (possibles : {', '.join(GRADING_MODES)})")
    problem = _bwrap_problem()
    if problem is None and (reason := seccomp.problem()) is not None:
        raise SandboxRefused(f"correction refusée : {reason}. Le code des étudiants tournerait sans le "
                             "filtre qui lui interdit les appels système dangereux (espaces de noms, "
                             "montages, ptrace…). Aucune copie n'a été lue.")
    if problem is None:
        return BWRAP
    if requested == BWRAP:
        raise SandboxRefused(f"--bac-a-sable bwrap : {problem}. " + INSTALL_HINT)
    raise SandboxRefused(f"correction refusée : aucune isolation n'est possible ici pour le code des étudiants "
                         f"({problem}). Aucune copie n'a été lue. " + INSTALL_HINT + UNISOLATED_HINT)


# -- the sandbox's file system, as bubblewrap options ------------------------------------------
def _python_dirs() -> list[str]:
    """What the runner must see to start Python and import trous and numpy, and nothing more."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(os.path.dirname(os.path.abspath(trous.__file__)))}  # where trous is
    # Site directories outside the prefixes (--system-site-packages) may hold numpy; never sys.path's
    # other entries (the current folder may hold a course).
    wanted.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    dirs = []
    for path in sorted({os.path.realpath(p) for p in wanted}):
        if path in ("/", "") or not os.access(path, os.R_OK | os.X_OK) or _looks_like_course(path):
            continue
        if not any(path.startswith(d + os.sep) for d in dirs):
            dirs.append(path)
    return dirs


def python_module(module: str, *args: str) -> list[str]:
    """`python -I -m module args…` that imports what the teacher's Python imports: -I ignores PYTHONPATH,
    so the mounted folders found only through it (a source tree not installed) are put back first."""
    mounted = set(_python_dirs())
    through = [os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    extra = list(dict.fromkeys(p for p in through if any(p == d or p.startswith(d + os.sep) for d in mounted)))
    if not extra:
        return [sys.executable, "-I", "-m", module, *args]
    boot = ("import json, runpy, sys; sys.path[:0] = json.loads(sys.argv.pop(1)); "
            "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")
    return [sys.executable, "-I", "-c", boot, json.dumps(extra), module, *args]


def _looks_like_course(path: str) -> bool:
    p = Path(path)  # never exposed: graders and solutions would be readable
    try:
        return any((p / name).exists() for name in ("course.yaml", "graders", "solutions"))
    except OSError:  # cannot tell: do not expose it
        return True


def system_mounts(extra_etc: tuple[str, ...] = ()) -> list[str]:
    """/usr and its kin, and the few /etc files that the dynamic linker and Python read (no passwords,
    no host configuration)."""
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


def tmpfs_bytes(memory_mb: int | None) -> tuple[int, int]:
    """Bytes of the sandbox's /tmp (the run folders) and /dev/shm."""
    memory = (memory_mb or Limits.memory_mb) * 1024 * 1024
    return max(memory // 4, 16 << 20), max(memory // 16, 4 << 20)


def _tmpfs(dest: str, size: int, perms: str = "0755") -> list[str]:
    return ["--perms", perms, "--size", str(size), "--tmpfs", dest]


def dev_mounts() -> list[str]:
    """A tiny tmpfs with the harmless devices bound in (bubblewrap's --dev would make an unbounded
    tmpfs that a student running as the grader's own uid could fill)."""
    argv = _tmpfs("/dev", 64 * 1024)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            argv += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        argv += ["--symlink", target, f"/dev/{name}"]
    return argv


def bwrap_argv(inner: list[str], env: dict[str, str], *, tmpfs: tuple[int, int], tmp_perms: str = "0755",
               hostname: str = "sandbox", extra_etc: tuple[str, ...] = (), mounts: list[tuple[str, ...]] = (),
               chdir: str = "/tmp", caps: tuple[str, ...] = (), new_session: bool = True) -> list[str]:
    """bubblewrap's command line for `inner`, the runner's and the nbgrader kernel's: `mounts` are
    options each ending with its destination; every tmpfs is bounded, the new root and /dev read-only
    once assembled. `caps`, as root: the only capabilities kept (not root, bubblewrap leaves none)."""
    tmp, shm = tmpfs
    argv = [shutil.which(BWRAP) or BWRAP, "--die-with-parent", *(["--new-session"] if new_session else []),
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--hostname", hostname, *system_mounts(extra_etc), "--proc", "/proc", *dev_mounts(),
            # The private /tmp first: Python may live under /tmp, and a later tmpfs would hide it.
            *_tmpfs("/tmp", tmp, tmp_perms), *_tmpfs("/dev/shm", shm, tmp_perms)]
    made = {"/tmp"}
    python = [("--ro-bind", path, path) for path in _python_dirs()
              if not any(path == t or path.startswith(t + "/") for t in ("/usr", "/bin", "/lib", "/lib64"))]
    for option in [*python, *mounts]:
        # Missing parents must be 0755: bwrap makes them 0700, out of the student uid's reach.
        for parent in reversed([str(p) for p in Path(option[-1]).parents if str(p) != "/"]):
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
        argv += option
        made.add(option[-1])
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", chdir, "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if caps:
        argv += ["--cap-drop", "ALL"]
        for cap in caps:
            argv += ["--cap-add", cap]
    return argv + ["--"] + inner


def _cgroup_for(slot: int) -> str | None:
    v1, v2, name = "/sys/fs/cgroup/pids", "/sys/fs/cgroup", f"{os.getpid()}-{slot}"
    if os.path.isfile(os.path.join(v1, "cgroup.procs")) and os.access(v1, os.W_OK):
        return os.path.join(v1, "trous", name)
    with suppress(OSError), open(os.path.join(v2, "cgroup.subtree_control")) as f:
        if "pids" in f.read().split() and os.access(v2, os.W_OK):
            return os.path.join(v2, "trous", name)
    return None


def build(mode: str = "auto", slot: int = 0, preload: tuple[str, ...] = ("numpy",),
          memory_mb: int | None = None) -> SandboxSpec:
    """A runner for sandbox `mode`: as `choose()` decides, or "limites" (self-check and doctor only)."""
    kind = LIMITS if mode in (LIMITS, FALLBACK) else choose(mode)
    root = _root()
    zygote = python_module("trous.sandbox.zygote")
    if kind == BWRAP:
        env = dict(BWRAP_ENV)
        lease = uids.Lease() if root else None  # the kernel counts processes per uid (uids.py)
        # `private`: alone in its pid, IPC and file namespaces, so the zygote may empty /tmp and /dev/shm.
        config = {"preload": list(preload), "run_as": lease.uids[0] if lease else None, "private": True,
                  "workroot": "/tmp/runs"}
        # As root the runner keeps what it needs to switch to the student's uid, signal and sweep its
        # processes, remove the files it left (no System V IPC: seccomp.py); student code keeps nothing.
        caps = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN") if root else ()
        argv = bwrap_argv(zygote + [json.dumps(config)], env, tmpfs=tmpfs_bytes(memory_mb), caps=caps)
        return SandboxSpec(kind, argv, env, lease=lease)
    workroot = tempfile.mkdtemp(prefix="trous-runs-")
    env = {**THREAD_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workroot, "TMPDIR": workroot}
    cgroup = _cgroup_for(slot) if root else None  # root without a uid switch: a pids cgroup bounds its processes
    config = {"preload": list(preload), "cgroup": cgroup, "workroot": workroot, "pids_max": PIDS_MAX}
    argv = zygote + [json.dumps(config)]
    return SandboxSpec(kind, argv, env, workroot=workroot, cgroup=cgroup)
