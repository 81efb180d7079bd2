"""`pytest graders/`'s own runner: it answers `eleve(...)` and runs declarations in the author's session.

A plugin of its own (entry point `trous_copie`) that puts its runner in the config stash (`BACKEND`),
so that grading never imports the author's tools. Without `--copie`, the program is the reference
solution (a grader's test) or the student's own file (a public check's test), with resource limits
only; with `--copie`, it is what grading runs for that blank (`Grader.blank_program`), in `trous
grade`'s sandbox, and the points at the end are the engine's own. Consecutive tests of one blank share
its process (each test starts a fresh run); a declaration, or another blank, closes it first.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest

from ..check.selfcheck import plan_units
from ..core.analysis import analyse_path, analyse_source
from ..core.course import Course, Exercise, limits_for, memory_bound
from ..core.judge import OPEN, judge
from ..core.protocol import Job, Limits, Unit
from ..core.source import Source, read
from ..sandbox import backend as sandbox_mod
from ..sandbox.pool import RunnerPool
from ..grade.eleve import Eleve
from ..core.checks import Check, TestInfo
from ..grade.pytest_graders import BACKEND, PATIENCE, role
from ..grade.testworker import Clock, asker
from ..core.wording import french_number as _points


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """The runner answering `eleve` (unless the engine's worker set its own); --copie: refused before
    any test runs when the copy or the sandbox is not there."""
    config.stash.setdefault(BACKEND, Native(config))
    copy = config.getoption("copie", None)
    if copy is None:
        return
    if not Path(copy).exists():
        raise pytest.UsageError(f"--copie {copy} : introuvable (attendu : le dossier ou le .zip d'un élève, "
                                "dans le dossier des copies)")
    mode = _mode(config)
    if mode != sandbox_mod.LIMITS:
        try:
            sandbox_mod.choose(mode)
        except sandbox_mod.SandboxRefused as exc:
            raise pytest.UsageError(f"--copie : {exc}") from None


def _mode(config) -> str:
    chosen = config.getoption("trous_bac_a_sable", None)
    if chosen:
        return chosen
    if config.getoption("copie", None):
        return "auto"  # as trous grade
    return os.environ.get("TROUS_SANDBOX") or sandbox_mod.LIMITS


class Native:
    def __init__(self, config):
        self.config = config
        self.copy = config.getoption("copie", None)
        self.mode = _mode(config)
        self.pool: RunnerPool | None = None
        self.open = None  # (key, session), its context held by self.held
        self.held = ExitStack()
        self.graders: dict[Path, object] = {}  # course root → Grader (--copie)
        self.submissions: dict[Path, object] = {}  # course root → the copy's Submission
        self.courses: dict[Path, Course] = {}  # the courses whose tests ran

    # -- the runner ---------------------------------------------------------------------------
    def _pool(self, course: Course) -> RunnerPool:
        if self.pool is None:  # with --copie, the very memory bound trous grade gives its sandboxes
            memory = memory_bound(course.exercises) if self.copy else None
            self.pool = RunnerPool(1, mode=self.mode, memory_mb=memory)
        return self.pool

    def _close_session(self) -> None:
        self.open = None
        self.held.close()

    def _session(self, course: Course, program: str, filename: str, limits: Limits):
        key = (program, filename, limits)
        if self.open is None or self.open[0] != key:
            self._close_session()
            session = self._pool(course).session(Unit(program, filename, wall=limits.wall), limits)
            self.open = (key, self.held.enter_context(session))
        return self.open[1]

    def close(self) -> None:
        self._close_session()
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        for grader in self.graders.values():
            grader.close()

    # -- the copy -----------------------------------------------------------------------------
    def _grader(self, course: Course):
        from ..grade.engine import Grader  # noqa: PLC0415 - the engine only with --copie (startup)

        root = course.root.resolve()
        if root not in self.graders:
            self.graders[root] = Grader(course, self._pool(course))
        return self.graders[root]

    def _submission(self, course: Course):
        root = course.root.resolve()
        if root not in self.submissions:
            from ..inputs import intake as intake_mod, kinds  # noqa: PLC0415

            path = Path(self.copy).resolve()
            name = path.name[:-4] if path.is_file() and path.name.lower().endswith(".zip") else path.name
            try:
                intake = kinds.load(path.parent, course)
            except intake_mod.IntakeError as exc:
                raise pytest.UsageError(f"--copie {self.copy} : {exc}") from None
            wanted = intake_mod.student_id(name)
            found = next((s for s in intake.submissions if s.student == wanted), None)
            if found is None:
                raise pytest.UsageError(f"--copie {self.copy} : pas lue comme une copie dans {path.parent} "
                                        f"(copies trouvées : {', '.join(s.student for s in intake.submissions[:8])})")
            self.submissions[root] = found
        return self.submissions[root]

    def _program(self, course: Course, exercise: Exercise, blank_id: str, hidden: bool) -> tuple[str, str]:
        """(program, filename) for this blank; skips the item when the copy has nothing to run."""
        if self.copy:
            submission = self._submission(course)
            program, why = self._grader(course).blank_program(exercise, submission.files.get(exercise.id),
                                                              exercise.blank_index(blank_id))
            if program is None:
                pytest.skip(f"copie {submission.student} : {why}")
            return program, f"exercises/{exercise.id}.py"
        if hidden:
            return read(exercise.solution_path).text, f"solutions/{exercise.id}.py"
        # The student's own file, as pytest exercises/ runs it; a blank still ___ is « à remplir », as
        # the self-check leaves its declarations unrun (a failure would only say the program stopped).
        analysis = analyse_path(exercise, exercise.path)
        index = exercise.blank_index(blank_id)
        if analysis.readable and analysis.aligned and not analysis.is_filled(index):
            pytest.skip(f"trou « {blank_id} » ({exercise.id}) pas encore rempli : à remplir")
        return read(exercise.path).text, f"exercises/{exercise.id}.py"

    # -- eleve --------------------------------------------------------------------------------
    def eleve(self, info: TestInfo, path: Path) -> Eleve:
        course, exercise, _ = role(path) or (None, None, None)
        if exercise is None:
            pytest.fail(f"{info.path} : introuvable dans le cours", pytrace=False)
        self.courses[course.root.resolve()] = course
        program, filename = self._program(course, exercise, info.blank, info.hidden)

        def session():  # opened at the first question: cpu_budget may need the runner before
            return self._session(course, program, filename, limits_for(exercise))

        return Eleve(asker(session, Clock(float("inf")), info.hidden), blank=info.blank or "")

    def cpu_budget(self, course: Course, info: TestInfo) -> float:
        """CPU seconds this test may use on the copy: what `trous grade` gives it (a few times what
        it used on the reference, measured by the engine's own run of every test there)."""
        from ..grade.engine import GraderError  # noqa: PLC0415 - the engine only with --copie (startup)

        try:
            grader = self._grader(course)
            if not grader.states:  # the first time: the runner the references need must be free
                self._close_session()
            grader.compute_references()
        except GraderError:
            return PATIENCE  # said at the end, with the points
        test = next((t for tests in grader.tests.by_blank.values() for t in tests
                     if t.path == info.path and t.name == info.name), None)
        return grader.tests.cpu_budget(test) if test is not None else PATIENCE

    # -- declarations -------------------------------------------------------------------------
    def declaration(self, exercise: Exercise, check: Check) -> list[str]:
        """What fails among the declaration's expectations (French, everything shown: the author reads it)."""
        course = exercise.course
        self.courses[course.root.resolve()] = course
        program, filename = self._program(course, exercise, check.blank, hidden=True)
        results = references = self._evaluate(exercise, program, filename, check)
        if self.copy and any(e.uses_solution for e in check.expects):
            references = self._evaluate(exercise, read(exercise.solution_path).text, f"solutions/{exercise.id}.py",
                                        check)
        failures = []
        for expect, (unit, probe), (_, reference) in zip(check.expects, results, references):
            expected = expect.expected
            if expect.uses_solution:
                if not reference.evaluated or reference.error is not None:
                    failures.append(f"{expect.expr!r} : la solution de référence ne donne pas de valeur "
                                    f"({reference.error.type + ': ' + reference.error.message if reference.error else 'non évaluée'})")
                    continue
                expected = reference.value
            verdict = judge(expect, expected, unit, probe, say=OPEN)
            if not verdict.ok:
                failures.append(f"{expect.expr!r} : {verdict.reason}")  # the judge names its label
        return failures

    def _evaluate(self, exercise: Exercise, program: str, filename: str, check: Check):
        """(unit result, probe result) of each expectation: the self-check's units (one per variant), each
        with the exercise's wall, none skipped for another's crash."""
        limits = limits_for(exercise)
        units, plan = plan_units(analyse_source(exercise, Source(filename, program)), [check], program)
        units = [replace(u, process="declaration", group="", wall=limits.wall) for u in units]
        self._close_session()
        results = self._pool(exercise.course).run(Job(tuple(units), limits, capture_output=False))
        return [(results[u], results[u].probes[p]) for _, _, u, p in plan]

    # -- the points trous grade gives the copy ------------------------------------------------
    def points_table(self, exercise_ids: list[str]) -> list[tuple[str, dict]]:
        """The engine's grade of the whole copy; the exercises whose graders ran, blank by blank."""
        from ..grade.engine import GraderError  # noqa: PLC0415

        lines: list[tuple[str, dict]] = []
        for course in self.courses.values():
            self._close_session()
            try:
                submission = self._submission(course)
                grade = self._grader(course).grade(submission.student, submission.files)
            except GraderError as exc:
                lines.append((f"le correcteur ne peut pas tourner : {exc}", {"red": True}))
                continue
            grade.isolation = self.pool.kind if self.pool else ""
            lines.append((f"Points que trous grade donne à la copie « {submission.student} » "
                          f"(bac à sable : {grade.isolation}) :", {"bold": True}))
            shown = [e for e in grade.exercises if e.id in exercise_ids]
            for exercise in shown:
                lines.append((f"  {exercise.id} : {_points(exercise.score)}/{_points(exercise.max_score)}"
                              + (f" — {exercise.message.splitlines()[0]}" if exercise.message else ""), {}))
                lines += [(f"      note : {note}", {}) for note in exercise.notes]
                for blank in exercise.blanks:
                    ok = blank.score == blank.max_score
                    said = f" — {blank.message.splitlines()[0]}" if blank.message and not ok else ""
                    lines.append((f"    {'✔' if ok else '✘'} « {blank.id} » {_points(blank.score)}/"
                                  f"{_points(blank.max_score)}{said}", {"green": ok, "red": not ok}))
            if len(shown) < len(grade.exercises):
                part = sum(e.score for e in shown), sum(e.max_score for e in shown)
                lines.append((f"  ces exercices : {_points(part[0])}/{_points(part[1])} ; la copie entière "
                              f"({len(grade.exercises)} exercices) : {_points(grade.score)}/{_points(grade.max_score)}",
                              {"bold": True}))
            else:
                lines.append((f"  total : {_points(grade.score)}/{_points(grade.max_score)}", {"bold": True}))
        return lines

