"""Student notebooks for the nbgrader tests and benchmark, written from a release notebook the way a
student would: blanks filled (with the solution's fill or anything else), cells added, cells edited
or deleted. Shared by tests/test_nbgrader_e2e.py and benchmarks/nbgrader_vs_trous.py."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat

from trous.core import blanks as blanks_mod

BIN = Path(sys.executable).parent
SOLUTION = object()  # in a choice: the solution's fill


def env() -> dict[str, str]:
    """nbgrader runs `alembic` and kernels from PATH: the virtual environment's bin/ comes first."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONDONTWRITEBYTECODE": "1"}


def nbgrader(cwd: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout)


def grade_id(cell) -> str | None:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")


class Author:
    """Writes students' versions of one exercise notebook."""

    def __init__(self, source_nb, release_nb):
        self.source, self.release = source_nb, release_nb
        solutions = {grade_id(c): c.source for c in source_nb.cells
                     if (c.metadata.get("nbgrader") or {}).get("solution")}
        self.cells = []  # (grade_id, template source, fills of the solution)
        for cell in release_nb.cells:
            gid = grade_id(cell)
            if gid in solutions:
                fills = blanks_mod.align(cell.source, solutions[gid])
                assert fills is not None, gid
                self.cells.append((gid, cell.source, fills))

    @property
    def solution_fills(self) -> list[str]:
        return [f.text for _, _, fills in self.cells for f in fills]

    def answers(self, choices: dict[int, object]) -> dict[str, str]:
        """Answer cell sources: blank i (over the whole notebook) gets choices[i] (SOLUTION: the
        solution's fill; absent or None: left `___`)."""
        out, index = {}, 0
        for gid, template, fills in self.cells:
            replacements = {}
            for fill in fills:
                choice = choices.get(index)
                if choice is SOLUTION:
                    replacements[fill.index] = fill.text
                elif choice is not None:
                    replacements[fill.index] = str(choice)
                index += 1
            template_fills = blanks_mod.align(template, template)
            out[gid] = blanks_mod.splice(template, template_fills, replacements)
        return out

    def notebook(self, choices: dict[int, object], *, added: list[tuple[str, str]] = (),
                 edit: Callable | None = None):
        """The release notebook with these answers; `added`: (after this grade_id, code) new cells."""
        nb = copy.deepcopy(self.release)
        sources = self.answers(choices)
        for cell in nb.cells:
            if grade_id(cell) in sources:
                cell.source = sources[grade_id(cell)]
        for after, code in added:
            position = next(i for i, c in enumerate(nb.cells) if grade_id(c) == after)
            nb.cells.insert(position + 1, nbformat.v4.new_code_cell(code))
        if edit is not None:
            edit(nb)
        return nb


def blank_scores(course_dir: Path, course_id: str) -> dict[str, dict[str, float | None]]:
    """student → grade cell → score (the manual score if any, else the autograder's), from nbgrader's
    gradebook, through nbgrader's own API."""
    from nbgrader.api import Gradebook  # noqa: PLC0415

    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook(f"sqlite:///{Path(course_dir) / 'gradebook.db'}", course_id) as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        score = grade.manual_score if grade.manual_score is not None else grade.auto_score
                        scores.setdefault(submission.student.id, {})[grade.name] = score
    return scores
