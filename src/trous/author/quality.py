"""Is each hidden grader good enough, and do the public checks agree with it? (part of `trous doctor`)

A blank fails when a hidden check varies what its fill reads and no public check does (observe.py).
The solutions get full marks, the shipped exercises zero, and each generated wrong fill (mutants.py)
loses its blank's points; one that keeps them *survives*, unless the grader's `EQUIVALENT_MUTANTS =
{"blank_id": ["fill", …]}` lists it (with a comment saying why) as the right answer written another
way. A mutant refused in secret but accepted by the public checks, as `pytest exercises/` runs them,
is an *escape* (« juste », then the point lost): it fails the course.
"""

from __future__ import annotations

import ast
import math
import threading
from dataclasses import dataclass, replace

import numpy

from ..check.selfcheck import ExerciseResult, interpret, prepare
from ..core.analysis import Analysis, analyse_source
from ..core.blanks import BLANK, defined_name, splice
from ..core.checks import Check, TestResult, load_checks, load_module
from ..core.compare import compare
from ..core.course import Course, Exercise, limits_for
from ..core.encode import encode
from ..core.protocol import OK, Job, Probe, Unit, UnitResult
from ..core.source import Source, read
from ..grade.engine import Grader, GraderError
from ..grade.testworker import has_tests
from ..sandbox.pool import RunnerPool
from . import observe
from .mutants import (AS_INT, AS_LIST, EXAMPLE, FAMILIES, HARD_CODED, HARD_CODED_LABELS, KIND, PASTED,
                      Candidate, as_number, is_array, kind_mutants, literal, mutants, pasted, rounded, rounded_fills)

KEEP = "__trous_keep__"
PRELUDE = (f"__trous_seen__ = {{}}\n__trous_kind__ = {{}}\n"
           f"def {KEEP}(k, v):\n"
           f"    if k not in __trous_seen__:\n"
           f"        __trous_seen__[k] = v\n"
           f"        __trous_kind__[k] = (type(v).__module__, type(v).__name__)\n"
           f"    return v\n")
KIND_OF = "(type({0}).__module__, type({0}).__name__)"
MAIN_WALL = 3.0  # seconds for the solution's own printout (an exercise may time things in its __main__)
BATCH_UNITS = 64  # units per job: a job costs about as much as three units, so mutants share jobs


@dataclass
class Mutant:
    exercise: str
    blank: int
    label: str
    fill: str  # the mutated fill, or the hard-coded statement
    text: str  # the whole file graded
    public_text: str  # the file the public checks run: the solution with only this blank changed
    family: str  # mutants.FAMILIES
    whole_file: bool = False
    refused: bool = False  # loses its blank's points in grading
    refused_by_public_test: bool = False  # a public test function (exercises/test_*.py) fails on it


@dataclass
class PublicVerdict:
    passed: bool
    broken: str | None = None  # « ligne N : TypeError » when a line after the blank stops the program


@dataclass
class Tally:
    """One blank's mutants, or one family's."""

    exercise: str = ""
    blank: str = ""
    family: str = ""
    mutants: int = 0
    hidden: int = 0  # refused by grading (the hidden grader with the public checks)
    public: int = 0  # refused by the public checks alone
    escapes: int = 0


@dataclass
class TestTally:
    """One hidden test function: the mutants of its blank it ran on, and how many it refused."""

    __test__ = False  # not a pytest test class

    exercise: str
    blank: str
    name: str
    mutants: int = 0
    refused: int = 0


@dataclass
class Escape:
    mutant: Mutant
    blank_id: str
    broken: str | None = None


def _ok(probe) -> bool:
    return probe.evaluated and probe.error is None


def _statements(solution: str, fills) -> dict[int, tuple[int, int, str]]:
    """Per blank in a top-level `name = …` statement: (first line, last line, name)."""
    try:
        body = ast.parse(solution).body
    except SyntaxError:
        return {}
    spans = [(n.lineno, n.end_lineno, defined_name(n)) for n in body if isinstance(n, ast.Assign) and defined_name(n)]
    return {f.index: span for span in spans for f in fills if span[0] <= f.line <= span[1]}


