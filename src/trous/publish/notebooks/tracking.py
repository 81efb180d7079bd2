"""What the student ran, cell by cell, in this kernel.

A notebook's check cell must judge what the student typed, but the notebook file on disk only
changes when they save. JupyterLab sends each cell's id with its code when it runs it, and IPython
passes both to `pre_run_cell` handlers: we keep the last code run for each cell id, with the time,
so the check can take, for each cell, whichever is newer — the code last run, or the saved file.

Also, IPython keeps its third-to-last output in a variable named `___`, the very name of a blank:
an unfilled blank would then silently be '' (and fail far away, "must be real number, not str").
The nbgrader notebooks' blank guard (publish/nbgrader/blankguard.py) turns every `___` a cell reads
into a French « trou pas encore rempli » at that very line, without a traceback (IPython's shows,
for a blank in a comprehension, a frame at the wrong line). A NameError that follows from a cell
stopped earlier is said in French too, with its line. The exercise's code cells are tagged
`raises-exception` (publish/notebooks/build.py): « Run All » goes on to the check cell, whose French verdict
is the same as `pytest exercises/`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import traceback

from ...core.blanks import BLANK

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

    def forget_blank_marker(info) -> None:
        ipython.user_ns.pop(BLANK, None)

    forget_blank_marker(None)
    ipython.events.register("pre_run_cell", _record)
    ipython.events.register("pre_run_cell", forget_blank_marker)
    from ..nbgrader import blankguard  # noqa: PLC0415 - the same guard as nbgrader's notebooks

    blankguard.install(ipython, note=STILL_CHECKED)
    ipython.set_custom_exc((NameError,), calm_name_error)
    _INSTALLED.add(id(ipython))


def calm_name_error(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """A NameError in an exercise notebook, in French: the name, the line, what usually causes it."""
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


def installed() -> bool:
    return bool(_INSTALLED)


def ran() -> dict[str, Ran]:
    return dict(_RAN)
