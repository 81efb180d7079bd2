"""The check cell's output: the same verdicts and French words as `pytest exercises/` (trous.feedback),
laid out for a notebook — one line per blank (filled or not, right or not), the problem under it,
the hint, and where the blank is: « ligne 2 de la cellule 3 » rather than a line of the .py file.
"""

from __future__ import annotations

import html
import re

from ...check.selfcheck import FAILED, PASSED, BlankResult, ExerciseResult
from ...check.feedback import LOOK, SYMBOL, Report, hint_text, status_text, wants_hint

COLORS = {status: look[5] for status, look in LOOK.items()}
# JupyterLab breaks output lines anywhere (word-break: break-all), cutting « 0,21 » into « 0, » and
# « 21 »: our blocks break between words only, and a word longer than the line may still wrap.
WRAP = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"
_SHOWN = re.compile(r"^(\s*)(\d+) \| ", re.MULTILINE)


class NotebookReport(Report):
    """The notebook's: places named as cells (« ligne 3 de la cellule 4 »), and its HTML."""

    def __init__(self, result: ExerciseResult, snapshot, notes: list[str] | None = None):
        """`snapshot`: an inputs.cells.CellMap (checkcell.Snapshot in JupyterLab: it needs jupytext)."""
        super().__init__(result)
        self.snapshot, self.extra_notes = snapshot, list(notes or [])

    def relocate(self, text: str) -> str:
        """« ligne 12 » of the program → « ligne 3 de la cellule 4 » of the notebook."""
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
        out = f'<div class="trous-hint">indice : {html.escape(hint_text(blank))}</div>'
        # The next hints, one click each: the last one is close to the answer.
        for level, text in enumerate(hints[1:], start=2):
            out += (f'<details style="margin-left:12px"><summary>indice {level}/{len(hints)}</summary>'
                    f'{html.escape(text)}')
        out += "</details>" * (len(hints) - 1)
        return out
