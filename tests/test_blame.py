"""Which blank to blame (check/blame.py), on real data flows of small programs."""

from __future__ import annotations

from trous.core import flow
from trous.core.blanks import align
from trous.check.blame import DEPENDS, FAILED, NOT_REACHED, PASSED, SUSPECT, UNFILLED, Outcome, decide

# 0: shift, 1: normalisation (in softmax), 2: mix (its own function), 3: scores, 4: weights (calls softmax)
PROGRAM = '''\
import math


def softmax(s):
    shift = ___
    e = [math.exp(v - shift) for v in s]
    return [___ for w in e]


def mix(weights, values):
    return [___ for d in range(2)]


scores = ___
weights = ___
output = mix(weights, [[1, 0], [0, 1]])
'''
COPY = PROGRAM.replace("weights = ___", "weights = softmax(scores)")


def program_flow(text=PROGRAM):
    """The flow of a copy of PROGRAM, its blanks being where the copy's fills are."""
    return flow.analyse(text, [(f.begin, f.stop) for f in align(PROGRAM, text)])


def expectation(f, blank, ok, expression, line=None, numbers=True):
    return Outcome(blank, ok, f.depends(expression) - {blank}, line, f.value_depends(expression), numbers)


def statuses(decisions):
    return [d.status for d in decisions]


def test_a_blank_whose_check_goes_through_a_wrong_blank_waits_even_if_its_own_check_passes():
    f = program_flow(COPY)
    outcomes = [expectation(f, 0, True, "softmax([1000, 0])"),  # passes through both blanks of softmax
                expectation(f, 1, True, "softmax([1, 1])"),
                expectation(f, 2, True, "mix([0.5, 0.5], [[1, 0], [0, 1]])"),
                expectation(f, 2, False, "output"),
                expectation(f, 3, False, "scores"),
                expectation(f, 4, False, "weights")]
    decisions = decide(5, [], outcomes, f)
    assert statuses(decisions) == [PASSED, PASSED, DEPENDS, FAILED, DEPENDS]
    assert decisions[4].causes == (3,)  # weights waits for scores
    # mix's check of its own passes, but its check of `output` could not run on a right `scores`:
    # it is not right (✔) yet, it waits for scores
    assert decisions[2].causes == (3,)


def test_two_blanks_of_one_function_the_later_one_is_blamed():
    f = program_flow(COPY)
    outcomes = [expectation(f, 0, False, "softmax([1000.0, 999.0, 0.0])"),
                expectation(f, 1, False, "weights"), expectation(f, 1, False, "sum(weights)"),
                expectation(f, 3, True, "scores"),
                expectation(f, 4, False, "weights")]
    decisions = decide(5, [], outcomes, f)
    assert statuses(decisions) == [DEPENDS, FAILED, None, PASSED, DEPENDS]
    assert decisions[0].causes == (1,) and decisions[4].causes == (1,)


def test_an_error_before_a_line_cannot_come_from_that_line():
    f = program_flow(COPY)
    exp_line = next(i for i, line in enumerate(COPY.splitlines(), 1) if "math.exp" in line)
    outcomes = [expectation(f, 0, False, "softmax([1000.0, 999.0, 0.0])", line=exp_line),  # OverflowError
                expectation(f, 1, True, "weights"), expectation(f, 3, True, "scores")]
    decisions = decide(5, [], outcomes, f)
    assert statuses(decisions) == [FAILED, PASSED, None, PASSED, None]


CALLS = '''\
def mean_of_max(scores):
    return ___


raw, scaled = [], []
for d in [4, 16]:
    scores = ___
    raw.append(mean_of_max(scores))
    scaled.append(mean_of_max(___))
'''


def test_a_function_that_receives_the_blank_is_suspected_first():
    f = flow.analyse(CALLS)
    outcomes = [expectation(f, 0, True, "mean_of_max([[0, 0], [0, 100]])"),
                expectation(f, 1, True, "scores"),
                expectation(f, 2, False, "scaled")]
    decisions = decide(3, [], outcomes, f)
    assert statuses(decisions) == [SUSPECT, PASSED, DEPENDS]
    assert decisions[0].causes == (2,) and decisions[0].evidence == [outcomes[2]]
    assert decisions[2].causes == (0,)


def test_when_the_function_is_caught_the_user_waits_for_it():
    f = flow.analyse(CALLS)
    outcomes = [expectation(f, 0, False, "mean_of_max([[[0, 0], [0, 100]]])"),
                expectation(f, 1, True, "scores"),
                expectation(f, 2, False, "scaled")]
    assert statuses(decide(3, [], outcomes, f)) == [FAILED, PASSED, DEPENDS]


def test_unfilled_blanks_explain_the_failures_that_go_through_them():
    f = program_flow(PROGRAM.replace("scores = ___", "scores = [1, 2]"))
    outcomes = [expectation(f, 2, False, "output"), expectation(f, 3, False, "scores")]
    decisions = decide(5, [0, 1, 4], outcomes, f)
    assert statuses(decisions) == [UNFILLED, UNFILLED, DEPENDS, FAILED, UNFILLED]
    assert decisions[2].causes == (4,)  # output = mix(weights, …) and weights is not filled yet


