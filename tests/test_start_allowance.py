"""A child's start is not the student's time, and the student's time is not the start's.

A new child gets START seconds to start (fork, confinement) on top of its first unit's wall time.
Once it says it is ready, the allowance ends: an endless loop costs its wall time, not that plus
START (with 8 s limits, START was a quarter more per looping copy). And the child says so once,
before any student code runs: a program that says it again is refused, as any message out of turn.
"""

from __future__ import annotations

import time

import pytest

from trous.sandbox.pool import Runner
from trous.core.protocol import OK, TIMEOUT, Job, Limits, Probe, Unit
from trous.sandbox.backend import bwrap_available
from trous.sandbox.supervisor import START

MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap absent")),
         "fallback"]
WALL = 1.0
LOOP = "x = 1\nwhile True:\n    pass\n"


@pytest.fixture(params=MODES, scope="module")
def runner(request):
    with Runner(request.param) as runner:
        runner.run(Job((Unit("x = 1", "chaud.py"),)))  # started: its own start is not measured below
        yield runner


def test_an_endless_first_unit_stops_at_its_wall_time(runner):
    started = time.monotonic()
    [result] = runner.run(Job((Unit(LOOP, "exercises/boucle.py", (Probe("x"),)),), Limits(wall=WALL)))
    spent = time.monotonic() - started
    assert result.status == TIMEOUT, result
    assert "1 s" in result.error.message, result.error.message  # the wall time, as the student is told
    # With the allowance still running, the loop would go on to WALL + START (3 s).
    assert WALL <= result.seconds < WALL + START / 2, result.seconds
    assert spent < WALL + START, spent


def test_a_later_unit_of_the_same_child_has_no_allowance_either(runner):
    units = (Unit("y = 2", "exercises/a.py", (Probe("y"),), process="p"),
             Unit(LOOP, "exercises/b.py", (Probe("x"),), process="p"))
    first, second = runner.run(Job(units, Limits(wall=WALL)))
    assert first.status == OK and first.probes[0].value == 2
    assert second.status == TIMEOUT and WALL <= second.seconds < WALL + START / 2, second


def test_a_session_program_that_loops_stops_at_its_wall_time(runner):
    with runner.session(Unit(LOOP, "exercises/essai.py", wall=WALL), Limits(wall=WALL)) as session:
        started = time.monotonic()
        answer = session.ask("x")
        spent = time.monotonic() - started
    assert answer.status == TIMEOUT, answer
    assert spent < WALL + START / 2 + 0.5, spent  # + the grace the interrupted program gets


@pytest.mark.parametrize("said", ['{"ev": "ready"}', '{"ev": "ready", "i": 0}'])
def test_a_program_that_says_it_is_ready_is_refused(runner, said):
    program = f"import os\nos.write(3, b'{said}\\n')\nx = 1\n"
    [result] = runner.run(Job((Unit(program, "exercises/faux.py", (Probe("x"),)),), Limits(wall=WALL)))
    assert result.status != OK, result
    assert not result.probes[0].evaluated
    with runner.session(Unit(program, "exercises/faux.py", wall=WALL), Limits(wall=WALL)) as session:
        answer = session.ask("x")
    assert answer.status != OK and not answer.probes[0].evaluated, answer
