"""The student's self-check: run their file once per variant, evaluate the public checks, and say
for each blank whether it is unfilled, right, wrong (expected versus obtained) or not reached.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from ..course import compare
from ..course.definition import BlankSpec, Exercise
from ..runner.protocol import CRASH, EXIT, SKIPPED, TIMEOUT, Job, Limits, Probe, ProbeResult, Unit, UnitResult
from ..course.spec import Check, Expect, load_checks
from ..course.submission import Analysis

PASSED, FAILED, UNFILLED, NOT_RUN, SKIPPED_CHECK = "passed", "failed", "unfilled", "not_run", "skipped"


@dataclass
class BlankResult:
    index: int
    spec: BlankSpec
    status: str
    line: int | None = None
    problems: list[str] = field(default_factory=list)  # French, one line each

    @property
    def passed(self) -> bool:
        return self.status in (PASSED, SKIPPED_CHECK)

    @property
    def filled(self) -> bool:
        return self.status != UNFILLED


@dataclass
class ExerciseResult:
    exercise: Exercise
    path: str
    blanks: list[BlankResult]
    problem: str | None = None  # the file as a whole (unreadable, syntax error), with its location
    problem_line: int | None = None
    problem_text: str | None = None
    output: str = ""
    notes: list[str] = field(default_factory=list)
    by_check: dict[str, list[str]] = field(default_factory=dict)  # check name → its own failures

    @property
    def passed(self) -> bool:
        return self.problem is None and all(b.passed for b in self.blanks)

    @property
    def filled(self) -> int:
        return sum(1 for b in self.blanks if b.filled)


# -- judging one expectation -------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""
    line: int | None = None
    kind: str = "error"  # "value": the program ran and gave other values; "structure": another kind or shape


def _is_blank_name_error(error) -> bool:
    return error is not None and error.type == "NameError" and "'___'" in error.message


def describe_error(error, unit_label: str = "", message: bool = True) -> str:
    """An error in French; `message=False`: its type and line only (the message could carry what a
    hidden run computed or read)."""
    if error is None:
        return "erreur inconnue"
    if error.kind in ("timeout", "crash", "skipped", "files", "output", "protocol", "override"):
        return error.message
    if error.kind == "too_big":
        return f"valeur trop grande pour être vérifiée ({error.message})"
    if error.kind == "memory":
        return "mémoire épuisée (MemoryError) : le programme demande trop de mémoire"
    if error.kind == "exit":
        where = f" ligne {error.line}" if error.line else ""
        # The child writes sys.exit's code only when it is a number: this never echoes the student's text.
        return f"le programme s'arrête{where} par {error.message or 'sys.exit'} avant la fin"
    text = f"{error.type}: {error.message}" if error.message and message else error.type
    if error.type == "RecursionError":
        text += " (une fonction s'appelle elle-même sans fin ?)"
    if error.line:
        shown = f"\n  {error.line} | {error.text.strip()}" if error.text else ""
        return f"erreur ligne {error.line} — {text}{shown}"
    return text


@dataclass(frozen=True)
class Disclosure:
    """What a verdict may show. Each of these can carry hidden things into a page (a hidden
    check's inputs, what a spliced program computed from the reference), so grading shows an
    expression, a value or an exception message only where it is public."""

    expression: bool = True  # the expression checked; else its French description
    values: bool = True  # the expected value, and what was obtained when it has that shape
    obtained: bool = True  # what was obtained even when its shape differs
    messages: bool = True  # exception messages; else the exception's type and line only


OPEN = Disclosure()


def disclosure(expect: Expect, *, graded: bool, own_file: bool) -> Disclosure:
    """The rule: a hidden check (a grader's) is described, never shown; values of hidden inputs
    are never shown; exception messages only from the student's own file on public inputs."""
    hidden_inputs = expect.hidden or (expect.variant is not None and expect.variant.hidden)
    return Disclosure(expression=not expect.hidden, values=not hidden_inputs, obtained=not graded,
                      messages=own_file and not hidden_inputs)


def judge(expect: Expect, expected, unit: UnitResult, probe: ProbeResult, *, say: Disclosure = OPEN) -> Verdict:
    """Does one expectation hold? When not, why, within what `say` allows to be shown."""
    context = f"sur d'autres entrées ({expect.variant.description})" if expect.variant else ""
    name = expect.name if say.expression else expect.description
    error_text = lambda error: describe_error(error, message=say.messages)  # noqa: E731
    if not probe.evaluated:
        if unit.status in (TIMEOUT, CRASH, SKIPPED):
            return Verdict(False, _join(context, error_text(unit.error)))
        return Verdict(False, _join(context, "non vérifié"))
    if probe.error is not None:
        if unit.status == TIMEOUT and probe.error.kind == "timeout":
            return Verdict(False, _join(context, "non vérifié : " + error_text(unit.error)), unit.error.line if unit.error else None)
        if probe.error.kind in ("timeout", "crash", "protocol"):
            return Verdict(False, _join(context, f"{name} : {probe.error.message}"))
        if unit.status != "ok" and unit.error is not None and probe.error.type == "NameError":
            if _is_blank_name_error(unit.error):
                return Verdict(False, _join(context, f"non vérifié : le programme s'arrête ligne {unit.error.line} "
                                                     "sur un trou pas encore rempli (___)"), unit.error.line)
            return Verdict(False, _join(context, "non vérifié : " + error_text(unit.error)), unit.error.line)
        if _is_blank_name_error(probe.error):
            return Verdict(False, _join(context, f"le trou de la ligne {probe.error.line} n'est pas encore rempli"),
                           probe.error.line)
        if probe.error.type == "NameError" and probe.error.line is None:
            found = f" ({probe.error.message})" if say.messages and say.expression else ""
            return Verdict(False, _join(context, f"{name} : introuvable{found}"))
        return Verdict(False, _join(context, f"{name} : " + error_text(probe.error)), probe.error.line)
    mismatch = compare.compare(expected, probe.value, decimals=expect.decimals, rtol=expect.rtol, atol=expect.atol)
    if mismatch is None:
        return Verdict(True)
    if not say.values:
        # Kinds, shapes and lengths show no value; anything else is only « valeur fausse ».
        detail = mismatch.reason if mismatch.structural else "valeur fausse"
        text = f"{name} : {detail}"
    elif not say.obtained and not compare.same_shape(expected, probe.value):
        obtained = compare.decode(probe.value)
        where = f" (élément {mismatch.where})" if mismatch.where else ""
        # The reason names types and lengths; text the student's code produced is never echoed.
        detail = "" if compare.has_text(obtained) else f" — {mismatch.reason}"
        text = (f"{name} : attendu {compare.format_value(expected, expect.decimals)}, "
                f"obtenu {compare.describe_type(obtained)}{where}{detail}")
    else:
        where = f" (élément {mismatch.where})" if mismatch.where else ""
        text = (f"{name} : attendu {compare.format_value(expected, expect.decimals)}, "
                f"obtenu {compare.format_value(probe.value, expect.decimals)}{where} — {mismatch.reason}")
    if expect.message:
        text += f"\n{expect.message}"
    return Verdict(False, _join(context, text), kind="structure" if mismatch.structural else "value")


def _join(context: str, text: str) -> str:
    return f"{context} : {text}" if context else text


# -- the public self-check -----------------------------------------------------------------------
def _available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def plan_units(analysis: Analysis, checks: list[Check], text: str, process: str = "") -> tuple[list[Unit], list]:
    """One unit per distinct variant of the student's whole file; the plan maps each expectation
    to (unit position, probe position)."""
    units: list[Unit] = []
    probes: dict[int, list[Probe]] = {}
    by_variant: dict[tuple, int] = {}
    plan = []
    for check in checks:
        for expect in check.expects:
            key = expect.variant.key if expect.variant else ()
            if key not in by_variant:
                by_variant[key] = len(by_variant)
                probes[by_variant[key]] = []
            u = by_variant[key]
            probes[u].append(Probe(expect.expr, expect.setup))
            plan.append((check, expect, u, len(probes[u]) - 1))
    for key, u in sorted(by_variant.items(), key=lambda kv: kv[1]):
        units.append(Unit(source=text, filename=analysis.path, probes=tuple(probes[u]), overrides=key,
                          process=process or analysis.exercise.id, group=process or analysis.exercise.id))
    return units, plan


def limits_for(exercise: Exercise, base: Limits | None = None) -> Limits:
    spec = exercise.course.spec.limits
    values = {k: v for k, v in spec.model_dump().items() if v is not None}
    values["wall"] = exercise.spec.timeout if "wall" not in values else min(values["wall"], exercise.spec.timeout)
    merged = {**(base.__dict__ if base else {}), **values}
    return Limits.from_dict(merged)


def prepare(exercise: Exercise, analysis: Analysis, checks: list[Check] | None = None):
    """The job for a public check of `analysis`, or an ExerciseResult when nothing can run."""
    checks = load_checks(exercise.checks_path) if checks is None else checks
    if not analysis.readable:
        return _unrunnable(exercise, analysis, analysis.error or "illisible", analysis.error_line, None), None
    from ..course.submission import syntax_problem  # noqa: PLC0415

    syntax = analysis.syntax or syntax_problem(analysis.source.text, analysis.path)
    if syntax is not None:
        s = syntax
        return _unrunnable(exercise, analysis, f"erreur de syntaxe : {s.message}", s.line, s.text, s.column), None
    runnable = [c for c in checks if all(_available(m) for m in c.requires)]
    wanted = [c for c in runnable if analysis.is_filled(_index(exercise, c))]
    units, plan = plan_units(analysis, wanted, analysis.source.text)
    job = Job(tuple(units), limits_for(exercise), capture_output=True)
    return job, (checks, runnable, plan)


def _index(exercise: Exercise, check: Check) -> int:
    return exercise.blank_index(check.blank)


def _unrunnable(exercise, analysis, message, line, text, column=0) -> ExerciseResult:
    where = f"{analysis.path}:{line}" if line else analysis.path
    located = f"non vérifié — {where} : {message}"
    if text is not None:
        number = f"{line} | " if line else ""
        located += f"\n  {number}{text}" + _caret(text, column, len(number) + 2)
    blanks = []
    for i, spec in enumerate(exercise.blanks):
        if not analysis.is_filled(i) and analysis.readable:
            blanks.append(BlankResult(i, spec, UNFILLED, analysis.line_of(i)))
        else:
            blanks.append(BlankResult(i, spec, NOT_RUN, analysis.line_of(i), [located]))
    return ExerciseResult(exercise, analysis.path, blanks, problem=message, problem_line=line,
                          problem_text=text)


def _caret(text: str, column: int, indent: int = 0) -> str:
    if column <= 0 or column > len(text) + 1:
        return ""
    return "\n" + " " * (indent + column - 1) + "^"


def interpret(exercise: Exercise, analysis: Analysis, context, results: list[UnitResult]) -> ExerciseResult:
    checks, runnable, plan = context
    per_blank: dict[int, list[Verdict]] = {}
    by_check: dict[str, list[str]] = {c.name: [] for c in checks}
    for check, expect, u, p in plan:
        unit = results[u]
        verdict = judge(expect, expect.expected, unit, unit.probes[p],
                        say=disclosure(expect, graded=False, own_file=True))
        per_blank.setdefault(_index(exercise, check), []).append(verdict)
        if not verdict.ok and verdict.reason not in by_check[check.name]:
            by_check[check.name].append(verdict.reason)
    blanks = []
    checked = {_index(exercise, c) for c in checks}
    skipped = {_index(exercise, c) for c in checks if c not in runnable}
    for i, spec in enumerate(exercise.blanks):
        line = analysis.line_of(i)
        if not analysis.is_filled(i):
            blanks.append(BlankResult(i, spec, UNFILLED, line))
            continue
        verdicts = per_blank.get(i, [])
        failures = [v for v in verdicts if not v.ok]
        if failures:
            problems = list(dict.fromkeys(v.reason for v in failures))
            blanks.append(BlankResult(i, spec, FAILED, line, problems))
        elif i in skipped and not verdicts:
            blanks.append(BlankResult(i, spec, SKIPPED_CHECK, line, ["vérification sautée : module absent"]))
        elif i not in checked:
            blanks.append(BlankResult(i, spec, PASSED, line, ["aucune vérification publique pour ce trou"]))
        else:
            blanks.append(BlankResult(i, spec, PASSED, line))
    output = results[0].output if results else ""
    notes = []
    if not analysis.aligned and analysis.template_has_blanks:
        notes.append("le code en dehors des trous a été modifié : c'est ton fichier entier qui est vérifié")
    result = ExerciseResult(exercise, analysis.path, blanks, output=output, notes=notes, by_check=by_check)
    first = results[0] if results else None
    # The program itself stopped (not on an unfilled blank): worth saying once, if a blank suffered.
    stopped = first is not None and first.error is not None and (
        first.status in (TIMEOUT, CRASH, EXIT) or (first.status == "error" and not _is_blank_name_error(first.error)
                                                   and first.error.kind != "override"))
    if stopped and not all(b.passed or b.status == UNFILLED for b in blanks):
        result.problem, result.problem_line = describe_error(first.error), first.error.line
    return result


def preload_for(exercises, checks: dict[str, list[Check]] | None = None) -> tuple[str, ...]:
    """Modules the course's programs import that are worth importing once in the runner: numpy, and
    whatever an exercise or a check `requires` (torch when installed: seconds to import)."""
    wanted = ["numpy"]
    for exercise in exercises:
        wanted += exercise.spec.requires
        for check in (checks or {}).get(exercise.id, []):
            wanted += check.requires
    return tuple(m for m in dict.fromkeys(wanted) if _available(m))


class Checker:
    """Self-checks for one session (a pytest run, a `trous` command): one runner, results cached."""

    def __init__(self, sandbox: str | None = None):
        import os  # noqa: PLC0415

        from ..runner.pool import Runner  # noqa: PLC0415

        self.runner = Runner(sandbox or os.environ.get("TROUS_SANDBOX", "fallback"))
        self.cache: dict[str, ExerciseResult] = {}

    def check(self, exercise: Exercise, refresh: bool = False) -> ExerciseResult:
        from ..course.submission import analyse_path  # noqa: PLC0415

        if refresh or exercise.id not in self.cache:
            if self.runner.process is None:
                self.runner.want(preload_for(exercise.course.exercises, {exercise.id: load_checks(exercise.checks_path)}
                                             if exercise.checks_path.exists() else None))
            analysis = analyse_path(exercise, exercise.path)
            job, context = prepare(exercise, analysis)
            if context is None:
                result = job
            else:
                results = self.runner.run(job) if job.units else []
                result = interpret(exercise, analysis, context, results)
            self.cache[exercise.id] = result
        return self.cache[exercise.id]

    def close(self) -> None:
        self.runner.close()

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
