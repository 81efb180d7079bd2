"""Is each hidden grader good enough, and do the public checks agree with it? (part of `trous doctor`)

0. each fill's sub-expressions are observed on every check (observe.py): a blank fails the course
when a hidden check varies what it reads (a size, a value, a property) and none of its public checks
does; 1. the reference solutions get full marks; 2. the shipped exercises get zero; 3. for each
blank, generated wrong fills (mutants.py, by family: one change in the solution's fill; one of its
sub-expressions replaced by its value on the course's inputs, or a name cut to the example's size;
the blank's or the statement's value written out, or as the program prints it; the same numbers as
another kind of value) lose that blank's points. A mutant that keeps its points *survives*: either
the grader misses a mistake, or the mutant is equivalent to the solution — then the grader module
lists it in `EQUIVALENT_MUTANTS = {"blank_id": ["fill", …]}` with a comment saying why.

Test functions (`@pytest.mark.trou`) are expectations like the others: grading runs them on each
mutant; a public one (exercises/test_*.py) that fails on a mutant counts as a public refusal in 4.
The doctor also counts, for each test function, how many mutants of its blank it refuses on its own
(`test_table`), so that an author sees which tests pull their weight; and a test function in
graders/ that belongs to no exercise is an error (trous grade would never run it).

4. Each mutant also goes through the blank's public checks, the way `pytest exercises/` runs them
(the solution with only that blank changed). A mutant the hidden grader refuses but the public
checks accept is an *escape*: the student reads « juste » and then loses the point. Every blank's
and every family's counts, and the escapes, make tables (`mutant_table`, `family_table`); any escape
fails the course: its blank needs other, shown inputs.
"""

from __future__ import annotations

import ast
import math
import threading
from dataclasses import dataclass, replace

from ..core import blanks as blanks_mod
from ..core.course import Course, Exercise
from ..core.source import Source, read
from ..core.checks import Check, load_checks, load_module
from ..core.analysis import analyse_source
from ..sandbox.pool import RunnerPool
from ..core.protocol import OK, Job, Probe, Unit, UnitResult
from ..sandbox.backend import LIMITS
from ..check.selfcheck import PASSED, SKIPPED_CHECK, interpret, prepare
from ..core.course import limits_for
from . import mutants as mutants_mod
from . import observe
from ..grade.engine import Grader, GraderError
from ..grade.testfunctions import Outcome, has_tests

KEEP = "__trous_keep__"
PRELUDE = (f"__trous_seen__ = {{}}\n__trous_kind__ = {{}}\n"
           f"def {KEEP}(k, v):\n"
           f"    if k not in __trous_seen__:\n"
           f"        __trous_seen__[k] = v\n"
           f"        __trous_kind__[k] = (type(v).__module__, type(v).__name__)\n"
           f"    return v\n")
KIND_OF = "(type({0}).__module__, type({0}).__name__)"
MAIN_WALL = 3.0  # seconds for the solution's own printout (an exercise may time things in its __main__)


@dataclass
class Mutant:
    exercise: str
    blank: int
    label: str
    fill: str  # the mutated fill, or the hard-coded statement
    text: str  # the whole file graded
    whole_file: bool = False
    public_text: str = ""  # the file the public checks run: the solution with only this blank changed
    kind: str = ""  # its family (mutants.FAMILIES)

    @property
    def family(self) -> str:
        return self.kind or mutants_mod.family(self.label)


@dataclass
class Survivor:
    mutant: Mutant
    score: float


@dataclass
class PublicVerdict:
    passed: bool
    broken: str | None = None  # « ligne N : TypeError » when a line after the blank stops the program


@dataclass
class Tally:
    """One blank's mutants: how many, how many each side refuses."""

    exercise: str
    blank: str
    mutants: int = 0
    hidden: int = 0  # refused by grading (the hidden grader with the public checks)
    public: int = 0  # refused by the public checks alone

    @property
    def row(self) -> tuple[str, str]:
        return (self.exercise, self.blank)


