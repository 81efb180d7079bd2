"""Hints, one at a time: each call shows the next hint of a blank, and remembers it (.trous/etat.json)."""

from __future__ import annotations

import json
from pathlib import Path

from ..course.definition import Exercise

STATE_FILE = Path(".trous") / "etat.json"


def _load(root: Path) -> dict:
    try:
        return json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _save(root: Path, state: dict) -> None:
    path = root / STATE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, ensure_ascii=False, indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only folder only loses the memory of which hints were shown


def next_hint(exercise: Exercise, blank_index: int) -> tuple[str, int, int]:
    """(hint text, its number from 1, how many there are) — advancing the blank's hint level."""
    root = exercise.course.root
    state = _load(root)
    key = f"{exercise.id}/{exercise.blanks[blank_index].id}"
    hints = exercise.blanks[blank_index].hints
    level = state.get("hints", {}).get(key, 0)
    shown = min(level, len(hints) - 1)
    state.setdefault("hints", {})[key] = min(level + 1, len(hints))
    _save(root, state)
    return hints[shown], shown + 1, len(hints)
