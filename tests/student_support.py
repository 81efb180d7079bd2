"""Helpers for the tests that read a student's `pytest exercises/` and `trous` as a student would."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from trous.check.pytest_plugin import categories

WORDS = {word: status for status, (_category, _mark, word, _colour) in categories().items()}


def internal_traceback(output: str) -> bool:
    return "Traceback" in output or "src/trous" in output or "site-packages/trous" in output


def copy_solution(folder: Path, exercise) -> None:
    shutil.copyfile(exercise.solution_path, folder / "exercises" / exercise.path.name)


def solution_with(folder: Path, exercise, *changes: tuple[str, str]) -> str:
    """Write the solution with some fills changed into the student's copy; the text written."""
    text = exercise.solution_path.read_text(encoding="utf-8")
    for old, new in changes:
        assert old in text, f"{exercise.id} : « {old} » n'est plus dans la solution"
        text = text.replace(old, new)
    (folder / "exercises" / exercise.path.name).write_text(text, encoding="utf-8")
    return text


def line_with(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def statuses(verbose_output: str, exercise) -> dict[str, str]:
    """{blank id: status} read from `pytest -v` lines « exercises/01_toux.py::scores FAUX »."""
    found = {}
    for blank, word in re.findall(rf"^exercises/{re.escape(exercise.path.name)}::(\w+) (.+?)\s+\[", verbose_output,
                                  re.MULTILINE):
        found[blank] = WORDS[word.strip()]
    return found


def progress_marks(output: str, exercise) -> str:
    """The marks pytest writes after the exercise's file name: one per blank."""
    found = re.search(rf"^exercises/{re.escape(exercise.path.name)} (\S+)", output, re.MULTILINE)
    assert found, output[-2000:]
    return found.group(1)
