"""The course's own notebook (course.yaml's `explorer:`), released with the first assignment whose
exercises define, without a blank, what it reads (`needs`): it goes to `source/<assignment>/<file>`.
"""

from __future__ import annotations

import nbformat

from ...core.course import Course, Exercise, ExplorerSpec
from ..notebooks import definitions
from .notebooks import KERNELSPEC, notebook_bytes
from .wording import for_notebook


def explorer_notebook(explorer: ExplorerSpec) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell(for_notebook(explorer.text), id="carnet-du-cours-texte"),
             nbformat.v4.new_code_cell(explorer.code, id="carnet-du-cours-code")]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": dict(KERNELSPEC),
                                                         "language_info": {"name": "python"}})
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


def explorer_for(course: Course, built: list[Exercise]) -> tuple[str, bytes] | None:
    """(path in the nbgrader course, bytes) of the course's own notebook, or None."""
    explorer = course.explorer
    if explorer is None:
        return None
    for exercise in built:
        if definitions.available(exercise.template_path, explorer.needs):
            return f"source/{exercise.assignment.id}/{explorer.file}", notebook_bytes(explorer_notebook(explorer))
    return None
