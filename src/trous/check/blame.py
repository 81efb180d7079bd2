"""Which blank to blame: from how each expectation went and the exercise's data flow (core/flow.py),
say of each blank whether it is right, wrong, waiting for another one, or to be looked at first.

A failing expectation blames its own blank or one whose result reaches it:
- one that depends on its blank alone decides for it;
- a failure involving a blank already wrong or unfilled is explained by it: the other *depends*;
- an error at some line can only come from blanks whose results reach that line; a value never
  computed because the program stopped is the fault of what reaches the stop;
- a blank whose result reached a passing check on numbers, without the accused blank, on the same
  inputs (and not itself in doubt there), is vouched for;
- among the rest, the blank that processes the failing value last is the suspect, the upstream-most
  blamed first; a suspect whose own checks pass is « à revoir », not « faux ».
A blank is right only when all its checks passed, none through a result wrong on those inputs;
otherwise it *depends* on that blank (or is *not reached*).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.flow import Flow

PASSED, FAILED, UNFILLED, DEPENDS, SUSPECT = "passed", "failed", "unfilled", "depends", "suspect"
NOT_REACHED = "not_reached"  # its checks read no other blank, but the program stopped before them


@dataclass(frozen=True)
class Outcome:
    blank: int
    ok: bool
    depends: frozenset[int] = frozenset()  # the other blanks its value depends on
    line: int | None = None  # the line of the student's file where it failed with an error
    values: frozenset[int] = frozenset()  # the blanks that reach it through values the program computed
    numbers: bool = True  # it compares numbers (not only True/False): passing says something
    stopped: bool = False  # never computed: the program stopped (at `line`) before getting there
    unit: int = 0  # the run it was evaluated in: the same inputs as the other outcomes of that run
    flow: Flow | None = None  # the flow of that run's program (a variant cuts what it replaces)
    check: str = ""  # what it evaluates: the same check on other inputs has the same text


@dataclass
class Decision:
    status: str | None  # None: no expectation ran for this blank (the caller says why)
    causes: tuple[int, ...] = ()  # DEPENDS: the blanks it waits for; SUSPECT: whose checks fail
    evidence: list[Outcome] = field(default_factory=list)  # SUSPECT: the failures that point at it


def suspects(outcome: Outcome, flow: Flow) -> frozenset[int]:
    flow = outcome.flow or flow
    everyone = frozenset({outcome.blank}) | outcome.depends
    if outcome.line is None:
        return everyone
    if outcome.stopped:
        # Not computed at all: whatever made the program stop at that line is to blame.
        return flow.could_stop(outcome.line) or everyone
    possible = everyone - flow.cannot_cause(outcome.line)
    return possible or everyone


def _cleared(outcome: Outcome, passing: list[Outcome], same_inputs: bool) -> set[int]:
    """The blanks whose results reached a passing check on numbers that does not involve the failing
    `outcome`'s blank (`same_inputs`: in the outcome's own run)."""
    return {b for other in passing if other.numbers and other.blank != outcome.blank
            and outcome.blank not in other.depends and (not same_inputs or other.unit == outcome.unit)
            for b in other.values}


class Doubts:
    """Blanks whose computed value may be wrong: a check of their own that reads it failed. On other
    inputs, that value is vouched for only by the same checks passing there."""

    def __init__(self, outcomes: list[Outcome]):
        self.failed: dict[int, set[str]] = {}
        self.units: set[tuple[int, int]] = set()
        self.passed: dict[tuple[int, int], set[str]] = {}
        for o in outcomes:
            if o.blank not in o.values:
                continue
            if o.ok:
                self.passed.setdefault((o.blank, o.unit), set()).add(o.check)
            else:
                self.failed.setdefault(o.blank, set()).add(o.check)
                self.units.add((o.blank, o.unit))

    def right_on(self, blank: int, unit: int) -> bool:
        """Can its value on these inputs be trusted? Its checks that fail elsewhere pass here."""
        if blank not in self.failed:
            return True
        return (blank, unit) not in self.units and self.failed[blank] <= self.passed.get((blank, unit), set())


def _narrowed(outcome: Outcome, flow: Flow, passing: list[Outcome], doubts: Doubts) -> frozenset[int]:
    """Its suspects but those right on the same inputs: a passing check cleared them, their value there
    not in doubt."""
    found = suspects(outcome, flow)
    return (found - {b for b in _cleared(outcome, passing, True) if doubts.right_on(b, outcome.unit)}) or found


def decide(count: int, unfilled: Iterable[int], outcomes: list[Outcome], flow: Flow) -> list[Decision]:
    unfilled = set(unfilled)
    failing = [o for o in outcomes if not o.ok and o.blank not in unfilled]
    passing = [o for o in outcomes if o.ok]
    doubts = Doubts(outcomes)
    suspected = {id(o): _narrowed(o, flow, passing, doubts) for o in failing}
    has_failure = {o.blank for o in failing}
    bad: dict[int, str] = {i: UNFILLED for i in unfilled}
    for outcome in failing:
        if suspected[id(outcome)] == {outcome.blank}:
            bad[outcome.blank] = FAILED
    evidence: dict[int, list[Outcome]] = {}
    while True:
        # Failures a wrong or unfilled blank explains are settled first; only the others are weighed.
        open_ = [o for o in failing if not suspected[id(o)] & bad.keys()]
        if not open_:
            break
        picks: dict[int, list[Outcome]] = {}
        for outcome in open_:
            vouched = _cleared(outcome, passing, False) & outcome.depends  # its other blanks a passing check clears
            candidates = (suspected[id(outcome)] - vouched) or suspected[id(outcome)]
            last = flow.last_processors(candidates)
            # Among equally late suspects, one whose own checks fail is the likelier one.
            pick = next((b for b in last if b in has_failure), last[0])
            picks.setdefault(pick, []).append(outcome)
        roots = [c for c in picks if not any(flow.feeds(o, c) and not flow.feeds(c, o) for o in picks if o != c)]
        for culprit in roots:
            bad[culprit] = FAILED if culprit in has_failure else SUSPECT
            evidence[culprit] = picks[culprit]
    # Blanks wrong on the values the program computes: a check that passes through one proves little.
    wrong = {i for i, status in bad.items() if status != UNFILLED and i in doubts.failed}
    decisions = []
    for index in range(count):
        mine = [o for o in outcomes if o.blank == index]
        if index in unfilled:
            decisions.append(Decision(UNFILLED))
        elif bad.get(index) == FAILED:
            decisions.append(Decision(FAILED))
        elif bad.get(index) == SUSPECT:
            others = sorted({o.blank for o in evidence.get(index, [])} - {index})
            decisions.append(Decision(SUSPECT, tuple(others), evidence.get(index, [])))
        elif not mine:
            decisions.append(Decision(None))
        else:
            decisions.append(_waiting_or_right(index, mine, suspected, bad, wrong, doubts))
    return decisions


def _waiting_or_right(index: int, mine: list[Outcome], suspected: dict, bad: dict[int, str], wrong: set[int],
                      doubts: Doubts) -> Decision:
    """Not itself to blame: it waits for the blanks its failures (or passes through a wrong result) come from."""
    data: set[int] = set()
    reach: set[int] = set()
    for o in mine:
        if not o.ok:
            causes = (suspected[id(o)] & bad.keys()) - {index}
            data |= causes & o.depends
            reach |= causes - o.depends
        else:
            data |= {b for b in o.depends & wrong if b != index and not doubts.right_on(b, o.unit)}
    if data:
        return Decision(DEPENDS, tuple(sorted(data | reach)))
    if reach:
        return Decision(NOT_REACHED, tuple(sorted(reach)))
    if all(o.ok for o in mine):
        return Decision(PASSED)
    return Decision(DEPENDS, ())
