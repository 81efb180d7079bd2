"""The student's self-check: each blank unfilled, right, wrong, waiting for another blank, or not reached.

The public test functions (`@pytest.mark.trou`) count as grading counts them: without them, « juste »
could be said of a blank only a test refuses. A broken test is the course's fault, said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import flow as flow_mod
from ..core import compare, glosses
from ..core.analysis import Analysis, syntax_problem
from ..core.checks import Check, Expect, load_checks
from ..core.course import BlankSpec, Exercise, available, limits_for
from ..core.protocol import CRASH, EXIT, SKIPPED, TIMEOUT, Job, Probe, ProbeResult, Unit, UnitResult
from . import blame
from .blame import DEPENDS, FAILED, NOT_REACHED, PASSED, SUSPECT, UNFILLED
from ..core.judge import (Verdict, describe_error, disclosure, in_context, is_blank_name_error, judge, judge_test,
                          not_checked, variant_context)
from ..grade.testworker import TestFunctions

NOT_RUN, SKIPPED_CHECK = "not_run", "skipped"
TO_FIX = (UNFILLED, FAILED, SUSPECT, NOT_RUN)  # what a student works on; a waiting blank waits
WAITING = (DEPENDS, NOT_REACHED)


@dataclass
class BlankResult:
    index: int
    spec: BlankSpec
    status: str
    line: int | None = None
    problems: list[str] = field(default_factory=list)  # French, one line each
    causes: tuple[int, ...] = ()  # WAITING: the blanks it waits for; SUSPECT: those whose checks fail
    details: list[str] = field(default_factory=list)  # WAITING: its own failures, while it waits

    @property
    def passed(self) -> bool:
        return self.status in (PASSED, SKIPPED_CHECK)


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

    @property
    def passed(self) -> bool:
        return self.problem is None and all(b.passed for b in self.blanks)

    @property
    def filled(self) -> int:
        return sum(1 for b in self.blanks if b.status != UNFILLED)

    @property
    def first_to_fix(self) -> BlankResult | None:
        """Unfilled or actually wrong, not one that only waits for it."""
        return next((b for b in self.blanks if b.status in TO_FIX), None) or next(
            (b for b in self.blanks if not b.passed), None)


# -- the public self-check -----------------------------------------------------------------------
def plan_units(analysis: Analysis, checks: list[Check], text: str) -> tuple[list[Unit], list]:
    """One unit per variant of `text`; the plan maps each expectation to (check, expect, unit, probe)."""
    probes: dict[tuple, list[Probe]] = {}  # by variant, in order of first use
    plan = []
    for check in checks:
        for expect in check.expects:
            found = probes.setdefault(expect.overrides, [])
            found.append(Probe(expect.expr, expect.setup))
            plan.append((check, expect, list(probes).index(expect.overrides), len(found) - 1))
    group = analysis.exercise.id
    units = [Unit(source=text, filename=analysis.path, probes=tuple(found), overrides=key, process=group,
                  group=group) for key, found in probes.items()]
    return units, plan


def prepare(exercise: Exercise, analysis: Analysis, checks: list[Check] | None = None):
    """(job, context), or (ExerciseResult, None) when nothing can run."""
    checks = load_checks(exercise.checks_path) if checks is None else checks
    known = {b.id for b in exercise.spec.blanks}
    checks = [c for c in checks if c.blank in known]  # an unknown blank is its own item's failure
    if not analysis.readable:
        return _unrunnable(exercise, analysis, analysis.error or "illisible", analysis.error_line, None), None
    s = analysis.syntax or syntax_problem(analysis.source.text, analysis.path)
    if s is not None:
        french = glosses.syntax_message(s.message)
        message = f"erreur de syntaxe : {french} ({s.message})" if french else f"erreur de syntaxe : {s.message}"
        return _unrunnable(exercise, analysis, message, s.line, s.text, s.column), None
    runnable = [c for c in checks if all(available(m) for m in c.requires)]
    wanted = [c for c in runnable if analysis.is_filled(exercise.blank_index(c.blank))]
    units, plan = plan_units(analysis, wanted, analysis.source.text)
    return Job(tuple(units), limits_for(exercise), capture_output=True), (checks, runnable, plan)


def _unrunnable(exercise, analysis, message, line, text, column=0) -> ExerciseResult:
    """Said once, for the exercise; its filled blanks are « non vérifié » without repeating why."""
    if text is not None and 0 < column <= len(text) + 1:
        text += "\n" + " " * (column - 1) + "^"
    blanks = [BlankResult(i, spec, UNFILLED if analysis.readable and not analysis.is_filled(i) else NOT_RUN,
                          analysis.line_of(i)) for i, spec in enumerate(exercise.blanks)]
    return ExerciseResult(exercise, analysis.path, blanks, problem=message, problem_line=line,
                          problem_text=text)


def flow_of(analysis: Analysis, overridden=()) -> flow_mod.Flow:
    """The copy's data flow, `overridden` variables given a variant's values. A copy changed outside
    the blanks has no known flow: every expectation then speaks for its own blank alone."""
    if analysis.source is None or analysis.fills is None:
        return flow_mod.Flow("", [], None)
    return flow_mod.analyse(analysis.source.text, [(f.begin, f.stop) for f in analysis.fills], overridden)


def never_computed(flow: flow_mod.Flow, expect: Expect, unit: UnitResult) -> bool:
    """The expectation reads a variable the program stopped before assigning: an older value, or none."""
    if unit.status == "ok" or unit.error is None:
        return False
    unfinished = flow.unfinished(unit.error.statement or unit.error.line)
    reads = flow.reads(expect.expr, expect.setup)
    return bool(unfinished and reads and unfinished & reads)


def _failure_line(unit: UnitResult, probe: ProbeResult, stop_line: int | None) -> int | None:
    """A unit skipped because an earlier one timed out or crashed failed at that one's line."""
    if probe.evaluated and probe.error is not None and probe.error.line and not (
            unit.status != "ok" and probe.error.type == "NameError"):
        return probe.error.line
    if unit.status == SKIPPED:
        return stop_line
    if unit.status != "ok" and unit.error is not None:
        return unit.error.line
    return None


