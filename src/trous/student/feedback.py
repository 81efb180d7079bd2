"""Words for the student: one exercise's result as French text (terminal) — the notebook and HTML
renderers build on the same pieces."""

from __future__ import annotations

from .checking import FAILED, NOT_RUN, PASSED, SKIPPED_CHECK, UNFILLED, BlankResult, ExerciseResult

SYMBOL = {PASSED: "✔", FAILED: "✘", UNFILLED: "…", NOT_RUN: "?", SKIPPED_CHECK: "–"}
STATUS = {
    PASSED: "juste",
    FAILED: "faux",
    UNFILLED: "pas encore rempli (___)",
    NOT_RUN: "non vérifié",
    SKIPPED_CHECK: "vérification sautée",
}


def blank_title(result: ExerciseResult, blank: BlankResult) -> str:
    total = len(result.blanks)
    where = f"{result.path}:{blank.line}" if blank.line else result.path
    return f"{where} — trou {blank.index + 1}/{total} « {blank.spec.id} » : {STATUS[blank.status]}"


def hint_text(blank: BlankResult, level: int = 0) -> str:
    hints = blank.spec.hints
    return hints[min(level, len(hints) - 1)]


def blank_report(result: ExerciseResult, blank: BlankResult, *, with_problem: bool = True) -> str:
    """What a student reads when one blank is not right yet."""
    lines = [blank_title(result, blank)]
    for problem in blank.problems:
        first, *rest = problem.split("\n")
        lines.append(f"    {first}")
        lines += [f"    {r}" for r in rest]
    already = any(p.startswith("non vérifié") for p in blank.problems)
    if with_problem and result.problem and blank.status != UNFILLED and not already:
        lines.append("")
        lines += ["    " + ln for ln in problem_report(result).split("\n")]
    if blank.status in (FAILED, UNFILLED):
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


def exercise_line(result: ExerciseResult) -> str:
    marks = "".join(SYMBOL[b.status] for b in result.blanks)
    state = "réussi" if result.passed else ("à commencer" if result.filled == 0 else "en cours")
    return f"{result.exercise.id:<24} {marks:<8} {result.filled}/{len(result.blanks)} trous remplis  {state}"


def exercise_report(result: ExerciseResult) -> str:
    """The whole exercise, for `trous check`."""
    lines = [f"{result.exercise.id} — {result.exercise.title}"]
    if result.problem:
        lines.append(problem_report(result))
    for note in result.notes:
        lines.append(f"note : {note}")
    for blank in result.blanks:
        if blank.status == PASSED:
            lines.append(f"  {SYMBOL[PASSED]} trou {blank.index + 1} « {blank.spec.id} » : juste")
        else:
            body = blank_report(result, blank, with_problem=False).split("\n")
            lines.append(f"  {SYMBOL[blank.status]} " + body[0])
            lines += ["  " + ln for ln in body[1:]]
    if result.output.strip():
        lines.append("ce que ton programme a affiché :")
        lines += ["  | " + ln for ln in result.output.rstrip("\n").split("\n")[:40]]
    return "\n".join(lines)


def progress_line(results: list[ExerciseResult]) -> str:
    passed = sum(1 for r in results if r.passed)
    filled = sum(r.filled for r in results)
    right = sum(1 for r in results for b in r.blanks if b.passed)
    total = sum(len(r.blanks) for r in results)
    return (f"Progression : {passed}/{len(results)} exercices réussis · {filled}/{total} trous remplis · "
            f"{right}/{total} trous justes")
