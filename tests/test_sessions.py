"""Sessions (issue 12): an interactive unit keeps every guarantee of a batch job.

The grader asks one question at a time of a program kept in one child; these tests ask from the
outside what a hostile program can do from the inside: learn a question before it is asked, keep
secret inputs around for a public answer, hang, crash, flood, fill the disk, send back a value that
lies, or kill the runner. Whatever it does, each question gets an answer and the runner goes on.
"""

from __future__ import annotations

import os
import signal

import pytest

from trous.core.checks import GraderMistake, StudentError, StudentStopped
from trous.grade.eleve import Eleve, Unknown, as_expression, as_value
from trous.sandbox.pool import Runner
from trous.core.protocol import CRASH, SKIPPED, TIMEOUT, Job, Limits, Probe, Unit
from trous.sandbox.backend import bwrap_available

MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap absent")),
         "fallback"]

PROGRAM = '''
import os
x = [1.0, 2.0, 3.0]
compteur = []
def f(a):
    return [v * a for v in x]
def boucle():
    while True:
        pass
def plante():
    os._exit(7)
class Menteur:
    def __eq__(self, other):
        return True
    def __repr__(self):
        return "3"
class Flottant(float):
    def __eq__(self, other):
        return True
    def __repr__(self):
        return "3.0"
    def __float__(self):
        return 3.0
menteur = Menteur()
flottant = Flottant(0.5)
'''


@pytest.fixture(params=MODES, scope="module")
def runner(request):
    with Runner(request.param) as runner:
        yield runner


def session(runner, program=PROGRAM, wall=2.0, **limits):
    return runner.session(Unit(program, "exercises/essai.py", wall=wall), Limits(wall=wall, **limits))


def value(result):
    assert result.probes[0].evaluated and result.probes[0].error is None, (result.status, result.error,
                                                                           result.probes[0])
    return result.probes[0].value


def test_the_namespace_stays_until_the_overrides_change(runner):
    with session(runner) as s:
        assert value(s.ask("f(2)")) == [2.0, 4.0, 6.0]
        assert value(s.ask("compteur.append(1) or len(compteur)")) == 1
        assert value(s.ask("compteur.append(1) or len(compteur)")) == 2  # same namespace: the program did not run again
        assert value(s.ask("f(1)", overrides=(("x", "[5, 6]"),))) == [5, 6]  # other inputs: the program ran again
        assert value(s.ask("len(compteur)", overrides=(("x", "[5, 6]"),))) == 0
        assert value(s.ask("len(compteur)", overrides=(("x", "[5, 6]"),), fresh=True)) == 0
        result = s.ask("y", overrides=(("y", "1"),))  # a variable the program does not assign
        assert result.status == "error" and result.error.kind == "override" and not result.probes[0].evaluated
        assert value(s.ask("f(1)")) == [1.0, 2.0, 3.0]  # and the session goes on


def test_a_public_question_never_follows_a_secret_one_in_the_same_process(runner):
    with session(runner) as s:
        public = value(s.ask("os.getpid()"))
        secret = value(s.ask("os.getpid()", secret=True))
        assert secret == public  # public, then secret: the same process may hear both, in that order
        assert value(s.ask("os.getpid()", secret=True)) == secret
        after = value(s.ask("os.getpid()"))
        assert after != secret  # what a public answer shows cannot carry what a secret question brought


def test_the_process_never_holds_a_question_before_it_is_asked(runner):
    program = PROGRAM + '''
import gc, linecache, sys
def cherche():
    """Everything this process can see, searched for the markers (joined here, so that the search
    never finds itself)."""
    seen = [repr(o)[:20000] for o in gc.get_objects()]
    frame = sys._getframe()
    while frame is not None:
        seen += [repr(v) for v in list(frame.f_locals.values())]
        frame = frame.f_back
    seen += ["".join(lines) for _, _, lines, _ in linecache.cache.values()]
    text = "\\n".join(seen)
    return [a + b for a, b in (("SECRET-", "QUESTION"), ("SECRET-", "ENTREE"), ("SECRET-", "COMMENTAIRE"))
            if a + b in text]
# SECRET-COMMENTAIRE : le texte du programme n'est jamais envoyé
'''
    with session(runner, program) as s:
        assert value(s.ask("cherche()")) == []
        assert value(s.ask("cherche()", overrides=(("x", "'SECRET-' 'ENTREE'"),), secret=True)) == ["SECRET-ENTREE"]
        assert value(s.ask("'SECRET-' 'QUESTION'", secret=True)) == "SECRET-QUESTION"  # it did run
        # Back to the course's inputs, publicly: a fresh process, which heard none of it.
        assert value(s.ask("cherche()")) == []


