"""What a blank's grade cell shows, the same wherever the grade was computed: in the kernel, in
nbgrader's process (VerifyGrades) or by `trous grade` (`fill` writes it for the last two).

A right blank prints one line on stdout (nbgrader: full points); a wrong one ends in an error whose
traceback is the French explanation alone (nbgrader: zero), never a traceback quoting the hidden cell.
"""

from __future__ import annotations

from ..core.wording import count, french_number
from ..core.grades import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade
from ..inputs import answers
from ..inputs.bundle import TROUS_KEY, grade_cells
from ..inputs.answers import cell_map

ERROR_NAME = "TrouFaux"
UNKNOWN_BLANK = "✘ trou « {} » inconnu de la correction (cellule notée modifiée ?) : 0 point"
UNISOLATED_NOTE = ("⚠ corrigé SANS ISOLATION (--sans-isolation) : ce code a tourné sous le compte du correcteur, "
                   "sans bac à sable ; cette note ne vaut que pour du code de confiance")
STATUS = {PASSED: "juste", FAILED: "faux", UNFILLED: "pas rempli (___)", ERROR: "non noté (erreur)",
          MISSING: "absent de la copie"}


def _points(value: float) -> str:
    return count(value, "point")


def find_blank(grade: ExerciseGrade, blank_id: str) -> BlankGrade:
    for blank in grade.blanks:
        if blank.id == blank_id:
            return blank
    raise KeyError(f"{grade.id} : trou « {blank_id} » inconnu")


def blank_outcome(grade: ExerciseGrade, blank_id: str, where=None) -> tuple[bool, str]:
    """(passed, text) for one blank of an engine grade. `where` (an answers.CellMap of the graded text)
    names the notebook's cells instead of lines of the exercise file."""
    blank = find_blank(grade, blank_id)
    relocate = where.relocate if where is not None else (lambda text: text)
    place = where.describe(blank.line) if where is not None else None
    head = f"trou {blank.number}/{len(grade.blanks)} « {blank.id} »" + (f" ({place})" if place else "")
    if blank.status == PASSED:
        return True, f"✔ {head} : juste — {_points(blank.score)} sur {_points(blank.max_score)}"
    lines = [f"✘ {head} : {STATUS.get(blank.status, blank.status)} — 0 sur {_points(blank.max_score)}"]
    if blank.message and blank.status != UNFILLED:
        lines += ["    " + line for line in relocate(blank.message).split("\n")]
    lines += ["    note : " + relocate(note) for note in grade.notes]
    if blank.hint:
        lines.append(f"    indice : {blank.hint}")
    return False, "\n".join(lines)


def outputs_for(grade: ExerciseGrade, blank_id: str, unisolated: bool = False, where=None) -> tuple[list, float]:
    """The outputs a grade cell has for this blank, and the score nbgrader reads from them
    (`unisolated`: said in the output; `where`: see blank_outcome)."""
    import nbformat  # noqa: PLC0415 - not in the kernel, which only raises or prints

    passed, text = blank_outcome(grade, blank_id, where)
    if unisolated:
        text += "\n" + UNISOLATED_NOTE
    blank = find_blank(grade, blank_id)
    # from_dict, not new_output: the same node, without validating it against the schema each time
    if passed:
        return [nbformat.from_dict({"output_type": "stream", "name": "stdout", "text": text + "\n"})], \
            blank.max_score
    return _error(text), 0.0


def _error(text: str) -> list:
    import nbformat  # noqa: PLC0415 - as above

    return [nbformat.from_dict({"output_type": "error", "ename": ERROR_NAME, "evalue": text,
                                "traceback": text.split("\n")})]


def fill(nb, grade_of, unisolated: bool, source: str) -> None:
    """Each trous grade cell of `nb` gets its blank's verdict: `grade_of(hidden bundle, cell map)` is
    the exercise's grade (None: its cells are left as they are); `source` (who graded) goes in the
    cell's metadata."""
    for entries in grade_cells(nb).values():
        where = cell_map(entries[0][2], answers.from_cells(nb.cells))
        grade = grade_of(entries[0][2], where)
        if grade is None:
            continue
        for cell, blank_id, _ in entries:
            try:
                cell.outputs, score = outputs_for(grade, blank_id, unisolated, where)
            except KeyError:  # never full points for a blank nobody graded (nbgrader: no error, full points)
                cell.outputs, score = _error(UNKNOWN_BLANK.format(blank_id)), 0.0
            cell.metadata[TROUS_KEY] = {"moteur": score, "source": source}


class TrouFaux(Exception):
    """Raised by a grade cell whose blank is not right. IPython shows `_render_traceback_` instead of
    a traceback: the explanation, and no line of the cell (whose hidden part is secret)."""

    def _render_traceback_(self) -> list[str]:
        return str(self).split("\n")


def _verdict_line(text: str, auto: float, final: float, max_score: float, extra: float) -> str:
    """The first line of a blank's verdict once a teacher changed its grade: the engine's, then what counts."""
    head, sep, _ = text.partition(" — ")
    if not sep:
        return text
    out_of = f"sur {_points(max_score)}"
    given = final - extra
    line = f"{head} à la correction automatique ({french_number(auto)} {out_of}) — "
    if given != auto:
        line += f"note donnée par l'enseignant : {french_number(given)} {out_of}"
        if extra:
            line += f", plus un bonus de {_points(extra)} : {french_number(final)} {out_of}"
    else:
        line += f"plus un bonus de {_points(extra)} donné par l'enseignant : {french_number(final)} {out_of}"
    return line


def teacher_outputs(outputs: list, auto: float, final: float, max_score: float, extra: float = 0.0) -> list:
    """A grade cell's verdict outputs with their first line saying the teacher's grade beside the
    engine's: feedback never shows « faux — 0 sur 1 point » under « Score: 1.0 / 1.0 »."""
    changed = []
    for output in outputs:
        output = dict(output)
        if output.get("output_type") == "error" and output.get("ename") == ERROR_NAME:
            lines = str(output.get("evalue", "")).split("\n")
            lines[0] = _verdict_line(lines[0], auto, final, max_score, extra)
            output["evalue"] = "\n".join(lines)
            output["traceback"] = lines
        elif output.get("output_type") == "stream" and str(output.get("text", "")).startswith("✔ trou"):
            lines = str(output["text"]).split("\n")
            lines[0] = _verdict_line(lines[0], auto, final, max_score, extra)
            output["text"] = "\n".join(lines)
        changed.append(output)
    return changed
