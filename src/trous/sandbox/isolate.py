"""Kernel isolation without bubblewrap: the runner in its own user, mount, pid, net, ipc and uts
namespaces, built with the unshare(2) system call (Python 3.11 has no os.unshare).

The sandbox gives the runner what bubblewrap gives it (see sandbox.py, which describes the file
system once, as a list of steps, for both): a new root holding read-only binds of the system and of
Python, a fresh /proc of its own pid namespace, a minimal /dev, size-bounded tmpfs for /tmp and
/dev/shm, no network, and nothing else of the host (no course, gradebook, results or other copy).

How it starts (`python -I -S isolate.py CONFIG`, run by path so that it imports only the standard
library: it stays alive beside every sandbox, so it must be small):

    launcher (host)  ── fork ──▶ child: unshare(NEWUSER|NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS[|NEWCGROUP])
        │ writes the child's uid_map/gid_map            │ fork
        │ (from outside: only a process of the          ▼
        │  parent namespace may map several ids)     init (pid 1 of the new pid namespace):
        ▼                                             mounts the new root, pivots into it, drops
    waits; exits with the sandbox's status            capabilities, execs the runner (the zygote)

User ids. When the grader is root, the sandbox's root is mapped to an unprivileged host uid of its
own, and student code to a second one (both leased, see uids.py): with a 0→0 mapping, root in the
new namespace would keep DAC override on every host file it can reach. The sandbox's root keeps only
the capabilities the runner needs (switching to the student's uid, signalling and cleaning after
it). When the grader is not root, the kernel allows one mapping only, the grader's own uid: the
runner and student code then share it, and neither holds any capability once the runner starts.

Each process dies with its parent (PR_SET_PDEATHSIG), like bubblewrap's --die-with-parent: killing
the launcher, or the grader that started it, takes the whole sandbox down.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_PRIVATE, MS_RELATIME = 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
# statvfs's flag bits are not mount(2)'s: the flags a remount must keep (the kernel refuses to
# clear nosuid, nodev, noexec or the atime mode of a mount that came from a more privileged namespace).
ST_TO_MS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME,
            4096: MS_RELATIME}

PR_CAPBSET_DROP, PR_SET_PDEATHSIG, PR_SET_SECUREBITS, PR_CAP_AMBIENT = 24, 1, 28, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522
CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_IPC_OWNER = 0, 1, 3, 5, 6, 7, 15
# What the runner (the sandbox's root) keeps when the grader is root: switch to the student's uid,
# signal and sweep its processes, remove what it left (files, System V IPC objects).
RUNNER_CAPABILITIES = (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_IPC_OWNER)
# Securebits, locked: uid 0 never regains capabilities through execve, ambient ones cannot be raised.
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
SECBIT_NO_CAP_AMBIENT_RAISE, SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED = 1 << 6, 1 << 7

STUDENT_UID = 1000  # the student's uid inside the namespace, when the grader is root
SETUP_FAILED = 125  # exit status when the sandbox cannot be built (the reason is on stderr)
BASE = "/tmp"  # where the new root is assembled, in the sandbox's own mount namespace only
PROC_COVERS = ("sys", "sysrq-trigger", "irq", "bus")  # read-only in the new /proc, as under bubblewrap
SYS_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203,
                  "ppc64": 203, "s390x": 217, "i686": 217, "i386": 217, "armv7l": 218}
SYS_CAPSET = {"x86_64": 126, "amd64": 126, "aarch64": 91, "arm64": 91, "riscv64": 91, "ppc64le": 184,
              "ppc64": 184, "s390x": 185, "i686": 185, "i386": 185, "armv7l": 185}

_libc_handle = None


class SetupError(OSError):
    pass


def _libc():
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None, use_errno=True)
    return _libc_handle


def _call(result: int, what: str) -> int:
    if result == -1:
        number = ctypes.get_errno()
        raise SetupError(number, f"{what} : {os.strerror(number)}")
    return result


def _bytes(text: str | None):
    return None if text is None else os.fsencode(text)


def unshare(flags: int) -> None:
    _call(_libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _call(_libc().mount(_bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), _bytes(data)),
          f"mount {target}")


def umount(target: str, flags: int = 0) -> None:
    _call(_libc().umount2(_bytes(target), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    libc = _libc()
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:  # glibc ≥ 2.36 has a wrapper; older ones only the raw system call
        if not hasattr(libc, "pivot_root"):
            raise SetupError(errno.ENOSYS, f"pivot_root : architecture {platform.machine()} inconnue")
        _call(libc.pivot_root(_bytes(new_root), _bytes(put_old)), "pivot_root")
        return
    _call(libc.syscall(ctypes.c_long(number), _bytes(new_root), _bytes(put_old)), "pivot_root")


def prctl(option: int, arg: int = 0, arg3: int = 0) -> int:
    return _libc().prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(arg3), ctypes.c_ulong(0),
                         ctypes.c_ulong(0))


# -- capabilities ----------------------------------------------------------------------------------
class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last one Linux 6.x knows


_LAST_CAPABILITY = _last_capability()  # read once: the zygote's children inherit it


def _capset(keep: tuple[int, ...]) -> int:
    mask = 0
    for cap in keep:
        mask |= 1 << cap
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0),
                          _CapData(mask >> 32, mask >> 32, 0))
    libc = _libc()
    number = SYS_CAPSET.get(platform.machine())
    if number is not None:
        return libc.syscall(ctypes.c_long(number), ctypes.byref(header), data)
    return libc.capset(ctypes.byref(header), data) if hasattr(libc, "capset") else -1


def drop_capabilities(keep: tuple[int, ...] = ()) -> bool:
    """Drop every capability but `keep`, from every set: effective, permitted, inheritable, ambient,
    and the bounding set where allowed (it needs CAP_SETPCAP, which a process that switched to an
    unprivileged uid no longer has: then its bounding set stays, empty-handed, and no_new_privs
    stops execve from granting anything). Returns whether the capability sets are now `keep`."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        _libc()
    except OSError:  # pragma: no cover - no C library to call
        return False
    # While CAP_SETPCAP is there: lock uid 0 out of regaining capabilities through execve.
    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE
          | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)
    for cap in range(_LAST_CAPABILITY + 1):
        if cap not in keep and prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() == errno.EPERM:
            break  # no CAP_SETPCAP: none of them can go (EINVAL, for one this kernel lacks, is fine)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    return _capset(keep) == 0


