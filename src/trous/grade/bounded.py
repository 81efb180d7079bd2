"""Bounds of the teacher's own processes while they handle a copy's data.

A graders' test function runs as the teacher, outside the sandbox (in a test worker, testworker.py,
or in `pytest graders/ --copie`), on a copy's values: a loop over a number the copy chose, a matrix
built from its shape. Passing a bound costs the copy that test, never the class's run:
- memory: `limit_memory` lowers the soft address-space limit to what the process maps now plus the
  course's memory bound; an allocation past it raises MemoryError in the test;
- time: `CpuBudget` raises `TestOverrun` into the test once it used that many seconds of CPU
  (`held` keeps it out of the grader's own code); a test that blocks is the caller's wall clock's.
"""

from __future__ import annotations

import contextlib
import resource
import signal

MIB = 1 << 20
PATIENCE = 60.0  # seconds a test's own code (not the student's) may run before it is called stuck


class TestOverrun(BaseException):
    """A test used up its time on a copy. A BaseException: the test's own `except Exception` must
    not swallow it."""

    __test__ = False

    def __init__(self, seconds: float):
        super().__init__(f"le test a dépassé {seconds:g} s de calcul")
        self.seconds = seconds


def mapped() -> int:
    """Bytes this process maps now (what RLIMIT_AS counts)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def limit_memory(megabytes: int | None) -> tuple[int, int] | None:
    """Allow this process `megabytes` more than it maps now (soft limit only: a process it starts
    may raise its own again). The previous limits, to restore; None when nothing was changed."""
    if not megabytes or megabytes <= 0:
        return None
    try:
        before = resource.getrlimit(resource.RLIMIT_AS)
        wanted = mapped() + megabytes * MIB
        soft, hard = before
        if soft != resource.RLIM_INFINITY and soft <= wanted:
            return None  # already tighter
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
        return before
    except (ValueError, OSError):
        return None


@contextlib.contextmanager
def memory(megabytes: int | None):
    """`limit_memory` for the duration of a block."""
    before = limit_memory(megabytes)
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, before)


class CpuBudget:
    """Within the block, `seconds` of this process's CPU; past them, TestOverrun is raised where
    the main thread is, unless inside `held()` (then as soon as it leaves it)."""

    current: "CpuBudget | None" = None

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.holds = 0
        self.due = False
        self.previous = None

    def __enter__(self) -> "CpuBudget":
        if self.seconds and self.seconds > 0 and hasattr(signal, "setitimer"):
            self.previous = signal.signal(signal.SIGPROF, self._fire)
            signal.setitimer(signal.ITIMER_PROF, self.seconds)
            CpuBudget.current = self
        return self

    def __exit__(self, *exc) -> None:
        if CpuBudget.current is self:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.previous or signal.SIG_DFL)
            CpuBudget.current = None

    def _fire(self, signum, frame) -> None:
        if self.holds:
            self.due = True
            return
        raise TestOverrun(self.seconds)

    @classmethod
    @contextlib.contextmanager
    def held(cls):
        """No TestOverrun in this block (the grader's own code: asking the sandbox, reading its answer)."""
        budget = cls.current
        if budget is None:
            yield
            return
        budget.holds += 1
        try:
            yield
        finally:
            budget.holds -= 1
            if budget.due and not budget.holds:
                budget.due = False
                raise TestOverrun(budget.seconds)
