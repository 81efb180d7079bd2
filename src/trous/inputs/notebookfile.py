"""A student's `.ipynb` (JupyterLab, `trous lab`) as the `.py` the engine grades: the text saving
the notebook paired with its percent-format `.py` would write. Without jupytext (the notebooks
extra) every notebook left ungraded says so (`unavailable()`), never in silence. The notebook is
untrusted JSON: nothing in it runs, its size is bounded by the caller, and any failure of the
parser is a French reason, never a crash.
"""

from __future__ import annotations

import importlib.util
import json

FORMAT = "py:percent"  # the course's exercise files (jupytext's percent format)
INSTALL = "pip install 'trous[notebooks]'"
OUR_TAG = "trous-"  # cells `trous lab` adds (preparation, check): not part of the exercise


class NotebookError(ValueError):
    """Not a notebook jupytext can read; the message is French."""


def unavailable() -> str | None:
    """Why notebooks cannot be graded on this machine (French), or None when they can."""
    if importlib.util.find_spec("jupytext") is None:
        return f"carnet Jupyter non corrigé : jupytext n'est pas installé sur la machine de correction ({INSTALL})"
    return None


def to_python(data: bytes) -> bytes:
    """The notebook's program, as saving it paired with a .py would write it (UTF-8)."""
    try:
        text = data.decode("utf-8-sig")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise NotebookError("ce n'est pas un fichier .ipynb (JSON illisible)") from exc
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("ce n'est pas un carnet Jupyter (pas de liste de cellules)")
    import jupytext  # noqa: PLC0415 - seconds to import: only when a copy holds a notebook

    try:
        notebook = jupytext.reads(text, fmt="ipynb")
        notebook.cells = [c for c in notebook.cells if not _ours(c)]
        # No metadata header (the course's .py files have none), and the student's own jupytext
        # settings do not change what is graded.
        notebook.metadata["jupytext"] = {"notebook_metadata_filter": "-all"}
        program = jupytext.writes(notebook, fmt=FORMAT)
    except Exception as exc:  # noqa: BLE001 - untrusted input into a third-party parser: any failure is « illisible »
        raise NotebookError(f"jupytext ne peut pas le lire ({type(exc).__name__})") from exc
    return program.encode("utf-8", "surrogatepass")


def _ours(cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return isinstance(tags, list) and any(str(t).startswith(OUR_TAG) for t in tags)
