"""A student's code for one exercise, read from a notebook: the template with each answer cell
replaced by what the student's answer cell holds.

Only the answer cells count (found by their nbgrader grade_id, first occurrence, as nbgrader's
DeduplicateIds keeps it): cells a student adds are scratch work, and locked cells are restored by
nbgrader anyway. Whatever reads the notebook (`trous grade`, the hidden cells in the kernel, the
out-of-kernel check) builds the same text, so they all grade the same program. The text keeps the
layout of `exercises/<id>.py`, so line numbers in messages are those of the exercise file.
"""

from __future__ import annotations

from .bundle import Bundle


def from_cells(cells: list[dict]) -> dict[str, str]:
    """grade_id → source of every answer cell (nbgrader `solution: true`), first occurrence wins."""
    found: dict[str, str] = {}
    for cell in cells:
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        grade_id = meta.get("grade_id")
        if not isinstance(grade_id, str) or not meta.get("solution") or grade_id in found:
            continue
        source = cell.get("source", "")
        found[grade_id] = "".join(source) if isinstance(source, list) else str(source)
    return found


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


def exercise_bytes(bundle: Bundle, cells: list[dict]) -> bytes:
    return exercise_text(bundle, from_cells(cells)).encode("utf-8", "surrogatepass")
