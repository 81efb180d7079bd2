"""The self-check session (check/checker.py): a runner launched ahead, jobs sent ahead and run by
one thread while verdicts are read, results never mixed between exercises, and a close that does
not wait for a job nobody will read. Real runners, real student code.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from conftest import complete_exercises
from student_support import copy_solution, solution_with
from trous.core import Course
from trous.sandbox.pool import Runner, RunnerError
from trous.check.selfcheck import FAILED, PASSED, UNFILLED
from trous.check.checker import Checker


def _verdicts(result) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(b.spec.id, b.status, tuple(b.problems)) for b in result.blanks]


def _mixed_copy(course, folder) -> None:
    """Right, wrong, half-filled and untouched exercises, so that a result given to the wrong
    exercise shows."""
    exercises = complete_exercises(course)
    for exercise in exercises[0::3]:
        copy_solution(folder, exercise)
    solution_with(folder, course.exercise("01_toux"), ("total = sum(e)", "total = sum(e) + 1"))


def test_jobs_sent_ahead_give_the_verdicts_of_one_by_one(course, student_copy):
    _mixed_copy(course, student_copy)
    copy = Course.load(student_copy)
    exercises = [copy.exercise(e.id) for e in complete_exercises(course)]
    with Checker() as ahead:
        ahead.launch(copy.exercises)
        for exercise in exercises:
            ahead.submit(exercise)
        sent = {e.id: _verdicts(ahead.check(e)) for e in reversed(exercises)}  # read in another order
    with Checker() as one_by_one:
        alone = {e.id: _verdicts(one_by_one.check(e)) for e in exercises}
    assert sent == alone
    statuses = {status for verdicts in alone.values() for _, status, _ in verdicts}
    assert {PASSED, FAILED, UNFILLED} <= statuses  # the copy really is mixed
    assert [s for _, s, _ in alone["01_toux"]][0] == FAILED


def test_refresh_reads_the_file_again(course, student_copy):
    exercise = Course.load(student_copy).exercise("01_toux")
    with Checker() as checker:
        checker.submit(exercise)
        assert not checker.check(exercise).passed
        copy_solution(student_copy, course.exercise("01_toux"))
        assert not checker.check(exercise).passed  # cached: the same session's verdict
        assert checker.check(exercise, refresh=True).passed


def test_a_check_requiring_a_module_gets_it_preloaded_even_when_launched_before(course, student_copy):
    # The runner is launched before the checks are read; a module a check requires (torch, when
    # installed) is then preloaded by a new zygote rather than imported by every run.
    checks = student_copy / "exercises" / "test_01_toux.py"
    text = checks.read_text(encoding="utf-8")
    start = text.index("\nscores = blank(\n")
    end = text.index("\n)\n", start)
    checks.write_text(text[:end] + '\n    requires=["decimal"],' + text[end:], encoding="utf-8")
    copy_solution(student_copy, course.exercise("01_toux"))
    copy = Course.load(student_copy)
    with Checker() as checker:
        checker.launch(copy.exercises)
        result = checker.check(copy.exercise("01_toux"))
        assert "decimal" in checker.runner.preload
    assert result.passed, _verdicts(result)


def test_close_does_not_wait_for_a_job_sent_ahead(course, student_copy):
    looping = course.exercise("01_toux")
    solution_with(student_copy, looping, ("total = sum(e)", "total = sum(e)\n    while True:\n        pass"))
    yaml = student_copy / "course.yaml"
    text = yaml.read_text(encoding="utf-8")
    # Beside the exercise's `blanks:` key, at its indentation (the edition writes its own YAML).
    found = re.compile(r"^( *)blanks:", re.M).search(text, text.index("- id: 01_toux"))
    where, indent = found.start(), found.group(1)
    yaml.write_text(text[:where] + f"{indent}timeout: 60\n" + text[where:], encoding="utf-8")
    exercise = Course.load(student_copy).exercise("01_toux")
    assert exercise.spec.timeout == 60  # an endless loop would hold the runner for a minute
    checker = Checker()
    checker.submit(exercise)
    _, _, results = checker._pending[exercise.id]
    deadline = time.monotonic() + 60
    while not (checker.runner.ready and results.running()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert results.running()
    zygote = checker.runner.process.pid
    started = time.monotonic()
    checker.close()
    assert time.monotonic() - started < 30, "close waited for the endless loop's time limit"
    assert results.done()
    with pytest.raises(ProcessLookupError):
        os.kill(zygote, 0)
    with pytest.raises(RuntimeError):
        checker.check(exercise)


def test_an_interrupted_runner_starts_no_other_sandbox(course, student_copy):
    from trous.check.selfcheck import prepare
    from trous.core.analysis import analyse_path

    copy_solution(student_copy, course.exercise("01_toux"))
    exercise = Course.load(student_copy).exercise("01_toux")
    job, _ = prepare(exercise, analyse_path(exercise, exercise.path))
    assert job.units
    with Runner("fallback") as runner:
        assert len(runner.run(job)) == len(job.units)
        runner.interrupt()
        with pytest.raises(RunnerError):
            runner.run(job)
        assert runner.process is None


@pytest.mark.parametrize("where, args, launched", [
    ("copy", ["exercises"], True),
    ("copy", ["exercises/01_toux.py"], True),
    ("copy", ["exercises/01_toux.py::scores"], True),
    ("copy", ["."], True),
    ("exercises", ["01_toux.py"], True),
    ("copy", [".trous"], False),
    ("repo", ["tests"], False),
    ("repo", ["tests/test_blame.py"], False),
    ("tmp", ["."], False),
])
def test_the_runner_is_launched_early_only_for_runs_that_check_exercises(student_copy, tmp_path, where, args,
                                                                         launched):
    from types import SimpleNamespace

    from conftest import ROOT
    from trous.check.pytest_plugin import _exercises_asked

    folder = {"copy": student_copy, "exercises": student_copy / "exercises", "repo": ROOT, "tmp": tmp_path}[where]
    config = SimpleNamespace(args=args, invocation_params=SimpleNamespace(dir=folder))
    roots = list(dict.fromkeys(e.course.root for e in _exercises_asked(config)))
    assert roots == ([student_copy.resolve()] if launched else [])


@pytest.mark.parametrize("args, asked", [
    (["exercises"], "all"),
    (["."], "all"),
    (["exercises/01_toux.py"], ["01_toux"]),
    (["exercises/01_toux.py::scores"], ["01_toux"]),
    (["exercises/test_01_toux.py"], ["01_toux"]),
    (["exercises/01_toux.py", "exercises/06_moyenne.py", "exercises/01_toux.py"], ["01_toux", "06_moyenne"]),
])
def test_the_runner_is_launched_for_the_exercises_the_run_checks(student_copy, args, asked):
    from types import SimpleNamespace

    from trous.check.pytest_plugin import _exercises_asked

    config = SimpleNamespace(args=args, invocation_params=SimpleNamespace(dir=student_copy))
    every = [e.id for e in Course.load(student_copy).exercises]
    assert [e.id for e in _exercises_asked(config)] == (every if asked == "all" else asked)


def _names_numpy(exercise) -> bool:
    return any("numpy" in p.read_text(encoding="utf-8") for p in (exercise.path, exercise.checks_path)
               if p.exists())


def test_numpy_is_preloaded_only_for_runs_of_exercises_that_name_it(course, student_copy):
    copy = Course.load(student_copy)
    without = [e for e in copy.exercises if not _names_numpy(e)]
    using = [e for e in copy.exercises if _names_numpy(e)]
    assert without and using  # the course has both kinds
    with Checker() as checker:
        checker.launch(without[:1])
        assert "numpy" not in checker.runner.preload
    with Checker() as checker:
        checker.launch([without[0], using[0]])
        assert "numpy" in checker.runner.preload
    with Checker() as checker:  # the student's own mention of it is enough
        without[0].path.write_text(without[0].path.read_text(encoding="utf-8") + "\n# numpy plus tard\n",
                                   encoding="utf-8")
        checker.launch(without[:1])
        assert "numpy" in checker.runner.preload


def test_a_program_importing_numpy_unannounced_still_runs_it_itself(course, student_copy):
    # Not preloaded (nothing names it), numpy is imported by the student's own run, under its limits
    # and its seccomp filter, and the verdicts are those of the plain solution.
    exercise = course.exercise("01_toux")
    solution_with(student_copy, exercise, ("total = sum(e)", "total = sum(e) + float(__import__('nu' + 'mpy').zeros(1)[0])"))
    copy = Course.load(student_copy).exercise("01_toux")
    assert "__import__('nu' + 'mpy')" in copy.path.read_text(encoding="utf-8") and not _names_numpy(copy)
    with Checker() as checker:
        checker.launch([copy])
        result = checker.check(copy)
        assert "numpy" not in checker.runner.preload
    assert result.passed, _verdicts(result)
