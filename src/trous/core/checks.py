"""The check model: what is checked of a blank, in public checks (exercises/) and hidden graders
(graders/). Two kinds of item, judged by one judge (judge.py) in the self-check as in the grade: a
declared expectation (`Expect`) and a test function (`TestInfo`; one run of it: `TestResult`). A check
module is ordinary Python that pytest collects (the trous plugin makes each `Check` a test item):

    scores = blank("scores",
        expect("scores", [1, 1, 2]),                                            # the course's value
        expect("scores", SOLUTION, variants=[variant("autres", x="[[2, 1]]")]),  # graders: the solution's
    )

Values come back as JSON and are compared outside the student's process; a variant replaces
top-level assignments (`x = ...`) before the program runs. A plain pytest test tied to a blank by
`@pytest.mark.trou("somme_exp", points=1)` asks values with the `eleve` fixture.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .encode import encode
from .protocol import ErrorInfo


class _Solution:
    def __repr__(self) -> str:
        return "SOLUTION"


SOLUTION: Any = _Solution()  # expected value: whatever the reference solution gives


@dataclass(frozen=True)
class Variant:
    description: str
    overrides: tuple[tuple[str, str], ...]
    hidden: bool = True  # feedback names the variant but does not show its inputs


def variant(description: str, *, shown: bool = False, **overrides: Any) -> Variant:
    """Other inputs: each keyword is a top-level variable; its value a Python expression (str) or a literal."""
    if not overrides:
        raise ValueError("une variante doit remplacer au moins une variable")
    pairs = tuple((name, value if isinstance(value, str) else repr(value)) for name, value in overrides.items())
    return Variant(description, pairs, hidden=not shown)


@dataclass(frozen=True)
class Expect:
    expr: str
    expected: Any = SOLUTION
    variant: Variant | None = None
    decimals: int | None = None  # compare as the course rounds: within half a unit of the last decimal
    rtol: float | None = None
    atol: float | None = None
    setup: str | None = None
    message: str | None = None  # said when this expectation fails (French)
    label: str | None = None  # how feedback names the value (default: the expression)
    hidden: bool = False  # a hidden grader's: feedback names it by its description, never its expression

    @property
    def uses_solution(self) -> bool:
        return self.expected is SOLUTION

    @property
    def name(self) -> str:
        return self.label or self.expr

    @property
    def overrides(self) -> tuple:
        return self.variant.overrides if self.variant else ()

    @property
    def description(self) -> str:
        return self.label or "une vérification cachée"


def expect(expr: str, expected: Any = SOLUTION, *, variants: Iterable[Variant] | None = None,
           variant: Variant | None = None, decimals: int | None = None, rtol: float | None = None,
           atol: float | None = None, setup: str | None = None, message: str | None = None,
           label: str | None = None) -> Expect | list[Expect]:
    """What `expr` must give; with `variants=`, one expectation per variant."""
    common = dict(decimals=decimals, rtol=rtol, atol=atol, setup=setup, message=message, label=label)
    if expected is not SOLUTION:
        expected = encode(expected)  # as values come back: a NumPy array stays an array (its kind counts)
    if variants is not None:
        return [Expect(expr, expected, variant=v, **common) for v in variants]
    return Expect(expr, expected, variant=variant, **common)


@dataclass(frozen=True)
class Check:
    blank: str
    expects: tuple[Expect, ...]
    requires: tuple[str, ...] = ()  # modules without which this check is skipped (e.g. "torch")
    name: str = ""  # set when loaded: the module attribute holding it


def blank(blank_id: str, *expects: Expect | list[Expect], requires: Iterable[str] = ()) -> Check:
    flat = [e for item in expects for e in (item if isinstance(item, list) else [item])]
    if not flat:
        raise ValueError(f"le trou « {blank_id} » n'a aucune attente")
    return Check(blank_id, tuple(flat), tuple(requires))


def checks_in(namespace: dict) -> list[Check]:
    return [replace(v, name=name) for name, v in namespace.items() if isinstance(v, Check)]


def load_module(path: str | Path):
    """Import a check module by path (graders are not importable packages)."""
    path = Path(path).resolve()
    name = f"trous_checks.{path.stem}_{abs(hash(str(path))) % 10**8}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"impossible d'importer {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_checks(path: str | Path) -> list[Check]:
    return checks_in(vars(load_module(path)))


# -- test functions: the other kind of item ----------------------------------------------------------
@dataclass(frozen=True)
class TestInfo:
    """A test function of a course's test file, as the graders' pytest plugin collected it."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    nodeid: str
    path: str  # relative to the course's root
    name: str  # the item's name (with its parameters' ids)
    exercise: str | None
    blank: str | None
    hidden: bool
    description: str  # French: what a student reads of it (never its parameters)
    problem: str | None = None  # why grading refuses it

    @property
    def label(self) -> str:
        return f"{'vérification cachée' if self.hidden else 'vérification'} « {self.description} »"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "TestInfo":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})