def interpret(exercise: Exercise, analysis: Analysis, context, results: list[UnitResult]) -> ExerciseResult:
    checks, runnable, plan = context
    flow = flow_of(analysis)
    count = len(exercise.blanks)
    stop_line = next((r.error.line for r in results if r.status in (TIMEOUT, CRASH) and r.error is not None), None)
    outcomes: list[blame.Outcome] = []
    reasons: dict[int, str] = {}  # id(outcome) → why it failed
    failed: list[tuple[blame.Outcome, Expect]] = []
    unfilled = [i for i in range(count) if not analysis.is_filled(i)]
    verdicts = [judge(expect, expect.expected, results[u], results[u].probes[p],
                      say=disclosure(expect, graded=False, own_file=True)) for _, expect, u, p in plan]
    # Blame is needed (the usual run of a solved exercise needs none, nor each variant's own flow).
    trouble = bool(unfilled) or not all(r.status == "ok" for r in results) or not all(v.ok for v in verdicts)
    for k, (check, expect, u, p) in enumerate(plan):
        unit, index = results[u], exercise.blank_index(check.blank)
        probe = unit.probes[p]
        # Each run's own flow: a variant's values cut the blanks that computed them.
        run_flow = flow_of(analysis, [name for name, _ in expect.overrides]) if expect.variant and trouble else flow
        stale = probe.evaluated and never_computed(run_flow, expect, unit)
        verdict = (Verdict(False, in_context(variant_context(expect), not_checked(unit.error)), unit.error.line)
                   if stale else verdicts[k])
        depends = frozenset(i for i in run_flow.depends(expect.expr, expect.setup) if i < count) - {index}
        values = frozenset(i for i in run_flow.value_depends(expect.expr, expect.setup) if i < count)
        line = None if verdict.ok else (unit.error.line if stale else _failure_line(unit, probe, stop_line))
        stopped = not verdict.ok and unit.status != "ok" and (
            stale or not probe.evaluated or (probe.error is not None and probe.error.type == "NameError"))
        outcome = blame.Outcome(index, verdict.ok, depends, line, values, compare.has_number(expect.expected), stopped,
                                unit=u, flow=run_flow, check=f"{expect.setup or ''}\n{expect.expr}")
        outcomes.append(outcome)
        if not verdict.ok:
            reasons[id(outcome)] = verdict.reason
            failed.append((outcome, expect))
    _said_on_the_example(failed, reasons)
    decisions = blame.decide(count, unfilled, outcomes, flow)
    variants = {u: expect.variant for _, expect, u, _ in plan}
    stops = _unexplained_stops(results, variants, outcomes, decisions, flow)
    checked = {exercise.blank_index(c.blank) for c in checks}
    skipped = {exercise.blank_index(c.blank) for c in checks if c not in runnable}
    blanks = []
    for i, spec in enumerate(exercise.blanks):
        decision = decisions[i]
        status, problems, extra = decision.status, [], {}
        failures = list(dict.fromkeys(reasons[id(o)] for o in outcomes if o.blank == i and not o.ok))
        if status == FAILED:
            problems = failures
        elif status in WAITING:
            problems = [_waiting(exercise, decisions, decision.causes, reached=status == DEPENDS)]
            extra = {"causes": decision.causes, "details": failures}
        elif status == SUSPECT:
            evidence = list(dict.fromkeys(reasons[id(o)] for o in decision.evidence))
            problems, extra = _suspicion(exercise, decision.causes, evidence), {"causes": decision.causes}
        elif status == PASSED and i in stops:
            status, problems = SUSPECT, [stops[i]]
        elif status is None and i in skipped:
            status, problems = SKIPPED_CHECK, ["vérification sautée : module absent"]
        elif status is None:
            status, problems = PASSED, [] if i in checked else ["aucune vérification publique pour ce trou"]
        blanks.append(BlankResult(i, spec, status, analysis.line_of(i), problems, **extra))
    output = results[0].output if results else ""
    notes = []
    if not analysis.aligned and analysis.template_has_blanks:
        notes.append("le code en dehors des trous a été modifié : c'est ton fichier entier qui est vérifié")
    result = ExerciseResult(exercise, analysis.path, blanks, output=output, notes=notes)
    first = results[0] if results else None
    # The program itself stopped (not on an unfilled blank): worth saying once, if a blank suffered.
    stopped = first is not None and first.error is not None and (
        first.status in (TIMEOUT, CRASH, EXIT) or (first.status == "error" and not is_blank_name_error(first.error)
                                                   and first.error.kind != "override"))
    if stopped and not all(b.passed or b.status == UNFILLED for b in blanks):
        result.problem, result.problem_line = describe_error(first.error), first.error.line
        _said_once(result)
    for blank in blanks:
        blank.problems, blank.details = _glossed_once(blank.problems), _glossed_once(blank.details)
    return result