@dataclass
class FamilyTally:
    """One family's mutants over the course: how many, how many each side refuses, how many escape."""

    family: str
    mutants: int = 0
    hidden: int = 0
    public: int = 0
    escapes: int = 0


@dataclass
class TestTally:
    """One test function: the mutants of its blank it ran on, and how many it refused."""

    __test__ = False

    exercise: str
    blank: str
    name: str
    mutants: int = 0
    refused: int = 0


@dataclass
class Escape:
    """A mutant the hidden grader refuses but the public checks let through."""

    mutant: Mutant
    blank_id: str
    broken: str | None = None

    @property
    def failing(self) -> bool:
        """Every escape fails the course: « juste » in public must mean the point, whatever the mistake."""
        return True


def _statement_spans(solution: str) -> list[tuple[int, int, str]]:
    """(first line, last line, assigned name) of each top-level `name = …` statement."""
    spans = []
    for node in ast.parse(solution).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            spans.append((node.lineno, node.end_lineno, node.targets[0].id))
    return spans


def _kind(probe) -> tuple[str, str] | None:
    if probe.evaluated and probe.error is None and isinstance(probe.value, list) and len(probe.value) == 2:
        return (str(probe.value[0]), str(probe.value[1]))
    return None


def _seen_values(exercise: Exercise, solution: str, fills, pool: RunnerPool) -> tuple[dict, dict, dict]:
    """The first value each blank takes and its kind (module, type name), and the value and kind of
    each top-level statement holding a blank."""
    instrumented = PRELUDE + blanks_mod.splice(
        solution, fills, {f.index: f"{KEEP}({f.index}, ({f.text}))" for f in fills})
    statements = {}
    for first, last, name in _statement_spans(solution):
        for f in fills:
            if first <= f.line <= last:
                statements[f.index] = (first, last, name)
    probes = [Probe(f"__trous_seen__[{f.index}]") for f in fills]
    probes += [Probe(f"__trous_kind__[{f.index}]") for f in fills]
    probes += [Probe(name) for _, _, name in statements.values()]
    probes += [Probe(KIND_OF.format(name)) for _, _, name in statements.values()]
    result = pool.run(Job((Unit(instrumented, f"solutions/{exercise.id}.py", tuple(probes)),)))[0]
    n, s = len(fills), len(statements)
    seen = {f.index: p.value for f, p in zip(fills, result.probes[:n]) if p.evaluated and p.error is None}
    kinds = {f.index: _kind(p) for f, p in zip(fills, result.probes[n:2 * n])}
    values = {}
    for (index, (first, last, name)), probe, kind in zip(statements.items(), result.probes[2 * n:2 * n + s],
                                                          result.probes[2 * n + s:]):
        if probe.evaluated and probe.error is None:
            values[index] = (first, last, name, probe.value, _kind(kind))
    return seen, kinds, values


def _printing_job(exercise: Exercise, solution: str, fills) -> Job:
    """The solution run as a student runs the file (`python exercises/….py`, `__main__` blocks
    included, within a few seconds), and as the checks run it: what a student may copy from. Run as
    `__main__` only when a blank's statement may be pasted and there is such a block (an exercise
    may time things there)."""
    units = [Unit(solution, f"solutions/{exercise.id}.py", group="plain")]
    if _statement_spans_with_blanks(solution, fills) and "__main__" in solution:
        units.append(Unit(solution, f"solutions/{exercise.id}.py", module_name="__main__",
                          wall=min(MAIN_WALL, limits_for(exercise).wall), group="main"))
    return Job(tuple(units), limits_for(exercise), capture_output=True)


def _printed(results: list[UnitResult]) -> str:
    if len(results) > 1 and results[1].status == OK:
        return results[1].output
    return results[0].output


def _statement_spans_with_blanks(solution: str, fills) -> bool:
    try:
        spans = _statement_spans(solution)
    except SyntaxError:
        return False
    return any(first <= f.line <= last for first, last, _ in spans for f in fills)


