"""Grading a submission blank by blank, against the reference solution and hidden variants.

Each fill is graded in the reference solution with only its blank replaced, so a wrong sum cannot
cost the blanks that use it; it earns its points when its expectations hold (public and hidden, on
the course's inputs and the variants') and the rest of the program still ends with the reference's
top-level variables (same values, same kind). A test function (testworker.py) that fails on the
reference is the course's fault (`GraderError`); on a copy, the copy's, and an `incident` for the
teacher. What copies ran is kept in a `Memo`; verdicts are judged again (cheap next to running).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import queue
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import trous

from ..core import blanknames, compare
from ..core import blanks as blanks_mod
from ..core import flow as flow_mod
from ..core.analysis import Analysis, analyse_bytes
from ..core.checks import Check, Expect, TestInfo, TestResult, load_checks
from ..core.course import Course, Exercise, available, limits_for, preload_for
from ..core.grades import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade, SubmissionGrade
from ..core.judge import (Verdict, describe_error, disclosure, incident, is_blank_name_error, judge, judge_test,
                          variant_context)
from ..core.protocol import CRASH, OK, SKIPPED, TIMEOUT, ErrorInfo, Job, Limits, Probe, ProbeResult, Unit, UnitResult
from ..core.source import read
from ..sandbox.pool import RunnerPool
from ..core.wording import seconds
from .testworker import Clock, TestFunctions

WHOLE_FILE_NOTE = ("tu as modifié le code en dehors des trous : l'exercice est noté en exécutant ton fichier "
                   "entier (un trou faux peut alors en entraîner d'autres)")
HARD_CODED = ("réussit l'exemple du cours mais échoue sur d'autres entrées : le calcul doit marcher pour toutes les "
              "données (résultat écrit en dur ?)")
ONLY_EXAMPLE = ("réussit l'exemple du cours mais échoue sur d'autres entrées : le calcul doit marcher pour toutes "
                "les données")
COPY_WALL = 60.0  # seconds of wall time for a whole copy, unless course.yaml says otherwise
# The memo's bytes (results counted as on the wire, files at a few times theirs): the grader's own
# memory stays under 200 MiB; no one value over LARGEST, it would push out too many others.
MEMO_BYTES = 48 * 1024 * 1024
LARGEST = 2 * 1024 * 1024
AS_IS = "fichiers"  # the process key of the student's own files, run as they are
ENDED = (OK, "error", "exit")  # a unit that ended by itself ends the same way again: kept for other copies
# A right fill may differ from the reference's in the last digits: what follows it is compared within these.
DOWNSTREAM_RTOL, DOWNSTREAM_ATOL = 1e-3, 1e-6
# Why a program's variables could not be read, in the grader's words (never the sandbox's text).
STATE_UNREAD = {"timeout": " (temps dépassé en les lisant)", "too_big": " (trop volumineuses pour être vérifiées)",
                "invalid": " (refusées par le correcteur : le programme a modifié ce qu'il lui envoie ?)",
                "exception": " (une erreur s'est produite en les lisant)", "files": ""}


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
    for folder in ("graders", "exercises"):  # fixtures of the test functions
        path = course.root / folder / "conftest.py"
        if path.exists():
            digest.update(f"{folder}/conftest.py".encode() + path.read_bytes())
    return digest.hexdigest()


def _probe_key(expect: Expect) -> tuple:
    return (expect.overrides, expect.expr, expect.setup)


def _probe(expect: Expect) -> Probe:
    return Probe(expect.expr, expect.setup, secret=expect.hidden or bool(expect.variant and expect.variant.hidden))


def _by_process(units: Iterable[Unit]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        groups.setdefault(unit.process, []).append(i)
    return groups


@dataclass
class _Reference:
    solution: str
    fills: list[blanks_mod.Fill]
    blank_lines: list[int]  # template line of each blank
    flows: list[flow_mod.BlankFlow | None]  # per blank: its statement in the solution, what that sets


@dataclass
class _Planned:
    """How to read a unit's results back."""

    exercise: Exercise
    blank: int | None  # the blank graded by this unit (None: whole-file unit, or the file as is)
    expects: list[tuple[int, Expect]]  # (blank index, expectation) per probe
    variant: tuple = ()
    as_is: bool = False  # the student's own file, run as it is on the course's inputs


@dataclass
class _TestPlan:
    """The test functions of one blank, run in a session on the program of its units, right after them."""

    blank: int
    group: str  # the process key of those units
    tests: list[TestInfo]
    outcomes: list[TestResult] = field(default_factory=list)


@dataclass
class _ExercisePlan:
    exercise: Exercise
    analysis: Analysis
    mode: str
    units: list[int] = field(default_factory=list)  # positions in the job
    tests: list[_TestPlan] = field(default_factory=list)


