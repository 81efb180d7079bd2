"""The engine and the self-check on a notebook's bundle: each bundle written once as a one-exercise
course in a private directory; a `Grader` per bundle keeps its reference values (the solution runs once).
`for_grading`: the out-of-kernel grading of `VerifyGrades` during `nbgrader autograde`, one examiner per
nbgrader process (nbgrader grades notebooks one after the other), closed when the process ends.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
from functools import cache
from pathlib import Path

from ...check.selfcheck import ExerciseResult, interpret, prepare
from ...core.course import Exercise
from ...grade.engine import Grader
from ...core.grades import ExerciseGrade
from ...sandbox.pool import RunnerPool
from ...core.analysis import analyse_bytes
from ...sandbox.backend import choose
from ...inputs.bundle import Bundle, materialize


class Examiner:
    def __init__(self, sandbox: str = "auto", size: int = 1):
        self.sandbox, self.size = sandbox, size
        self.pool: RunnerPool | None = None
        self.root = Path(tempfile.mkdtemp(prefix="trous-carnets-"))
        self.exercises: dict[str, Exercise] = {}
        self.graders: dict[str, Grader] = {}
        self.cache: dict[tuple[str, str, str], object] = {}
        self.lock = threading.Lock()
        atexit.register(self.close)

    def _pool(self) -> RunnerPool:
        if self.pool is None:
            self.pool = RunnerPool(self.size, mode=self.sandbox)
        return self.pool

    def exercise(self, bundle: Bundle) -> Exercise:
        key = bundle.digest
        with self.lock:
            if key not in self.exercises:
                self.exercises[key] = materialize(bundle, self.root / key[:16])
            return self.exercises[key]

    def grade(self, bundle: Bundle, code: bytes) -> ExerciseGrade:
        """The engine's grade of `code` (the exercise's text rebuilt from the answer cells)."""
        if not bundle.hidden:
            raise ValueError("correction impossible : ces données d'exercice n'ont pas le correcteur caché")
        key = ("grade", bundle.digest, hashlib.sha256(code).hexdigest())
        if key not in self.cache:
            exercise = self.exercise(bundle)
            if bundle.digest not in self.graders:
                self.graders[bundle.digest] = Grader(exercise.course, self._pool())
            grade = self.graders[bundle.digest].grade("carnet", {exercise.id: code})
            self.cache[key] = grade.exercise(exercise.id)
        return self.cache[key]

    def check(self, bundle: Bundle, code: bytes) -> ExerciseResult:
        """The public self-check of `code`, as `pytest exercises/` and `trous check` report it."""
        key = ("check", bundle.digest, hashlib.sha256(code).hexdigest())
        if key not in self.cache:
            exercise = self.exercise(bundle)
            analysis = analyse_bytes(exercise, code, f"exercises/{exercise.id}.py")
            job, context = prepare(exercise, analysis)
            if context is None:
                result = job
            else:
                result = interpret(exercise, analysis, context, self._pool().run(job) if job.units else [])
            self.cache[key] = result
        return self.cache[key]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        shutil.rmtree(self.root, ignore_errors=True)


@cache
def for_grading(sandbox: str = "auto") -> Examiner:
    """VerifyGrades's examiner, in the sandbox of `trous grade`'s rules for `sandbox` (auto is bubblewrap,
    else SandboxRefused; sans-isolation only when asked, never as root)."""
    return Examiner(choose(sandbox))
