"""A self-check session: one runner, launched early (while pytest collects), jobs sent ahead to run
in one thread while the caller interprets those done, so the student's code and the verdicts use
both cores. The runner and the checking code are imported only when needed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from ..core.course import preload_for


class Checker:
    """One runner, not one per core: a second zygote costs more than it saves (benchmarks/pytest_exercises.py)."""

    def __init__(self):
        from ..sandbox.pool import Runner  # noqa: PLC0415

        self.runner = Runner(os.environ.get("TROUS_SANDBOX", "fallback"))
        self.cache: dict = {}  # exercise id → ExerciseResult
        self._pending: dict = {}  # exercise id → (analysis, context, Future of the unit results)
        # The lane: the one thread that talks to the runner, jobs run in the order they are sent.
        self._lane: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def launch(self, exercises: Iterable) -> None:
        modules = preload_for(list(exercises), as_needed=True)
        with self._lock:
            if self._lane is None and not self._closed:
                if self.runner.process is None:  # what these exercises need, rather than the runner's guess
                    self.runner.preload = ()
                self.runner.want(modules)
                self._lane = ThreadPoolExecutor(1, thread_name_prefix="trous-autoverification")
                # numpy imports in the runner meanwhile; a failed start stays in this future nobody reads:
                # the first job's start() tries again, and says why.
                self._lane.submit(self.runner.launch)

    def _run(self, job, modules: tuple[str, ...]):
        runner = self.runner
        if callable(job):  # work that needs the runner to itself (a session), done in its turn
            return job(runner)
        if runner.process is not None and not set(modules) <= set(runner.preload):
            # A module a check needs (torch…) is installed but not preloaded: importing it once in a new
            # zygote costs less than importing it in every run.
            runner.close()
        if runner.process is None:
            runner.want(modules)
        return runner.run(job)

    # -- exercises ------------------------------------------------------------------------------
    def submit(self, exercise) -> None:
        from ..core.checks import load_checks  # noqa: PLC0415
        from ..core.analysis import analyse_path  # noqa: PLC0415
        from .selfcheck import prepare  # noqa: PLC0415

        if self._lane is None:
            self.launch(exercise.course.exercises)
        with self._lock:
            if exercise.id in self.cache or exercise.id in self._pending or self._closed:
                return
            checks = load_checks(exercise.checks_path) if exercise.checks_path.exists() else []
            analysis = analyse_path(exercise, exercise.path)
            job, context = prepare(exercise, analysis, checks)
            if context is None:  # nothing can run (unreadable file, syntax error): the verdicts are known
                self.cache[exercise.id] = job
                return
            if job.units:
                results = self._lane.submit(self._run, job, preload_for([exercise], {exercise.id: checks}, as_needed=True))
            else:
                results = Future()
                results.set_result([])
            self._pending[exercise.id] = (analysis, context, results)

    def check(self, exercise, refresh: bool = False):
        """`refresh`: read the file again."""
        from ..grade.testworker import test_files  # noqa: PLC0415
        from .selfcheck import apply_test_functions, interpret  # noqa: PLC0415

        if self._closed:
            raise RuntimeError("autovérification déjà fermée")
        if refresh:
            with self._lock:
                self.cache.pop(exercise.id, None)
                self._pending.pop(exercise.id, None)
        if exercise.id not in self.cache:
            self.submit(exercise)
            with self._lock:
                pending = self._pending.pop(exercise.id, None)
            if pending is not None:
                analysis, context, results = pending
                result = interpret(exercise, analysis, context, results.result())
                # The public checks' test functions, in the lane's turn; whether there are any is checked
                # here: the lane may hold other exercises' jobs sent ahead, not to be waited for.
                if test_files([exercise], public_only=True):
                    tests = partial(apply_test_functions, exercise=exercise, analysis=analysis, result=result)
                    self._lane.submit(self._run, tests, ()).result()
                self.cache[exercise.id] = result
        return self.cache[exercise.id]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._pending.clear()
            lane = self._lane
        if lane is not None:
            lane.shutdown(wait=False, cancel_futures=True)  # jobs not started are dropped
            # A job sent ahead may be running (an endless loop takes its whole time limit): ended now,
            # from this thread, and no new sandbox starts for the rest of it.
            self.runner.interrupt()
            lane.shutdown()
        self.runner.close()

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
