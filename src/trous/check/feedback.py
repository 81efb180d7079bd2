"""Words for the student: one exercise's result as French text (terminal) — the notebook and HTML
renderers build on the same pieces."""

from __future__ import annotations

from ..core.wording import plural
from .selfcheck import DEPENDS, FAILED, NOT_REACHED, NOT_RUN, PASSED, SKIPPED_CHECK, SUSPECT, UNFILLED, WAITING, BlankResult, ExerciseResult

SYMBOL = {PASSED: "✔", FAILED: "✘", UNFILLED: "…", NOT_RUN: "?", SKIPPED_CHECK: "–", DEPENDS: "○", NOT_REACHED: "○",
          SUSPECT: "!"}
STATUS = {
    PASSED: "juste",
    FAILED: "faux",
    UNFILLED: "pas encore rempli (___)",
    NOT_RUN: "non vérifié",
    SKIPPED_CHECK: "vérification sautée",
    DEPENDS: "dépend d'un autre trou",
    NOT_REACHED: "pas encore vérifié (le programme s'arrête avant)",
    SUSPECT: "à revoir",
}


def status_text(result: ExerciseResult, blank: BlankResult) -> str:
    """« juste », « faux »…, and for a blank that waits: « dépend de « racine » »."""
    causes = ", ".join(f"« {result.blanks[c].spec.id} »" for c in blank.causes)
    if blank.status == DEPENDS and causes:
        return f"dépend de {causes}"
    if blank.status == NOT_REACHED and causes:
        return f"pas encore vérifié (le programme s'arrête avant, sur {causes})"
    return STATUS[blank.status]


def blank_title(result: ExerciseResult, blank: BlankResult) -> str:
    total = len(result.blanks)
    where = f"{result.path}:{blank.line}" if blank.line else result.path
    return f"{where} — trou {blank.index + 1}/{total} « {blank.spec.id} » : {status_text(result, blank)}"


def hint_text(blank: BlankResult) -> str:
    return blank.spec.hints[0]


def wants_hint(blank: BlankResult) -> bool:
    """A hint helps a blank to write or to fix; a blank that waits for another gets none yet."""
    return blank.status in (FAILED, UNFILLED, SUSPECT)


def blank_report(result: ExerciseResult, blank: BlankResult, *, with_problem: bool = True,
                 details: bool = False) -> str:
    """One blank not right yet. `details`: also what a waiting blank fails on meanwhile."""
    lines = [blank_title(result, blank)]
    lines += [f"    {line}" for problem in blank.problems + (blank.details if details else [])
              for line in problem.split("\n")]
    if with_problem and result.problem and blank.status not in (UNFILLED, *WAITING):
        lines.append("")
        lines += ["    " + ln for ln in problem_report(result).split("\n")]
    if wants_hint(blank):
        lines.append(f"    indice : {hint_text(blank)}")
    return "\n".join(lines)


def problem_report(result: ExerciseResult) -> str:
    if not result.problem:
        return ""
    where = f"{result.path}:{result.problem_line}" if result.problem_line else result.path
    first, *rest = result.problem.split("\n")
    lines = [f"{where} — {first}"] + rest
    if result.problem_text:
        number = f"{result.problem_line} | " if result.problem_line else ""
        text_lines = result.problem_text.split("\n")
        lines.append(f"  {number}{text_lines[0]}")
        lines += ["  " + " " * len(number) + t for t in text_lines[1:]]
    return "\n".join(lines)


def exercise_state(result: ExerciseResult) -> str:
    return "réussi" if result.passed else ("à commencer" if result.filled == 0 else "en cours")


def exercise_line(result: ExerciseResult) -> str:
    marks = "".join(SYMBOL[b.status] for b in result.blanks)
    total = len(result.blanks)
    filled = f"{result.filled}/{total} {plural(total, 'trou rempli')}"
    return f"{result.exercise.id:<24} {marks:<8} {filled:<18} {exercise_state(result)}"


def next_step(result: ExerciseResult) -> str | None:
    """What to work on first, said in one line."""
    if result.passed:
        return None
    blank = result.first_to_fix
    if result.problem and (blank is None or blank.status == NOT_RUN):
        where = f"la ligne {result.problem_line}" if result.problem_line else "le fichier"
        return f"d'abord : corrige {where}, qui empêche tout le fichier de s'exécuter ; puis revérifie"
    if blank is None:
        return None
    verb = {UNFILLED: "à remplir", FAILED: "à corriger", SUSPECT: "à revoir"}.get(blank.status, "à revoir")
    return f"d'abord : trou {blank.index + 1} « {blank.spec.id} » ({verb}) — indice : trous hint {result.exercise.id}"


def exercise_report(result: ExerciseResult, *, details: bool = False, step: bool = True) -> str:
    """The whole exercise, for `trous check`, `watch` and `pytest exercises/`. `details`: what waiting
    blanks fail on meanwhile; `step`: which blank first."""
    lines = [f"{result.exercise.id} — {result.exercise.title}"]
    if result.problem:
        lines.append(problem_report(result))
    for note in result.notes:
        lines.append(f"note : {note}")
    for blank in result.blanks:
        if blank.status == PASSED:
            lines.append(f"  {SYMBOL[PASSED]} trou {blank.index + 1} « {blank.spec.id} » : juste")
        else:
            body = blank_report(result, blank, with_problem=False, details=details).split("\n")
            lines.append(f"  {SYMBOL[blank.status]} " + body[0])
            lines += ["  " + ln for ln in body[1:]]
    first = next_step(result) if step else None
    if first:
        lines.append(first)
    return "\n".join(lines + printed(result))


def printed(result: ExerciseResult) -> list[str]:
    """What the student's program printed (its first 40 lines), under a heading; nothing if nothing."""
    if not result.output.strip():
        return []
    lines = result.output.rstrip("\n").split("\n")[:40]
    return ["ce que ton programme a affiché :", *("  | " + line for line in lines)]


def progress_line(results: list[ExerciseResult]) -> str:
    passed = sum(1 for r in results if r.passed)
    filled = sum(r.filled for r in results)
    right = sum(1 for r in results for b in r.blanks if b.passed)
    total = sum(len(r.blanks) for r in results)
    return (f"Progression : {passed}/{len(results)} {plural(len(results), 'exercice réussi')} · "
            f"{filled}/{total} {plural(total, 'trou rempli')} · {right}/{total} {plural(total, 'trou juste')}")