def test_without_a_known_flow_every_failure_is_its_own_blank():
    unknown = flow.Flow("", [], None)
    outcomes = [Outcome(0, False, unknown.depends("x")), Outcome(1, False), Outcome(2, True)]
    assert statuses(decide(4, [], outcomes, unknown)) == [FAILED, FAILED, PASSED, None]


HOT = '''\
import math


def softmax(s):
    shift = ___
    e = [math.exp(v - shift) for v in s]
    return [___ for w in e]


scores = [1.0, 2.0]
weights = softmax(scores)
hot = softmax(___)
'''


def test_a_right_value_clears_the_function_it_went_through():
    f = flow.analyse(HOT)
    outcomes = [expectation(f, 0, True, "softmax([1000.0, 0.0])"), expectation(f, 1, True, "weights"),
                expectation(f, 2, False, "hot")]
    # softmax received the third blank's value, but `weights` shows softmax right on the program's scores
    assert statuses(decide(3, [], outcomes, f)) == [PASSED, PASSED, FAILED]
    # a check that calls the function itself on its own inputs clears nothing: then softmax is suspected
    probes = [expectation(f, 0, True, "softmax([1000.0, 0.0])"), expectation(f, 1, True, "softmax([1.0, 1.0])"),
              expectation(f, 2, False, "hot")]
    decisions = decide(3, [], probes, f)
    assert statuses(decisions) == [PASSED, SUSPECT, DEPENDS] and decisions[1].evidence == [probes[2]]


def test_a_failure_a_wrong_blank_explains_is_not_weighed_against_its_own_blank():
    text = HOT.replace("scores = [1.0, 2.0]", "scores = ___") + "\n\ndef mix(w):\n    return ___\n\n\nout = mix(weights)\n"
    f = flow.analyse(text)
    # blanks: 0 shift, 1 normalisation, 2 scores, 3 hot, 4 mix
    outcomes = [expectation(f, 2, False, "scores"),
                expectation(f, 0, True, "weights[0] * 2"),  # passes, through scores: clears nothing known wrong
                expectation(f, 4, False, "out")]
    assert f.value_depends("weights[0] * 2") == {0, 1, 2}
    decisions = decide(5, [], outcomes, f)
    assert statuses(decisions) == [DEPENDS, None, FAILED, None, DEPENDS] and decisions[4].causes == (2,)
    # shift's only check passed through a wrong `scores`: that proves little, it waits too
    assert decisions[0].causes == (2,)


def test_a_check_that_only_says_true_or_false_clears_nothing():
    f = flow.analyse(HOT + "\n\ndef mix(w):\n    return ___\n\n\nout = mix(weights)\n")
    # blanks: 0 shift, 1 normalisation, 2 hot, 3 mix; the normalisation is wrong
    outcomes = [expectation(f, 0, False, "softmax([1000.0, 0.0])"), expectation(f, 1, False, "weights"),
                expectation(f, 3, True, "out != weights", numbers=False),  # true for many wrong values
                expectation(f, 2, False, "hot")]
    decisions = decide(4, [], outcomes, f)
    # mix passes, but through the wrong normalisation: it waits for it
    assert statuses(decisions) == [DEPENDS, FAILED, DEPENDS, DEPENDS]
    outcomes[2] = expectation(f, 3, True, "out")  # the same check on numbers would clear softmax
    assert statuses(decide(4, [], outcomes, f))[2] == FAILED


def test_a_value_never_computed_is_blamed_on_what_stopped_the_program():
    from test_flow import CALLED

    f = flow.analyse(CALLED)
    inside = next(i for i, line in enumerate(CALLED.splitlines(), 1) if "return X[i][0]" in line)
    # xp is wrong and makes attention raise; `autre` (from xp2) is then never computed
    outcomes = [expectation(f, 0, False, "xp"), expectation(f, 1, True, "xp2"),
                Outcome(1, False, f.depends("autre") - {1}, inside, f.value_depends("autre"), True, stopped=True)]
    # xp2's own check passes, but its check of `autre` never ran: xp2 is not right yet; that check
    # reads no result of xp (the program stopped on xp before it): it is not reached, it does not depend
    decisions = decide(2, [], outcomes, f)
    assert statuses(decisions) == [FAILED, NOT_REACHED] and decisions[1].causes == (0,)
    without_own = [outcomes[0], outcomes[2]]
    decisions = decide(2, [], without_own, f)
    assert statuses(decisions) == [FAILED, NOT_REACHED] and decisions[1].causes == (0,)
    # a value that does read xp's result depends on it
    through = [outcomes[0], Outcome(1, False, frozenset({0}), inside, frozenset({0, 1}), True, stopped=True)]
    decisions = decide(2, [], through, f)
    assert statuses(decisions) == [FAILED, DEPENDS] and decisions[1].causes == (0,)