def _kind(probe) -> tuple[str, str] | None:
    if _ok(probe) and isinstance(probe.value, list) and len(probe.value) == 2:
        return (str(probe.value[0]), str(probe.value[1]))
    return None


def _printing_job(exercise: Exercise, solution: str, fills) -> Job:
    """The solution run as the checks run it, keeping the first value and kind of each blank and of each
    top-level statement holding one; and, for what a student may paste, as a student runs it (`__main__`)."""
    kept = {f.index: f"{KEEP}({f.index}, ({f.text}))" for f in fills}
    names = [name for _, _, name in _statements(solution, fills).values()]
    expressions = [f"__trous_{what}__[{f.index}]" for what in ("seen", "kind") for f in fills]
    probes = tuple(Probe(e) for e in expressions + names + [KIND_OF.format(name) for name in names])
    plain = observe.with_prelude(splice(solution, fills, kept), PRELUDE)
    units = [Unit(plain, f"solutions/{exercise.id}.py", probes, group="plain")]
    if names and "__main__" in solution:
        units.append(Unit(solution, f"solutions/{exercise.id}.py", module_name="__main__",
                          wall=min(MAIN_WALL, limits_for(exercise).wall), group="main"))
    return Job(tuple(units), limits_for(exercise), capture_output=True)


def _seen_values(solution: str, fills, result: UnitResult) -> tuple[dict, dict, dict]:
    """What the plain run kept: each blank's value, its kind, and each statement's (value, kind)."""
    statements = _statements(solution, fills)
    n, s = len(fills), len(statements)
    seen = {f.index: p.value for f, p in zip(fills, result.probes[:n]) if _ok(p)}
    kinds = {f.index: _kind(p) for f, p in zip(fills, result.probes[n:2 * n])}
    held = zip(statements.items(), result.probes[2 * n:2 * n + s], result.probes[2 * n + s:])
    values = {index: (*span, probe.value, _kind(kind)) for (index, span), probe, kind in held if _ok(probe)}
    return seen, kinds, values


def generate(exercise: Exercise, solution: str, fills, observations, printed: list[UnitResult]) -> list[Mutant]:
    """Every mutant of the exercise, from what `observe_all` saw (`printed`: `_printing_job`'s results)."""
    output = printed[1].output if len(printed) > 1 and printed[1].status == OK else printed[0].output
    seen, kinds, statements = _seen_values(solution, fills, printed[0])
    found: list[Mutant] = []
    for fill in fills:
        kind, candidates = kinds.get(fill.index), []
        if fill.index in seen and (text := literal(seen[fill.index], array=is_array(kind))):
            candidates.append(Candidate(HARD_CODED_LABELS[0], text, HARD_CODED))
        candidates += mutants(fill.text, observations.facts(fill.index))
        candidates += example_values(fill, observations) + kind_mutants(fill.text, kind)
        if fill.index in seen:
            candidates += rounded_fills(fill.text, kind, seen[fill.index])
        others = {f.index: BLANK for f in fills if f.index != fill.index}
        done = {_normal(fill.text)}  # the right answer written another way (a letter, -inf…) is no mutant
        for label, text, family in candidates:
            if _normal(text) not in done:
                done.add(_normal(text))
                found.append(Mutant(exercise.id, fill.index, label, text,
                                    splice(solution, fills, {**others, fill.index: text}),
                                    splice(solution, fills, {fill.index: text}), family))
        if fill.index in statements:
            found += _statement_mutants(exercise, fill.index, solution, statements[fill.index], output)
    return found


