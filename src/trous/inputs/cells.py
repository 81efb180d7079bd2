"""Where the lines of an exercise rebuilt from a notebook are, in the notebook.

The engine speaks of lines of the exercise text (answers.exercise_text), a file a notebook user
never saw: messages must say « ligne 3 de la cellule de réponse 1 », or name a locked code cell by
its first line. `CellMap` has what `notebooks.report.NotebookReport` asks of a snapshot, so the
check cell renders with the same report as `trous lab`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .answers import pieces
from .bundle import Bundle

_MARKER = re.compile(r"^# %%(?P<rest>.*)$")
_LINE = re.compile(r"\bligne (\d+)\b")


@dataclass(frozen=True)
class Span:
    first: int  # 1-based line of the text where the cell's code starts
    lines: int
    label: str  # « la cellule de réponse 1 », « la cellule « def normalise(s): » »


@dataclass
class CellMap:
    text: str
    spans: list[Span] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)  # NotebookReport's: cells never run (said otherwise here)

    def where(self, line: int | None) -> tuple[str, int] | None:
        """(cell, line in that cell) for a line of the text."""
        if not line:
            return None
        for span in self.spans:
            if span.first <= line < span.first + span.lines:
                return span.label, line - span.first + 1
        return None

    def describe(self, line: int | None) -> str | None:
        place = self.where(line)
        return f"ligne {place[1]} de {place[0]}" if place else None

    def relocate(self, text: str) -> str:
        """« ligne 12 » of the text → « ligne 3 de la cellule de réponse 1 »."""
        return _LINE.sub(lambda m: self.describe(int(m.group(1))) or m.group(0), text)


def _quote(code: str, width: int = 40) -> str:
    first = next((ln.strip() for ln in code.split("\n") if ln.strip() and not ln.lstrip().startswith("#")), "")
    return first if len(first) <= width else first[: width - 1] + "…"


def cell_map(bundle: Bundle, answers: dict[str, str]) -> CellMap:
    """The text `answers.exercise_text(bundle, answers)` gives, with its cells located."""
    text, spans, line = "", [], 1
    for chunk, number in pieces(bundle, answers):
        if number is not None:
            count = chunk.count("\n") + (0 if chunk.endswith("\n") or not chunk else 1)
            spans.append(Span(line, max(count, 1), f"la cellule de réponse {number}"))
        else:
            spans += _given_cells(chunk, line)
        text += chunk
        line += chunk.count("\n")
    return CellMap(text, spans)


def _given_cells(chunk: str, first_line: int) -> list[Span]:
    """The locked code cells in a stretch of template text (jupytext percent format): the lines after
    a `# %%` marker that is not markdown, up to the next marker, trailing blank lines left out."""
    lines = chunk.split("\n")
    spans, start = [], None

    def close(end: int) -> None:
        body = lines[start:end]
        while body and not body[-1].strip():
            body.pop()
        if body:
            spans.append(Span(first_line + start, len(body), f"la cellule « {_quote(chr(10).join(body))} »"))

    for i, line in enumerate(lines):
        marker = _MARKER.match(line)
        if marker is None:
            continue
        if start is not None:
            close(i)
        start = None if "[markdown]" in marker.group("rest") else i + 1
    if start is not None:
        close(len(lines))
    return spans
