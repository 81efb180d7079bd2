"""A sandbox that lies: it speaks the zygote's protocol to the grader and answers every job with
bytes of the test's choosing, as a sandbox taken over by a copy could (the child's and the
supervisor's own checks are bypassed: nothing of the sandbox is trusted).

    python forged_sandbox.py SCRIPT    # JSON {"lines": [base64 …], "endless": bool, "hang_once": path, "freeze": bool}

A batch job gets every line, then {"done": true} unless `endless` (then bytes without end of line
until the grader stops reading). A session gets one line per question it asks. With `hang_once`, the
first sandbox started (the one that finds no file at that path, and makes it) answers nothing and
never ends its job, as a runner frozen by a copy. With `freeze`, a session whose lines are all sent
stops reading its questions but keeps its end open, as a supervisor a copy stopped (SIGSTOP).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import sys
import time


def _read_exact(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _write(fd: int, data: bytes) -> bool:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        return True
    except OSError:
        return False


def _answer(job_r: int, res_w: int, lines: list[bytes], endless: bool, freeze: bool = False) -> None:
    first = os.read(job_r, 1)
    if first == b"S":  # a session: a header frame, then one frame per question
        head = _read_exact(job_r, 4)
        _read_exact(job_r, struct.unpack("!I", head)[0])
        for line in lines:
            head = _read_exact(job_r, 4)
            if head is None or _read_exact(job_r, struct.unpack("!I", head)[0]) is None:
                return
            if endless:
                while _write(res_w, b"a" * 65536):
                    pass
                return
            if not _write(res_w, line + b"\n"):
                return
        while freeze:
            time.sleep(60)
        return
    while os.read(job_r, 1 << 16):  # the whole job, unread
        pass
    for line in lines:
        if not _write(res_w, line + b"\n"):
            return
    if endless:
        while _write(res_w, b"a" * 65536):
            pass
        return
    _write(res_w, b'{"done": true}\n')


def main() -> None:
    script = json.loads(open(sys.argv[1], encoding="utf-8").read())
    lines = [base64.b64decode(x) for x in script["lines"]]
    control = socket.socket(fileno=0)
    control.sendall(b"R")
    if script.get("hang_once") and not os.path.exists(script["hang_once"]):
        open(script["hang_once"], "w").close()
        while True:
            time.sleep(60)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 16, 4)
        except OSError:
            return
        if not message:
            return
        job_r, res_w = fds
        _answer(job_r, res_w, lines, bool(script.get("endless")), bool(script.get("freeze")))
        os.close(job_r)
        os.close(res_w)
        control.sendall(b"E")


if __name__ == "__main__":
    main()
