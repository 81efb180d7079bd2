"""The out-of-kernel grading used by `VerifyGrades` during `nbgrader autograde`: one examiner per
nbgrader process (nbgrader grades notebooks one after the other), closed when the process ends."""

from __future__ import annotations

from functools import cache

from ...core.grades import ExerciseGrade
from ...sandbox.backend import choose
from ...inputs.bundle import Bundle
from .examiner import Examiner

@cache
def kind(sandbox: str = "auto") -> str:
    """The sandbox VerifyGrades grades in when asked for `sandbox`: the rules of `trous grade` (auto is
    bubblewrap, else SandboxRefused; sans-isolation only when asked, never as root)."""
    return choose(sandbox)


def grade(bundle: Bundle, code: bytes, sandbox: str = "auto") -> ExerciseGrade:
    return _examiner(kind(sandbox)).grade(bundle, code)


@cache
def _examiner(chosen: str) -> Examiner:
    return Examiner(chosen)

