"""What a student changed in a notebook's locked cells, said as a note of the copy.

nbgrader's autograde restores every locked cell (text, type, points, whether it is graded) and, of
an answer cell, the type and whether it is graded, saying so only in the teacher's log. The grade
never depends on it, but the student and the teacher should know. The cells are read as nbgrader
reads them (answers.last_cells); a locked cell is unchanged when it holds the source's text or the
released one (hidden tests removed).
"""

from __future__ import annotations

from dataclasses import dataclass

from .answers import last_cells, nbgrader_meta
from .bundle import cell_source

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
    """A cell of the source notebook with a grade_id (`meta`: its nbgrader metadata)."""
    text = cell_source(cell)
    points = _points(meta.get("points")) if meta.get("grade") else None
    return LockedCell(cell.get("cell_type", ""), (text, released(text)), points, bool(meta.get("locked")))


def _points(value) -> float | None:
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
        if expected.points is not None and _points(meta.get("points")) != expected.points:
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
