"""The course in JupyterLab (`%load_ext trous.publish.notebooks`, then `check("01_moyenne")`). Heavy
imports (jupytext) wait: the `trous` CLI imports this package for its subcommands."""

from __future__ import annotations


def load_ipython_extension(ipython) -> None:
    from .checkcell import install  # noqa: PLC0415 - the CLI imports this package: kept light

    install(ipython)


def check(exercise_id: str, notebook: str | None = None):
    from .checkcell import check as run  # noqa: PLC0415

    return run(exercise_id, notebook)


__all__ = ["check", "load_ipython_extension"]