class Memo:
    """What the grader keeps for other copies, by what decides it, least recently used out past
    `budget` bytes. Single flight: a class's first copies all miss at once, so one computes, the others wait."""

    def __init__(self, budget: int, largest: int | None = None):
        self.budget, self.used, self.largest = budget, 0, budget // 8 if largest is None else largest
        self.items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self.computing: dict[Hashable, threading.Event] = {}
        self.lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], tuple[object, int | None]] | None = None):
        """The value kept for `key`; else None, or what `compute` gives: (value, bytes it costs),
        bytes None when it is not to be kept (a timeout: run again, it may end)."""
        while True:
            with self.lock:
                found = self.items.get(key)
                if found is not None:
                    self.items.move_to_end(key)
                    return found[0]
                if compute is None:
                    return None
                computing = self.computing.get(key)
                if computing is None:
                    computing = self.computing[key] = threading.Event()
                    break
            computing.wait()  # then found above, or not kept (computed here)
        try:
            value, size = compute()
            self.put(key, value, size)
            return value
        finally:
            with self.lock:
                self.computing.pop(key).set()

    def put(self, key: Hashable, value: object, size: int | None) -> None:
        if size is None or size > self.largest:
            return
        with self.lock:
            if key in self.items:
                return
            self.items[key] = (value, size)
            self.used += size
            while self.used > self.budget:
                _, (_, dropped) = self.items.popitem(last=False)
                self.used -= dropped


def preloaded(course: Course, only: Iterable[str] | None = None) -> tuple[str, ...]:
    """The modules a grading's sandboxes import once, for sandboxes launched before the Grader is made
    (a module wanted after a sandbox started would be imported by every job instead)."""
    wanted = None if only is None else set(only)
    exercises = [e for e in course.exercises if wanted is None or e.id in wanted]
    checks: dict[str, list[Check]] = {}
    for exercise in exercises:
        try:
            checks[exercise.id] = load_checks(exercise.checks_path)
        except Exception:  # noqa: BLE001 - the Grader says what is wrong with them, with where
            checks[exercise.id] = []
    return preload_for(exercises, checks)