def _statement_mutants(exercise: Exercise, index: int, solution: str, statement, output: str) -> list[Mutant]:
    """The whole statement holding the blank written out: its value, as printed, rounded."""
    first, last, name, value, kind = statement
    array, lines, found = is_array(kind), solution.split("\n"), []
    shown = [(HARD_CODED_LABELS[1], HARD_CODED, literal(value, array=array))]
    shown += [("sortie du programme collée", PASTED, t) for t in pasted(output, value, array=array)]
    shown.append((HARD_CODED_LABELS[2], HARD_CODED, literal(rounded(value), array=array)))
    # integers rounded are the same statement, and so is a value printed whole; the statement as the
    # solution writes it (a constant, say) is the right answer, no mutant
    written = {_normal("\n".join(lines[first - 1:last]))}
    for label, family, text in shown:
        if text and _normal(f"{name} = {text}") not in written:
            written.add(_normal(f"{name} = {text}"))
            program = "\n".join(lines[:first - 1] + [f"{name} = {text}"] + lines[last:])
            found.append(Mutant(exercise.id, index, label, f"{name} = {text}", program, program, family,
                                whole_file=True))
    return found


def _truncated(fill, node, observations) -> list[Candidate]:
    """A name read by the fill cut to the example's size (`x[:, :4]`): right on every input no larger
    than the example."""
    if not node.text.isidentifier():
        return []
    seen = [dict(obs) for obs in observations.example.get(node.key) or []]
    # The sizes it always has on the course's inputs (its values may differ: the rows of a loop).
    features = {name: seen[0][name] for name in seen[0] if name.startswith(("dimension", "nature"))
                and all(obs.get(name) == seen[0][name] for obs in seen)} if seen else {}
    everywhere = observations.facts(fill.index).get(node.k, {})
    out = []
    ndim = features.get("dimensions")
    last = ndim - 1 if isinstance(ndim, int) and ndim > 2 else None
    for axis in (0, 1) + ((last,) if last else ()):
        size = features.get(f"dimension {axis}")
        if not isinstance(size, int) or size < 2 or size > observe.BOUNDS:
            continue
        if not any(isinstance(n, int) and n > size for n in everywhere.get(f"dimension {axis}", ())):
            continue  # no check has it larger: the cut is the fill itself on every input the course has
        if axis == 0 and node.index is not None and 0 <= node.index < size:
            continue  # W[:2][0] is W[0]
        if axis == 1 and features.get("nature") != "tableau NumPy":
            continue  # a list of lists has no [:, :n]
        cut = f"{node.text}[..., :{size}]" if axis == last else f"{node.text}[{', '.join([':'] * axis + [f':{size}'])}]"
        mutated = observe.replace_node(fill.text, node.k, cut)
        if mutated is not None:
            out.append(Candidate(f"{node.text} coupé à la taille de l'exemple ({cut})", mutated, EXAMPLE))
    return out


def example_values(fill, observations) -> list[Candidate]:
    """The fill with one of its sub-expressions replaced by the value it has on the course's inputs
    (`len(v)` by 2, `math.sqrt(d)` by 2.0 and by 2.83…): what a student reads off the example."""
    out, facts = [], observations.facts(fill.index)
    for node in observations.nodes.get(fill.index, []):
        out += _truncated(fill, node, observations)
        value = observations.example_literal(node.key, fill.index)
        # The same on every check: written out, it is the fill itself on every input the course has.
        if value is None or _normal(value) == _normal(node.text) or len(facts.get(node.k, {}).get("valeur", ())) <= 1:
            continue
        texts, number = [value], as_number(value)
        if number is not None and math.isfinite(number) and round(number, 2) != number:
            texts.append(repr(round(number, 2)))
        shown = node.text if len(node.text) <= 40 else node.text[:37] + "…"
        for text in texts:
            mutated = observe.replace_node(fill.text, node.k, text)
            if mutated is not None:
                out.append(Candidate(f"{shown} → {text}", mutated, EXAMPLE))
    return out


def _equivalents(exercise: Exercise) -> dict[str, set[str]]:
    declared = getattr(load_module(exercise.grader_path), "EQUIVALENT_MUTANTS", {}) or {}
    return {blank: {_normal(t) for t in texts} for blank, texts in declared.items()}


def _normal(text: str) -> str:
    tree = observe.parse(text)
    return ast.unparse(tree) if tree is not None else text.strip()