def test_a_probe_that_hangs_costs_that_probe_only(runner):
    with session(runner, wall=1.0) as s:
        value(s.ask("compteur.append(1)"))
        hung = s.ask("boucle()")
        assert hung.status == "ok" and hung.probes[0].error.kind == "timeout"
        assert "temps dépassé" in hung.probes[0].error.message
        assert value(s.ask("f(3)")) == [3.0, 6.0, 9.0]


def test_a_probe_that_kills_its_process_costs_that_probe_only(runner):
    with session(runner) as s:
        assert value(s.ask("compteur.append(1) or len(compteur)")) == 1
        crashed = s.ask("plante()")
        assert crashed.probes[0].error is not None and crashed.probes[0].error.kind == "crash"
        # A new process runs the program again: what the dead one computed is gone.
        assert value(s.ask("len(compteur)")) == 0


def test_a_program_that_hangs_is_not_run_again_for_each_question(runner):
    with session(runner, PROGRAM + "boucle()\n", wall=1.0) as s:
        first = s.ask("f(1)")
        assert first.status == TIMEOUT and not first.probes[0].evaluated
        second = s.ask("f(2)", overrides=(("x", "[1]"),))
        assert second.status == SKIPPED and "non exécuté" in second.error.message
        assert "temps dépassé" in second.error.message


def test_output_files_and_values_are_bounded(runner):
    with session(runner, PROGRAM + "def bavard():\n    while True:\n        print('x' * 10000)\n",
                 output_kb=1) as s:
        flood = s.ask("bavard()")
        assert flood.status == CRASH and "sortie trop volumineuse" in flood.error.message
    with session(runner, PROGRAM + "def fichiers():\n    for i in range(50):\n        open(f'f{i}', 'w').close()\n",
                 files=10) as s:
        written = s.ask("fichiers()")
        assert written.probes[0].error.kind == "files"  # what that run computed is void
        assert s.ask("f(1)").status == SKIPPED  # and the program is not trusted again
    with session(runner, value_kb=4) as s:
        big = s.ask("list(range(100000))")
        assert big.probes[0].error.kind == "too_big"
        assert value(s.ask("f(1)")) == [1.0, 2.0, 3.0]


def test_a_runner_killed_during_a_session_still_answers_then_recovers(runner):
    with session(runner) as s:
        assert value(s.ask("f(1)")) == [1.0, 2.0, 3.0]
        kill_tree(runner.process)
        lost = s.ask("f(2)")
        assert lost.status in (CRASH, TIMEOUT) and not lost.probes[0].evaluated
        assert s.ask("f(3)").status in (CRASH, TIMEOUT)  # broken for good: no exception, no hang
    result = runner.run(Job((Unit(PROGRAM, "exercises/essai.py", (Probe("f(4)"),)),), Limits(wall=2)))[0]
    assert result.probes[0].value == [4.0, 8.0, 12.0]  # a fresh runner took over
    with session(runner) as s:  # and sessions work on it too
        assert value(s.ask("f(5)")) == [5.0, 10.0, 15.0]


def test_a_session_and_a_batch_job_say_a_crash_alike(runner):
    """One keeper for both: the same program dying the same way is said in the same words."""
    program = PROGRAM + "plante()\n"
    batch = runner.run(Job((Unit(program, "exercises/essai.py", (Probe("f(1)"),)),), Limits(wall=2)))[0]
    with session(runner, program) as s:
        first, second = s.ask("f(1)"), s.ask("f(2)", overrides=(("x", "[1]"),))
    assert batch.status == first.status == CRASH and not first.probes[0].evaluated
    assert "code de sortie 7" in first.error.message and first.error.message == batch.error.message
    assert second.status == SKIPPED and first.error.message in second.error.message


