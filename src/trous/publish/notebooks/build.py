"""The JupyterLab edition's notebooks, paired with their `.py` (jupytext): the `.py` stays the single
source. Our two cells are `active="ipynb"`: comments only in the `.py`, so pytest and grading see the
same program. Code cells carry `raises-exception`: a blank not filled does not stop « Run All ».
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

from ...core.course import TEMPLATES_DIR, Course, Exercise
from ...inputs.filenames import FORMAT
from ..edition import build as build_edition
from ..nbgrader.notebooks import explorer_notebook, notebook as new_notebook
from .checkcell import is_ours

PAIRING = {"formats": "ipynb,py:percent", "notebook_metadata_filter": "-all"}
GOES_ON = "raises-exception"  # JupyterLab (and nbclient) run the next cells when such a cell fails

SETUP = ("# Préparation : exécute cette cellule en premier. La vérification, en bas du notebook,\n"
         "# verra alors ce que tu exécutes, même avant que tu enregistres.\n"
         "%load_ext trous.publish.notebooks")
CHECK_TEXT = ("## Vérifie ton travail\n\n"
              "Exécute la cellule suivante après les cellules du dessus : pour chaque trou, elle dit s'il est "
              "rempli, s'il est juste, et donne un indice. C'est la même vérification que "
              "`pytest exercises/`. Enregistre (Ctrl+S) pour mettre à jour ton fichier `{py}`.")
CHECK = ("# Vérification (la même que pytest exercises/)\n"
         "from trous.publish.notebooks import check\n\n"
         "check(\"{id}\")")


class NotebookError(Exception):
    """French, for the CLI."""


def _tagged(cell, tag: str):
    cell.metadata.setdefault("tags", []).append(tag)
    return cell


def exercise_notebook(exercise: Exercise):
    """From the student's .py: their fills come along."""
    cells = jupytext.read(exercise.path, fmt=FORMAT).cells
    cells = [c for c in cells if not is_ours(c)]  # a .py saved from a notebook has them
    for cell in cells:
        if cell.cell_type == "code" and GOES_ON not in cell.metadata.get("tags", []):
            _tagged(cell, GOES_ON)
    setup = _tagged(nbformat.v4.new_code_cell(SETUP, metadata={"active": "ipynb"}), "trous-preparation")
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    cells.insert(first_code, setup)
    py = exercise.path.relative_to(exercise.course.root).as_posix()
    cells.append(_tagged(nbformat.v4.new_markdown_cell(CHECK_TEXT.format(py=py)), "trous-verification-texte"))
    cells.append(_tagged(nbformat.v4.new_code_cell(CHECK.format(id=exercise.id), metadata={"active": "ipynb"}),
                         "trous-verification"))
    notebook = new_notebook(cells)
    notebook.metadata["jupytext"] = dict(PAIRING)
    return notebook


def write_exercise(exercise: Exercise) -> Path:
    notebook = exercise_notebook(exercise)
    target = exercise.path.with_suffix(".ipynb")
    nbformat.write(notebook, target)
    # The .py last: jupytext takes a paired notebook's inputs from the text file, and must not find
    # it older than the .ipynb.
    text = jupytext.writes(notebook, fmt=FORMAT)
    exercise.path.write_text(text, encoding="utf-8")
    return target


@dataclass
class Built:
    written: list[Path]
    kept: list[Path]


def is_edition(course: Course) -> bool:
    return (course.root / TEMPLATES_DIR).is_dir()


def folder_for(course: Course, destination: str | Path | None) -> Course:
    """A student edition: this course if it is one, else one written at `destination` (by default
    _build/<course>-eleves): the authoring repository's exercises are never rewritten."""
    if destination is None and is_edition(course):
        return course
    dest = Path(destination) if destination else course.root / "_build" / f"{course.id}-eleves"
    if dest.resolve() == course.root:
        raise NotebookError(f"{dest} est le cours lui-même : donne un autre dossier")
    try:
        return Course.load(build_edition(course, dest, make_zip=False))
    except ValueError as exc:
        raise NotebookError(str(exc)) from None


def build(course: Course, force: bool = False) -> Built:
    """A notebook that exists is kept (the student's work is in it) unless `force`."""
    if not is_edition(course):
        raise NotebookError(f"{course.root} n'est pas une édition élève : les notebooks réécrivent les .py "
                            "des exercices, ils vont dans une édition (trous notebooks DOSSIER)")
    written, kept = [], []
    for exercise in course.exercises:
        target = exercise.path.with_suffix(".ipynb")
        if target.exists() and not force:
            kept.append(target)
            continue
        written.append(write_exercise(exercise))
    if course.explorer is not None:
        explorer = course.root / course.explorer.file
        if explorer.exists() and not force:
            kept.append(explorer)
        else:
            nbformat.write(explorer_notebook(course.explorer, reword=False), explorer)
            written.append(explorer)
    return Built(written, kept)