class Grader:
    def __init__(self, course: Course, pool: RunnerPool, only: Iterable[str] | None = None):
        self.course = course
        self.exercises = [e for e in course.exercises if only is None or e.id in set(only)]
        self.pool = pool
        self.version = fingerprint(course)
        self.copy_wall = course.spec.limits.copy_wall or COPY_WALL
        # course.yaml's bounds (memory, processes, output…) hold for every job; the wall is per unit.
        self.limits = limits_for(self.exercises[0]) if self.exercises else Limits()
        self.checks: dict[str, list[Check]] = {}
        self.refs: dict[str, _Reference] = {}
        self.references: dict[tuple, ProbeResult] = {}
        self.states: dict[tuple, dict] = {}  # (exercise id, variant) → the solution's top-level variables
        # Those whose equality means equal values (no True standing for a 1 among lists of numbers).
        self.plain_states: set[tuple] = set()
        self.memo = Memo(MEMO_BYTES, LARGEST)
        self._broken: str | None = None  # why the references cannot be computed
        # Told each test function's outcome on each copy: the doctor counts which mutants each test refuses.
        self.observe: Callable[[str, TestResult], None] | None = None
        for exercise in self.exercises:
            self.checks[exercise.id] = self._load_checks(exercise)
            try:
                solution = read(exercise.solution_path).text
            except Exception as exc:  # noqa: BLE001
                raise GraderError(f"{exercise.solution_path} : {exc}") from None
            template = read(exercise.template_path).text
            fills = blanks_mod.align(template, solution)
            if fills is None or len(fills) != len(exercise.blanks):
                raise GraderError(f"{exercise.solution_path} : ne correspond pas à l'exercice (lance trous doctor)")
            misnamed = blanknames.contradictions(template, [b.id for b in exercise.blanks])
            if misnamed:  # grading would give each blank the points of another
                shown = exercise.template_path.relative_to(course.root)
                raise GraderError("\n".join(f"{shown}:{c.line} : {c.message}" for c in misnamed))
            self.refs[exercise.id] = _Reference(solution, fills, [b.line for b in blanks_mod.find_blanks(template)],
                                                _flows(solution, fills))
        self.tests = TestFunctions(course, self.exercises, pool.size)
        if self.tests.problems:
            self.tests.close()
            raise GraderError("\n".join(self.tests.problems))
        pool.want(preload_for(self.exercises, self.checks))

    def close(self) -> None:
        """Stop the test functions' workers (the runners are the pool's owner's)."""
        self.tests.close()

    def _load_checks(self, exercise: Exercise) -> list[Check]:
        checks = []
        for path, public in ((exercise.checks_path, True), (exercise.grader_path, False)):
            if not path.exists():
                if not public:
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
            if not public:  # a hidden grader's expectations are described, never shown
                loaded = [replace(c, expects=tuple(replace(e, hidden=True) for e in c.expects)) for c in loaded]
            # A check that needs an absent module (torch…) is skipped, as in the student's self-check.
            checks += [c for c in loaded if all(available(m) for m in c.requires)]
        return checks

    def _group_by_variant(self, exercise: Exercise, wanted: set[int] | None) -> dict[tuple, list[tuple[int, Expect]]]:
        """Expectations of the blanks `wanted` (None: all) by variant, the course's own inputs always."""
        groups: dict[tuple, list[tuple[int, Expect]]] = {(): []}
        order: dict[tuple, int] = {(): 0}
        for check in self.checks[exercise.id]:
            index = exercise.blank_index(check.blank)
            if wanted is not None and index not in wanted:
                continue
            for expect in check.expects:
                key = expect.overrides
                groups.setdefault(key, []).append((index, expect))
                # Public inputs first: a program learns the hidden inputs only after its public results are in.
                order[key] = min(order.get(key, 9), 0 if expect.variant is None else 1 + expect.variant.hidden)
        return {k: groups[k] for k in sorted(groups, key=lambda k: order[k])}

    def compute_references(self) -> None:
        """The solution's values and variables on every input, once."""
        if self._broken is not None:
            raise GraderError(self._broken)
        if self.states:
            return
        units, keys = [], []
        for exercise in self.exercises:
            for variant, pairs in self._group_by_variant(exercise, None).items():
                expects: dict[tuple, Expect] = {_probe_key(e): e for _, e in pairs if e.uses_solution}
                units.append(Unit(self.refs[exercise.id].solution, f"solutions/{exercise.id}.py",
                                  tuple(Probe(e.expr, e.setup) for e in expects.values()), overrides=variant,
                                  process=exercise.id, wall=limits_for(exercise).wall, state=()))
                keys.append((exercise.id, variant, list(expects)))
        if not units:
            return
        job = Job(tuple(units), self.limits, capture_output=False)
        problems = []
        for result, (exercise_id, variant, probe_keys) in zip(self._spread(job), keys):
            shown = f" (variante {dict(variant)})" if variant else ""
            if result.status != OK:
                problems.append(f"{exercise_id} : la solution ne s'exécute pas jusqu'au bout{shown} : "
                                f"{describe_error(result.error)}")
            if not isinstance(result.state, dict) or "$error" in result.state:
                problems.append(f"{exercise_id} : variables de la solution illisibles{shown}")
            else:
                self.states[(exercise_id, variant)] = result.state
                if compare.plain(result.state):
                    self.plain_states.add((exercise_id, variant))
            for key, probe in zip(probe_keys, result.probes):
                if not probe.evaluated or probe.error is not None:
                    error = probe.error or result.error
                    problems.append(f"{exercise_id} : la solution ne donne pas de valeur pour {key[1]!r}{shown} : "
                                    f"{error.message if error else result.status}")
                self.references[(exercise_id, key)] = probe
        if not problems and self.tests:
            problems += self._reference_tests()
        if problems:
            self._broken = "\n".join(problems)  # said again to whoever asks again: nothing is graded
            raise GraderError(self._broken)

    def _spread(self, job: Job) -> list[UnitResult]:
        """The job's processes spread over the pool's runners (round robin) and run at once."""
        groups = list(_by_process(job.units).values())
        runners = min(self.pool.size, len(groups))
        shares = [[i for positions in groups[k::runners] for i in positions] for k in range(runners)]
        results: list[UnitResult | None] = [None] * len(job.units)
        parts = [Job(tuple(job.units[i] for i in share), job.limits, job.capture_output) for share in shares]
        for n, got in self.pool.map(parts):
            for i, result in zip(shares[n], got):
                results[i] = result
        return results  # type: ignore[return-value]

    def _reference_tests(self) -> list[str]:
        """Each test function must pass on the reference solution (a grader gives it all its points) and
        ask the program something (else it checks nothing)."""
        problems = []
        for exercise in self.exercises:
            tests = [t for b in exercise.blanks for t in self.tests.of(exercise.id, b.id)]
            if not tests:
                continue
            unit = Unit(self.refs[exercise.id].solution, f"solutions/{exercise.id}.py", wall=limits_for(exercise).wall)
            with self.pool.session(unit, self.limits) as session:
                outcomes = self.tests.run(tests, session, reference=True, value_kb=self.limits.value_kb)
            for outcome in outcomes:
                test = outcome.test
                if outcome.outcome not in ("passed", "skipped"):
                    detail = "\n".join("    " + line for line in outcome.detail.splitlines()[-25:])
                    problems.append(f"{test.path}::{test.name} (trou « {test.blank} ») échoue sur la solution de "
                                    f"référence : un correcteur donne tous ses points à la solution\n{detail}")
                elif outcome.outcome == "passed" and outcome.asked == 0:
                    problems.append(f"{test.path}::{test.name} (trou « {test.blank} ») ne demande rien au programme "
                                    "(eleve n'y est jamais appelé) : il ne vérifie rien")
        return problems

    def plan(self, files: dict[str, bytes | None]) -> tuple[Job, list[_ExercisePlan], list[_Planned]]:
        units: list[Unit] = []
        planned: list[_Planned] = []
        plans: list[_ExercisePlan] = []
        as_is: list[tuple[Unit, _Planned, _ExercisePlan]] = []  # run last: see run()

        def add(unit: Unit, meta: _Planned, plan: _ExercisePlan) -> None:
            plan.units.append(len(units))
            units.append(unit)
            planned.append(meta)

        for exercise in self.exercises:
            shown = f"exercises/{exercise.id}.py"
            analysis = self._analyse(exercise, files.get(exercise.id))
            wall = limits_for(exercise).wall
            plan = _ExercisePlan(exercise, analysis, _mode(files.get(exercise.id), analysis))
            plans.append(plan)
            if plan.mode == "blanks":
                for index in range(len(exercise.blanks)):
                    if not analysis.is_filled(index):
                        continue
                    program = self._spliced(self.refs[exercise.id], analysis, index)
                    # One process per blank: it holds the solution's other fills, never this one's.
                    group = f"{exercise.id}/{index}"
                    for variant, expects in self._group_by_variant(exercise, {index}).items():
                        names = tuple(self.states.get((exercise.id, variant), {}))
                        add(Unit(program, shown, tuple(_probe(e) for _, e in expects),
                                 overrides=variant, process=group, group=group, wall=wall, state=names),
                            _Planned(exercise, index, expects, variant), plan)
                    if tests := self.tests.of(exercise.id, exercise.blanks[index].id):
                        plan.tests.append(_TestPlan(index, group, tests))
                # The student's own files hold nothing but the student's code: all in one process.
                as_is.append((Unit(analysis.source.text, shown, (), process=AS_IS, group=f"{exercise.id}/fichier",
                                   wall=wall), _Planned(exercise, None, [], (), as_is=True), plan))
            elif plan.mode == "whole_file":
                filled = [i for i in range(len(exercise.blanks)) if analysis.is_filled(i)]
                for variant, expects in self._group_by_variant(exercise, set(filled)).items():
                    add(Unit(analysis.source.text, shown, tuple(_probe(e) for _, e in expects),
                             overrides=variant, process=exercise.id, group=exercise.id, wall=wall),
                        _Planned(exercise, None, expects, variant, as_is=not variant), plan)
                for index in filled:
                    if tests := self.tests.of(exercise.id, exercise.blanks[index].id):
                        plan.tests.append(_TestPlan(index, exercise.id, tests))
        for unit, meta, plan in as_is:
            add(unit, meta, plan)
        return Job(tuple(units), self.limits, capture_output=False), plans, planned

    @staticmethod
    def _spliced(ref: _Reference, analysis: Analysis, index: int) -> str:
        return blanks_mod.splice(ref.solution, ref.fills, {index: analysis.fill_text(index)})

    def blank_program(self, exercise: Exercise, data: bytes | None, index: int) -> tuple[str | None, str]:
        """The program grading runs blank `index` of this file on; (None, why) when it is not run."""
        analysis = self._analyse(exercise, data)
        mode = _mode(data, analysis)
        if mode in ("missing", "unreadable", "empty"):
            return None, _unrunnable_message(mode, analysis)
        if not analysis.is_filled(index):
            return None, "trou pas rempli (___)"
        if mode == "syntax":
            return None, _unrunnable_message(mode, analysis)
        if mode == "blanks":
            return self._spliced(self.refs[exercise.id], analysis, index), ""
        return analysis.source.text, ""

    def _analyse(self, exercise: Exercise, data: bytes | None) -> Analysis:
        # Tokenizing is the costliest step here, and many copies hold the very same file.
        key = ("analysis", exercise.id, None if data is None else hashlib.sha256(data).digest())
        shown = f"exercises/{exercise.id}.py"
        return self.memo.get(key, lambda: (analyse_bytes(exercise, data, shown), 4 * len(data or b"") + 1024))

    def interpret(self, student: str, plans: list[_ExercisePlan], planned: list[_Planned],
                  results: list[UnitResult]) -> SubmissionGrade:
        grade = SubmissionGrade(student, self.course.id, self.version)
        for plan in plans:
            grade.exercises.append(self._exercise_grade(plan, planned, results))
            tampered = next(filter(None, (_tampered(results[i]) for i in plan.units)), None)
            if tampered is not None:
                grade.incidents.append(f"{plan.exercise.id} : réponse du bac à sable refusée ({tampered}) — aucun "
                                       "programme ne l'écrit sans toucher au correcteur : la copie l'a sans doute modifié")
            for outcome in (o for test_plan in plan.tests for o in test_plan.outcomes):
                if self.observe is not None:
                    self.observe(student, outcome)
                said = incident(outcome)
                if said is not None:  # the test passes on the reference: this copy's values did it
                    grade.incidents.append(f"{plan.exercise.id} : {said}")
        return grade

    def _exercise_grade(self, plan: _ExercisePlan, planned: list[_Planned], results: list[UnitResult]) -> ExerciseGrade:
        exercise, analysis = plan.exercise, plan.analysis
        grade = ExerciseGrade(exercise.id, exercise.title, 0.0, exercise.points, plan.mode)
        if plan.mode in ("missing", "unreadable", "syntax", "empty"):
            return self._unrunnable(grade, plan)
        verdicts: dict[int, list[tuple[Expect | None, object]]] = {}
        seen: dict[tuple, object] = {}  # (blank, check, variant) → the value it obtained
        told: set[int] = set()  # blanks whose downstream problem is already said
        spliced = plan.mode == "blanks"
        for position in plan.units:
            meta, result = planned[position], results[position]
            if meta.as_is:
                grade.run = self._run_as_is(result, analysis)
                if meta.blank is None and not meta.expects:
                    continue
            own_ok = True
            for (index, expect), probe in zip(meta.expects, result.probes):
                result_view, probe_view = _remap(result, probe, analysis, index) if spliced else (result, probe)
                expected = expect.expected
                if expect.uses_solution:
                    reference = self.references.get((exercise.id, _probe_key(expect)))
                    if reference is None or reference.error is not None or not reference.evaluated:
                        raise GraderError(f"{exercise.id} : pas de valeur de référence pour {expect.expr!r}")
                    expected = reference.value
                say = disclosure(expect, graded=True, own_file=not spliced and not meta.variant)
                verdict = judge(expect, expected, result_view, probe_view, say=say)
                own_ok = own_ok and verdict.ok
                verdicts.setdefault(index, []).append((expect, verdict))
                if probe.evaluated and probe.error is None:
                    seen[(index, expect.setup, expect.expr, expect.overrides)] = probe.value
            if spliced and meta.blank is not None:
                downstream = self._downstream(exercise, analysis, meta, result, own_ok)
                if downstream is not None:
                    if meta.blank in told:  # said once, on the first inputs where it shows
                        downstream = replace(downstream, reason="")
                    told.add(meta.blank)
                    verdicts.setdefault(meta.blank, []).append((None, downstream))
        for test_plan in plan.tests:
            line = (lambda n, i=test_plan.blank: analysis.line_of(i) if n else None) if spliced else (lambda n: n)
            for outcome in test_plan.outcomes:
                verdict = judge_test(outcome, line)
                if verdict is not None:
                    verdicts.setdefault(test_plan.blank, []).append((None, verdict))
        if plan.mode == "whole_file":
            grade.notes.append(WHOLE_FILE_NOTE)
        for i, blank in enumerate(exercise.blanks):
            grade.blanks.append(self._blank_grade(blank, analysis, i, verdicts.get(i, []), seen))
        grade.score = round(sum(b.score for b in grade.blanks), 6)
        return grade

    @staticmethod
    def _blank_grade(blank, analysis: Analysis, i: int, judged: list[tuple[Expect | None, Verdict]],
                     seen: dict) -> BlankGrade:
        line = analysis.line_of(i)
        if not analysis.is_filled(i):
            return BlankGrade(blank.id, i + 1, 0.0, blank.points, UNFILLED, "pas rempli (___)", line, blank.hints[0])
        failures = [(e, v) for e, v in judged if not v.ok]
        if not failures:
            return BlankGrade(blank.id, i + 1, blank.points, blank.points, PASSED, "juste", line)
        example_ok = all(v.ok for e, v in judged if e is not None and e.variant is None)
        message = "\n".join(list(dict.fromkeys(v.reason for _, v in failures if v.reason))[:2])
        # Right on the course's inputs only: « écrit en dur » when it gives elsewhere what it gave
        # there, not for a formula that only coincides there (a `>` for `>=`).
        if example_ok and not any(v.kind == "structure" for _, v in failures) and any(
                e is not None and e.variant is not None and v.kind == "value" for e, v in failures):
            unmoved = (_unmoved(seen, i, e) for e, _ in failures if e is not None and e.variant is not None)
            known = [u for u in unmoved if u is not None]
            written_in = any(known) if known else not _reads_data(analysis, i)
            message = (HARD_CODED if written_in else ONLY_EXAMPLE) + "\n" + message
        return BlankGrade(blank.id, i + 1, 0.0, blank.points, FAILED, message, line, blank.hints[0])

    @staticmethod
    def _unrunnable(grade: ExerciseGrade, plan: _ExercisePlan) -> ExerciseGrade:
        exercise, analysis = plan.exercise, plan.analysis
        message = _unrunnable_message(plan.mode, analysis)
        if plan.mode == "syntax":
            message += f"\n  {analysis.syntax.line} | {analysis.syntax.text.strip()}"
            grade.run = {"ok": False, "line": analysis.syntax.line, "text": analysis.syntax.text.strip(),
                         "error": f"SyntaxError: {analysis.syntax.message}"}
        grade.message = message
        for i, blank in enumerate(exercise.blanks):
            status = MISSING if plan.mode in ("missing", "empty") else (
                UNFILLED if analysis.readable and not analysis.is_filled(i) else ERROR)
            grade.blanks.append(BlankGrade(blank.id, i + 1, 0.0, blank.points, status,
                                           "pas rempli (___)" if status == UNFILLED else message,
                                           analysis.line_of(i) if analysis.readable else None, blank.hints[0]))
        return grade

    @staticmethod
    def _run_as_is(result: UnitResult, analysis: Analysis) -> dict:
        """Does the student's own file, run as it is on the course's inputs, reach its end?"""
        if result.status == OK:
            return {"ok": True}
        error = result.error
        line = error.line if error else None
        text = analysis.source.line(line).strip() if (line and analysis.source) else None
        if error is not None and error.kind in ("exception", "syntax") and error.type:
            said = f"{error.type}: {error.message}" if error.message else error.type
        else:
            said = describe_error(error)
        if is_blank_name_error(error):
            said = "trou pas encore rempli (___)"
        said = " ".join(said.split())
        return {"ok": False, "line": line, "text": text, "error": said if len(said) <= 300 else said[:299] + "…"}

    def _downstream(self, exercise: Exercise, analysis: Analysis, meta: _Planned, result: UnitResult,
                    own_ok: bool) -> Verdict | None:
        """A verdict when the rest of the program stops or leaves other variables than the reference's
        (never showing values: they could be the reference's). `own_ok`: the blank's expectations hold."""
        reference = self.states.get((exercise.id, meta.variant))
        if reference is None:
            return None
        ref, index = self.refs[exercise.id], meta.blank
        statement = ref.flows[index]
        context = ""
        if meta.variant:
            on_variant = next((e for _, e in meta.expects if e.variant), None)
            context = (variant_context(on_variant, hidden=True) if on_variant else "sur d'autres entrées") + " : "
        if result.status == OK and (exercise.id, meta.variant) in self.plain_states and result.state == reference:
            return None  # the usual case: the very variables of the reference
        kind = self._kind_gloss(statement, reference, result.state)
        error = result.error
        but = "ton trou donne la bonne valeur, mais " if own_ok else ""
        if result.status != OK and error is not None and statement is not None:
            extra = blanks_mod.extra_lines(analysis.fill_text(index) or "") - blanks_mod.extra_lines(ref.fills[index].text)
            running = error.statement or error.line  # the line the top-level flow was on
            after = running is not None and running > statement.statement[1] + extra
            # The program must reach its end: a stop after the blank costs it, a stop before it too
            # once its expectations hold (in a loop, a later line may run before the blank's again).
            if after or own_ok:
                where = self._student_line(exercise, analysis, meta, running) if running else None
                # The exception's type only: its message could carry what the reference computed.
                said = (f" — {error.type or 'erreur'}" if error.kind in ("exception", "exit")
                        else f" — {describe_error(error, message=error.kind != 'memory')}")
                shown = f"\n  {where} | {analysis.source.line(where).strip()}" if where and analysis.source else ""
                stops = "la suite du programme s'arrête" if after else "le programme s'arrête"
                text = f"{context}{but}{stops}{f' ligne {where}' if where else ''}{said}{shown}"
                return Verdict(False, text + (f"\n{kind}" if kind else ""), where)
        if result.status != OK:
            return None  # the blank's own expectations already say why
        if not isinstance(result.state, dict) or "$error" in result.state:
            # No credit for what could not be checked.
            why = STATE_UNREAD.get(((result.state or {}).get("$error") or {}).get("kind"), "")
            return Verdict(False, f"{context}{but}les variables que laisse le programme n'ont pas pu être comparées "
                                  f"à celles de la solution{why}", kind="error")
        own = statement.assigns | statement.changes if statement is not None else frozenset()
        for name, expected in reference.items():
            obtained = result.state.get(name, {"$missing": True})
            if name in own:
                # Its values are its expectations' to judge; its kind, which what follows relies on, here.
                mismatch = compare.compare(expected, obtained, rtol=float("inf"), atol=float("inf"))
            elif own_ok:
                mismatch = compare.compare(expected, obtained, rtol=DOWNSTREAM_RTOL, atol=DOWNSTREAM_ATOL)
            else:
                continue  # a wrong value changes what follows: its own expectations say it
            if mismatch is None or (name in own and not mismatch.structural):
                continue
            reason = mismatch.reason if mismatch.structural else ""  # values could be the reference's
            if name in own:
                return Verdict(False, context + (kind or f"« {name} » : {reason}"), kind="structure")
            text = (f"{context}{but}la suite du programme ne donne plus les mêmes résultats : "
                    f"« {name} »{f' — {reason}' if reason else ' diffère'}")
            return Verdict(False, text + (f"\n{kind}" if kind else ""), kind="value")
        return None

    @staticmethod
    def _kind_gloss(statement: flow_mod.BlankFlow | None, reference: dict, state: dict | None) -> str:
        """When the blank's own variable is not of the kind the course builds, say so in French."""
        if statement is None or not isinstance(state, dict):
            return ""
        for name in sorted(statement.assigns | statement.changes):
            if name not in reference or name not in state:
                continue
            expected, obtained = compare.decode(reference[name], arrays=True), compare.decode(state[name], arrays=True)
            if isinstance(expected, compare.Array) and not isinstance(obtained, compare.Array):
                return (f"« {name} » est {compare.describe_type(obtained)} là où le cours construit un tableau NumPy "
                        "(np.array…) : la suite du programme s'en sert comme d'un tableau")
            if isinstance(expected, float) and isinstance(obtained, int) and not isinstance(obtained, bool):
                return (f"« {name} » est un entier là où le cours construit un nombre à virgule : "
                        "la suite du programme en dépend")
        return ""

    def _student_line(self, exercise: Exercise, analysis: Analysis, meta: _Planned, line: int) -> int | None:
        """A line of the per-blank program, placed in the student's own file."""
        ref = self.refs[exercise.id]
        extras = [blanks_mod.extra_lines(f.text) for f in ref.fills]
        extras[meta.blank] = blanks_mod.extra_lines(analysis.fill_text(meta.blank) or "")
        template_line = blanks_mod.LineMap.of(ref.blank_lines, extras).to_template(line)
        own = [blanks_mod.extra_lines(f.text) for f in analysis.fills or []]
        if len(own) != len(ref.blank_lines):
            return None
        return blanks_mod.LineMap.of(ref.blank_lines, own).to_copy(template_line)

    def grade(self, student: str, files: dict[str, bytes | None]) -> SubmissionGrade:
        self.compute_references()
        job, plans, planned = self.plan(files)
        return self.interpret(student, plans, planned, self.run(job, planned, plans))

    def run(self, job: Job, planned: list[_Planned], plans: list[_ExercisePlan]) -> list[UnitResult]:
        """A submission's units, one job per process key (see plan()), each blank's test functions
        right after its units. Programs are deterministic: a group this grader ran to its end is not
        run again. Past the copy's budget, the groups left are not run (their blanks get 0)."""
        results: list[UnitResult | None] = [None] * len(job.units)
        groups = _by_process(job.units)
        clock = Clock(self.copy_wall, f"non exécuté : le temps accordé à la copie ({seconds(self.copy_wall)}) est "
                                      "épuisé (boucles trop longues ailleurs ?)")
        for process, positions in groups.items():
            if process == AS_IS:
                # Not run as they are: the files whose exercise already looped in a per-blank run (the same
                # wall time once more: their report says so), and those already run (another copy's same file).
                looped = {planned[i].exercise.id for i, r in enumerate(results)
                          if r is not None and r.status == TIMEOUT and planned[i].blank is not None}
                for i in positions:
                    if planned[i].exercise.id in looped:
                        results[i] = UnitResult.failed(SKIPPED, "skipped", "non lancé tel quel : un de tes trous "
                                                                           "tourne déjà sans fin (temps dépassé)", 0)
                    elif (known := self.memo.get(("run", _group_key((job.units[i],), job.limits)))) is not None:
                        results[i] = known[0]
                positions = [i for i in positions if results[i] is None]
            self._run_group(positions, job, results, clock)
            for test_plan in (t for plan in plans for t in plan.tests if t.group == process):
                self._run_tests(test_plan, job.units[groups[process][0]], [results[i] for i in groups[process]],
                                job.limits, clock)
        return results  # type: ignore[return-value]

    def _run_group(self, positions: list[int], job: Job, results: list, clock: Clock) -> None:
        if not positions:
            return
        left = clock.left()
        if left <= 0.05:
            for i in positions:
                results[i] = UnitResult.failed(SKIPPED, "skipped", clock.message, len(job.units[i].probes))
            return
        units = tuple(_within(job.units[i], left, job.limits) for i in positions)

        def run() -> tuple[list[UnitResult], int | None]:
            started = time.monotonic()
            got = self.pool.run(Job(units, job.limits, job.capture_output))
            clock.spent += time.monotonic() - started
            for unit, result in zip(units, got):
                if unit.process == AS_IS and len(units) > 1 and result.status in ENDED:  # each file on its own too
                    self.memo.put(("run", _group_key((unit,), job.limits)), [result], result.size or 1024)
            return got, sum(r.size or 1024 for r in got) if all(r.status in ENDED for r in got) else None

        key = ("run", _group_key(units, job.limits))
        for i, result in zip(positions, self.memo.get(key, run)):
            results[i] = result

    def _run_tests(self, plan: _TestPlan, unit: Unit, unit_results: list[UnitResult], limits: Limits,
                   clock: Clock) -> None:
        """A blank's test functions, on the program its group ran; not when that hung or crashed (the
        tests would cost that time again for nothing)."""
        stopped = next((r for r in unit_results if r is not None and r.status in (TIMEOUT, CRASH, SKIPPED)), None)
        if stopped is not None:
            plan.outcomes = [TestResult.stopped(t, stopped.error) for t in plan.tests]
            return
        key = ("tests", _group_key((Unit(unit.source, unit.filename, wall=unit.wall),), limits),
               tuple(t.nodeid for t in plan.tests))
        if self.memo.get(key) is None and clock.left() <= 0.05:
            error = ErrorInfo("skipped", message=clock.message)
            plan.outcomes = [TestResult.stopped(t, error) for t in plan.tests]
            return

        def run() -> tuple[list[TestResult], int | None]:
            with self.pool.session(Unit(unit.source, unit.filename, wall=unit.wall), limits) as session:
                outcomes = self.tests.run(plan.tests, session, clock, value_kb=limits.value_kb)
            kept = all(o.definitive for o in outcomes)
            return outcomes, sum(512 + len(o.detail) for o in outcomes) if kept else None

        plan.outcomes = self.memo.get(key, run)

    def grade_many(self, submissions: Iterable[tuple[str, dict[str, bytes | None]]]) -> Iterator[SubmissionGrade]:
        """Grades as they finish, one thread per runner taking the copies as they come (none kept here)."""
        self.compute_references()
        copies, taking = iter(submissions), threading.Lock()
        stopped = threading.Event()
        finished: queue.SimpleQueue = queue.SimpleQueue()  # a grade, an error, or None: a thread ended

        def work() -> None:
            try:
                while not stopped.is_set():
                    with taking:
                        copy = next(copies, None)
                    if copy is None:
                        return
                    finished.put(self.grade(*copy))
            except BaseException as exc:  # noqa: BLE001 - raised to the caller, which stops the rest
                stopped.set()
                finished.put(exc)
            finally:
                finished.put(None)

        threads = [threading.Thread(target=work, name=f"trous-grading-{i}", daemon=True) for i in range(self.pool.size)]
        # Grading threads mostly wait on pipes: the one recording grades gets the GIL back sooner.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, 0.0005))
        try:
            for thread in threads:
                thread.start()
            running = len(threads)
            while running:
                item = finished.get()
                if item is None:
                    running -= 1
                    continue
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            # Interrupted (Ctrl+C, an error): the threads end with the copy they are on, no other.
            stopped.set()
            for thread in threads:
                thread.join()
            sys.setswitchinterval(interval)