def printed_output(exercise: Exercise, solution: str, fills, pool: RunnerPool) -> str:
    """What the solution prints (see `_printing_job`)."""
    return _printed(pool.run(_printing_job(exercise, solution, fills)))


def generate(exercise: Exercise, solution: str, fills, pool: RunnerPool, observations=None,
             output: str | None = None) -> list[Mutant]:
    """Every mutant of every blank of the exercise. `observations` (observe.py): what each fill's
    sub-expressions are on each check, computed here when not given; `output`: what the solution
    prints (for the « sortie collée » mutants), likewise."""
    if observations is None:
        observations = observe.observe(exercise, solution, fills, pool)
    if output is None:
        output = printed_output(exercise, solution, fills, pool)
    seen, kinds, statements = _seen_values(exercise, solution, fills, pool)
    lines = solution.split("\n")
    found: list[Mutant] = []
    for fill in fills:
        others = {f.index: blanks_mod.BLANK for f in fills if f.index != fill.index}
        candidates = list(mutants_mod.mutants(fill.text, observations.facts(fill.index)))
        candidates += example_values(fill, observations)
        kind = kinds.get(fill.index)
        if fill.index in seen:
            text = mutants_mod.literal(seen[fill.index], array=mutants_mod.is_array(kind))
            if text:
                candidates.insert(0, mutants_mod.Candidate(mutants_mod.HARD_CODED_LABELS[0], text,
                                                           mutants_mod.HARD_CODED))
        candidates += mutants_mod.kind_mutants(fill.text, kind)
        if fill.index in seen:
            candidates += mutants_mod.rounded_fills(fill.text, kind, seen[fill.index])
        done = {_normal(fill.text)}  # the right answer written another way (a letter, -inf…) is no mutant
        for label, text, family in candidates:
            if _normal(text) in done:
                continue
            done.add(_normal(text))
            program = blanks_mod.splice(solution, fills, {**others, fill.index: text})
            public = blanks_mod.splice(solution, fills, {fill.index: text})
            found.append(Mutant(exercise.id, fill.index, label, text, program, public_text=public, kind=family))
        if fill.index in statements:
            first, last, name, value, kind = statements[fill.index]
            array = mutants_mod.is_array(kind)
            written = set()
            shown = [(mutants_mod.HARD_CODED_LABELS[1], mutants_mod.HARD_CODED, mutants_mod.literal(value, array=array))]
            shown += [("sortie du programme collée", mutants_mod.PASTED, text)
                      for text in mutants_mod.pasted(output, value, array=array)]
            shown.append((mutants_mod.HARD_CODED_LABELS[2], mutants_mod.HARD_CODED,
                          mutants_mod.literal(mutants_mod.rounded(value), array=array)))
            for label, family, text in shown:
                if not text or _normal(text) in written:
                    continue  # integers rounded are the same statement, and so is a value printed whole
                written.add(_normal(text))
                program = "\n".join(lines[:first - 1] + [f"{name} = {text}"] + lines[last:])
                found.append(Mutant(exercise.id, fill.index, label, f"{name} = {text}", program, whole_file=True,
                                    public_text=program, kind=family))
    return found


def _truncated(fill, node, observations) -> list:
    """A name read by the fill cut to the example's size (`x[:, :4]`): the example's size written as a
    bound, right on every input no larger than the example."""
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
            out.append(mutants_mod.Candidate(f"{node.text} coupé à la taille de l'exemple ({cut})", mutated,
                                             mutants_mod.EXAMPLE))
    return out


