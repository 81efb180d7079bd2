"""The course in JupyterLab: exercise notebooks paired with their `.py`, a check cell giving the same
French feedback as `pytest exercises/`, and the course's own notebook (course.yaml's `explorer:`).

    %load_ext trous.publish.notebooks          # first: remember each cell as the student runs it
    from trous.publish.notebooks import check
    check("01_moyenne")                   # last: check what the student wrote, blank by blank

Heavy imports (jupytext, anywidget) wait: the `trous` CLI imports this package for its subcommands.
"""

from __future__ import annotations


def load_ipython_extension(ipython) -> None:
    from .checkcell import install  # noqa: PLC0415 - the CLI imports this package: kept light

    install(ipython)


def check(exercise_id: str, notebook: str | None = None):
    """Check the exercise as written in this notebook; returns a report the notebook displays."""
    from .checkcell import check as run  # noqa: PLC0415

    return run(exercise_id, notebook)


__all__ = ["check", "load_ipython_extension"]
