"""The check language's stable import path for course files (`from trous.spec import blank, expect`):
public checks and hidden graders import from here, whatever moves inside trous.core."""

from .core.checks import SOLUTION, Check, Expect, GraderMistake, StudentError, StudentStopped, Variant, blank, checks_in, expect, load_checks, load_module, variant

__all__ = ["SOLUTION", "Check", "Expect", "GraderMistake", "StudentError", "StudentStopped", "Variant", "blank",
           "checks_in", "expect", "load_checks", "load_module", "variant"]