def test_a_check_that_does_not_compile_costs_that_check_only(runner):
    """The grader's mistake is that check's error, in a batch job as in a session: never the student's crash."""
    job = Job((Unit(PROGRAM, "exercises/essai.py", (Probe("f("), Probe("f(1)"))),), Limits(wall=2))
    result = runner.run(job)[0]
    assert result.status == "ok" and "vérification illisible" in result.probes[0].error.message
    assert result.probes[1].value == [1.0, 2.0, 3.0]
    with session(runner) as s:
        assert "vérification illisible" in s.ask("f(").probes[0].error.message
        assert value(s.ask("f(1)")) == [1.0, 2.0, 3.0]


def kill_tree(process) -> None:
    """Kill a runner and every process below it (the zygote, the supervisor, the child), and wait
    until it is gone: from then on, its pipes only give an end of file."""
    pids, frontier = [], [process.pid]
    while frontier:
        pid = frontier.pop()
        pids.append(pid)
        for task in os.listdir(f"/proc/{pid}/task") if os.path.exists(f"/proc/{pid}/task") else ():
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    frontier += [int(n) for n in f.read().split()]
            except OSError:
                pass
    for pid in reversed(pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=30)


# -- eleve: what a test function gets ------------------------------------------------------------------
def eleve_on(s, secret=True):
    first = [True]

    def ask(expr, overrides):
        result = s.ask(expr, overrides=overrides, secret=secret, fresh=first[0])
        first[0] = False
        return result

    return Eleve(ask, blank="essai")


def test_a_value_that_lies_cannot_fool_an_assert(runner):
    with session(runner) as s:
        eleve = eleve_on(s)
        menteur = eleve("menteur")
        assert isinstance(menteur, Unknown)
        assert menteur != 3 and not (menteur == [1.0, 2.0]) and menteur != menteur.type_name
        with pytest.raises(TypeError):
            _ = menteur < 1
        flottant = eleve("flottant")
        assert type(flottant) is float and flottant == 0.5 and flottant != 3.0
        assert eleve("[flottant, menteur]")[0] == 0.5
        assert eleve.call("f", 2) == [2.0, 4.0, 6.0]


def test_arrays_and_special_numbers_come_back_as_values(runner):
    import numpy as np

    with session(runner, "import numpy as np\n" + PROGRAM) as s:
        eleve = eleve_on(s)
        array = eleve("np.arange(6).reshape(2, 3) / 2")
        assert isinstance(array, np.ndarray) and array.shape == (2, 3) and array[1, 2] == 2.5
        assert eleve("np.array([True, False])").dtype == bool
        values = eleve("[float('nan'), float('-inf'), 1j]")
        assert np.isnan(values[0]) and values[1] == float("-inf") and values[2] == 1j
        # The test's own data, written for the program: arrays keep their kind and their exact values.
        data = np.array([[0.1, 1 / 3], [float("inf"), -2.0]])
        assert eleve.call("lambda a: a", data).tolist() == data.tolist()
        assert eleve("x", x=np.float32(0.25)) == 0.25
        assert eleve("sum(x)", x=(1, 2, 3)) == 6


def test_a_refusal_is_an_error_of_the_students_a_hang_is_not(runner):
    with session(runner, wall=1.0) as s:
        eleve = eleve_on(s)
        with pytest.raises(StudentError) as raised:
            eleve("1 / 0")
        assert raised.value.type == "ZeroDivisionError"
        with pytest.raises(StudentStopped) as stopped:  # never taken for a refusal by pytest.raises(StudentError)
            eleve("boucle()")
        assert stopped.value.kind == "timeout"
        assert not isinstance(stopped.value, StudentError)


def test_a_misused_eleve_is_the_graders_mistake():
    eleve = Eleve(lambda expr, overrides: pytest.fail("nothing should be asked"), blank="essai")
    with pytest.raises(GraderMistake):
        eleve("f(")
    with pytest.raises(GraderMistake):
        eleve(42)
    with pytest.raises(GraderMistake):
        eleve("x", x=object())
    assert as_expression({"a": (1,), "b": {2.5, float("nan")}}) == "{'a': (1,), 'b': set([2.5, float('nan')])}"
    assert as_value({"$type": "Menteur"}) != as_value({"$type": "Menteur"})
