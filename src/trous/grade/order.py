"""The order a class is graded in: every copy's files run as they are first, then the copies.

A copy whose program loops costs its exercise's wall time (8 s by default) on one runner, however
early or late it comes. Graded in the class's order, a loop in one of the last copies is where the
run ends: every other copy is done, and the machine waits for that one (on the class of 200 of
benchmarks/grade_class.py, one core idled for 3 to 4 s at the end). So the grading threads first
*scan* the class: each copy's files, run as they are, each within a few times what the reference
solution takes (engine.Grader.scan). Those are runs grading needs anyway: a file that ended by
itself gives the very result its copy's turn would get, and that turn takes it instead of running
the file again. A copy with a file that ran past its scan time is *suspect*: it is graded next,
before anything else, so that its loop, if it is one, runs while the rest of the class is scanned
and graded. The grades are the same in any order; only when they come changes.

Threads take work from one `Schedule`: suspects in the order they were found, then scans, then the
other copies in the class's order.
"""

from __future__ import annotations

import threading
from collections import deque


class Schedule:
    """What the next free grading thread does: ("scan", k), ("grade", k), or None when all is given out
    (or the run was stopped)."""

    def __init__(self, copies: int, scan: bool = True):
        self.scans = deque(range(copies)) if scan else deque()
        self.suspects: deque[int] = deque()
        self.waiting = deque(range(copies))
        self.lock = threading.Lock()
        self.stopped = False

    def next(self) -> tuple[str, int] | None:
        with self.lock:
            if self.stopped:
                return None
            if self.suspects:
                return "grade", self.suspects.popleft()
            if self.scans:
                return "scan", self.scans.popleft()
            if self.waiting:
                return "grade", self.waiting.popleft()
            return None

    def suspect(self, k: int) -> None:
        """Copy `k` ran past its scan time: graded before the copies still waiting (if it still waits)."""
        with self.lock:
            try:
                self.waiting.remove(k)
            except ValueError:
                return
            self.suspects.append(k)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
