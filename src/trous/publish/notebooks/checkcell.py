"""The check cell judges the `.py` that saving the paired notebook would write (jupytext), each code
cell replaced by the code last run in it when newer than the save: the check cell and pytest agree.
What ran is what `install` records (JupyterLab sends each cell's id to IPython's `pre_run_cell`).
"""

from __future__ import annotations

import os
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

from ...check.feedback import NotebookReport
from ...core.analysis import analyse_source
from ...core.course import Course, Exercise
from ...core.source import Source
from ...inputs.answers import CellMap, Span
from ...inputs.filenames import FORMAT, OUR_TAG  # what grading a .ipynb reads and leaves out
from ..nbgrader import load_ipython_extension as install_guard  # the same guard as nbgrader's notebooks
from ..nbgrader.incell import self_checker


# -- what the student ran ---------------------------------------------------------------------------
STILL_CHECKED = "La vérification, en bas du notebook, dit où en sont tous tes trous."


@dataclass(frozen=True)
class Ran:
    source: str
    at: float  # time.time() when the cell started


_RAN: dict[str, Ran] = {}
_INSTALLED: set[int] = set()


def _record(info) -> None:
    cell_id = getattr(info, "cell_id", None)
    if cell_id:
        _RAN[cell_id] = Ran(info.raw_cell, time.time())


def install(ipython) -> None:
    if ipython is None or id(ipython) in _INSTALLED:
        return
    ipython.events.register("pre_run_cell", _record)
    install_guard(ipython, note=STILL_CHECKED)  # no cell reads IPython's `___` output cache: it raises, in French
    ipython.set_custom_exc((NameError,), calm_name_error)
    _INSTALLED.add(id(ipython))


def calm_name_error(shell, etype, value, tb, tb_offset=None) -> list[str]:
    frames = traceback.extract_tb(tb)
    last = frames[-1] if frames else None
    where = f", ligne {last.lineno} de sa cellule :\n    {last.line.strip()}" if last and last.line else ""
    name = getattr(value, "name", None)
    lines = [f"✘ NameError: {value}{where}"]
    if name:
        lines.append(f"  piste : « {name} » n'existe pas encore ici : une cellule du dessus s'est-elle arrêtée avant "
                     "de le définir, ou n'a-t-elle pas été exécutée ? Sinon, une faute de frappe (majuscules comprises) ?")
    lines.append(f"  {STILL_CHECKED}")
    shell._showtraceback(etype, value, lines)  # IPython leaves it to the handler to show (ipykernel: an error output)
    return lines


@dataclass
class Snapshot(CellMap):
    """`stale`: cells taken from the file that were never run here."""

    unsaved: bool = False  # some code that ran is newer than the saved notebook


def is_ours(cell) -> bool:
    return any(str(t).startswith(OUR_TAG) for t in cell.get("metadata", {}).get("tags", []))


def read_notebook(path: Path):
    """As jupytext would open it: from the paired .py when that is clearly newer."""
    path = Path(path)
    paired = path.with_suffix(".py")
    notebook = nbformat.read(path, as_version=4)
    if paired.exists() and paired.stat().st_mtime > path.stat().st_mtime + 1.0:
        from_text = jupytext.read(paired, fmt=FORMAT)
        from_text.metadata = notebook.metadata
        return from_text
    return notebook


def take(path: Path, ran: dict[str, Ran]) -> Snapshot:
    path = Path(path)
    notebook = read_notebook(path)
    saved_at = path.stat().st_mtime
    unsaved, stale = False, []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code" or is_ours(cell):
            continue
        record = ran.get(cell.get("id", ""))
        if record is not None and record.at > saved_at:
            cell.source = record.source
            unsaved = True
        elif record is None:
            stale.append(number)
    text = jupytext.writes(notebook, fmt=FORMAT)
    return Snapshot(text, _spans(text, notebook), stale, unsaved)


_HEADER = re.compile(r"^# %%")


def _spans(text: str, notebook) -> list[Span]:
    lines = text.split("\n")
    headers = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if len(headers) != len(notebook.cells):
        return []  # an unexpected layout: positions are then given as lines of the file
    spans = []
    for number, (cell, header) in enumerate(zip(notebook.cells, headers), start=1):
        if cell.cell_type != "code" or is_ours(cell):
            continue
        source = cell.source.split("\n") if cell.source else []
        start = header + 1  # 0-based index of the first source line
        if lines[start:start + len(source)] != source:
            continue  # jupytext rewrote this cell (a magic commented out…): no line mapping for it
        spans.append(Span(start + 1, len(source), f"la cellule {number}"))
    return spans


# -- the check ------------------------------------------------------------------------------------
def notebook_of(exercise: Exercise, given: str | None = None) -> Path:
    """The one given, the kernel's own (JPY_SESSION_NAME), or the one next to the exercise's .py."""
    if given:
        return Path(given).resolve()
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_absolute() and Path(session).is_file():
        path = Path(session)
        if exercise.course.exercise_for_path(path.with_suffix(".py")) == exercise:
            return path
    return exercise.path.with_suffix(".ipynb")


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def check(exercise_id: str, notebook: str | None = None, course: Course | None = None) -> NotebookReport:
    prepared = bool(_INSTALLED)
    try:  # from now on, cells run in this kernel are seen as run (the preparation cell does this first)
        from IPython import get_ipython  # noqa: PLC0415

        install(get_ipython())
    except ImportError:
        pass
    course = course or Course.find(Path.cwd())
    exercise = course.exercise(exercise_id)
    path = notebook_of(exercise, notebook)
    seen = dict(_RAN)
    snap = take(path, seen)
    notes = []
    if not prepared:
        snap.stale = []
        if _INSTALLED:
            notes.append("la cellule de préparation (en haut) n'a pas été exécutée : je vérifie la version "
                         "enregistrée du notebook. Exécute-la, puis tes cellules, ou enregistre (Ctrl+S)")
    elif not seen:
        snap.stale = []  # this front end does not say which cell runs (nbclient…): the file is the truth
    analysis = analyse_source(exercise, Source(path=_shown(path, course.root), text=snap.text))
    # One runner for the kernel's life: the second check does not pay the sandbox's start again.
    result = self_checker().self_check(exercise, analysis)
    if snap.unsaved:
        notes.append(f"vérifié : le code que tu as exécuté. Enregistre le notebook (Ctrl+S) pour que "
                     f"{_shown(exercise.path, course.root)} le contienne aussi")
    return NotebookReport(result, snap, notes)
