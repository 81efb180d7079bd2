"""A student's code for one exercise, read from a notebook: the template with each answer cell
replaced by the student's, where its lines are in the notebook, what the student changed elsewhere.

Only the answer cells count (by grade_id): added cells are scratch work, and nbgrader's autograde
restores locked cells (saying so only in the teacher's log), so the grade never depends on them,
but `changes` tells student and teacher. Whatever reads the notebook (`trous grade`, the hidden
cells in the kernel, the out-of-kernel check) builds the same text, so all grade the same program.
Messages speak of the notebook (« ligne 3 de la cellule de réponse 1 »): `CellMap` has what
`check.feedback.NotebookReport` asks of a snapshot, so the check cell renders as `trous lab` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .bundle import Bundle, cell_source


def nbgrader_meta(cell: dict) -> dict:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def last_cells(cells: list[dict]) -> tuple[dict[str, dict], dict[str, int]]:
    """(grade_id → the cell that counts, in notebook order; grade_id → how many carry it) of the nbgrader
    cells: of those sharing a grade_id, nbgrader's DeduplicateIds keeps the last, which the kernel runs last."""
    kept: dict[str, dict] = {}
    copies: dict[str, int] = {}
    for cell in reversed(cells):
        meta = nbgrader_meta(cell)
        grade_id = meta.get("grade_id")
        if isinstance(grade_id, str) and (meta.get("grade") or meta.get("solution") or meta.get("locked")):
            copies[grade_id] = copies.get(grade_id, 0) + 1
            kept.setdefault(grade_id, cell)
    return dict(reversed(list(kept.items()))), copies


def from_cells(cells: list[dict]) -> dict[str, str]:
    return {g: cell_source(c) for g, c in last_cells(cells)[0].items() if nbgrader_meta(c).get("solution")}


def pieces(bundle: Bundle, answers: dict[str, str]) -> Iterator[tuple[str, int | None]]:
    """The exercise text in pieces: (text, None) of the template, (text, n) of answer cell n."""
    position = 0
    template = bundle.template
    for number, cell in enumerate(bundle.cells, start=1):
        start = template.find(cell.template, position)
        if start < 0:  # checked when the notebooks are built
            raise ValueError(f"{bundle.exercise_id} : cellule {cell.grade_id} introuvable dans le modèle")
        yield template[position:start], None
        yield answers.get(cell.grade_id, "").replace("\r\n", "\n"), number
        position = start + len(cell.template)
    yield template[position:], None


def exercise_text(bundle: Bundle, answers: dict[str, str]) -> str:
    """The template with each answer cell replaced by the student's (a deleted cell: nothing)."""
    return "".join(text for text, _ in pieces(bundle, answers))


# -- where the text's lines are in the notebook --------------------------------------------------
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
    """The locked code cells in a stretch of template text (jupytext's percent format)."""
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


# -- what a student changed in the locked cells --------------------------------------------------
# nbgrader's ClearHiddenTests delimiters (found anywhere in a line); notebooks.py writes them after « ### »
HIDDEN_BEGIN, HIDDEN_END = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
RESTORED = "rétablie telle que distribuée, la note n'en dépend pas (nbgrader la rétablit aussi)"


@dataclass(frozen=True)
class LockedCell:
    """A cell of the source notebook that has a grade_id (locked or not, despite the name)."""

    cell_type: str
    texts: tuple[str, ...]  # the source notebook's text, and the released one
    points: float | None  # a grade cell's points
    locked: bool = True


def released(text: str) -> str:
    """nbgrader's ClearHiddenTests: the lines from BEGIN to END HIDDEN TESTS removed."""
    kept, inside = [], False
    for line in text.split("\n"):
        if HIDDEN_BEGIN in line:
            inside = True
        elif HIDDEN_END in line:
            inside = False
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def source_cell(cell: dict, meta: dict) -> LockedCell:
    text = cell_source(cell)
    points = points_of(meta.get("points")) if meta.get("grade") else None
    return LockedCell(cell.get("cell_type", ""), (text, released(text)), points, bool(meta.get("locked")))


def points_of(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def changes(cells: list[dict], locked: dict[str, LockedCell], shown: str) -> list[str]:
    """French notes on the locked cells of a submitted notebook (`cells`, as read) that differ from
    the source's, deleted grade cells, and nbgrader cells present more than once."""
    kept, copies = last_cells(cells)
    notes = []
    for grade_id, n in copies.items():
        if n > 1:
            notes.append(f"{shown} : cellule {grade_id} présente {n} fois : seule la dernière compte (nbgrader ne "
                         "garde qu'elle)")
    for grade_id, expected in locked.items():
        cell = kept.get(grade_id)
        if cell is None:
            if expected.points is not None:
                notes.append(f"{shown} : cellule verrouillée {grade_id} supprimée : {RESTORED}")
            continue
        meta, what = nbgrader_meta(cell), []
        if expected.locked and cell_source(cell) not in expected.texts:
            what.append("texte")
        if cell.get("cell_type") != expected.cell_type:
            what.append("type de cellule")
        if expected.points is not None and points_of(meta.get("points")) != expected.points:
            what.append(f"points ({meta.get('points')!s:.20} au lieu de {expected.points:g})")
        if bool(meta.get("grade")) != (expected.points is not None) or bool(meta.get("locked")) != expected.locked \
                or (expected.locked and meta.get("solution")):
            what.append("réglages nbgrader")
        if what and expected.locked:
            notes.append(f"{shown} : cellule verrouillée {grade_id} modifiée ({', '.join(what)}) : {RESTORED}")
        elif what:
            notes.append(f"{shown} : cellule de réponse {grade_id} : {', '.join(what)} modifié(s), rétabli(s) comme "
                         "distribué ; la réponse est notée telle quelle (nbgrader fait de même)")
    return notes
