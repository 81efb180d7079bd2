"""Grading a submission blank by blank, against the reference solution and hidden variants.

For each blank the student filled, the program graded is the reference solution with only that
blank replaced by the student's fill, so a wrong softmax sum cannot cost the weighted vector. Each
blank's expectations (public and hidden) are evaluated on the course's inputs and on the hidden
variants' inputs; the expected value is either the one written in the check or, for `SOLUTION`, the
value the unmodified solution gives on the same inputs (computed once per grading session). When
the student changed code outside the blanks, the whole file is run instead, and the feedback says so.
All of a student's programs run in one job: one process per exercise, in the sandbox.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import trous

from ..course import blanks as blanks_mod
from ..student.checking import _available, judge, limits_for
from ..course.definition import Course, Exercise
from ..runner.pool import RunnerPool
from ..runner.protocol import ErrorInfo, Job, Limits, Probe, ProbeResult, Unit, UnitResult
from ..course.source import read
from ..course.spec import Check, Expect, load_checks
from ..course.submission import Analysis, analyse_bytes
from .model import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade, SubmissionGrade

WHOLE_FILE_NOTE = ("tu as modifié le code en dehors des trous : l'exercice est noté en exécutant ton fichier "
                   "entier (un trou faux peut alors en entraîner d'autres)")
HARD_CODED = ("réussit l'exemple du cours mais échoue sur d'autres entrées : le calcul doit marcher pour toutes les "
              "données (résultat écrit en dur ?)")


class GraderError(Exception):
    """The course itself is broken (a solution that does not run, a grader that does not load)."""


def fingerprint(course: Course) -> str:
    """Changes whenever anything that decides a grade changes: trous, course.yaml, any course file."""
    digest = hashlib.sha256(trous.__version__.encode())
    digest.update((course.root / "course.yaml").read_bytes())
    for exercise in course.exercises:
        for path in (exercise.template_path, exercise.solution_path, exercise.checks_path, exercise.grader_path):
            digest.update(path.name.encode())
            digest.update(path.read_bytes() if path.exists() else b"<absent>")
    return digest.hexdigest()


def _probe_key(expect: Expect) -> tuple:
    return (expect.variant.key if expect.variant else (), expect.expr, expect.setup)


@dataclass
class _Planned:
    """How to read a unit's results back: which expectations its probes are."""

    exercise: Exercise
    blank: int | None  # the blank graded by this unit (None: whole-file unit)
    expects: list[tuple[int, Expect]]  # (blank index, expectation) per probe


@dataclass
class _ExercisePlan:
    exercise: Exercise
    analysis: Analysis
    mode: str
    units: list[int] = field(default_factory=list)  # positions in the job