# -- the public checks, as `pytest exercises/` runs them ------------------------------------------
def _broken(mutant: Mutant, analysis, run: PublicRun) -> str | None:
    """Where the program stops when the mutant's own line ran: a later line broke."""
    error = run.units[run.plain].error if run.units and run.units[run.plain].status != OK else None
    if error is None or error.line is None or mutant.whole_file:
        return None
    if error.line == analysis.line_of(mutant.blank) or error.kind in ("syntax", "override"):
        return None
    return f"ligne {error.line} : {error.type or error.kind}"


def public_verdicts(course: Course, mutants: list[Mutant], pool: RunnerPool) -> list[PublicVerdict]:
    """Does each mutant pass its blank's public checks? First on the course's own inputs alone, which
    refuse most mutants at the cost of one run each; the others then on all their checks."""
    checks = {e.id: load_checks(e.checks_path) for e in course.exercises
              if e.id in {m.exercise for m in mutants} and e.checks_path.exists()}
    own = {exercise_id: [c for c in (replace(c, expects=tuple(e for e in c.expects if e.variant is None))
                                     for c in found) if c.expects]
           for exercise_id, found in checks.items()}
    verdicts = _verdicts(course, mutants, own, pool)
    again = [n for n, verdict in enumerate(verdicts) if verdict is None or verdict.passed]
    for n, verdict in zip(again, _verdicts(course, [mutants[n] for n in again], checks, pool)):
        verdicts[n] = verdict
    return [v if v is not None else PublicVerdict(False) for v in verdicts]


def _verdicts(course: Course, mutants: list[Mutant], checks: dict[str, list[Check]], pool: RunnerPool
              ) -> list[PublicVerdict | None]:
    """Each mutant through `checks` of its blank (None: its blank has none of them)."""
    copies, at = [], []  # at: per mutant, its copy's position (None: no check of its blank)
    for mutant in mutants:
        exercise = course.exercise(mutant.exercise)
        mine = [c for c in checks.get(exercise.id, []) if c.blank == exercise.blanks[mutant.blank].id]
        at.append(len(copies) if mine else None)
        if mine:
            analysis = analyse_source(exercise, Source(f"exercises/{exercise.id}.py", mutant.public_text))
            copies.append((exercise, analysis, mine))
    runs = run_public(copies, pool)
    return [None if n is None else PublicVerdict(runs[n].result.blanks[mutant.blank].passed,
                                                  _broken(mutant, copies[n][1], runs[n]))
            for mutant, n in zip(mutants, at)]


@dataclass
class PublicRun:
    """One copy through its public checks, as `pytest exercises/` runs them."""

    result: ExerciseResult  # the self-check's verdicts (unrunnable: said without running anything)
    units: list[UnitResult]  # its units' results ([] when nothing could run)
    plain: int = 0  # which of them ran the file on the course's own inputs


def run_public(copies: list[tuple[Exercise, Analysis, list[Check]]], pool: RunnerPool) -> list[PublicRun]:
    """Each (exercise, copy, checks) through its checks as `pytest exercises/` runs them, in batched jobs:
    the one way the doctor runs a solution, a blank put back, or a mutant, on public checks."""
    planned: list = []  # per copy: its result already, or where its units are
    batches: list[tuple[list[Unit], object]] = []  # (units, limits) of each job
    for n, (exercise, analysis, checks) in enumerate(copies):
        job, context = prepare(exercise, analysis, checks)
        if context is None:  # the file cannot run at all
            planned.append(PublicRun(job, []))
            continue
        units = list(job.units)
        plain = next((i for i, u in enumerate(units) if not u.overrides), None)
        if plain is None:  # every check is on other inputs: run the file as it is too
            plain = len(units)
            units.append(Unit(analysis.source.text, analysis.path, ()))
        # One process per exercise, one group per copy: a copy that hangs costs its own units only.
        units = [replace(u, process=exercise.id, group=f"m{n}") for u in units]
        limits = limits_for(exercise)
        if not batches or batches[-1][1] != limits or len(batches[-1][0]) + len(units) > BATCH_UNITS:
            batches.append(([], limits))
        start = len(batches[-1][0])
        planned.append((exercise, analysis, context, plain, len(batches) - 1, slice(start, start + len(units))))
        batches[-1][0].extend(units)
    results = dict(pool.map(Job(tuple(units), limits, capture_output=True) for units, limits in batches))
    runs = []
    for plan in planned:
        if not isinstance(plan, PublicRun):
            exercise, analysis, context, plain, job, at = plan
            plan = PublicRun(interpret(exercise, analysis, context, results[job][at]), results[job][at], plain)
        runs.append(plan)
    return runs