def example_values(fill, observations) -> list:
    """The fill with one of its sub-expressions replaced by the value it has on the course's inputs
    (`len(v)` by 2, `math.sqrt(d)` by 2.0 and by 2.83…): the sizes and numbers a student reads off the
    example and writes out."""
    out = []
    facts = observations.facts(fill.index)
    for node in observations.nodes.get(fill.index, []):
        out += _truncated(fill, node, observations)
        literal = observations.example_literal(node.key, fill.index)
        if literal is None or _normal(literal) == _normal(node.text):
            continue
        if len(facts.get(node.k, {}).get("valeur", ())) <= 1:
            continue  # the same on every check: written out, it is the fill itself on every input the course has
        texts = [literal]
        try:
            number = float(literal)
        except ValueError:
            number = None
        if number is not None and math.isfinite(number) and round(number, 2) != number:
            texts.append(repr(round(number, 2)))
        for text in texts:
            mutated = observe.replace_node(fill.text, node.k, text)
            if mutated is not None:
                shown = node.text if len(node.text) <= 40 else node.text[:37] + "…"
                out.append(mutants_mod.Candidate(f"{shown} → {text}", mutated, mutants_mod.EXAMPLE))
    return out


def _equivalents(exercise: Exercise) -> dict[str, set[str]]:
    if not exercise.grader_path.exists():
        return {}
    declared = getattr(load_module(exercise.grader_path), "EQUIVALENT_MUTANTS", {}) or {}
    return {blank: {_normal(t) for t in texts} for blank, texts in declared.items()}


def _normal(text: str) -> str:
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return text.strip()


# -- the public checks, as `pytest exercises/` runs them ------------------------------------------
BATCH_UNITS = 64  # units per job: a job costs about as much as three units, so mutants share jobs


def _public_units(exercise: Exercise, mutant: Mutant, checks: list[Check], key: str):
    """(units, context, analysis, position of a run on the course's own inputs) for one mutant; units
    is None when the file cannot run at all."""
    analysis = analyse_source(exercise, Source(f"exercises/{exercise.id}.py", mutant.public_text))
    blank_id = exercise.blanks[mutant.blank].id
    job, context = prepare(exercise, analysis, [c for c in checks if c.blank == blank_id])
    if context is None:
        return None, None, analysis, None
    units = list(job.units)
    plain = next((i for i, u in enumerate(units) if not u.overrides), None)
    if plain is None:  # every check of this blank is on other inputs: run the file as it is too
        plain = len(units)
        units.append(Unit(analysis.source.text, analysis.path, ()))
    # One process per exercise, one group per mutant: a mutant that hangs costs its own units only.
    units = [replace(u, process=exercise.id, group=key) for u in units]
    return units, context, analysis, plain


def _broken(mutant: Mutant, analysis, result: UnitResult) -> str | None:
    """Where the program stops when the mutant's own line ran: a later line broke."""
    error = result.error
    if result.status == OK or error is None or error.line is None or mutant.whole_file:
        return None
    if error.line == analysis.line_of(mutant.blank) or error.kind in ("syntax", "override"):
        return None
    return f"ligne {error.line} : {error.type or error.kind}"


def public_verdicts(course: Course, mutants: list[Mutant], pool: RunnerPool) -> list[PublicVerdict]:
    """Does each mutant pass its blank's public checks? First on the course's own inputs alone, which
    refuse most mutants at the cost of one run each; the others then on all their checks. Batched
    into jobs run in parallel on the pool."""
    checks = {e.id: load_checks(e.checks_path) for e in course.exercises
              if e.id in {m.exercise for m in mutants} and e.checks_path.exists()}
    own = {exercise_id: _on_own_inputs(found) for exercise_id, found in checks.items()}
    first = _run_public(course, mutants, own, pool)
    again = [n for n, (mutant, verdict) in enumerate(zip(mutants, first))
             if verdict is None or verdict.passed]
    second = _run_public(course, [mutants[n] for n in again], checks, pool)
    verdicts = [v if v is not None else PublicVerdict(False) for v in first]
    for n, verdict in zip(again, second):
        verdicts[n] = verdict if verdict is not None else PublicVerdict(False)
    return verdicts


def _on_own_inputs(checks: list[Check]) -> list[Check]:
    """The expectations of these checks on the course's own inputs (no variant)."""
    kept = [replace(c, expects=tuple(e for e in c.expects if e.variant is None)) for c in checks]
    return [c for c in kept if c.expects]