def _unexplained_stops(results: list[UnitResult], variants: dict, outcomes: list, decisions, flow) -> dict[int, str]:
    """{blank: why} for blanks otherwise right whose results reach a stop no wrong blank explains:
    graded, the rest of the program must run to its end with them."""
    flows = {o.unit: o.flow for o in outcomes if o.flow is not None}
    bad = {i for i, d in enumerate(decisions) if d.status in (FAILED, SUSPECT, UNFILLED)}
    found: dict[int, str] = {}
    for u, unit in enumerate(results):
        error = unit.error
        if (unit.status == "ok" or error is None or error.line is None or error.kind == "override"
                or is_blank_name_error(error)):
            continue
        reaching = {i for i in flows.get(u, flow).could_stop(error.line) if i < len(decisions)}
        if not reaching or reaching & bad:
            continue  # nothing of the blanks reaches it, or a wrong blank explains it
        variant = variants.get(u)
        if u == 0 and variant is None:  # the course's own inputs: the error is said once, above the blanks
            said = f"le programme s'arrête ligne {error.line} (l'erreur ci-dessus)"
        else:
            context = f"sur d'autres entrées ({variant.description}), " if variant is not None else ""
            said = f"{context}le programme s'arrête ligne {error.line} — {describe_error(error)}\n"
        for i in sorted(reaching):
            if decisions[i].status == PASSED and i not in found:
                found[i] = (f"ses vérifications passent, mais {said.rstrip()}" + ("\n" if said.endswith("\n") else ", ")
                            + "et le résultat de ce trou arrive à cette ligne : vérifie-le d'abord (sa nature, sa "
                            "taille…), le programme doit aller jusqu'au bout avec lui")
    return found


