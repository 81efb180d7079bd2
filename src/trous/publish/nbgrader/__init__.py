"""The course as an nbgrader course, graded in nbgrader (autograde) or by `trous grade`, same grades.

Here, `%load_ext trous.publish.nbgrader`: IPython keeps an old output in a variable named `___`, the
very name of a blank, so an unfilled answer cell would compute with it and fail far away. Every `___`
the code reads becomes a call raising `TrouPasRempli` there, in French, with its line.
"""

from __future__ import annotations

import ast

BLANK = "___"  # course.blanks.BLANK, without importing the course package (pydantic) into the kernel
# nbgrader's own default, what students use unconfigured. Here, not in build.py: `trous --help`
# must not load jupytext and nbformat.
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"

MODULE = __name__
_installed: set[int] = set()
_note: list[str] = []  # a line said after the message, where the notebook has more to say (notebooks/)


class TrouPasRempli(Exception):
    """IPython shows `_render_traceback_` instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return str(self).split("\n")


def blank_not_filled(line: int, code: str) -> None:
    where = f"à la ligne {line} de sa cellule" + (" :\n    " + code.strip() if code.strip() else "")
    raise TrouPasRempli(f"✘ trou pas encore rempli (___) {where}\n"
                        "  Remplace ___ par une expression Python, puis exécute la cellule de nouveau (Maj+Entrée)."
                        + "".join(f"\n  {n}" for n in _note))


class BlankGuard(ast.NodeTransformer):
    """IPython calls `visit` on each cell's AST before running it."""

    def __init__(self):
        self.lines: list[str] = []

    def remember(self, info) -> None:  # pre_run_cell: the cell's text, to quote the blank's line
        self.lines = str(getattr(info, "raw_cell", "") or "").split("\n")

    def visit_Name(self, node: ast.Name):
        if node.id != BLANK or not isinstance(node.ctx, ast.Load):
            return node
        line = getattr(node, "lineno", 0)
        code = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        call = ast.parse(f"__import__({MODULE!r}, fromlist=['_']).blank_not_filled({line}, {code!r})",
                         mode="eval").body
        return ast.fix_missing_locations(ast.copy_location(call, node))


def load_ipython_extension(ipython, note: str | None = None) -> None:
    """`%load_ext trous.publish.nbgrader` (also `%load_ext trous.publish.notebooks`, with its note)."""
    if note and note not in _note:
        _note.append(note)
    if ipython is None or id(ipython) in _installed:
        return
    guard = BlankGuard()
    ipython.events.register("pre_run_cell", guard.remember)
    ipython.ast_transformers.append(guard)
    _installed.add(id(ipython))
