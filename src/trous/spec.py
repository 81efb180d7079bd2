"""The check language's stable import path for course files: `from trous.spec import blank, expect`.

Public checks (exercises/test_*.py) and hidden graders (graders/test_*.py) import from here (the
exceptions `eleve(...)` raises in a test function too); the implementation lives in trous.core.checks.
"""

from .core.checks import SOLUTION, Check, Expect, GraderMistake, StudentError, StudentStopped, Variant, blank, checks_in, expect, load_checks, load_module, variant

__all__ = ["SOLUTION", "Check", "Expect", "GraderMistake", "StudentError", "StudentStopped", "Variant", "blank",
           "checks_in", "expect", "load_checks", "load_module", "variant"]