def _run_public(course: Course, mutants: list[Mutant], checks: dict[str, list[Check]], pool: RunnerPool
                ) -> list[PublicVerdict | None]:
    """Each mutant through `checks` of its blank (None: its blank has none of them)."""
    planned = []
    batches: list[tuple[list[Unit], object]] = []  # (units, limits) of each job
    for n, mutant in enumerate(mutants):
        exercise = course.exercise(mutant.exercise)
        blank_id = exercise.blanks[mutant.blank].id
        mine = [c for c in checks.get(exercise.id, []) if c.blank == blank_id]
        if not mine:
            planned.append("none")
            continue
        units, context, analysis, plain = _public_units(exercise, mutant, mine, f"m{n}")
        if units is None:
            planned.append(None)
            continue
        limits = limits_for(exercise)
        if not batches or batches[-1][1] != limits or len(batches[-1][0]) + len(units) > BATCH_UNITS:
            batches.append(([], limits))
        start = len(batches[-1][0])
        batches[-1][0].extend(units)
        planned.append((exercise, context, analysis, plain, len(batches) - 1, start, len(units)))
    jobs = [Job(tuple(units), limits, capture_output=True) for units, limits in batches]
    results: list[list[UnitResult]] = [[] for _ in jobs]
    for position, unit_results in pool.map(jobs):
        results[position] = unit_results
    verdicts: list[PublicVerdict | None] = []
    for mutant, plan in zip(mutants, planned):
        if plan == "none":
            verdicts.append(None)
            continue
        if plan is None:
            verdicts.append(PublicVerdict(False))
            continue
        exercise, context, analysis, plain, job, start, count = plan
        unit_results = results[job][start:start + count]
        checked = interpret(exercise, analysis, context, unit_results)  # it reads the planned units only
        status = checked.blanks[mutant.blank].status
        verdicts.append(PublicVerdict(status in (PASSED, SKIPPED_CHECK), _broken(mutant, analysis, unit_results[plain])))
    return verdicts


# -- the doctor's part -------------------------------------------------------------------------
def check(course: Course, report, only: list[str] | None = None, mode: str = LIMITS) -> list[Survivor]:
    """`mode`: the author's own solutions and their mutants need resource limits only, as the public
    checks of `trous doctor` (runner.sandbox.LIMITS); a grading mode works too."""
    exercises = _checkable(course, report, only)
    if not exercises:
        return []
    with RunnerPool(mode=mode) as pool:
        try:
            grader = Grader(course, pool, only=[e.id for e in exercises])
        except GraderError as exc:
            report.add("correcteurs", str(exc))
            return []
        try:
            grader.compute_references()
        except GraderError as exc:
            grader.close()
            report.add("correcteurs", str(exc))
            return []
        try:
            return _Examination(course, exercises, grader, pool, report).run()
        finally:
            grader.close()


def _checkable(course: Course, report, only: list[str] | None) -> list[Exercise]:
    """The exercises whose files are all there; a missing or stray hidden grader is a finding."""
    asked = [e for e in course.exercises if not only or e.id in only]
    for exercise in asked:
        if not exercise.grader_path.exists():
            report.add(exercise.id, "pas de correcteur caché (graders/test_<id>.py)", f"graders/test_{exercise.id}.py")
    for path in sorted((course.root / "graders").glob("test*.py")):
        if course.exercise_for_path(path) is None and has_tests(path):
            report.add("correcteurs", f"{path.name} a des fonctions de test mais n'est le correcteur d'aucun exercice "
                                      "de course.yaml (attendu : graders/test_<exercice>.py) : trous grade ne les "
                                      "lancerait jamais", f"graders/{path.name}")
    return [e for e in asked if all(p.exists() for p in (e.path, e.solution_path, e.checks_path, e.grader_path))]


