"""First process inside the kernel's sandbox, which becomes the kernel:

    python -m trous.publish.nbgrader.kernel_entry CONFIG -- python -m ipykernel_launcher -f … [args]

It leads its own process group (interrupts reach the kernel, never bubblewrap), sets the bounds and,
as root, binds the sockets as the kernel's uid (root kept as saved id to close the socket directory
after), then drops root for good before any cell runs.
"""

from __future__ import annotations

import json
import os
import resource
import sys

from ...sandbox import seccomp
from ...sandbox.seccomp import PR_SET_NO_NEW_PRIVS, prctl


def _limit(kind: int, value: int) -> None:
    try:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        pass


def main(argv: list[str]) -> None:
    config, separator, *kernel = argv
    if separator != "--" or not kernel:
        raise SystemExit("usage : kernel_entry CONFIG -- KERNEL ARGV")
    settings = json.loads(config)
    os.setpgid(0, 0)  # the kernel interrupts this group itself (interrupt_request: kernel.py)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_AS, int(settings["memory_mb"]) * 1024 * 1024)
    _limit(resource.RLIMIT_FSIZE, int(settings["file_mb"]) * 1024 * 1024)
    _limit(resource.RLIMIT_NOFILE, 1024)
    uid = settings.get("uid")
    as_root = uid is not None and os.geteuid() == 0
    if as_root:
        _limit(resource.RLIMIT_NPROC, int(settings["processes"]))
        os.setgroups([])
        os.setresgid(uid, uid, 0)
        os.setresuid(uid, uid, 0)
    if kernel[1:3] != ["-m", "ipykernel_launcher"]:
        if as_root:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        seccomp.install()  # inherited through exec: the kernel's code gets the grading runs' filter
        os.execv(kernel[0], kernel)
    sys.argv = [kernel[0], *kernel[3:]]
    from ipykernel.kernelapp import IPKernelApp  # noqa: PLC0415

    app = IPKernelApp.instance()
    app.initialize(kernel[3:])  # binds the sockets, as the kernel's user
    if as_root:
        os.setresuid(-1, 0, -1)
        os.chmod(settings["sockets"], 0o750)
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    seccomp.install()  # as trous grade's runs: no namespaces, mounts, ptrace, bpf… for the students' code
    app.start()


if __name__ == "__main__":
    main(sys.argv[1:])
