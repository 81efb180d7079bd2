"""One exercise's result in French words: for the terminal (`Report`) and a notebook (`NotebookReport`)."""

from __future__ import annotations

import html
import re

from ..core.wording import plural
from .selfcheck import (DEPENDS, FAILED, NOT_REACHED, NOT_RUN, PASSED, SKIPPED_CHECK, SUSPECT, UNFILLED, BlankResult,
                        ExerciseResult)

# By status: its symbol, its word; pytest's category, its word with -v and colour; the notebook's colour.
LOOK = {
    PASSED: ("✔", "juste", "✔", "JUSTE", "green", "#15803d"),
    FAILED: ("✘", "faux", "faux", "FAUX", "red", "#b91c1c"),
    UNFILLED: ("…", "pas encore rempli (___)", "à remplir", "À REMPLIR", "yellow", "#a16207"),
    NOT_RUN: ("?", "non vérifié", "en erreur", "EN ERREUR", "red", "#6b7280"),
    SKIPPED_CHECK: ("–", "vérification sautée", "sans vérification", "SANS VÉRIFICATION", "green", "#6b7280"),
    DEPENDS: ("○", "dépend d'un autre trou", "en attente", "EN ATTENTE", "cyan", "#0e7490"),
    NOT_REACHED: ("○", "pas encore vérifié (le programme s'arrête avant)", "en attente", "PAS ENCORE VÉRIFIÉ", "cyan",
                  "#0e7490"),
    SUSPECT: ("!", "à revoir", "à revoir", "À REVOIR", "red", "#c2410c"),
}
SYMBOL = {status: look[0] for status, look in LOOK.items()}
STATUS = {status: look[1] for status, look in LOOK.items()}


def status_text(result: ExerciseResult, blank: BlankResult) -> str:
    causes = ", ".join(f"« {result.blanks[c].spec.id} »" for c in blank.causes)
    if blank.status == DEPENDS and causes:
        return f"dépend de {causes}"
    if blank.status == NOT_REACHED and causes:
        return f"pas encore vérifié (le programme s'arrête avant, sur {causes})"
    return STATUS[blank.status]


def wants_hint(blank: BlankResult) -> bool:
    """A hint helps a blank to write or to fix; a blank that waits for another gets none yet."""
    return blank.status in (FAILED, UNFILLED, SUSPECT)


class Report:
    """Places named as lines of the file. `details`: what waiting blanks fail on meanwhile; `step`: which
    blank first."""

    def __init__(self, result: ExerciseResult, *, details: bool = False, step: bool = True):
        self.result, self.details, self.with_step = result, details, step

    def place(self, line: int | None) -> str:
        return f"{self.result.path}:{line}" if line else self.result.path

    def line_number(self, line: int) -> int:  # the number a quoted line is shown with
        return line

    def relocate(self, text: str) -> str:  # a text's « ligne 12 », said where the student finds it
        return text

    def title(self, blank: BlankResult) -> str:
        total = len(self.result.blanks)
        return (f"{self.place(blank.line)} — trou {blank.index + 1}/{total} « {blank.spec.id} » : "
                f"{status_text(self.result, blank)}")

    def summary(self) -> str:
        r = self.result
        right = sum(1 for b in r.blanks if b.passed)
        total = len(r.blanks)
        if r.passed:
            return f"Bravo : les {total} trous sont justes."
        return f"{right}/{total} trous justes, {r.filled}/{total} remplis."

    def notes(self) -> list[str]:
        return [self.relocate(n) for n in self.result.notes]

    def problem(self) -> str | None:
        r = self.result
        if not r.problem:
            return None
        where = self.place(r.problem_line)
        lines = [f"{where} — {self.relocate(r.problem)}" if where else self.relocate(r.problem)]
        if r.problem_text:
            number = f"{self.line_number(r.problem_line)} | " if r.problem_line else ""
            first, *rest = r.problem_text.split("\n")
            lines += [f"  {number}{first}", *("  " + " " * len(number) + t for t in rest)]
        return "\n".join(lines)

    def blank_lines(self, blank: BlankResult) -> list[str]:
        shown = blank.problems + (blank.details if self.details else [])
        return [line for problem in shown for line in self.relocate(problem).split("\n")]

    def blank_text(self, blank: BlankResult, symbol: str | None = None) -> list[str]:
        lines = [f"{symbol or SYMBOL[blank.status]} {self.title(blank)}"]
        lines += [f"    {line}" for line in self.blank_lines(blank)]
        if wants_hint(blank):
            lines.append(f"    indice : {blank.spec.hints[0]}")
        return lines

    def step(self) -> str | None:
        step = next_step(self.result) if self.with_step else None
        return self.relocate(step) if step else None

    def __str__(self) -> str:
        r = self.result
        out = [f"{r.exercise.id} — {r.exercise.title} : {self.summary()}"]
        problem = self.problem()
        out += ([problem] if problem else []) + [f"note : {n}" for n in self.notes()]
        out += [f"  {line}" for blank in r.blanks for line in self.blank_text(blank)]
        step = self.step()
        return "\n".join(out + ([step] if step else []) + printed(r))


def problem_report(result: ExerciseResult) -> str:
    return Report(result).problem() or ""


def exercise_state(result: ExerciseResult) -> str:
    return "réussi" if result.passed else ("à commencer" if result.filled == 0 else "en cours")