def _glossed_once(failures: list[str]) -> list[str]:
    """The same « piste : … » is given under the first failure only."""
    seen: set[str] = set()

    def first_time(line: str) -> bool:
        if not line.startswith("piste : "):
            return True
        new = line not in seen
        seen.add(line)
        return new

    return ["\n".join(line for line in failure.split("\n") if first_time(line)) for failure in failures]


def _said_on_the_example(failed: list, reasons: dict[int, str]) -> None:
    """The author's words are said on the course's inputs only: on other inputs they may fit another
    mistake (« la taille vient de T, elle n'est pas écrite en dur » is not what a `>` for `>=` did)."""
    on_example = {(o.blank, e.setup, e.expr) for o, e in failed if e.variant is None}
    for outcome, expect in failed:
        tail = f"\n{expect.message}" if expect.message else ""
        if (expect.variant is not None and tail and (outcome.blank, expect.setup, expect.expr) in on_example
                and reasons[id(outcome)].endswith(tail)):
            reasons[id(outcome)] = reasons[id(outcome)][:-len(tail)]


def _said_once(result: ExerciseResult) -> None:
    """The error that stops the program is said once; a blank's check that met it names it in a few words."""
    said = result.problem
    line = result.problem_line
    short = (f"le programme s'arrête ligne {line}, sur l'erreur ci-dessus" if line
             else "le programme s'arrête sur l'erreur ci-dessus")
    for blank in result.blanks:
        blank.problems = list(dict.fromkeys(p.replace(said, short) for p in blank.problems))
        blank.details = list(dict.fromkeys(p.replace(said, short) for p in blank.details))


_STATE = {UNFILLED: "pas encore rempli", FAILED: "faux", SUSPECT: "à revoir"}


def _waiting(exercise: Exercise, decisions, causes: tuple[int, ...], reached: bool) -> str:
    """The blanks its checks go through (`reached`), or those the program stops on before them."""
    states = [f"« {exercise.blanks[c].id} » ({_STATE.get(decisions[c].status, 'pas encore juste')})" for c in causes]
    then = ""
    if causes:
        verb = {UNFILLED: "remplis", SUSPECT: "revois"}.get(decisions[causes[0]].status, "corrige")
        then = f" : {verb} d'abord « {exercise.blanks[causes[0]].id} », puis revérifie"
    if not reached:
        where = f", sur {', '.join(states)}" if states else ""
        return ("ses vérifications ne lisent le résultat d'aucun autre trou, mais le programme s'arrête "
                f"avant{where}{then}")
    if len(causes) == 1:
        return f"ses vérifications passent par le résultat de {states[0]}{then}"
    return f"ses vérifications passent par les résultats de {', '.join(states)} : commence par eux, puis revérifie"


def _suspicion(exercise: Exercise, others: tuple[int, ...], evidence: list[str]) -> list[str]:
    whose = ", ".join(f"« {exercise.blanks[i].id} »" for i in others) if others else "ce trou"
    lines = [f"ses vérifications passent, mais celles de {whose}, qui utilisent son résultat, échouent :"]
    lines += ["  " + line for reason in evidence for line in reason.split("\n")]
    if others:
        lines.append(f"vérifie-le d'abord ; s'il est juste, c'est {whose} qu'il faut revoir")
    return lines


# -- the public checks' test functions -------------------------------------------------------------
COURSE_FAULT = "une vérification de l'exercice ne fonctionne pas (erreur du cours, pas la tienne) : {what}"


def self_check(runner, exercise, analysis) -> ExerciseResult:
    """Declarations, then test functions, on `runner` (checker.py takes these steps with jobs sent ahead)."""
    job, context = prepare(exercise, analysis)
    if context is None:  # nothing can run: the verdicts are known
        return job
    result = interpret(exercise, analysis, context, runner.run(job) if job.units else [])
    apply_test_functions(runner, exercise, analysis, result)
    return result


def apply_test_functions(runner, exercise, analysis, result) -> None:
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
