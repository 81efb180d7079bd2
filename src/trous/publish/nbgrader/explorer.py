"""The course's own notebook (course.yaml's `explorer:`), released with the first assignment that
gives what it reads.

Its code reads blank-free definitions of an exercise (`needs`), taken from the first exercise that
defines them without a blank. In an nbgrader course it goes to `source/<assignment>/<file>` of the
first assignment holding such an exercise (the first built, without `needs`), so that
`generate_assignment` and `release_assignment` hand it out with that assignment. In the student's
folder there is no course directory: code that reads the exercises finds their templates in the check
cells of the notebooks next to it (their public bundles), as `notebooks.explorer` does.
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
    """(path in the nbgrader course, bytes) of the course's own notebook, or None when it declares none
    or no built exercise gives what it needs."""
    explorer = course.explorer
    if explorer is None:
        return None
    for exercise in built:
        if definitions.available(exercise.template_path, explorer.needs):
            return f"source/{exercise.assignment.id}/{explorer.file}", notebook_bytes(explorer_notebook(explorer))
    return None