# -- the doctor's part -------------------------------------------------------------------------
def check(course: Course, report, pool: RunnerPool, only: list[str] | None = None) -> None:
    """On the doctor's pool: resource limits only (sandbox.backend.LIMITS), as the public checks."""
    exercises = _checkable(course, report, only)
    if not exercises:
        return
    try:
        grader = Grader(course, pool, only=[e.id for e in exercises])
    except GraderError as exc:
        report.add("correcteurs", str(exc))
        return
    try:
        grader.compute_references()
    except GraderError as exc:
        report.add("correcteurs", str(exc))
    else:
        _Examination(course, exercises, grader, pool, report).run()
    finally:
        grader.close()


def _checkable(course: Course, report, only: list[str] | None) -> list[Exercise]:
    """The exercises whose files are all there; a missing or stray hidden grader is a finding."""
    asked = [e for e in course.exercises if not only or e.id in only]
    for exercise in [e for e in asked if not e.grader_path.exists()]:
        report.add(exercise.id, "pas de correcteur caché (graders/test_<id>.py)", f"graders/test_{exercise.id}.py")
    for path in sorted((course.root / "graders").glob("test*.py")):
        if course.exercise_for_path(path) is None and has_tests(path):
            report.add("correcteurs", f"{path.name} a des fonctions de test mais n'est le correcteur d'aucun exercice "
                                      "de course.yaml (attendu : graders/test_<exercice>.py) : trous grade ne les "
                                      "lancerait jamais", f"graders/{path.name}")
    return [e for e in asked if all(p.exists() for p in (e.path, e.solution_path, e.checks_path, e.grader_path))]