# The student's code gave no answer for one of these: a matter of this run, not of the program.
TRANSIENT = ("timeout", "crash", "skipped", "start", "channel", "output", "protocol", "files")


@dataclass
class TestResult:
    """What one run of a test function did, on the reference or on a copy."""

    __test__ = False

    test: TestInfo
    outcome: str  # "passed", "failed", "skipped" or "bug"
    cause: str = ""  # failed: "assert", "student", "stopped", "reading", "overrun"; bug: "bug"
    info: dict = field(default_factory=dict)
    detail: str = ""  # for the teacher: pytest's own report of the failure
    asked: int = 0
    ran: bool = True  # False: not run, the program having already hung or crashed, or no time left
    cpu: float = 0.0  # seconds of CPU the test used in its worker

    @classmethod
    def of(cls, test: TestInfo, done: dict) -> "TestResult":
        info = done.get("info") if isinstance(done.get("info"), dict) else {}
        cpu = done.get("cpu")
        return cls(test, str(done.get("outcome", "bug")), str(done.get("cause", "")), info,
                   str(done.get("detail", "")), int(done.get("asked") or 0),
                   cpu=float(cpu) if type(cpu) in (int, float) and cpu >= 0 else 0.0)

    @classmethod
    def stopped(cls, test: TestInfo, error: ErrorInfo | None) -> "TestResult":
        error = error or ErrorInfo("skipped", message="non exécuté")
        return cls(test, "failed", "stopped", {"kind": error.kind, "message": error.message, "line": error.line,
                                               "type": error.type}, ran=False)

    @property
    def definitive(self) -> bool:
        """The same program would give the same result again (worth keeping for another copy)."""
        if self.outcome == "bug" or self.cause == "overrun":
            return False
        return not (self.cause == "stopped" and self.info.get("kind") in TRANSIENT)


# -- what `eleve(...)` raises in a test function ---------------------------------------------------
class StudentError(Exception):
    """The student's code raised while computing what a test asked (`with pytest.raises(StudentError)`):
    `type` is the exception's class name (« ValueError »), `message` its text."""

    def __init__(self, text: str, *, type: str = "", message: str = "", kind: str = "exception",
                 line: int | None = None):
        super().__init__(text)
        self.type, self.message, self.kind, self.line = type, message, kind, line


class StudentStopped(BaseException):
    """The student's code gave no answer (its time, memory or Python's stack: `type` « RecursionError »,
    a crash, its output or files, the copy's time spent, a program that does not run). A BaseException:
    a test that expects a refusal (`pytest.raises(StudentError)`, or `Exception`) never passes on it."""

    def __init__(self, text: str, *, kind: str = "crash", message: str = "", line: int | None = None, type: str = ""):
        super().__init__(text)
        self.kind, self.message, self.line, self.type = kind, message, line, type


class GraderMistake(Exception):
    """The test itself misuses `eleve` (not an expression, a variable that cannot be written in
    Python…): a bug of the grader, never the student's fault."""