class _Examination:
    """One run of the generated copies: each solution, each template and every mutant graded as a
    class, then the mutants through the public checks; findings and counts go to the report."""

    def __init__(self, course: Course, exercises: list[Exercise], grader: Grader, pool: RunnerPool, report):
        self.course, self.exercises, self.grader, self.pool, self.report = course, exercises, grader, pool, report
        self.by_id = {e.id: e for e in exercises}
        self.equivalents = {e.id: _equivalents(e) for e in exercises}
        self.batch: list[tuple[str, dict]] = []
        self.plan: dict[str, tuple[str, Mutant | None]] = {}  # copy's name → what it is
        self.generated: list[Mutant] = []
        self.refused: set[int] = set()  # id() of the mutants that lose their blank's points
        # id() of the mutants a public test function (exercises/test_*.py) refuses: grading runs those
        # tests, not public_verdicts (declarations only), so they count on the public side from here.
        self.refused_by_public_test: set[int] = set()
        self.tests: dict[str, TestTally] = {}
        self.lock = threading.Lock()

    def run(self) -> list[Survivor]:
        seen = _observations(self.exercises, self.grader, self.pool)
        for exercise in self.exercises:
            observations, output = seen[exercise.id]
            self._coverage(exercise, observations)
            self._add_copies(exercise, observations, output)
        self.grader.observe = self._on_test
        survivors = self._grade()
        self._public_side()
        self.report.tests.extend(self.tests.values())
        return survivors

    def _coverage(self, exercise: Exercise, observations) -> None:
        if observations.lost:
            # Without every check's observations, a gap could be one the doctor did not see filled.
            said = (f"ce que lisent les trous n'a pas pu être observé sur toutes les vérifications "
                    f"({' ; '.join(observations.lost[:3])}) : la couverture des tailles et des valeurs par les "
                    "vérifications publiques n'est pas vérifiée")
            self.report.add(exercise.id, said, f"solutions/{exercise.id}.py", severity="avertissement")
            return
        for index, blank in enumerate(exercise.blanks):
            found = observe.gaps(observations, index)
            if found:
                self.report.add(exercise.id, observe.coverage_message(blank.id, found),
                                f"exercises/test_{exercise.id}.py")

    def _add_copies(self, exercise: Exercise, observations, output) -> None:
        solution = read(exercise.solution_path).text
        self._add(f"solution:{exercise.id}", exercise, solution.encode(), "solution")
        self._add(f"modele:{exercise.id}", exercise, exercise.template_path.read_bytes(), "template")
        fills = self.grader.solution_fills[exercise.id]
        for n, mutant in enumerate(generate(exercise, solution, fills, self.pool, observations, output)):
            self._add(f"mutant:{exercise.id}:{n}", exercise, mutant.text.encode(), "mutant", mutant)
            self.generated.append(mutant)

    def _add(self, key: str, exercise: Exercise, data: bytes, kind: str, mutant: Mutant | None = None) -> None:
        self.batch.append((key, {exercise.id: data}))
        self.plan[key] = (kind, mutant)

    def _blank_id(self, mutant: Mutant) -> str:
        return self.by_id[mutant.exercise].blanks[mutant.blank].id

    def _equivalent(self, mutant: Mutant) -> bool:
        """The right answer written another way (the grader module's EQUIVALENT_MUTANTS)."""
        return _normal(mutant.fill) in self.equivalents[mutant.exercise].get(self._blank_id(mutant), set())

    def _on_test(self, student: str, outcome: Outcome) -> None:
        """Told by the engine of each test function's outcome on each generated copy."""
        kind, mutant = self.plan[student]
        if kind != "mutant" or not outcome.ran or outcome.outcome not in ("passed", "failed"):
            return
        if self._blank_id(mutant) != outcome.test.blank:
            return  # a whole-file mutant also runs the other blanks' tests
        test = outcome.test
        with self.lock:
            if not test.hidden:
                if outcome.outcome == "failed":
                    self.refused_by_public_test.add(id(mutant))
                return
            tally = self.tests.setdefault(test.nodeid, TestTally(test.exercise, test.blank, test.name))
            tally.mutants += 1
            tally.refused += outcome.outcome == "failed"

    def _grade(self) -> list[Survivor]:
        survivors: list[Survivor] = []
        told: set[str] = set()  # tests that misbehaved on a generated copy, said once each
        for grade in self.grader.grade_many(self.batch):
            kind, mutant = self.plan[grade.student]
            exercise_id = grade.student.split(":")[1]
            result = grade.exercise(exercise_id)
            path = f"graders/test_{exercise_id}.py"
            for incident in grade.incidents:  # grading goes on past them; the author should see them
                said = incident.split(" : ", 1)[-1]
                if said not in told:
                    told.add(said)
                    self.report.add(exercise_id, f"sur une copie générée ({kind}) : {said}", path)
            if kind == "solution":
                for b in result.blanks:
                    if b.score < b.max_score:
                        self.report.add(exercise_id, f"la solution n'a pas tous les points au trou « {b.id} » : "
                                                     f"{b.message.splitlines()[0] if b.message else b.status}", path)
            elif kind == "template" and result.score > 0:
                self.report.add(exercise_id, f"l'exercice non rempli obtient {result.score} point(s)", path)
            elif kind == "mutant":
                survivor = self._survivor(mutant, result.blanks[mutant.blank].score, path)
                survivors += [survivor] if survivor else []
        return survivors

    def _survivor(self, mutant: Mutant, score: float, path: str) -> Survivor | None:
        if score == 0:
            self.refused.add(id(mutant))
            return None
        if self._equivalent(mutant):
            return None
        said = f"mutant survivant au trou « {self._blank_id(mutant)} » ({mutant.label}) : {mutant.fill[:160]}"
        if mutant.family == mutants_mod.KIND and kind_blind(mutant.label):
            # Not the grader's fault: the comparison itself cannot tell these kinds apart yet.
            self.report.add(mutant.exercise, said + " — la comparaison des valeurs ne distingue pas encore ces deux "
                                                    "natures", path, severity="avertissement")
        else:
            self.report.add(mutant.exercise, said, path)
        return Survivor(mutant, score)

    def _public_side(self) -> None:
        """Each mutant that is not the right answer through the public checks: the tallies and the escapes."""
        judged = [m for m in self.generated if not self._equivalent(m)]
        tallies = {(e.id, b.id): Tally(e.id, b.id) for e in self.exercises for b in e.blanks}
        families = {f: FamilyTally(f) for f in mutants_mod.FAMILIES}
        for mutant, verdict in zip(judged, public_verdicts(self.course, judged, self.pool)):
            blank_id = self._blank_id(mutant)
            family = families.setdefault(mutant.family, FamilyTally(mutant.family))
            refused = id(mutant) in self.refused
            passed = verdict.passed and id(mutant) not in self.refused_by_public_test
            for tally in (tallies[(mutant.exercise, blank_id)], family):
                tally.mutants += 1
                tally.hidden += refused
                tally.public += not passed
            if passed and refused:
                family.escapes += 1
                self.report.escapes.append(Escape(mutant, blank_id, verdict.broken))
                said = (f"un mutant « {mutant.family} » passe les vérifications publiques du trou « {blank_id} » "
                        f"({mutant.label}) : {mutant.fill[:160]} — le correcteur caché le refuse : l'élève "
                        "lirait « juste » puis perdrait le point ; ajoutez une vérification sur d'autres entrées, "
                        "montrées (variant(..., shown=True))")
                self.report.add(mutant.exercise, said, f"exercises/test_{mutant.exercise}.py")
        self.report.tallies.extend(tallies.values())
        self.report.families.extend(f for f in families.values() if f.mutants)