def _mode(data: bytes | None, analysis: Analysis) -> str:
    if data is None:
        return "missing"
    if not analysis.readable:
        return "unreadable"
    if not analysis.source.text.strip():
        return "empty"
    if analysis.aligned:
        return "blanks"
    return "syntax" if analysis.syntax is not None else "whole_file"


def _unrunnable_message(mode: str, analysis: Analysis) -> str:
    if mode == "syntax":
        return f"erreur de syntaxe ligne {analysis.syntax.line} : {analysis.syntax.message}"
    return {"missing": "fichier absent de la copie", "empty": "fichier vide : rien à noter"}.get(
        mode, analysis.error or "fichier illisible")


def _flows(solution: str, fills: list[blanks_mod.Fill]) -> list[flow_mod.BlankFlow | None]:
    flow = flow_mod.analyse(solution, [(f.begin, f.stop) for f in fills])
    if not flow.known or len(flow.blanks) != len(fills):
        return [None] * len(fills)
    return list(flow.blanks)


def _tampered(result: UnitResult) -> str | None:
    """Why the sandbox's answer was forged (refused by core/wire.py, or what no child writes), else None."""
    errors = [result.error, *(p.error for p in result.probes)]
    if isinstance(result.state, dict) and isinstance(result.state.get("$error"), dict):
        errors.append(ErrorInfo(str(result.state["$error"].get("kind")), message=str(result.state["$error"].get("message"))))
    return next((e.message for e in errors if e is not None and e.kind in ("invalid", "protocol")), None)


