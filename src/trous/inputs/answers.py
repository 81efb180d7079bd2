"""A student's code for one exercise, read from a notebook: the template with each answer cell
replaced by what the student's answer cell holds.

Only the answer cells count (found by their nbgrader grade_id): cells a student adds are scratch
work, and locked cells are restored by nbgrader anyway. Whatever reads the notebook (`trous grade`,
the hidden cells in the kernel, the out-of-kernel check) builds the same text, so they all grade the
same program, with the line numbers of `exercises/<id>.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from .bundle import Bundle, cell_source


def nbgrader_meta(cell: dict) -> dict:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def last_cells(cells: list[dict]) -> tuple[dict[str, dict], dict[str, int]]:
    """(grade_id → the cell that counts, grade_id → how many cells carry it) of the nbgrader cells
    (grade, answer or locked): of those sharing a grade_id, nbgrader's DeduplicateIds keeps the last,
    the one the kernel runs last. The first dict is in the order of the notebook."""
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
    """grade_id → source of every answer cell (nbgrader `solution: true`)."""
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
