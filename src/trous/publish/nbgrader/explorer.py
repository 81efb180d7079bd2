"""The attention explorer, released with the first assignment that gives its functions.

The explorer (trous.publish.notebooks.explorer) computes with the course's own `softmax` and `attention`,
taken from the first exercise that defines them without a blank (exercise 2). In an nbgrader course
it goes to `source/<assignment>/explorateur.ipynb` of the first assignment holding such an exercise,
so that `generate_assignment` and `release_assignment` hand it out with that assignment. In the
student's folder there is no course directory: the explorer reads the exercise templates from the
check cells of the notebooks next to it (their public bundles), see `notebooks.explorer`.
"""

from __future__ import annotations

import nbformat

from ...core.course import Course, Exercise
from ..notebooks import build as lab
from ..notebooks import definitions
from .notebooks import KERNELSPEC, notebook_bytes
from .wording import for_notebook

NAME = lab.EXPLORER  # explorateur.ipynb
NEEDS = ("softmax", "attention")


def explorer_notebook() -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell(for_notebook(lab.EXPLORER_TEXT), id="explorateur-texte"),
             nbformat.v4.new_code_cell(lab.EXPLORER_CODE, id="explorateur-code")]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": dict(KERNELSPEC),
                                                         "language_info": {"name": "python"}})
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


def explorer_for(course: Course, built: list[Exercise]) -> tuple[str, bytes] | None:
    """(path in the nbgrader course, bytes) of the explorer, or None when no built exercise gives it
    its functions."""
    for exercise in built:
        if definitions.available(exercise.template_path, NEEDS):
            return f"source/{exercise.assignment.id}/{NAME}", notebook_bytes(explorer_notebook())
    return None
