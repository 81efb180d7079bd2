"""Is each hidden grader good enough? (part of `trous doctor`)

1. the reference solutions get full marks; 2. the shipped exercises get zero; 3. for each blank,
generated wrong fills (mutants.py, plus the value the blank takes hard-coded in the blank, and the
statement's result hard-coded in place of the statement) lose that blank's points. A mutant that
keeps its points *survives*: either the grader misses a mistake, or the mutant is equivalent to the
solution — then the grader module lists it in `EQUIVALENT_MUTANTS = {"blank_id": ["fill", …]}`
with a comment saying why.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..course import blanks as blanks_mod
from ..course.definition import Course, Exercise
from ..runner.pool import RunnerPool
from ..runner.sandbox import LIMITS
from ..runner.protocol import Job, Probe, Unit
from ..course.source import read
from ..course.spec import load_module
from . import mutants as mutants_mod
from .engine import Grader, GraderError

KEEP = "__trous_keep__"
PRELUDE = (f"__trous_seen__ = {{}}\ndef {KEEP}(k, v):\n    __trous_seen__.setdefault(k, v)\n    return v\n")


@dataclass
class Mutant:
    exercise: str
    blank: int
    label: str
    fill: str  # the mutated fill, or the hard-coded statement
    text: str  # the whole file graded
    whole_file: bool = False


@dataclass
class Survivor:
    mutant: Mutant
    score: float


def _statement_spans(solution: str) -> list[tuple[int, int, str]]:
    """(first line, last line, assigned name) of each top-level `name = …` statement."""
    spans = []
    for node in ast.parse(solution).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            spans.append((node.lineno, node.end_lineno, node.targets[0].id))
    return spans


def _seen_values(exercise: Exercise, solution: str, fills, pool: RunnerPool) -> tuple[dict, dict]:
    """The first value each blank takes, and the value of each top-level statement holding a blank."""
    instrumented = PRELUDE + blanks_mod.splice(
        solution, fills, {f.index: f"{KEEP}({f.index}, ({f.text}))" for f in fills})
    statements = {}
    for first, last, name in _statement_spans(solution):
        for f in fills:
            if first <= f.line <= last:
                statements[f.index] = (first, last, name)
    probes = [Probe(f"__trous_seen__[{f.index}]") for f in fills]
    probes += [Probe(name) for _, _, name in statements.values()]
    result = pool.run(Job((Unit(instrumented, f"solutions/{exercise.id}.py", tuple(probes)),)))[0]
    seen = {f.index: p.value for f, p in zip(fills, result.probes) if p.evaluated and p.error is None}
    values = {}
    for (index, (first, last, name)), probe in zip(statements.items(), result.probes[len(fills):]):
        if probe.evaluated and probe.error is None:
            values[index] = (first, last, name, probe.value)
    return seen, values


def generate(exercise: Exercise, solution: str, fills, pool: RunnerPool) -> list[Mutant]:
    seen, statements = _seen_values(exercise, solution, fills, pool)
    lines = solution.split("\n")
    found: list[Mutant] = []
    for fill in fills:
        others = {f.index: blanks_mod.BLANK for f in fills if f.index != fill.index}
        candidates = mutants_mod.mutants(fill.text)
        if fill.index in seen:
            text = mutants_mod.literal(seen[fill.index])
            if text:
                candidates.append(("valeur écrite en dur dans le trou", text))
        for label, text in candidates:
            program = blanks_mod.splice(solution, fills, {**others, fill.index: text})
            found.append(Mutant(exercise.id, fill.index, label, text, program))
        if fill.index in statements:
            first, last, name, value = statements[fill.index]
            for label, shown in (("résultat écrit en dur", value), ("résultat arrondi écrit en dur",
                                                                     mutants_mod.rounded(value))):
                text = mutants_mod.literal(shown)
                if not text:
                    continue
                if "array" in lines[first - 1] or "np." in lines[first - 1]:
                    text = f"__import__('numpy').array({text})"
                program = "\n".join(lines[:first - 1] + [f"{name} = {text}"] + lines[last:])
                found.append(Mutant(exercise.id, fill.index, label, f"{name} = {text}", program, whole_file=True))
    return found


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


def check(course: Course, report, only: list[str] | None = None, mode: str = LIMITS) -> list[Survivor]:
    """`mode`: the author's own solutions and their mutants need resource limits only, as the public
    checks of `trous doctor` (runner.sandbox.LIMITS); a grading mode works too."""
    exercises = [e for e in course.exercises if (not only or e.id in only)
                 and all(p.exists() for p in (e.path, e.solution_path, e.checks_path, e.grader_path))]
    missing = [e.id for e in course.exercises if (not only or e.id in only) and not e.grader_path.exists()]
    for exercise_id in missing:
        report.add(exercise_id, "pas de correcteur caché (graders/test_<id>.py)", f"graders/test_{exercise_id}.py")
    if not exercises:
        return []
    survivors: list[Survivor] = []
    with RunnerPool(mode=mode) as pool:
        try:
            grader = Grader(course, pool, only=[e.id for e in exercises])
            grader.compute_references()
        except GraderError as exc:
            report.add("correcteurs", str(exc))
            return []
        batch: list[tuple[str, dict]] = []
        plan: dict[str, tuple[str, Mutant | None]] = {}
        for exercise in exercises:
            solution = read(exercise.solution_path).text
            fills = grader.solution_fills[exercise.id]
            batch.append((f"solution:{exercise.id}", {exercise.id: solution.encode()}))
            plan[f"solution:{exercise.id}"] = ("solution", None)
            batch.append((f"modele:{exercise.id}", {exercise.id: exercise.template_path.read_bytes()}))
            plan[f"modele:{exercise.id}"] = ("template", None)
            for n, mutant in enumerate(generate(exercise, solution, fills, pool)):
                key = f"mutant:{exercise.id}:{n}"
                batch.append((key, {exercise.id: mutant.text.encode()}))
                plan[key] = ("mutant", mutant)
        equivalents = {e.id: _equivalents(e) for e in exercises}
        by_id = {e.id: e for e in exercises}
        for grade in grader.grade_many(batch):
            kind, mutant = plan[grade.student]
            exercise_id = grade.student.split(":")[1]
            result = grade.exercise(exercise_id)
            exercise = by_id[exercise_id]
            path = f"graders/test_{exercise_id}.py"
            if kind == "solution" and result.score < result.max_score:
                for b in result.blanks:
                    if b.score < b.max_score:
                        report.add(exercise_id, f"la solution n'a pas tous les points au trou « {b.id} » : "
                                                f"{b.message.splitlines()[0] if b.message else b.status}", path)
            elif kind == "template" and result.score > 0:
                report.add(exercise_id, f"l'exercice non rempli obtient {result.score} point(s)", path)
            elif kind == "mutant":
                blank = result.blanks[mutant.blank]
                if blank.score > 0:
                    blank_id = exercise.blanks[mutant.blank].id
                    if _normal(mutant.fill) in equivalents[exercise_id].get(blank_id, set()):
                        continue
                    survivors.append(Survivor(mutant, blank.score))
                    report.add(exercise_id, f"mutant survivant au trou « {blank_id} » ({mutant.label}) : "
                                            f"{mutant.fill[:160]}", path)
    return survivors