# -- the launcher (host side) ----------------------------------------------------------------------
def _die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _fail(message: str) -> None:
    try:
        os.write(2, f"trous-isolation : {message}\n".encode("utf-8", "replace"))
    finally:
        os._exit(SETUP_FAILED)


def _read_byte(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""


def _write_maps(pid: int, ids: dict | None) -> None:
    """From the parent namespace: only there may several ids be mapped (and only by root)."""
    base = f"/proc/{pid}"
    if ids:
        root, student = int(ids["root"]), int(ids["student"])
        uid_map = f"0 {root} 1\n{STUDENT_UID} {student} 1\n"
        gid_map = uid_map
    else:
        # Unprivileged: one mapping, our own ids; setgroups must be denied first (kernel rule).
        with open(f"{base}/setgroups", "w") as f:
            f.write("deny")
        uid_map = f"{os.geteuid()} {os.geteuid()} 1\n"
        gid_map = f"{os.getegid()} {os.getegid()} 1\n"
    with open(f"{base}/uid_map", "w") as f:
        f.write(uid_map)
    with open(f"{base}/gid_map", "w") as f:
        f.write(gid_map)


def _detach_stdin() -> None:
    # fd 0 is the runner's control socket: only the sandbox may hold it, or the grader would not see
    # the runner's end when it dies.
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def launch(config: dict) -> None:
    """The launcher: never returns (exits with the sandbox's status)."""
    _die_with_parent()
    up_r, up_w = os.pipe()  # child → launcher: "U" (namespaces made) or "E…" (could not)
    down_r, down_w = os.pipe()  # launcher → child: "M" (ids mapped)
    child = os.fork()
    if child == 0:
        try:
            os.close(up_r)
            os.close(down_w)
            _die_with_parent()
            _child(config, up_w, down_r)
        except BaseException as exc:  # noqa: BLE001 - report, never return into the launcher's code
            _fail(f"{type(exc).__name__}: {exc}")
        os._exit(SETUP_FAILED)
    os.close(up_w)
    os.close(down_r)
    _detach_stdin()
    if _read_byte(up_r) != b"U":
        os.waitpid(child, 0)
        os._exit(SETUP_FAILED)
    try:
        _write_maps(child, config.get("ids"))
        os.write(down_w, b"M")
    except OSError as exc:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        _fail(f"correspondance des identifiants refusée : {exc}")
    os.close(down_w)
    os.close(up_r)
    _, status = os.waitpid(child, 0)
    os._exit(_exit_code(status))


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _child(config: dict, up_w: int, down_r: int) -> None:
    flags = NAMESPACES | CLONE_NEWCGROUP
    try:
        unshare(flags)
    except SetupError as exc:
        if exc.errno != errno.EINVAL:
            os.write(up_w, b"E")
            _fail(f"espaces de noms refusés par le noyau ({exc.strerror})")
        try:  # a kernel without cgroup namespaces
            unshare(NAMESPACES)
        except SetupError as again:
            os.write(up_w, b"E")
            _fail(f"espaces de noms refusés par le noyau ({again.strerror})")
    os.write(up_w, b"U")
    if _read_byte(down_r) != b"M":
        os._exit(SETUP_FAILED)
    os.close(up_w)
    os.close(down_r)
    init = os.fork()  # the first child in the new pid namespace is its pid 1
    if init == 0:
        try:
            _die_with_parent()
            _init(config)
        except SetupError as exc:
            _fail(str(exc))
        except BaseException as exc:  # noqa: BLE001
            _fail(f"{type(exc).__name__}: {exc}")
        os._exit(SETUP_FAILED)
    _detach_stdin()
    _, status = os.waitpid(init, 0)
    os._exit(_exit_code(status))


# -- inside: the new root --------------------------------------------------------------------------
def _mount_flags(path: str) -> int:
    flags = 0
    try:
        found = os.statvfs(path).f_flag
    except OSError:
        return 0
    for st_bit, ms_bit in ST_TO_MS.items():
        if found & st_bit:
            flags |= ms_bit
    return flags


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \ooo
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _mounts_under(path: str) -> list[str]:
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = _unescape(line.split()[4])
            if point == path or point.startswith(path.rstrip("/") + "/"):
                found.append(point)
    return sorted(set(found), key=len)


def _read_only(path: str, extra: int = 0) -> None:
    """Make the mount at `path`, and every mount below it, read-only (keeping their locked flags)."""
    for point in _mounts_under(path):
        mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | extra | _mount_flags(point))