class _Examination:
    """Each solution, template and mutant graded as one class, then the mutants through the public checks."""

    def __init__(self, course: Course, exercises: list[Exercise], grader: Grader, pool: RunnerPool, report):
        self.course, self.exercises, self.grader, self.pool, self.report = course, exercises, grader, pool, report
        self.by_id = {e.id: e for e in exercises}
        self.equivalents = {e.id: _equivalents(e) for e in exercises}
        self.copies: dict[str, tuple[str, Mutant | None, bytes]] = {}  # copy's name → (what it is, mutant, text)
        self.tests: dict[str, TestTally] = {}
        self.lock = threading.Lock()

    def run(self) -> None:
        seen = observe_all(self.exercises, self.grader, self.pool)
        for exercise in self.exercises:
            observations, printed = seen[exercise.id]
            self._coverage(exercise, observations)
            solution = read(exercise.solution_path).text
            found = generate(exercise, solution, self.grader.refs[exercise.id].fills, observations, printed)
            self.copies[f"solution:{exercise.id}"] = ("solution", None, solution.encode())
            self.copies[f"modele:{exercise.id}"] = ("template", None, exercise.template_path.read_bytes())
            for n, mutant in enumerate(found):
                self.copies[f"mutant:{exercise.id}:{n}"] = ("mutant", mutant, mutant.text.encode())
        self.grader.observe = self._on_test
        self._grade()
        self._public_side()
        self.report.tests.extend(self.tests.values())

    def _coverage(self, exercise: Exercise, observations) -> None:
        if observations.lost:
            # Without every check's observations, a gap could be one the doctor did not see filled.
            said = (f"ce que lisent les trous n'a pas pu être observé sur toutes les vérifications "
                    f"({' ; '.join(observations.lost[:3])}) : la couverture des tailles et des valeurs par les "
                    "vérifications publiques n'est pas vérifiée")
            self.report.add(exercise.id, said, f"solutions/{exercise.id}.py", severity="avertissement")
            return
        for index, blank in enumerate(exercise.blanks):
            if found := observe.gaps(observations, index):
                self.report.add(exercise.id, observe.coverage_message(blank.id, found),
                                f"exercises/test_{exercise.id}.py")

    def _blank_id(self, mutant: Mutant) -> str:
        return self.by_id[mutant.exercise].blanks[mutant.blank].id

    def _equivalent(self, mutant: Mutant) -> bool:
        """The right answer written another way (the grader module's EQUIVALENT_MUTANTS)."""
        return _normal(mutant.fill) in self.equivalents[mutant.exercise].get(self._blank_id(mutant), set())

    def _on_test(self, student: str, outcome: TestResult) -> None:
        """Told by the engine of each test function's outcome on each generated copy."""
        kind, mutant, _ = self.copies[student]
        if kind != "mutant" or not outcome.ran or outcome.outcome not in ("passed", "failed"):
            return
        test = outcome.test
        if self._blank_id(mutant) != test.blank:
            return  # a whole-file mutant also runs the other blanks' tests
        with self.lock:
            if not test.hidden:
                mutant.refused_by_public_test |= outcome.outcome == "failed"
                return
            tally = self.tests.setdefault(test.nodeid, TestTally(test.exercise, test.blank, test.name))
            tally.mutants += 1
            tally.refused += outcome.outcome == "failed"

    def _grade(self) -> None:
        told: set[str] = set()  # tests that misbehaved on a generated copy, said once each
        batch = [(key, {key.split(":")[1]: data}) for key, (_, _, data) in self.copies.items()]
        for grade in self.grader.grade_many(batch):
            kind, mutant, _ = self.copies[grade.student]
            exercise_id = grade.student.split(":")[1]
            result = grade.exercise(exercise_id)
            path = f"graders/test_{exercise_id}.py"
            for incident in grade.incidents:  # grading goes on past them; the author should see them
                said = incident.split(" : ", 1)[-1]
                if said not in told:
                    told.add(said)
                    self.report.add(exercise_id, f"sur une copie générée ({kind}) : {said}", path)
            if kind == "solution":
                for b in [b for b in result.blanks if b.score < b.max_score]:
                    self.report.add(exercise_id, f"la solution n'a pas tous les points au trou « {b.id} » : "
                                                 f"{b.message.splitlines()[0] if b.message else b.status}", path)
            elif kind == "template" and result.score > 0:
                self.report.add(exercise_id, f"l'exercice non rempli obtient {result.score} point(s)", path)
            elif kind == "mutant":
                mutant.refused = result.blanks[mutant.blank].score == 0
                if not mutant.refused and not self._equivalent(mutant):
                    self._survivor(mutant, path)

    def _survivor(self, mutant: Mutant, path: str) -> None:
        said = f"mutant survivant au trou « {self._blank_id(mutant)} » ({mutant.label}) : {mutant.fill[:160]}"
        if mutant.family == KIND and kind_blind(mutant.label):
            # Not the grader's fault: the comparison itself cannot tell these kinds apart yet.
            self.report.add(mutant.exercise, said + " — la comparaison des valeurs ne distingue pas encore ces deux "
                                                    "natures", path, severity="avertissement")
        else:
            self.report.add(mutant.exercise, said, path)

    def _public_side(self) -> None:
        """Each mutant that is not the right answer through the public checks: the tallies and the escapes."""
        judged = [m for kind, m, _ in self.copies.values() if kind == "mutant" and not self._equivalent(m)]
        tallies = {(e.id, b.id): Tally(e.id, b.id) for e in self.exercises for b in e.blanks}
        families = {f: Tally(family=f) for f in FAMILIES}
        for mutant, verdict in zip(judged, public_verdicts(self.course, judged, self.pool)):
            blank_id = self._blank_id(mutant)
            passed = verdict.passed and not mutant.refused_by_public_test
            for tally in (tallies[(mutant.exercise, blank_id)],
                          families.setdefault(mutant.family, Tally(family=mutant.family))):
                tally.mutants += 1
                tally.hidden += mutant.refused
                tally.public += not passed
                tally.escapes += passed and mutant.refused
            if passed and mutant.refused:
                self.report.escapes.append(Escape(mutant, blank_id, verdict.broken))
                said = (f"un mutant « {mutant.family} » passe les vérifications publiques du trou « {blank_id} » "
                        f"({mutant.label}) : {mutant.fill[:160]} — le correcteur caché le refuse : l'élève "
                        "lirait « juste » puis perdrait le point ; ajoutez une vérification sur d'autres entrées, "
                        "montrées (variant(..., shown=True))")
                self.report.add(mutant.exercise, said, f"exercises/test_{mutant.exercise}.py")
        self.report.tallies.extend(tallies.values())
        self.report.families.extend(f for f in families.values() if f.mutants)


