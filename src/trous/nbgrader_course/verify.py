"""The out-of-kernel grading used by `VerifyGrades` during `nbgrader autograde`: one examiner per
nbgrader process (nbgrader grades notebooks one after the other), closed when the process ends."""

from __future__ import annotations

from ..grading.model import ExerciseGrade
from .bundle import Bundle
from .examiner import Examiner
from .outcome import outputs_for

_examiners: dict[str, Examiner] = {}


def grade(bundle: Bundle, code: bytes, sandbox: str = "auto") -> ExerciseGrade:
    if sandbox not in _examiners:
        _examiners[sandbox] = Examiner(sandbox)
    return _examiners[sandbox].grade(bundle, code)


__all__ = ["grade", "outputs_for"]