def exercise_line(result: ExerciseResult) -> str:
    marks = "".join(SYMBOL[b.status] for b in result.blanks)
    total = len(result.blanks)
    filled = f"{result.filled}/{total} {plural(total, 'trou rempli')}"
    return f"{result.exercise.id:<24} {marks:<8} {filled:<18} {exercise_state(result)}"


def next_step(result: ExerciseResult) -> str | None:
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
    return str(Report(result, details=details, step=step))


def printed(result: ExerciseResult) -> list[str]:
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


# -- in a notebook --------------------------------------------------------------------------------
COLORS = {status: look[5] for status, look in LOOK.items()}
# JupyterLab breaks output lines anywhere (word-break: break-all), cutting « 0,21 » into « 0, » and
# « 21 »: our blocks break between words only, and a word longer than the line may still wrap.
WRAP = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"
_SHOWN = re.compile(r"^(\s*)(\d+) \| ", re.MULTILINE)


class NotebookReport(Report):
    """Places named as cells (« ligne 3 de la cellule 4 »), and its HTML. `snapshot`: an
    inputs.answers.CellMap (checkcell.Snapshot in JupyterLab: it needs jupytext)."""

    def __init__(self, result: ExerciseResult, snapshot, notes: list[str] | None = None):
        super().__init__(result)
        self.snapshot, self.extra_notes = snapshot, list(notes or [])

    def relocate(self, text: str) -> str:
        def shown(match):
            return f"{match.group(1)}{self.line_number(int(match.group(2)))} | "
        return _SHOWN.sub(shown, self.snapshot.relocate(text))

    def line_number(self, line: int) -> int:
        place = self.snapshot.where(line)
        return place[1] if place else line

    def place(self, line: int | None) -> str:
        return self.snapshot.describe(line) or (f"ligne {line}" if line else "")

    def _code_line(self, blank: BlankResult) -> str:
        lines = self.snapshot.text.split("\n")
        return lines[blank.line - 1].strip() if blank.line and 0 < blank.line <= len(lines) else ""

    def title(self, blank: BlankResult) -> str:
        total = len(self.result.blanks)
        where = self.place(blank.line)
        return (f"trou {blank.index + 1}/{total} « {blank.spec.id} »"
                + (f" ({where})" if where else "") + f" : {status_text(self.result, blank)}")

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.snapshot.stale:
            cells = ", ".join(str(c) for c in self.snapshot.stale)
            notes.append(f"cellule(s) {cells} : pas exécutée(s) dans ce noyau, je vérifie leur version enregistrée")
        return notes + self.extra_notes

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    # -- HTML (JupyterLab) ------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        r = self.result
        e = html.escape
        color = COLORS[PASSED] if r.passed else "#1f2937"
        parts = [f'<div class="trous-check" data-exercise="{e(r.exercise.id)}" data-passed="{str(r.passed).lower()}" '
                 f'style="font-family:var(--jp-ui-font-family,sans-serif);font-size:14px;line-height:1.45;{WRAP}">',
                 f'<div style="font-weight:700;color:{color};margin-bottom:6px">{e(r.exercise.id)} — '
                 f'{e(r.exercise.title)} : {e(self.summary())}</div>']
        for note in self.notes():
            parts.append(f'<div style="color:#6b7280;font-style:italic">note : {e(note)}</div>')
        if self.problem():
            parts.append(f'<pre class="trous-problem" style="color:{COLORS[FAILED]};{WRAP}">'
                         f'{e(self.problem())}</pre>')
        parts.append('<ul style="list-style:none;padding-left:0;margin:4px 0">')
        for blank in r.blanks:
            c = COLORS[blank.status]
            parts.append(f'<li class="trous-blank" data-blank="{e(blank.spec.id)}" data-status="{blank.status}" '
                         f'style="margin:6px 0;padding:4px 8px;border-left:4px solid {c}">')
            parts.append(f'<span style="color:{c};font-weight:700">{SYMBOL[blank.status]}</span> '
                         f'<span style="font-weight:600">{e(self.title(blank))}</span>')
            code = self._code_line(blank)
            if code and blank.status != PASSED:
                parts.append(f'<div><code style="white-space:pre">{e(code)}</code></div>')
            lines = self.blank_lines(blank)
            if lines:
                parts.append(f'<pre style="margin:4px 0;{WRAP};background:none;padding:0">'
                             f'{e(chr(10).join(lines))}</pre>')
            if wants_hint(blank):
                parts.append(self._hints_html(blank))
            parts.append("</li>")
        parts.append("</ul>")
        step = self.step()
        if step:
            parts.append(f'<div class="trous-next" style="font-weight:600">{e(step)}</div>')
        if r.output.strip():
            shown = "\n".join(r.output.rstrip("\n").split("\n")[:40])
            parts.append('<details><summary>ce que ton programme a affiché</summary>'
                         f'<pre style="{WRAP}">{e(shown)}</pre></details>')
        parts.append("</div>")
        return "".join(parts)

    def _hints_html(self, blank: BlankResult) -> str:
        hints = blank.spec.hints
        out = f'<div class="trous-hint">indice : {html.escape(blank.spec.hints[0])}</div>'
        # The next hints, one click each: the last one is close to the answer.
        for level, text in enumerate(hints[1:], start=2):
            out += (f'<details style="margin-left:12px"><summary>indice {level}/{len(hints)}</summary>'
                    f'{html.escape(text)}')
        out += "</details>" * (len(hints) - 1)
        return out
