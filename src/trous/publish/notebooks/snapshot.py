"""The exercise as the student wrote it in the notebook, as one Python file: exactly the `.py` that
saving the paired notebook would write (jupytext), each code cell replaced by the code last run in it
when newer than the save, so the check cell and pytest agree; and where each cell landed, to say
« ligne 3 de la cellule 4 ».
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat

from .tracking import Ran

TAG_PREFIX = "trous-"  # our own cells (preparation, check) carry a tag starting with this
PY_FORMAT = "py:percent"


@dataclass(frozen=True)
class Span:
    cell: int  # 1-based position among all the notebook's cells, as the student counts them
    first_line: int  # 1-based line of the program where the cell's code starts
    lines: int
    origin: str  # "exécutée" (code last run) or "enregistrée" (saved file)


@dataclass
class Snapshot:
    path: Path  # the notebook
    text: str
    spans: list[Span] = field(default_factory=list)
    unsaved: bool = False  # some code that ran is newer than the saved notebook
    stale: list[int] = field(default_factory=list)  # cells taken from the file that were never run here

    def where(self, line: int) -> tuple[int, int] | None:
        """(cell, line in that cell) for a line of the program."""
        for span in self.spans:
            if span.first_line <= line < span.first_line + span.lines:
                return span.cell, line - span.first_line + 1
        return None

    def describe(self, line: int | None) -> str | None:
        if not line:
            return None
        place = self.where(line)
        return f"ligne {place[1]} de la cellule {place[0]}" if place else None


def is_ours(cell) -> bool:
    return any(str(t).startswith(TAG_PREFIX) for t in cell.get("metadata", {}).get("tags", []))


def read_notebook(path: Path):
    """The notebook as jupytext would open it: from the paired .py when that is clearly newer."""
    path = Path(path)
    paired = path.with_suffix(".py")
    notebook = nbformat.read(path, as_version=4)
    if paired.exists() and paired.stat().st_mtime > path.stat().st_mtime + 1.0:
        # Edited in another editor since the last save from JupyterLab: the .py wins, as in jupytext.
        from_text = jupytext.read(paired, fmt=PY_FORMAT)
        from_text.metadata = notebook.metadata
        return from_text
    return notebook


def take(path: Path, ran: dict[str, Ran]) -> Snapshot:
    path = Path(path)
    notebook = read_notebook(path)
    saved_at = path.stat().st_mtime
    snapshot = Snapshot(path, "")
    origins: list[tuple[int, str] | None] = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code" or is_ours(cell):
            origins.append(None)
            continue
        record = ran.get(cell.get("id", ""))
        if record is not None and record.at > saved_at:
            cell.source = record.source
            snapshot.unsaved = True
            origins.append((number, "exécutée"))
        else:
            if record is None:
                snapshot.stale.append(number)
            origins.append((number, "enregistrée"))
    snapshot.text = jupytext.writes(notebook, fmt=PY_FORMAT)
    snapshot.spans = _spans(snapshot.text, notebook, origins)
    return snapshot


_HEADER = re.compile(r"^# %%")


def _spans(text: str, notebook, origins) -> list[Span]:
    """Where each code cell's lines are in `text`: each cell starts after its `# %%` line."""
    lines = text.split("\n")
    headers = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if len(headers) != len(notebook.cells):
        return []  # an unexpected layout: positions are then given as lines of the file
    spans = []
    for cell, header, origin in zip(notebook.cells, headers, origins):
        if origin is None:
            continue
        source = cell.source.split("\n") if cell.source else []
        start = header + 1  # 0-based index of the first source line
        if lines[start:start + len(source)] != source:
            continue  # jupytext rewrote this cell (a magic commented out…): no line mapping for it
        spans.append(Span(origin[0], start + 1, len(source), origin[1]))
    return spans
