"""The out-of-kernel grading used by `VerifyGrades` during `nbgrader autograde`: one examiner per
nbgrader process (nbgrader grades notebooks one after the other), closed when the process ends."""

from __future__ import annotations

from ...core.grades import ExerciseGrade
from ...sandbox.backend import choose
from ...inputs.bundle import Bundle
from .examiner import Examiner

_examiners: dict[str, Examiner] = {}
_kinds: dict[str, str] = {}


def kind(sandbox: str = "auto") -> str:
    """The sandbox VerifyGrades grades in when asked for `sandbox`: the rules of `trous grade` (auto is
    bubblewrap, else SandboxRefused; sans-isolation only when asked, never as root)."""
    if sandbox not in _kinds:
        _kinds[sandbox] = choose(sandbox)
    return _kinds[sandbox]


def grade(bundle: Bundle, code: bytes, sandbox: str = "auto") -> ExerciseGrade:
    chosen = kind(sandbox)
    if chosen not in _examiners:
        _examiners[chosen] = Examiner(chosen)
    return _examiners[chosen].grade(bundle, code)