def observe_all(exercises: list[Exercise], grader: Grader, pool: RunnerPool) -> dict[str, tuple]:
    """Per exercise: its observations (observe.py) and what its solution prints. The checks' runs go
    to the pool together; the test functions' after."""
    plans = [observe.plan(e, grader.refs[e.id].solution, grader.refs[e.id].fills, grader.checks[e.id],
                          limits_for(e)) for e in exercises]
    jobs = [p.job for p in plans] + [_printing_job(e, grader.refs[e.id].solution, grader.refs[e.id].fills)
                                     for e in exercises]
    results = dict(pool.map(jobs))  # position → its units' results
    out = {}
    for n, (exercise, found) in enumerate(zip(exercises, plans)):
        observations = observe.read(found, results[n])
        tests = [t for b in exercise.blanks for t in grader.tests.of(exercise.id, b.id)]
        observe.observe_tests(found, tests, grader.tests, pool, observations, limits_for(exercise))
        out[exercise.id] = (observations, results[len(plans) + n])
    return out


def kind_blind(label: str) -> bool:
    """Does grading's comparison see an array and its list, or a float and its int, as equal? Asked of
    the real encoder and comparison, so the answer follows them when they learn to keep kinds apart."""
    if label == AS_LIST:
        return compare(encode(numpy.array([0.5, 2.0])), encode([0.5, 2.0])) is None
    if label == AS_INT:
        return compare(encode(2.0), encode(2)) is None
    return False


def _counts(tally: Tally) -> str:
    return f"{tally.mutants:>7} {tally.hidden:>6} {tally.public:>6} {tally.escapes:>18}"


_COUNTS = f"{'mutants':>7} {'caché':>6} {'public':>6} {'passent en public':>18}"


def mutant_table(tallies: list[Tally], escapes: list[Escape]) -> list[str]:
    if not tallies:
        return []
    lines = ["Mutants générés, trou par trou : refusés par le correcteur caché, par les vérifications publiques,",
             "et refusés en secret mais « justes » en public (✘ : le cours échoue) :",
             f"  {'exercice':<18} {'trou':<16} {_COUNTS}"]
    for tally in tallies:
        lines.append(f"  {tally.exercise:<18} {tally.blank:<16} {_counts(tally)}")
        for escape in [e for e in escapes if (e.mutant.exercise, e.blank_id) == (tally.exercise, tally.blank)]:
            broken = f" (casse la suite : {escape.broken})" if escape.broken else ""
            mutant = escape.mutant
            lines.append(f"      ✘ {mutant.family}, {mutant.label}{broken} : {mutant.fill[:120]}")
    lines.append(f"  {sum(t.mutants for t in tallies)} mutants, {len(escapes)} refusé(s) en secret mais "
                 "accepté(s) en public")
    return lines


def family_table(families: list[Tally]) -> list[str]:
    if not families:
        return []
    return ["Mutants par famille d'erreurs :", f"  {'famille':<24} {_COUNTS}",
            *(f"  {f.family:<24} {_counts(f)}" for f in families)]


def test_table(tests: list[TestTally]) -> list[str]:
    if not tests:
        return []
    return ["Fonctions de test des correcteurs : mutants de leur trou que chacune refuse à elle seule :",
            f"  {'exercice':<18} {'trou':<16} {'refusés':>9}  test",
            *(f"  {t.exercise:<18} {t.blank:<16} {f'{t.refused}/{t.mutants}':>9}  {t.name}"
              for t in sorted(tests, key=lambda t: (t.exercise, t.blank, t.name)))]
