"""The public checks' test functions (`@pytest.mark.trou` in exercises/test_*.py) in the self-check,
as grading counts them: without this, the self-check would call « juste » a blank only a test
refuses. They run as `pytest exercises/` would, on the student's file, under the self-check's limits:
a failure makes its blank wrong (a waiting blank keeps it in its details); a broken test is the
course's fault, said so.
"""

from __future__ import annotations

from ..grade.testworker import TestFunctions
from ..core.protocol import Unit
from ..core.course import limits_for
from ..core.judge import judge_test
from .selfcheck import (FAILED, PASSED, SKIPPED_CHECK, SUSPECT, UNFILLED, WAITING, BlankResult, ExerciseResult,
                        interpret, prepare)

COURSE_FAULT = "une vérification de l'exercice ne fonctionne pas (erreur du cours, pas la tienne) : {what}"


def self_check(runner, exercise, analysis) -> ExerciseResult:
    """The whole self-check of `analysis` on `runner` (a Runner or a RunnerPool): its declarations, then
    its test functions. The notebooks' self-check (publish/nbgrader/incell.py) calls it; checker.py
    takes the same two steps, with jobs sent ahead."""
    job, context = prepare(exercise, analysis)
    if context is None:  # nothing can run: the verdicts are known
        return job
    result = interpret(exercise, analysis, context, runner.run(job) if job.units else [])
    apply(runner, exercise, analysis, result)
    return result


def apply(runner, exercise, analysis, result) -> None:
    """Run the exercise's public test functions on the student's file; fold their verdicts into `result`."""
    if result.problem is not None:  # the file does not run at all: already said, once
        return
    tests = TestFunctions(exercise.course, [exercise], public_only=True)
    try:
        if tests.problems:
            result.notes.append(COURSE_FAULT.format(what=tests.problems[0].splitlines()[0]))
            return
        wanted = [(blank, tests.of(exercise.id, blank.spec.id)) for blank in result.blanks]
        wanted = [(blank, found) for blank, found in wanted if found and blank.status != UNFILLED]
        if not wanted:
            return
        limits = limits_for(exercise)
        with runner.session(Unit(analysis.source.text, analysis.path, wall=limits.wall), limits) as session:
            for blank, found in wanted:
                for outcome in tests.run(found, session):
                    if outcome.outcome == "bug":
                        result.notes.append(COURSE_FAULT.format(what=outcome.test.label))
                        continue
                    verdict = judge_test(outcome)
                    if verdict is not None and not verdict.ok:
                        _fail(blank, verdict)
    finally:
        tests.close()


def _fail(blank: BlankResult, verdict) -> None:
    if blank.status in (PASSED, SKIPPED_CHECK, SUSPECT):
        blank.status, blank.problems, blank.causes = FAILED, [verdict.reason], ()
        blank.line = verdict.line or blank.line
    elif blank.status == FAILED:
        blank.problems.append(verdict.reason)
    elif blank.status in WAITING:
        blank.details.append(verdict.reason)
