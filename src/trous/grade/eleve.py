"""`eleve(expr, **variables)`: what a test function asks of the student's program, and what it gets.

The expression runs in the sandbox, the variables (the grader's data, written as Python text)
replacing top-level assignments as a variant's do. The value comes back as JSON data, rebuilt here
as plain values; nothing of the student's objects crosses (an object that is not data is an
`Unknown`), so the test's asserts, run in the grader's process, cannot be fooled by a value.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core import compare
from ..core.checks import GraderMistake, StudentError, StudentStopped
from ..core.protocol import ErrorInfo, ProbeResult, UnitResult

# NumPy is imported only when a value needs it (every student's `pytest exercises/` loads this module,
# and must not pay for NumPy at its start); optional for the pure-Python courses.
MAX_TEXT = 8 * 1024 * 1024  # the variables of one question, written as Python
RAISED = ("exception", "exit", "memory")  # errors raised by the student's own code


@dataclass(eq=False, slots=True)  # equal to nothing but itself
class Unknown:
    """A value the student's code returned that is not data: only its type's name came back."""

    type_name: str

    def __repr__(self) -> str:
        return f"<objet {self.type_name} : seul son type est revenu du bac à sable>"


# -- the grader's values, as Python text for the program --------------------------------------------
def as_expression(value: Any, name: str = "") -> str:
    """`value` written as a Python expression that rebuilds it in the student's program."""
    text = _expression(value, name, 0)
    if len(text) > MAX_TEXT:
        raise GraderMistake(f"eleve(...) : la variable « {name} » est trop grande pour être envoyée "
                            f"({len(text) // 1024} Kio écrits en Python, limite {MAX_TEXT // 1024} Kio)")
    return text