def _within(unit: Unit, left: float, limits: Limits) -> Unit:
    wall = unit.wall or limits.wall
    return unit if wall <= left else replace(unit, wall=max(0.1, left))


def _group_key(units: tuple[Unit, ...], limits: Limits) -> str:
    """What decides a group's results: its programs, inputs, checks and bounds."""
    digest = hashlib.sha256(repr(sorted(limits.__dict__.items())).encode())
    for unit in units:
        digest.update(hashlib.sha256(unit.source.encode()).digest())
        digest.update("\0".join((unit.filename, unit.module_name, repr(unit.wall), repr(unit.overrides),
                                  repr(unit.state), *(f"{p.expr}\1{p.setup}\1{p.secret}" for p in unit.probes))).encode())
    return digest.hexdigest()


def _unmoved(seen: dict, blank: int, expect: Expect) -> bool | None:
    """Did the check give on the variant's inputs the value it gave on the course's? None: unknown."""
    key = (blank, expect.setup, expect.expr)
    here, there = seen.get((*key, expect.overrides), seen), seen.get((*key, ()), seen)
    return None if here is seen or there is seen else here == there


def _reads_data(analysis: Analysis, index: int) -> bool:
    """Does the fill read a variable of the program (not only literals, builtins, modules, functions)?"""
    try:
        fill = ast.parse((analysis.fill_text(index) or "").strip(), mode="eval")
        tree = ast.parse(analysis.source.text) if analysis.source else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    given = set(dir(builtins))
    for node in tree.body if tree else ():
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            given |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            given.add(node.name)
    bound = {n.id for n in ast.walk(fill) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(fill) if isinstance(n, ast.Lambda) for a in n.args.args}
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in given | bound
               for n in ast.walk(fill))


def _remap(result: UnitResult, probe: ProbeResult, analysis: Analysis, index: int):
    """Errors in a spliced program point at the student's own blank, never at the solution's lines."""
    if (result.error is None or result.error.line is None) and (probe.error is None or probe.error.line is None):
        return result, probe
    line = analysis.line_of(index)
    text = analysis.source.line(line) if (line and analysis.source) else None

    def fix(error: ErrorInfo | None) -> ErrorInfo | None:
        return error if error is None or error.line is None else replace(error, line=line, text=text)

    return replace(result, error=fix(result.error)), replace(probe, error=fix(probe.error))