def _observations(exercises: list[Exercise], grader: Grader, pool: RunnerPool) -> dict[str, tuple]:
    """Per exercise: what its fills' sub-expressions are on every check (observe.py), and what its
    solution prints. The checks' runs go to the pool together; the test functions' after."""
    plans = []
    for exercise in exercises:
        solution = grader.solutions[exercise.id]
        plans.append(observe.plan(exercise, solution, grader.solution_fills[exercise.id],
                                  grader.checks[exercise.id], limits_for(exercise)))
    jobs = [p.job for p in plans] + [_printing_job(e, grader.solutions[e.id], grader.solution_fills[e.id])
                                     for e in exercises]
    results: list = [None] * len(jobs)
    for position, unit_results in pool.map(jobs):
        results[position] = unit_results
    out = {}
    for n, (exercise, found) in enumerate(zip(exercises, plans)):
        observations = observe.read(found, results[n])
        tests = [t for b in exercise.blanks for t in grader.tests.of(exercise.id, b.id)]
        observe.observe_tests(found, tests, grader.tests, pool, observations, limits_for(exercise))
        out[exercise.id] = (observations, _printed(results[len(plans) + n]))
    return out


def kind_blind(label: str) -> bool:
    """Does the comparison grading uses see two values as equal when only their kind differs (a NumPy
    array and the list of its numbers, a float and the int of the same value)? Asked of the real
    encoder and comparison, so the answer follows them when they learn to keep kinds apart."""
    from ..core.compare import compare  # noqa: PLC0415
    from ..core.encode import encode  # noqa: PLC0415

    if label == mutants_mod.AS_LIST:
        try:
            import numpy  # noqa: PLC0415
        except ImportError:
            return True
        return compare(encode(numpy.array([0.5, 2.0])), encode([0.5, 2.0])) is None
    if label == mutants_mod.AS_INT:
        return compare(encode(2.0), encode(2)) is None
    return False