def _expression(value: Any, name: str, depth: int) -> str:
    if depth > 40:
        raise GraderMistake(f"eleve(...) : la variable « {name} » est trop imbriquée")
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return repr(value)
    if kind is float:
        return repr(value) if math.isfinite(value) else f"float('{value!r}')"
    if kind is complex:
        return f"complex({_expression(value.real, name, depth + 1)}, {_expression(value.imag, name, depth + 1)})"
    if kind is list:
        return "[" + ", ".join(_expression(v, name, depth + 1) for v in value) + "]"
    if kind is tuple:
        items = [_expression(v, name, depth + 1) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind is dict:
        return "{" + ", ".join(f"{_expression(k, name, depth + 1)}: {_expression(v, name, depth + 1)}"
                               for k, v in value.items()) + "}"
    if kind in (set, frozenset):
        items = sorted((_expression(v, name, depth + 1) for v in value))
        return f"{kind.__name__}([{', '.join(items)}])"
    _np = sys.modules.get("numpy")  # a NumPy value: NumPy is imported already
    if _np is not None:
        if kind is _np.ndarray and value.dtype.kind in "biufcU":
            # Through __import__: the program need not have imported numpy, nor under that name.
            return (f"__import__('numpy').array({_expression(value.tolist(), name, depth + 1)}, "
                    f"dtype={str(value.dtype)!r})")
        if isinstance(value, _np.generic) and value.dtype.kind in "biufc":
            return f"__import__('numpy').{kind.__name__}({_expression(value.item(), name, depth + 1)})"
    raise GraderMistake(f"eleve(...) : la variable « {name} » vaut un objet de type {kind.__name__}, qui ne s'écrit "
                        "pas en Python : donnez des nombres, des textes, des listes, des tuples, des dictionnaires "
                        "ou des tableaux NumPy")


# -- the student's values, as plain data for the test -----------------------------------------------
def as_value(data: Any) -> Any:
    """JSON data from the sandbox (checked by core/wire.py, read by the judge's decoder) as Python values."""
    return _rebuilt(compare.decode(data, arrays=True))


def _rebuilt(value: Any) -> Any:
    if isinstance(value, list):
        return [_rebuilt(v) for v in value]
    if isinstance(value, dict):
        return {k: _rebuilt(v) for k, v in value.items()}
    if isinstance(value, compare.Opaque):  # equal by type name in the judge; here equal to nothing
        return Unknown(value.type_name)
    if isinstance(value, compare.Array):
        return _array(value)
    return value


def _array(array: compare.Array):
    """An array rebuilt from the values it carries (a summary, which carries none, is an `Unknown`)."""
    if array.values is None:
        return Unknown("tableau NumPy")
    values = _rebuilt(array.values)
    try:
        import numpy as _np  # noqa: PLC0415 - only when a value needs it (see the imports)
    except ImportError:  # pragma: no cover - exercised only without numpy
        return values
    dtype = {"b": bool, "i": _np.int64, "u": _np.uint64, "f": _np.float64}.get(array.kind)
    try:
        if dtype is not None:
            return _np.array(values, dtype=dtype).reshape(array.shape)
        flat = _flatten(values, len(array.shape))
        if flat is None or len(flat) != math.prod(array.shape):
            return Unknown("tableau NumPy")
        rebuilt = _np.empty(len(flat), dtype=object)
        for i, item in enumerate(flat):
            rebuilt[i] = item
        return rebuilt.reshape(array.shape)
    except (ValueError, TypeError, IndexError, OverflowError):
        return Unknown("tableau NumPy")


def _flatten(values, ndim: int) -> list | None:
    """The items `ndim` levels down nested lists; None when a level is not a list."""
    level = [values]
    for _ in range(ndim):
        if not all(isinstance(row, list) for row in level):
            return None
        level = [item for row in level for item in row]
    return level


# -- eleve ------------------------------------------------------------------------------------------
Asker = Callable[[str, tuple[tuple[str, str], ...]], UnitResult]


class Eleve:
    """The `eleve` fixture's value: `eleve("normalise([1, 2])", x=[[1, 0]])`, or
    `eleve.call("normalise", scores)` to hand the test's own data to a function."""

    def __init__(self, ask: Asker, *, blank: str = ""):
        self._ask, self.blank = ask, blank

    def __repr__(self) -> str:
        return f"<eleve : le programme de l'élève, trou « {self.blank} »>"

    def __call__(self, expr: str, /, **variables: Any) -> Any:
        if not isinstance(expr, str):
            raise GraderMistake(f"eleve(...) attend une expression écrite comme un texte, pas {type(expr).__name__}")
        try:
            compile(expr, "<eleve>", "eval", dont_inherit=True)
        except SyntaxError as exc:
            raise GraderMistake(f"eleve({expr!r}) : ce n'est pas une expression Python ({exc.msg})") from None
        overrides = tuple((name, as_expression(value, name)) for name, value in variables.items())
        result = self._ask(expr, overrides)
        probe = result.probes[0] if result.probes else ProbeResult(evaluated=False)
        if probe.evaluated and probe.error is None:
            return as_value(probe.value)
        raise failure(expr, variables, result, probe)

    def call(self, function: str, /, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(function, str):
            raise GraderMistake(f"eleve.call(...) attend le nom de la fonction en texte, pas {type(function).__name__}")
        written = [as_expression(a, f"argument {n + 1}") for n, a in enumerate(args)]
        written += [f"{k}={as_expression(v, k)}" for k, v in kwargs.items()]
        return self(f"({function})({', '.join(written)})")


def failure(expr: str, variables: dict, result: UnitResult, probe: ProbeResult) -> BaseException:
    """Why `expr` gave no value, as the exception `eleve` raises (its text is for the teacher). A bound
    reached (memory, Python's stack), by the question or the run before it, is no answer, as a timeout."""
    shown = expr if len(expr) <= 160 else expr[:159] + "…"
    asked = f"eleve({shown!r}{''.join(f', {k}=…' for k in variables)})"
    error: ErrorInfo | None = probe.error if probe.evaluated and probe.error is not None else result.error
    if result.error is not None and _bound(result.error):
        error = result.error  # whatever the question gave after
    stopped_before = ""
    if result.status != "ok" and result.error is not None and error is not result.error:
        stopped_before = f" (le programme s'était arrêté avant : {_said(result.error)})"
    if error is not None and error.kind in RAISED and not _bound(error):
        return StudentError(f"{asked} : le programme lève {_said(error)}{stopped_before}", type=error.type,
                            message=error.message, kind=error.kind, line=error.line)
    if error is None:
        return StudentStopped(f"{asked} : pas de valeur ({result.status})", kind=result.status or "crash")
    return StudentStopped(f"{asked} : pas de valeur — {_said(error)}", kind=error.kind, message=error.message,
                          line=error.line, type=error.type)


def _bound(error: ErrorInfo) -> bool:
    return error.kind == "memory" or error.type == "RecursionError"


def _said(error: ErrorInfo) -> str:
    where = f" (ligne {error.line})" if error.line else ""
    if error.kind in RAISED and error.type:
        return (f"{error.type}: {error.message}" if error.message else error.type) + where
    return (error.message or error.kind) + where
