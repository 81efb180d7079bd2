"""First process inside the kernel's sandbox: set the bounds, drop to the kernel's user, then become
the kernel (`python -m trous.nbgrader_course.kernel_entry CONFIG -- KERNEL ARGV…`)."""

from __future__ import annotations

import json
import os
import resource
import sys

from ..runner.confine import PR_SET_NO_NEW_PRIVS, prctl


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
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_AS, int(settings["memory_mb"]) * 1024 * 1024)
    _limit(resource.RLIMIT_FSIZE, int(settings["file_mb"]) * 1024 * 1024)
    _limit(resource.RLIMIT_NOFILE, 1024)
    uid = settings.get("uid")
    if uid is not None and os.geteuid() == 0:
        _limit(resource.RLIMIT_NPROC, int(settings["processes"]))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.execv(kernel[0], kernel)


if __name__ == "__main__":
    main(sys.argv[1:])