def _make_parents(path: str) -> None:
    parent = os.path.dirname(path)
    missing = []
    while parent and not os.path.isdir(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    for directory in reversed(missing):
        os.mkdir(directory, 0o755)


def _mount_point(path: str, directory: bool) -> None:
    _make_parents(path)
    if directory:
        if not os.path.isdir(path):
            os.mkdir(path, 0o755)
    elif not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _tmpfs(target: str, size: int, mode: int, inodes: int = 0) -> None:
    _make_parents(target)
    if not os.path.isdir(target):
        os.mkdir(target, 0o755)
    options = f"mode={mode:o},size={max(int(size), 4096)}" + (f",nr_inodes={inodes}" if inodes else "")
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def _bind(fd: int, target: str, directory: bool, read_only: bool) -> None:
    _mount_point(target, directory)
    # Through the descriptor opened before the ids changed: the source may sit in a directory that
    # only the grader's own uid can traverse (a venv under /root).
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    if read_only:
        _read_only(target, MS_NOSUID | MS_NODEV)


BINDS = ("ro-bind", "bind", "dev-bind")


def _open_sources(plan: list[dict]) -> dict[str, int]:
    sources = {}
    for src in [step["src"] for step in plan if step["op"] in BINDS]:
        if src not in sources:
            try:
                sources[src] = os.open(src, os.O_PATH | os.O_CLOEXEC)
            except OSError as exc:
                raise SetupError(exc.errno, f"{src} : {exc.strerror}") from None
    return sources


def _proc(target: str) -> None:
    _mount_point(target, True)
    mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_COVERS:
        path = f"{target}/{name}"
        if os.path.exists(path):
            mount(path, path, None, MS_BIND | MS_REC)
            _read_only(path, MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _apply(plan: list[dict], sources: dict[str, int]) -> None:
    ro_later: list[str] = []
    for step in plan:
        op, dest = step["op"], os.path.normpath(BASE + step["dest"])
        if op in BINDS:
            fd = sources[step["src"]]
            _bind(fd, dest, directory=os.path.isdir(f"/proc/self/fd/{fd}"), read_only=op == "ro-bind")
        elif op == "tmpfs":
            _tmpfs(dest, step["size"], step.get("mode", 0o755), step.get("inodes", 0))
        elif op == "dir":
            _make_parents(dest)
            if not os.path.isdir(dest):
                os.mkdir(dest)
            os.chmod(dest, step.get("mode", 0o755))
        elif op == "symlink":
            _make_parents(dest)
            os.symlink(step["src"], dest)
        elif op == "proc":
            _proc(dest)
        elif op == "remount-ro":
            ro_later.append(dest)  # once everything below it is in place
        else:
            raise SetupError(errno.EINVAL, f"étape inconnue : {op}")
    for path in ro_later:
        mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | _mount_flags(path))


def _init(config: dict) -> None:
    os.setsid()  # no controlling terminal: student code cannot push keystrokes into the teacher's shell
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates to the host
    plan = config["plan"]
    sources = _open_sources(plan)
    if config.get("ids"):
        # The sandbox's root (an unprivileged host uid) from now on: files and mounts made below belong
        # to it, and no process here is ever host root again.
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
    os.umask(0)
    # The new root is a small tmpfs holding only mount points (the plan makes it read-only at its end).
    _tmpfs(BASE, 4 * 1024 * 1024, 0o755, 4096)
    _apply(plan, sources)
    hostname = config.get("hostname", "sandbox").encode()
    _call(_libc().sethostname(hostname, ctypes.c_size_t(len(hostname))), "sethostname")
    for fd in sources.values():
        os.close(fd)
    os.chdir(BASE)
    pivot_root(".", ".")  # the old root ends up stacked below the new one…
    umount(".", MNT_DETACH)  # … and is gone
    os.chdir("/")
    keep = tuple(RUNNER_CAPABILITIES) if config.get("ids") else ()
    # The runner's bounding set: what it keeps as the sandbox's root (nothing when the grader is not
    # root: its uid is not root inside, so execve clears the rest).
    for cap in range(_last_capability() + 1):
        if cap not in keep:
            _call(prctl(PR_CAPBSET_DROP, cap), f"PR_CAPBSET_DROP {cap}")
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    os.umask(0o022)
    os.chdir(config.get("chdir", "/"))
    _die_with_parent()  # cleared by the change of ids above
    os.closerange(3, _max_fd())
    argv = config["argv"]
    os.execve(argv[0], argv, config.get("env", {}))


def _max_fd() -> int:
    try:
        return min(os.sysconf("SC_OPEN_MAX"), 65536)
    except (ValueError, OSError):
        return 4096


# -- the grader's side -----------------------------------------------------------------------------
def command(plan: list[dict], argv: list[str], env: dict[str, str], ids: dict | None, chdir: str = "/tmp",
            hostname: str = "sandbox") -> list[str]:
    """The command line that starts `argv` inside the sandbox described by `plan`.

    `ids`: {"root": uid, "student": uid}, the two unprivileged host uids the sandbox's root and the
    student's uid (STUDENT_UID inside) map to, when the grader is root; None otherwise."""
    config = {"plan": plan, "argv": argv, "env": env, "ids": ids, "chdir": chdir, "hostname": hostname}
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), json.dumps(config)]


if __name__ == "__main__":
    launch(json.loads(sys.argv[1]))
