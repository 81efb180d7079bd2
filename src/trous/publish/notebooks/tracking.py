"""What the student ran, cell by cell, in this kernel: the check takes, for each cell, whichever is
newer, the code last run (JupyterLab sends each cell's id to IPython's `pre_run_cell`) or the saved
file. Also the blank guard (publish/nbgrader/__init__.py: IPython's `___` output cache would make an
unfilled blank silently '') and a NameError said in French, with its line.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

from ..nbgrader import load_ipython_extension as install_guard  # the same guard as nbgrader's notebooks

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
