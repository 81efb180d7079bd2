"""A student's code for one exercise, read from a notebook: the template with each answer cell
replaced by what the student's answer cell holds.

Only the answer cells count (found by their nbgrader grade_id; of cells sharing one, the last, the
one nbgrader's DeduplicateIds keeps and the kernel runs last): cells a student adds are scratch
work, and locked cells are restored by nbgrader anyway. Whatever reads the notebook (`trous grade`, the hidden cells in the kernel, the
out-of-kernel check) builds the same text, so they all grade the same program. The text keeps the
layout of `exercises/<id>.py`, so line numbers in messages are those of the exercise file.
"""

from __future__ import annotations

from .bundle import Bundle


def from_cells(cells: list[dict]) -> dict[str, str]:
    """grade_id → source of every answer cell (nbgrader `solution: true`). Of the nbgrader cells
    (grade, answer or locked) that share a grade_id, nbgrader's DeduplicateIds keeps the metadata of
    the last and clears the others': the same one counts here."""
    found: dict[str, str] = {}
    seen: set = set()
    for cell in reversed(cells):
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if not isinstance(meta, dict) or not (meta.get("grade") or meta.get("solution") or meta.get("locked")):
            continue
        grade_id = meta.get("grade_id")
        try:
            if grade_id in seen:
                continue
            seen.add(grade_id)
        except TypeError:  # an unhashable id: no cell nbgrader would find
            continue
        if isinstance(grade_id, str) and meta.get("solution"):
            source = cell.get("source", "")
            found[grade_id] = "".join(source) if isinstance(source, list) else str(source)
    return dict(reversed(list(found.items())))


def exercise_text(bundle: Bundle, answers: dict[str, str]) -> str:
    """The template with each answer cell replaced by the student's (a deleted cell: nothing)."""
    out, position = [], 0
    template = bundle.template
    for cell in bundle.cells:
        start = template.find(cell.template, position)
        if start < 0:  # checked when the notebooks are built
            raise ValueError(f"{bundle.exercise_id} : cellule {cell.grade_id} introuvable dans le modèle")
        out.append(template[position:start])
        out.append(answers.get(cell.grade_id, "").replace("\r\n", "\n"))
        position = start + len(cell.template)
    out.append(template[position:])
    return "".join(out)