class Grader:
    def __init__(self, course: Course, pool: RunnerPool | None = None, limits: Limits | None = None,
                 graders_dir_required: bool = True, only: Iterable[str] | None = None):
        self.course = course
        self.exercises = [e for e in course.exercises if only is None or e.id in set(only)]
        self.pool = pool
        self.base_limits = limits
        self.version = fingerprint(course)
        self.checks: dict[str, list[Check]] = {}
        self.solutions: dict[str, str] = {}
        self.solution_fills: dict[str, list[blanks_mod.Fill]] = {}
        self.references: dict[tuple, ProbeResult] = {}
        self._cache: dict[str, list[UnitResult]] = {}
        self._analyses: dict[tuple, Analysis] = {}
        self._cache_lock = threading.Lock()
        for exercise in self.exercises:
            self.checks[exercise.id] = self._load_checks(exercise, graders_dir_required)
            try:
                solution = read(exercise.solution_path).text
            except Exception as exc:  # noqa: BLE001
                raise GraderError(f"{exercise.solution_path} : {exc}") from None
            template = read(exercise.template_path).text
            fills = blanks_mod.align(template, solution)
            if fills is None or len(fills) != len(exercise.blanks):
                raise GraderError(f"{exercise.solution_path} : ne correspond pas à l'exercice (lance trous doctor)")
            self.solutions[exercise.id] = solution
            self.solution_fills[exercise.id] = fills
        if pool is not None:
            from ..student.checking import preload_for  # noqa: PLC0415

            pool.want(preload_for(self.exercises, self.checks))

    # -- loading -------------------------------------------------------------------------------
    def _load_checks(self, exercise: Exercise, required: bool) -> list[Check]:
        checks = []
        for path, public in ((exercise.checks_path, True), (exercise.grader_path, False)):
            if not path.exists():
                if not public and required:
                    raise GraderError(f"{path} : correcteur caché manquant")
                continue
            try:
                loaded = load_checks(path)
            except Exception as exc:  # noqa: BLE001
                raise GraderError(f"{path} : {type(exc).__name__}: {exc}") from None
            ids = {b.id for b in exercise.blanks}
            for check in loaded:
                if check.blank not in ids:
                    raise GraderError(f"{path} : le trou « {check.blank} » n'existe pas dans {exercise.id}")
            # A check that needs an absent module (torch…) is skipped, as in the student's self-check.
            checks += [c for c in loaded if all(_available(m) for m in c.requires)]
        return checks

    def limits(self, exercise: Exercise) -> Limits:
        return limits_for(exercise, self.base_limits)

    def job_limits(self) -> Limits:
        # course.yaml's bounds (memory, processes, output…) hold for every job; the wall is per unit.
        return self.limits(self.exercises[0]) if self.exercises else (self.base_limits or Limits())

    # -- references ----------------------------------------------------------------------------
    def reference_job(self) -> tuple[Job, list[tuple[tuple, str]]]:
        units, keys = [], []
        for exercise in self.exercises:
            by_variant: dict[tuple, list[Expect]] = {}
            for check in self.checks[exercise.id]:
                for expect in check.expects:
                    if expect.uses_solution:
                        variant = expect.variant.key if expect.variant else ()
                        known = by_variant.setdefault(variant, [])
                        if all(_probe_key(e) != _probe_key(expect) for e in known):
                            known.append(expect)
            for variant, expects in by_variant.items():
                units.append(Unit(self.solutions[exercise.id], f"solutions/{exercise.id}.py",
                                  tuple(Probe(e.expr, e.setup) for e in expects), overrides=variant,
                                  process=exercise.id, wall=self.limits(exercise).wall))
                keys.append([(exercise.id, _probe_key(e)) for e in expects])
        return Job(tuple(units), self.job_limits(), capture_output=False), keys

    def compute_references(self) -> None:
        if self.references or self.pool is None:
            return
        job, keys = self.reference_job()
        if not job.units:
            return
        results = self.pool.run(job)
        problems = []
        for result, unit_keys in zip(results, keys):
            for (exercise_id, key), probe in zip(unit_keys, result.probes):
                if not probe.evaluated or probe.error is not None:
                    error = probe.error or result.error
                    problems.append(f"{exercise_id} : la solution ne donne pas de valeur pour {key[1]!r}"
                                    f"{' (variante ' + str(dict(key[0])) + ')' if key[0] else ''} : "
                                    f"{error.message if error else result.status}")
                self.references[(exercise_id, key)] = probe
        if problems:
            raise GraderError("\n".join(problems))

    # -- one submission ------------------------------------------------------------------------
    def plan(self, files: dict[str, bytes | None]) -> tuple[Job, list[_ExercisePlan], list[_Planned]]:
        units: list[Unit] = []
        planned: list[_Planned] = []
        plans: list[_ExercisePlan] = []
        for exercise in self.exercises:
            shown = f"exercises/{exercise.id}.py"
            analysis = self._analyse(exercise, files.get(exercise.id), shown)
            if files.get(exercise.id) is None:
                plans.append(_ExercisePlan(exercise, analysis, "missing"))
                continue
            if not analysis.readable:
                plans.append(_ExercisePlan(exercise, analysis, "unreadable"))
                continue
            if not analysis.source.text.strip():
                plans.append(_ExercisePlan(exercise, analysis, "empty"))
                continue
            if analysis.aligned:
                plan = _ExercisePlan(exercise, analysis, "blanks")
                for index in range(len(exercise.blanks)):
                    if not analysis.is_filled(index):
                        continue
                    program = blanks_mod.splice(self.solutions[exercise.id], self.solution_fills[exercise.id],
                                                {index: analysis.fill_text(index)})
                    for variant, expects in self._by_variant(exercise, [index]).items():
                        plan.units.append(len(units))
                        # One process per blank: it holds the solution's other fills, never this one's.
                        group = f"{exercise.id}/{index}"
                        units.append(Unit(program, shown, tuple(Probe(e.expr, e.setup) for _, e in expects),
                                          overrides=variant, process=group, group=group,
                                          wall=self.limits(exercise).wall))
                        planned.append(_Planned(exercise, index, expects))
                plans.append(plan)
                continue
            if analysis.syntax is not None:
                plans.append(_ExercisePlan(exercise, analysis, "syntax"))
                continue
            plan = _ExercisePlan(exercise, analysis, "whole_file")
            filled = [i for i in range(len(exercise.blanks)) if analysis.is_filled(i)]
            for variant, expects in self._by_variant(exercise, filled).items():
                plan.units.append(len(units))
                units.append(Unit(analysis.source.text, shown, tuple(Probe(e.expr, e.setup) for _, e in expects),
                                  overrides=variant, process=exercise.id, group=exercise.id,
                                  wall=self.limits(exercise).wall))
                planned.append(_Planned(exercise, None, expects))
            plans.append(plan)
        job = Job(tuple(units), self.job_limits(), capture_output=False)
        return job, plans, planned

    def _analyse(self, exercise: Exercise, data: bytes | None, shown: str) -> Analysis:
        # Tokenizing is the costliest step here, and many copies hold the very same file.
        key = (exercise.id, shown, None if data is None else hashlib.sha256(data).digest())
        with self._cache_lock:
            found = self._analyses.get(key)
        if found is None:
            found = analyse_bytes(exercise, data, shown)
            with self._cache_lock:
                self._analyses[key] = found
        return found

    def _by_variant(self, exercise: Exercise, blank_indexes: list[int]) -> dict[tuple, list[tuple[int, Expect]]]:
        groups: dict[tuple, list[tuple[int, Expect]]] = {}
        for check in self.checks[exercise.id]:
            index = exercise.blank_index(check.blank)
            if index not in blank_indexes:
                continue
            for expect in check.expects:
                groups.setdefault(expect.variant.key if expect.variant else (), []).append((index, expect))
        return groups

    def interpret(self, student: str, plans: list[_ExercisePlan], planned: list[_Planned],
                  results: list[UnitResult]) -> SubmissionGrade:
        grade = SubmissionGrade(student, self.course.id, self.version)
        for plan in plans:
            grade.exercises.append(self._exercise_grade(plan, planned, results))
        return grade

    def _exercise_grade(self, plan: _ExercisePlan, planned: list[_Planned], results: list[UnitResult]) -> ExerciseGrade:
        exercise, analysis = plan.exercise, plan.analysis
        grade = ExerciseGrade(exercise.id, exercise.title, 0.0, exercise.points, plan.mode)
        if plan.mode in ("missing", "unreadable", "syntax", "empty"):
            if plan.mode == "missing":
                message = "fichier absent de la copie"
            elif plan.mode == "empty":
                message = "fichier vide : rien à noter"
            elif plan.mode == "unreadable":
                message = analysis.error or "fichier illisible"
            else:
                s = analysis.syntax
                message = f"erreur de syntaxe ligne {s.line} : {s.message}\n  {s.line} | {s.text.strip()}"
            grade.message = message
            for i, blank in enumerate(exercise.blanks):
                status = MISSING if plan.mode in ("missing", "empty") else (
                    UNFILLED if analysis.readable and not analysis.is_filled(i) else ERROR)
                grade.blanks.append(BlankGrade(blank.id, i + 1, 0.0, blank.points, status,
                                               "pas rempli (___)" if status == UNFILLED else message,
                                               analysis.line_of(i) if analysis.readable else None, blank.hints[0]))
            return grade
        verdicts: dict[int, list[tuple[Expect, object]]] = {}
        for position in plan.units:
            meta, result = planned[position], results[position]
            for (index, expect), probe in zip(meta.expects, result.probes):
                if meta.blank is not None:
                    result_view, probe_view = _remap(result, probe, analysis, meta.blank)
                else:
                    result_view, probe_view = result, probe
                expected = expect.expected
                if expect.uses_solution:
                    reference = self.references.get((exercise.id, _probe_key(expect)))
                    if reference is None or reference.error is not None or not reference.evaluated:
                        raise GraderError(f"{exercise.id} : pas de valeur de référence pour {expect.expr!r}")
                    expected = reference.value
                hidden = bool(expect.variant and expect.variant.hidden)
                verdicts.setdefault(index, []).append((expect, judge(expect, expected, result_view, probe_view,
                                                                     hidden=hidden, reveal=False)))
        if plan.mode == "whole_file":
            grade.notes.append(WHOLE_FILE_NOTE)
        for i, blank in enumerate(exercise.blanks):
            line = analysis.line_of(i)
            if not analysis.is_filled(i):
                grade.blanks.append(BlankGrade(blank.id, i + 1, 0.0, blank.points, UNFILLED, "pas rempli (___)",
                                               line, blank.hints[0]))
                continue
            judged = verdicts.get(i, [])
            failures = [(e, v) for e, v in judged if not v.ok]
            if not failures:
                grade.blanks.append(BlankGrade(blank.id, i + 1, blank.points, blank.points, PASSED, "juste", line))
                continue
            public_ok = all(v.ok for e, v in judged if not (e.variant and e.variant.hidden))
            reasons = list(dict.fromkeys(v.reason for _, v in failures))[:2]
            message = "\n".join(reasons)
            if public_ok and any(e.variant and e.variant.hidden and v.kind == "value" for e, v in failures):
                message = HARD_CODED + "\n" + message
            grade.blanks.append(BlankGrade(blank.id, i + 1, 0.0, blank.points, FAILED, message, line,
                                           blank.hints[0]))
        grade.score = round(sum(b.score for b in grade.blanks), 6)
        return grade

    def grade(self, student: str, files: dict[str, bytes | None]) -> SubmissionGrade:
        if self.pool is None:
            raise GraderError("aucun exécuteur : créez le Grader avec un RunnerPool")
        self.compute_references()
        job, plans, planned = self.plan(files)
        return self.interpret(student, plans, planned, self.run(job))

    def run(self, job: Job) -> list[UnitResult]:
        """Run a submission's units, one job per process key (a blank, or a whole file).

        A job per blank means the process running a student's fill never holds the programs of the
        same exercise's other blanks, which contain the solution of this one. Programs are
        deterministic, so a group of units already run in this session (another student wrote
        the same fill) is not run again; groups that timed out or crashed always are.
        """
        results: list[UnitResult | None] = [None] * len(job.units)
        groups: dict[str, list[int]] = {}
        for i, unit in enumerate(job.units):
            groups.setdefault(unit.process, []).append(i)
        for positions in groups.values():
            units = tuple(job.units[i] for i in positions)
            key = _group_key(units, job.limits)
            with self._cache_lock:
                cached = self._cache.get(key)
            if cached is None:
                cached = self.pool.run(Job(units, job.limits, job.capture_output))
                if all(r.status in ("ok", "error", "exit") for r in cached):
                    with self._cache_lock:
                        self._cache[key] = cached
            for i, result in zip(positions, cached):
                results[i] = result
        return results  # type: ignore[return-value]

    def grade_many(self, submissions: Iterable[tuple[str, dict[str, bytes | None]]],
                   on_done: Callable[[SubmissionGrade], None] | None = None) -> Iterator[SubmissionGrade]:
        """Grade in parallel across the pool's runners; yields grades as they finish."""
        from concurrent.futures import ThreadPoolExecutor, as_completed  # noqa: PLC0415

        self.compute_references()
        executor = ThreadPoolExecutor(max_workers=self.pool.size)
        # Grading threads mostly wait on pipes; a short switch interval lets the thread that records
        # grades (SQLite releases the lock on every statement) get it back without queuing 5 ms.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, 0.0005))
        try:
            futures = [executor.submit(self.grade, student, files) for student, files in submissions]
            for future in as_completed(futures):
                grade = future.result()
                if on_done:
                    on_done(grade)
                yield grade
        finally:
            # Interrupted (Ctrl+C, an error): do not grade the rest of the queue before returning.
            executor.shutdown(wait=True, cancel_futures=True)
            sys.setswitchinterval(interval)


def _group_key(units: tuple[Unit, ...], limits: Limits) -> str:
    digest = hashlib.sha256(repr(sorted(limits.__dict__.items())).encode())
    for unit in units:
        digest.update(unit.source.encode())
        digest.update(repr((unit.filename, unit.probes, unit.overrides, unit.module_name, unit.wall)).encode())
    return digest.hexdigest()


def _remap(result: UnitResult, probe: ProbeResult, analysis: Analysis, index: int):
    """Errors in a spliced program point at the student's own blank, never at the solution's lines."""
    if (result.error is None or result.error.line is None) and (probe.error is None or probe.error.line is None):
        return result, probe
    line = analysis.line_of(index)
    text = analysis.source.line(line) if (line and analysis.source) else None

    def fix(error: ErrorInfo | None) -> ErrorInfo | None:
        if error is None or error.line is None:
            return error
        return replace(error, line=line, text=text)

    return replace(result, error=fix(result.error)), replace(probe, error=fix(probe.error))
