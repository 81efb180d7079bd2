"""The seccomp filter around student code (sandbox/seccomp.py), three ways.

1. The program itself, run by a small classic-BPF interpreter written here: the architecture check,
   the x32 ABI, every refused call, clone's namespace flags, clone3, ordinary calls; and the call
   numbers against the kernel headers of this machine.
2. The real kernel, under the command line `python -m trous.sandbox.seccomp -- CMD`: every refused
   call answers EPERM (clone3 ENOSYS), a 32-bit or x32 call kills the process, and for calls whose
   arguments the kernel rejects before asking for any privilege, the answer without the filter is
   not EPERM: the EPERM comes from the filter, whoever runs the test.
3. Student code graded for real by `trous grade`, in bubblewrap and in the limits-only mode: one
   student per refused call loses exactly the blank that made the call, with the refusal named,
   and the honest students' results are those they get without the offenders; ordinary code
   (numpy, threads, fork, multiprocessing, subprocess, time, random, /proc/self) keeps working.

Every probe's arguments are harmless even if a call were let through (invalid flags, bad file
descriptors, null pointers, nothing to read): a broken filter fails these tests, it never reboots
the machine or unloads a module.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trous.core import blanks as blanks_mod
from trous.sandbox import seccomp
from trous.sandbox.pool import Runner
from trous.core.protocol import Job, Limits, Probe, Unit
from trous.sandbox.backend import bwrap_available

from grading_support import ROOT, mini_course, run_trous

ARCH = seccomp.current_arch()
needs_filter = pytest.mark.skipif(ARCH is None or not seccomp.available(),
                                  reason=f"pas de filtre seccomp ici : {seccomp.problem()}")
SECCOMP_CLI = [sys.executable, "-m", "trous.sandbox.seccomp"]

# What issue 10 and the task ask to refuse, written here independently of the module's own list.
REQUIRED = {
    "unshare", "setns", "mount", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "mount_setattr", "umount2", "pivot_root", "chroot", "ptrace", "process_vm_readv", "process_vm_writev",
    "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "open_by_handle_at", "name_to_handle_at", "acct", "swapon", "swapoff", "reboot",
    "settimeofday", "clock_settime", "adjtimex", "syslog", "quotactl", "shmget", "semget", "msgget",
}
REQUIRED_X86 = {"iopl", "ioperm"}

CLONE_NEWUSER = 0x10000000
SIGCHLD = 17
IPC_CREAT = 0o1000
SYSV_KEY = 0x7E500000 | (os.getpid() & 0xFFFF) << 2  # what the creation probes ask for: theirs alone
SELF, PARENT = "self", "parent"  # pids filled in by the probing process
# The flags of clone() that ask for a namespace (NEWTIME is for unshare and clone3 only: in clone()
# that bit belongs to the exit signal).
NAMESPACES = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
              "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
              "CLONE_NEWNET": 0x40000000}

# One attempt per refused call: (call, arguments). None is a null pointer.
PROBES: dict[str, tuple[str, tuple]] = {
    "unshare": ("unshare", (CLONE_NEWUSER,)),  # what issue 10 saw succeed inside the sandbox
    "setns": ("setns", (-1, 0)),
    "mount": ("mount", (None, None, None, 0, None)),
    "umount2": ("umount2", (None, 0xFFFF0000)),  # invalid flags
    "pivot_root": ("pivot_root", (None, None)),
    "chroot": ("chroot", (None,)),
    "fsopen": ("fsopen", (None, 0)),
    "fsconfig": ("fsconfig", (-1, 0, None, None, 0)),
    "fsmount": ("fsmount", (-1, 0, 0)),
    "fspick": ("fspick", (-1, None, 0)),
    "move_mount": ("move_mount", (-1, None, -1, None, 0)),
    "open_tree": ("open_tree", (-1, None, 0)),
    "open_tree_attr": ("open_tree_attr", (-1, None, 0, None, 0)),
    "mount_setattr": ("mount_setattr", (-1, None, 0, None, 0)),
    "ptrace": ("ptrace", (0,)),  # PTRACE_TRACEME
    "process_vm_readv": ("process_vm_readv", (PARENT, None, 0, None, 0, 0)),  # nothing to read
    "process_vm_writev": ("process_vm_writev", (PARENT, None, 0, None, 0, 0)),
    "pidfd_getfd": ("pidfd_getfd", (-1, -1, 0)),
    "process_madvise": ("process_madvise", (-1, None, 0, 0, 0)),
    "bpf": ("bpf", (-1, None, 0)),
    "perf_event_open": ("perf_event_open", (None, 0, -1, -1, 0)),
    "userfaultfd": ("userfaultfd", (0xFFFFFFFF,)),
    "io_uring_setup": ("io_uring_setup", (0, None)),
    "io_uring_enter": ("io_uring_enter", (-1, 0, 0, 0, None, 0)),
    "io_uring_register": ("io_uring_register", (-1, 0, None, 0)),
    "keyctl": ("keyctl", (0xFFFF,)),
    "add_key": ("add_key", (None, None, None, 0, 0)),
    "request_key": ("request_key", (None, None, None, 0)),
    "init_module": ("init_module", (None, 0, None)),
    "finit_module": ("finit_module", (-1, None, 0)),
    "delete_module": ("delete_module", (None, 0)),
    "kexec_load": ("kexec_load", (0, 0, None, 0xFFFFFFFF)),  # invalid flags
    "kexec_file_load": ("kexec_file_load", (-1, -1, 0, None, 0xFFFFFFFF)),
    "open_by_handle_at": ("open_by_handle_at", (-1, None, 0)),
    "name_to_handle_at": ("name_to_handle_at", (-1, None, None, None, 0)),
    "acct": ("acct", (1,)),  # an invalid address, not "stop accounting"
    "swapon": ("swapon", (None, 0)),
    "swapoff": ("swapoff", (None,)),
    "reboot": ("reboot", (0, 0, 0, None)),  # wrong magic numbers
    "settimeofday": ("settimeofday", (None, None)),
    "clock_settime": ("clock_settime", (-1, None)),
    "clock_adjtime": ("clock_adjtime", (-1, None)),
    "adjtimex": ("adjtimex", (None,)),
    "syslog": ("syslog", (9999, None, 0)),
    "quotactl": ("quotactl", (0, None, 0, None)),
    "quotactl_fd": ("quotactl_fd", (-1, 0, 0, None)),
    "sethostname": ("sethostname", (None, -1)),
    "setdomainname": ("setdomainname", (None, -1)),
    "vhangup": ("vhangup", ()),  # run without a controlling terminal
    "iopl": ("iopl", (4,)),
    "ioperm": ("ioperm", (0, 0, 0)),
    "modify_ldt": ("modify_ldt", (0, None, 0)),
    "uselib": ("uselib", (None,)),
    # System V IPC: creation, as the student of issue 10 did (a segment of 1 MiB); then ids that do not exist.
    "shmget": ("shmget", (SYSV_KEY, 1 << 20, IPC_CREAT | 0o600)),
    "semget": ("semget", (SYSV_KEY, 1, IPC_CREAT | 0o600)),
    "msgget": ("msgget", (SYSV_KEY, IPC_CREAT | 0o600)),
    "shmat": ("shmat", (-1, None, 0)),
    "shmdt": ("shmdt", (None,)),
    "shmctl": ("shmctl", (-1, 0, None)),
    "semop": ("semop", (-1, None, 0)),
    "semtimedop": ("semtimedop", (-1, None, 0, None)),
    "semctl": ("semctl", (-1, 0, 0, 0)),
    "msgsnd": ("msgsnd", (-1, None, 0, 0)),
    "msgrcv": ("msgrcv", (-1, None, 0, 0, 0)),
    "msgctl": ("msgctl", (-1, 0, None)),
    **{f"clone_{flag.lower()}": ("clone", (bit | SIGCHLD, 0, 0, 0, 0)) for flag, bit in NAMESPACES.items()},
    "clone3": ("clone3", (None, 0)),
}


def expected_errno(label: str) -> str:
    return "ENOSYS" if label == "clone3" else "EPERM"


# Probes whose arguments the kernel rejects (or finds nothing to do with) before it asks for any
# privilege: without the filter they never answer EPERM, whoever runs them. Harmless without the filter.
ARGUMENTS_FIRST: dict[str, tuple[str, tuple]] = {
    "unshare": ("unshare", (0,)),
    "setns": ("setns", (-1, 0)),
    "mount": ("mount", (None, None, None, 0, None)),
    "umount2": ("umount2", (None, 0xFFFF0000)),
    "chroot": ("chroot", (None,)),
    "open_tree": ("open_tree", (-1, None, 0)),
    "mount_setattr": ("mount_setattr", (-1, None, 0, None, 0)),
    "process_vm_readv": ("process_vm_readv", (SELF, None, 0, None, 0, 0)),
    "process_vm_writev": ("process_vm_writev", (SELF, None, 0, None, 0, 0)),
    "pidfd_getfd": ("pidfd_getfd", (-1, -1, 0)),
    "perf_event_open": ("perf_event_open", (None, 0, -1, -1, 0)),
    "keyctl": ("keyctl", (0xFFFF,)),
    "add_key": ("add_key", (None, None, None, 0, 0)),
    "request_key": ("request_key", (None, None, None, 0)),
    "clock_settime": ("clock_settime", (-1, None)),
    "adjtimex": ("adjtimex", (None,)),
    "quotactl_fd": ("quotactl_fd", (-1, 0, 0, None)),
    "shmget": ("shmget", (SYSV_KEY + 1, 4096, 0)),  # a key nobody uses, without IPC_CREAT: nothing is made
    "semget": ("semget", (SYSV_KEY + 1, 1, 0)),
    "msgget": ("msgget", (SYSV_KEY + 1, 0)),
    "shmctl": ("shmctl", (-1, 0, None)),
    "semctl": ("semctl", (-1, 0, 0, 0)),
    "msgctl": ("msgctl", (-1, 0, None)),
    "clone3": ("clone3", (None, 0)),
}

# The prober: each call in a fresh child (its own session, so no terminal to hang up), its outcome
# as a JSON object {label: "ok" | "EPERM" | ... | "signal N"}.
PROBER = textwrap.dedent('''
    import ctypes, errno, json, os, sys
    from trous.sandbox import seccomp
    numbers = seccomp.current_arch().numbers
    libc = ctypes.CDLL(None, use_errno=True)
    def attempt(call, args):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.setsid()
            values = [os.getpid() if a == "self" else os.getppid() if a == "parent" else (a or 0) for a in args]
            result = libc.syscall(ctypes.c_long(numbers[call]), *[ctypes.c_long(v) for v in values])
            if result == 0 and call == "clone":
                os._exit(0)  # the new process, had the call gone through
            code = ctypes.get_errno()
            os.write(w, ("ok" if result != -1 else errno.errorcode.get(code, str(code))).encode())
            os._exit(0)
        os.close(w)
        said = os.read(r, 64).decode()
        os.close(r)
        _, status = os.waitpid(pid, 0)
        return said or f"signal {os.WTERMSIG(status) if os.WIFSIGNALED(status) else '?'}"
    probes = json.loads(sys.argv[1])
    print(json.dumps({label: attempt(call, args) for label, (call, args) in probes.items() if call in numbers}))
''')


def probe(probes: dict[str, tuple[str, tuple]], filtered: bool, tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "prober.py"
    script.write_text(PROBER, encoding="utf-8")
    argv = [sys.executable, str(script), json.dumps(probes)]
    done = subprocess.run([*SECCOMP_CLI, "--", *argv] if filtered else argv, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def sysv_objects(key: int) -> list[tuple[str, int]]:
    """The System V IPC objects of this IPC namespace (the host's) made with `key`: (kind, id)."""
    found = []
    for kind in ("shm", "sem", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            continue
        found += [(kind, int(line.split()[1])) for line in lines if int(line.split()[0]) == key]
    return found


def remove_sysv(objects: list[tuple[str, int]]) -> None:
    """A failing test must not leave its objects on the host either (IPC_RMID)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ident in objects:
        {"shm": lambda: libc.shmctl(ident, 0, None), "sem": lambda: libc.semctl(ident, 0, 0),
         "msg": lambda: libc.msgctl(ident, 0, None)}[kind]()


# == 1. The program ====================================================================================
RET_KILL_PROCESS, RET_ALLOW, RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
AUDIT = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003, "arm": 0x40000028,
         "riscv64": 0xC00000F3, "ppc64le": 0xC0000015, "s390x": 0x80000016}
# Ordinary calls, from the kernel's tables (arch/x86/entry/syscalls/syscall_64.tbl, asm-generic/unistd.h).
ORDINARY = {
    "x86_64": {"read": 0, "write": 1, "close": 3, "mmap": 9, "mprotect": 10, "brk": 12, "rt_sigaction": 13,
               "ioctl": 16, "getpid": 39, "fork": 57, "vfork": 58, "execve": 59, "wait4": 61, "prctl": 157,
               "futex": 202, "clock_gettime": 228, "exit_group": 231, "openat": 257, "getrandom": 318,
               "seccomp": 317},
    "aarch64": {"ioctl": 29, "openat": 56, "close": 57, "read": 63, "write": 64, "exit_group": 94, "futex": 98,
                "clock_gettime": 113, "rt_sigaction": 134, "prctl": 167, "getpid": 172, "brk": 214,
                "execve": 221, "mmap": 222, "mprotect": 226, "wait4": 260, "seccomp": 277, "getrandom": 278},
}


def decode(arch: seccomp.Arch) -> list[tuple[int, int, int, int]]:
    """The program from the very bytes handed to the kernel."""
    blob = seccomp.program_bytes(arch)
    assert len(blob) % 8 == 0
    return [struct.unpack_from("=HBBI", blob, offset) for offset in range(0, len(blob), 8)]


def run_filter(program, nr: int, audit: int, args=(0, 0, 0, 0, 0, 0), counted: list | None = None) -> int:
    """Classic BPF as the kernel runs a seccomp filter: A loads 32-bit words of struct seccomp_data.
    `counted`, when given, receives the number of instructions run."""
    data = struct.pack("<IIQ6Q", nr & 0xFFFFFFFF, audit, 0x400000, *[a & (2 ** 64 - 1) for a in args])
    pc, acc, steps = 0, 0, 0
    while True:
        code, jt, jf, k = program[pc]  # an IndexError is a jump out of the program
        steps += 1
        assert steps <= len(program), "the program loops"
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            assert k % 4 == 0 and k + 4 <= len(data), k
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:  # BPF_JGE
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x25:  # BPF_JGT
            pc += 1 + (jt if acc > k else jf)
        elif code == 0x45:  # BPF_JSET
            pc += 1 + (jt if acc & k else jf)
        elif code == 0x06:  # BPF_RET | BPF_K
            if counted is not None:
                counted.append(steps)
            return k
        else:
            raise AssertionError(f"opcode {code:#x} unknown to this interpreter")


@pytest.fixture(params=sorted(seccomp.ARCHES))
def arch(request) -> seccomp.Arch:
    return seccomp.ARCHES[request.param]


def test_the_program_is_valid_classic_bpf(arch):
    program = decode(arch)
    assert 0 < len(program) <= 4096  # BPF_MAXINSNS
    assert program[-1][0] == 0x06, "a program ends with a return"
    for index, (code, jt, jf, _) in enumerate(program):
        if code & 0x07 == 0x05:  # jumps stay inside the program
            assert index + 1 + max(jt, jf) < len(program)


def test_every_call_is_decided_in_a_few_instructions(arch):
    """The kernel runs the filter for every call number each time a process loads it (once per
    student process): a search, not a chain of 70 comparisons."""
    program = decode(arch)
    counted: list[int] = []
    for nr in range(600):
        run_filter(program, nr, arch.audit, (NAMESPACES["CLONE_NEWUSER"],) * 6, counted)
    assert max(counted) <= 20, max(counted)


def test_a_foreign_architecture_is_killed_whatever_the_call(arch):
    program = decode(arch)
    ordinary = ORDINARY[arch.name]
    for name, audit in AUDIT.items():
        if name == arch.name:
            continue
        for nr in (ordinary["read"], ordinary["write"], ordinary["exit_group"], 0, 272, 97, 435):
            assert run_filter(program, nr, audit) == RET_KILL_PROCESS, (name, nr)


def test_x32_calls_are_killed_on_x86_64():
    program = decode(seccomp.ARCHES["x86_64"])
    audit = AUDIT["x86_64"]
    for nr in (0, 1, 39, 272, 56, 435, 0x200, 0x3FFFFFFF - 0x40000000 + 0x40000000):
        assert run_filter(program, 0x40000000 | nr, audit) == RET_KILL_PROCESS, nr
    # -1 is no call at all (a tracer skipping one): the kernel answers ENOSYS by itself.
    assert run_filter(program, -1, audit) == RET_ALLOW


def test_every_required_call_is_refused_with_eperm(arch):
    program = decode(arch)
    required = REQUIRED | (REQUIRED_X86 if arch.name == "x86_64" else set())
    refused = set(arch.denied())
    assert required <= refused, sorted(required - refused)
    for name, nr in arch.denied().items():
        assert run_filter(program, nr, arch.audit, (1, 2, 3, 4, 5, 6)) == RET_ERRNO | errno.EPERM, name


def test_ordinary_calls_are_allowed(arch):
    program = decode(arch)
    for name, nr in ORDINARY[arch.name].items():
        for args in ((0,) * 6, (2 ** 64 - 1,) * 6, (CLONE_NEWUSER,) * 6):
            assert run_filter(program, nr, arch.audit, args) == RET_ALLOW, name
    # And nothing else is refused than what the module lists: every number up to 500 not listed is allowed.
    listed = {*arch.denied().values(), arch.numbers["clone"], arch.numbers["clone3"]}
    for nr in range(500):
        if nr not in listed:
            assert run_filter(program, nr, arch.audit) == RET_ALLOW, nr


def test_clone_is_refused_only_with_a_namespace_flag(arch):
    program = decode(arch)
    clone = arch.numbers["clone"]
    for flag, bit in NAMESPACES.items():
        for flags in (bit | SIGCHLD, bit, bit | 0x3D0F00, (0xFFFF << 32) | bit | SIGCHLD):
            assert run_filter(program, clone, arch.audit, (flags, 0, 0, 0, 0, 0)) == RET_ERRNO | errno.EPERM, flag
    allowed = {"fork": SIGCHLD, "thread (glibc pthread_create)": 0x3D0F00,
               "vfork (posix_spawn, subprocess)": 0x4000 | 0x100 | SIGCHLD, "no flags": 0}
    for what, flags in allowed.items():
        assert run_filter(program, clone, arch.audit, (flags, 0, 0, 0, 0, 0)) == RET_ALLOW, what


def test_clone3_answers_enosys(arch):
    program = decode(arch)
    for args in ((0,) * 6, (0x1000, 88, 0, 0, 0, 0)):
        assert run_filter(program, arch.numbers["clone3"], arch.audit, args) == RET_ERRNO | errno.ENOSYS


HEADERS = {"x86_64": ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"],
           "aarch64": ["/usr/include/asm-generic/unistd.h"]}


def test_call_numbers_agree_with_the_kernel_headers(arch):
    path = next((Path(p) for p in HEADERS[arch.name] if Path(p).is_file()), None)
    if path is None:
        pytest.skip("en-têtes du noyau absents (paquet linux-libc-dev)")
    defined = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", path.read_text())}
    compared = {name: nr for name, nr in arch.numbers.items() if name in defined}
    assert {name: defined[name] for name in compared} == compared
    # open_tree_attr (Linux 6.15) may be newer than these headers; everything else must be there.
    assert set(arch.numbers) - set(compared) <= {"open_tree_attr"}, set(arch.numbers) - set(compared)
    for name, nr in ORDINARY[arch.name].items():
        assert defined[name] == nr, name


# == 2. The real kernel, under the command line ===========================================================
def test_every_probe_is_listed():
    """Adding a call to the filter means adding a probe here."""
    for arch in seccomp.ARCHES.values():
        assert set(arch.denied()) <= {call for call, _ in PROBES.values()}


@needs_filter
def test_every_listed_call_is_refused_under_the_command_line(tmp_path):
    try:
        outcomes = probe(PROBES, filtered=True, tmp_path=tmp_path)
        assert not sysv_objects(SYSV_KEY), "a System V object was created"
    finally:
        remove_sysv(sysv_objects(SYSV_KEY))
    expected = {label: expected_errno(label) for label, (call, _) in PROBES.items() if call in ARCH.numbers}
    assert outcomes == expected
    assert {call for call, _ in PROBES.values()} >= set(ARCH.denied())


@needs_filter
def test_the_refusal_comes_from_the_filter(tmp_path):
    """Without the filter these calls answer something else than EPERM (their arguments are checked
    before any privilege), for root as for anyone; under it, EPERM (clone3: ENOSYS)."""
    free = probe(ARGUMENTS_FIRST, filtered=False, tmp_path=tmp_path)
    assert not sysv_objects(SYSV_KEY + 1)
    assert not {label for label, said in free.items() if said == "EPERM"}, free
    filtered = probe(ARGUMENTS_FIRST, filtered=True, tmp_path=tmp_path)
    assert filtered == {label: expected_errno(label) for label in free}


ABI_PROBE = textwrap.dedent('''
    import ctypes, mmap, os, sys
    if sys.argv[1] == "x32":  # getpid (39) through the x32 table
        result = ctypes.CDLL(None, use_errno=True).syscall(ctypes.c_long(0x40000000 | 39))
    else:  # getpid (20) through the i386 table: mov eax, 20; int 0x80; ret
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3]))
        result = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
    print("pid" if result == os.getpid() else f"answer {result}")
''')


@needs_filter
@pytest.mark.skipif(ARCH is None or ARCH.name != "x86_64", reason="x86_64 seulement")
@pytest.mark.parametrize("abi", ["x32", "i386"])
def test_a_call_through_another_abi_kills_the_process(tmp_path, abi):
    script = tmp_path / "abi.py"
    script.write_text(ABI_PROBE, encoding="utf-8")
    free = subprocess.run([sys.executable, str(script), abi], capture_output=True, text=True, timeout=60)
    if abi == "i386" and free.returncode != 0:
        pytest.skip(f"pas d'émulation 32 bits dans ce noyau (code {free.returncode})")
    assert free.returncode == 0, free.stderr  # x32 answers the pid, or ENOSYS where the kernel lacks it
    filtered = subprocess.run([*SECCOMP_CLI, "--", sys.executable, str(script), abi], capture_output=True,
                              text=True, timeout=60)
    assert filtered.returncode == -signal.SIGSYS, (filtered.returncode, filtered.stdout, filtered.stderr)


@needs_filter
def test_the_filter_survives_exec_and_fork(tmp_path):
    code = ("import ctypes, os, subprocess, sys\n"
            "status = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')]\n"
            "grandchild = subprocess.run([sys.executable, '-c', "
            "\"import ctypes; l = ctypes.CDLL(None, use_errno=True); "
            f"print(l.syscall({ARCH.numbers['unshare']}, {CLONE_NEWUSER}), ctypes.get_errno())\"], "
            "capture_output=True, text=True).stdout.split()\n"
            "print(status, grandchild)\n")
    done = subprocess.run([*SECCOMP_CLI, "--", sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"['2'] ['-1', '{errno.EPERM}']"


def test_command_line_errors_are_explained_in_french(tmp_path):
    missing = subprocess.run([*SECCOMP_CLI, "--", str(tmp_path / "absent")], capture_output=True, text=True,
                             timeout=60)
    if ARCH is not None and seccomp.available():
        assert missing.returncode == 127
        assert "impossible de lancer" in missing.stderr
    else:
        assert missing.returncode == 125 and "seccomp" in missing.stderr
    nothing = subprocess.run(SECCOMP_CLI, capture_output=True, text=True, timeout=60)
    assert nothing.returncode == 2 and "indiquez une commande" in nothing.stderr


@needs_filter
def test_command_line_passes_arguments_and_exit_status():
    done = subprocess.run([*SECCOMP_CLI, "--", sys.executable, "-c", "import sys; print(sys.argv[1:]); "
                           "sys.exit(7)", "--liste", "-- x"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (7, "['--liste', '-- x']")


@needs_filter
def test_listing_names_every_refused_call():
    done = subprocess.run([*SECCOMP_CLI, "--liste"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    listed = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[1:]}
    for name in REQUIRED:
        assert listed[name][1] == "EPERM", name
    assert listed["clone3"][1] == "ENOSYS" and "CLONE_NEWUSER" in " ".join(listed["clone"])


# -- when the kernel will not take the filter ------------------------------------------------------------
@needs_filter
def test_a_kernel_that_refuses_the_filter_is_reported(tmp_path):
    """The kernel caps the instructions of the filters stacked on a process: past it, every further
    filter is refused (ENOMEM). In such a process, install() raises and problem() says why."""
    script = tmp_path / "full.py"
    script.write_text(textwrap.dedent('''
        import json
        from trous.sandbox import seccomp
        loaded = 0
        error = None
        while loaded < 2000 and error is None:
            try:
                seccomp.install()
                loaded += 1
            except seccomp.SeccompError as exc:
                error = str(exc)
        try:
            seccomp.require()
            required = None
        except seccomp.SeccompError as exc:
            required = str(exc)
        print(json.dumps({"loaded": loaded, "error": error, "available": seccomp.available(),
                          "required": required}))
    '''), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert 1 <= report["loaded"] < 2000
    assert "le noyau refuse le filtre seccomp" in report["error"] and "ENOMEM" in report["error"]
    assert report["available"] is False
    assert "le noyau refuse le filtre seccomp" in report["required"]


def test_an_unknown_architecture_has_no_filter(monkeypatch):
    real = os.uname()
    fake = type(real)((real.sysname, real.nodename, real.release, real.version, "riscv64"))
    monkeypatch.setattr(os, "uname", lambda: fake)
    seccomp.problem.cache_clear()
    try:
        assert seccomp.current_arch() is None
        assert seccomp.install() is False
        assert seccomp.available() is False
        assert "riscv64" in seccomp.problem() and "x86_64 et aarch64" in seccomp.problem()
        with pytest.raises(seccomp.SeccompError, match="pas de filtre seccomp"):
            seccomp.require()
    finally:
        seccomp.problem.cache_clear()


@needs_filter
def test_this_machine_applies_the_filter():
    assert seccomp.problem() is None and seccomp.available()
    seccomp.require()


# == 3. Student code, graded for real =====================================================================
# The isolated sandbox that grades (bubblewrap) and the limits-only runner of the self-check: the
# filter holds in each.
MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap absent")),
         "limites"]
EXERCISES = ("01_toux", "03_masque")
LIMITS = "\nlimits:\n  wall: 5\n  memory_mb: 512\n  processes: 16\n"


def attack_fill(call: str, args: tuple, number: int | None = None) -> str:
    """A fill for 01_toux's `somme_exp` that makes the call through ctypes: the right value when the
    call goes through, else an exception whose type names the refusal (Refus_EPERM…)."""
    number = ARCH.numbers[call] if number is None else number
    values = "".join(", c.c_long(__import__('os').getppid())" if a == PARENT else
                     ", c.c_long(__import__('os').getpid())" if a == SELF else f", c.c_long({a or 0})" for a in args)
    outcome = "sum(e)"
    if call == "clone":  # had it gone through, the new process would leave at once
        outcome = "(__import__('os')._exit(0) if r == 0 else sum(e))"
    return ("(lambda c: (lambda r, err: " + outcome + " if r != -1 else "
            "(_ for _ in ()).throw(type('Refus_' + __import__('errno').errorcode.get(err, str(err)), "
            "(Exception,), {})()))"
            f"(c.CDLL(None, use_errno=True).syscall(c.c_long({number}){values}), c.get_errno()))"
            "(__import__('ctypes'))")


@pytest.fixture(scope="module")
def class_course(tmp_path_factory) -> Path:
    root = mini_course(tmp_path_factory.mktemp("cours-seccomp") / "cours", EXERCISES)
    with open(root / "course.yaml", "a", encoding="utf-8") as f:
        f.write(LIMITS)
    return root


def _solution(course: Path, exercise: str) -> str:
    return (course / "solutions" / f"{exercise}.py").read_text(encoding="utf-8")


def _with_fill(course: Path, fill: str) -> str:
    template = (course / "exercises" / "01_toux.py").read_text(encoding="utf-8")
    solution = _solution(course, "01_toux")
    return blanks_mod.splice(solution, blanks_mod.align(template, solution), {0: fill})


def write_class(folder: Path, course: Path, students: dict[str, str]) -> Path:
    for student, toux in students.items():
        (folder / student / "exercises").mkdir(parents=True)
        (folder / student / "exercises" / "01_toux.py").write_text(toux, encoding="utf-8")
        (folder / student / "exercises" / "03_masque.py").write_text(_solution(course, "03_masque"), encoding="utf-8")
    return folder


def grade(course: Path, copies: Path, mode: str) -> dict[str, dict]:
    results = copies.parent / f"{copies.name}-resultats"
    done = run_trous("-C", str(course), "grade", str(copies), "--resultats", str(results), "--bac-a-sable", mode,
                     cwd=course)
    assert done.returncode == 0, done.stdout + done.stderr
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (results / "results").glob("*.json")}


def honest_students(course: Path) -> dict[str, str]:
    template = (course / "exercises" / "01_toux.py").read_text(encoding="utf-8")
    return {"parfait": _solution(course, "01_toux"), "moitie": _with_fill(course, "len(e)"), "debutant": template}


@needs_filter
@pytest.mark.parametrize("mode", [m for m in MODES if m != "limites"])
def test_each_refused_call_costs_only_the_student_who_made_it(class_course, tmp_path, mode):
    honest = honest_students(class_course)
    alone = grade(class_course, write_class(tmp_path / "honnetes", class_course, honest), mode)
    probes = {label: spec for label, spec in PROBES.items() if spec[0] in ARCH.numbers}
    attackers = {f"pirate_{label}": _with_fill(class_course, attack_fill(*spec)) for label, spec in probes.items()}
    try:
        results = grade(class_course, write_class(tmp_path / "classe", class_course, {**honest, **attackers}), mode)
        assert not sysv_objects(SYSV_KEY), "a System V object was left on the host"
    finally:
        remove_sysv(sysv_objects(SYSV_KEY))
    assert set(results) == set(honest) | set(attackers), "the batch did not finish"
    for student in honest:
        assert results[student] == alone[student], f"{student}'s result changed"
    assert alone["parfait"]["score"] == alone["parfait"]["max_score"] == 4.0
    for label in probes:
        result = results[f"pirate_{label}"]
        toux = result["exercises"][0]
        blanks = {b["id"]: b for b in toux["blanks"]}
        assert toux["mode"] == "blanks", (label, toux)
        assert blanks["somme_exp"]["score"] == 0.0, (label, blanks["somme_exp"])
        assert f"Refus_{expected_errno(label)}" in blanks["somme_exp"]["message"], (label, blanks["somme_exp"])
        assert blanks["scores"]["score"] == blanks["nouveau"]["score"] == 1.0, (label, blanks)
        assert result["exercises"][1]["score"] == 1.0, label


def test_the_attack_fill_earns_the_blank_when_the_call_goes_through(class_course, tmp_path):
    """The other side of the test above: the same fill around a call the filter allows (getpid)
    gives the right value, so a refusal is what made the attackers lose their blank."""
    if ARCH is None:
        pytest.skip("architecture inconnue du filtre")
    source = _with_fill(class_course, attack_fill("getpid", (), ORDINARY[ARCH.name]["getpid"]))
    results = grade(class_course, write_class(tmp_path / "classe", class_course, {"temoin": source}), "auto")
    assert results["temoin"]["score"] == 4.0, results["temoin"]


ORDINARY_CODE = textwrap.dedent('''
    import concurrent.futures, multiprocessing, os, random, subprocess, sys, threading, time
    import numpy as np

    def square(v):
        return v * v

    rng = np.random.default_rng(7)
    m = rng.random((60, 60)) + 60 * np.eye(60)
    solved = np.linalg.solve(m, np.arange(60.0))
    linalg = [round(float(np.abs(m @ solved - np.arange(60.0)).max()), 9),
              round(float(np.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 9),
              [round(float(s), 6) for s in np.linalg.svd(np.array([[3.0, 0.0], [0.0, 4.0]]))[1]],
              [round(float(v), 6) for v in sorted(np.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])))]]

    seen = []
    workers = [threading.Thread(target=seen.append, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        pooled = sorted(pool.map(square, range(5)))

    child = os.fork()
    if child == 0:
        os._exit(11)
    forked = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    # multiprocessing's way: a forked Process talking through a Pipe (its locks and pools need a
    # writable /dev/shm, which the sandbox does not give when the grader runs as root).
    receiving, sending = multiprocessing.Pipe(duplex=False)
    worker = multiprocessing.get_context("fork").Process(target=lambda: sending.send([square(v) for v in range(6)]))
    worker.start()
    processes = receiving.recv()
    worker.join()
    joined = worker.exitcode
    python = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True).stdout.strip()
    shell = subprocess.run(["sh", "-c", "echo $((2 + 3))"], capture_output=True, text=True).stdout.strip()

    start = time.monotonic()
    time.sleep(0.05)
    slept = time.monotonic() - start >= 0.05
    clocks = sorted(name for name in ("monotonic", "perf_counter", "process_time", "thread_time", "time")
                    if time.get_clock_info(name).resolution > 0)
    random.seed(3)
    drawn = [random.randint(1, 100) for _ in range(3)]
    urandom = len(os.urandom(16))
    status = {key: value.strip() for key, _, value in (line.partition(":") for line in open("/proc/self/status"))}
    own = (status["Seccomp"], int(status["Pid"]) == os.getpid(), len(open("/proc/self/maps").read()) > 0,
           os.readlink("/proc/self/exe") == os.path.realpath(sys.executable))
''')


def ordinary_expected() -> dict[str, object]:
    """What the same code gives here, in the test's own process, unfiltered (numbers computed, not typed)."""
    import random  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(7)
    m = rng.random((60, 60)) + 60 * np.eye(60)
    solved = np.linalg.solve(m, np.arange(60.0))
    random.seed(3)
    return {
        "linalg": [round(float(np.abs(m @ solved - np.arange(60.0)).max()), 9), 5.0, [4.0, 3.0], [1.0, 3.0]],
        "sorted(seen)": [0, 1, 2, 3], "pooled": [0, 1, 4, 9, 16], "forked": 11, "processes": [0, 1, 4, 9, 16, 25],
        "joined": 0, "python": "42", "shell": "5", "slept": True,
        "clocks": ["monotonic", "perf_counter", "process_time", "thread_time", "time"],
        "drawn": [random.randint(1, 100) for _ in range(3)], "urandom": 16,
        "own": ["2", True, True, True],
    }


@needs_filter
@pytest.mark.parametrize("mode", MODES)
def test_ordinary_student_code_keeps_working(mode):
    expected = ordinary_expected()
    unit = Unit(ORDINARY_CODE, "ordinaire.py", tuple(Probe(expr) for expr in expected))
    with Runner(mode) as runner:
        result = runner.run(Job((unit,), Limits(wall=30, processes=16)))[0]
    assert result.status == "ok", result.error
    got = {expr: _plain(probe.value) for expr, probe in zip(expected, result.probes)}
    assert got == expected


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value
