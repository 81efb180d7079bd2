"""What the student ran, cell by cell, in this kernel.

A notebook's check cell must judge what the student typed, but the notebook file on disk only
changes when they save. JupyterLab sends each cell's id with its code when it runs it, and IPython
passes both to `pre_run_cell` handlers: we keep the last code run for each cell id, with the time,
so the check can take, for each cell, whichever is newer — the code last run, or the saved file.

Also, IPython keeps its third-to-last output in a variable named `___`, the very name of a blank:
an unfilled blank would then silently be '' (and fail far away, "must be real number, not str").
Before each cell we remove that variable, so an unfilled blank raises NameError on its own line,
as it does when the .py runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..course.blanks import BLANK


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

    def forget_blank_marker(info) -> None:
        ipython.user_ns.pop(BLANK, None)

    forget_blank_marker(None)
    ipython.events.register("pre_run_cell", _record)
    ipython.events.register("pre_run_cell", forget_blank_marker)
    _INSTALLED.add(id(ipython))


def installed() -> bool:
    return bool(_INSTALLED)


def ran() -> dict[str, Ran]:
    return dict(_RAN)