def mutant_table(tallies: list[Tally], escapes: list[Escape]) -> list[str]:
    """Per blank: the generated mutants, how many the hidden grader refuses and how many the public
    checks refuse, then the escapes (refused in secret, « juste » in public), one per line."""
    if not tallies:
        return []
    by_blank: dict[tuple[str, str], list[Escape]] = {}
    for escape in escapes:
        by_blank.setdefault((escape.mutant.exercise, escape.blank_id), []).append(escape)
    lines = ["Mutants générés, trou par trou : refusés par le correcteur caché, par les vérifications publiques,",
             "et refusés en secret mais « justes » en public (✘ : le cours échoue) :",
             f"  {'exercice':<18} {'trou':<16} {'mutants':>7} {'caché':>6} {'public':>6} {'passent en public':>18}"]
    for tally in tallies:
        found = by_blank.get(tally.row, [])
        lines.append(f"  {tally.exercise:<18} {tally.blank:<16} {tally.mutants:>7} {tally.hidden:>6} {tally.public:>6} "
                     f"{len(found):>18}")
        for escape in found:
            broken = f" (casse la suite : {escape.broken})" if escape.broken else ""
            mark = "✘"
            lines.append(f"      {mark} {escape.mutant.family}, {escape.mutant.label}{broken} : {escape.mutant.fill[:120]}")
    total = sum(len(found) for found in by_blank.values())
    lines.append(f"  {sum(t.mutants for t in tallies)} mutants, {total} refusé(s) en secret mais accepté(s) en public")
    return lines


def family_table(families: list[FamilyTally]) -> list[str]:
    """Per family of mistakes: the generated mutants, how many each side refuses, how many escape."""
    if not families:
        return []
    lines = ["Mutants par famille d'erreurs :",
             f"  {'famille':<24} {'mutants':>7} {'caché':>6} {'public':>6} {'passent en public':>18}"]
    for f in families:
        lines.append(f"  {f.family:<24} {f.mutants:>7} {f.hidden:>6} {f.public:>6} {f.escapes:>18}")
    return lines


def test_table(tests: list[TestTally]) -> list[str]:
    """Per test function: the mutants of its blank it ran on, and how many it refuses on its own."""
    if not tests:
        return []
    lines = ["Fonctions de test des correcteurs : mutants de leur trou que chacune refuse à elle seule :",
             f"  {'exercice':<18} {'trou':<16} {'refusés':>9}  test"]
    for tally in sorted(tests, key=lambda t: (t.exercise, t.blank, t.name)):
        lines.append(f"  {tally.exercise:<18} {tally.blank:<16} {f'{tally.refused}/{tally.mutants}':>9}  {tally.name}")
    return lines
