"""Hints, one at a time, remembered in .trous/etat.json.

A hint *gives the answer* when it is the last of two or more, or writes out the solution's fill (a
lone name or number does not count). The edition's course.yaml keeps only the others; those are in
`.trous/indices.json`, masked: no secret from whoever reads trous's code, but out of sight of a
`grep` or an editor's search, until `trous hint` gives them, offline.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..core import blanks as blanks_mod
from ..core.course import Exercise
from ..core.source import read

STATE_FILE = Path(".trous") / "etat.json"
HELD_FILE = Path(".trous") / "indices.json"
HELD_VERSION = 1
_SALT = b"trous/indices/v1"
_LONE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9.]+")


def _read(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _save(root: Path, state: dict) -> None:
    path = root / STATE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, ensure_ascii=False, indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only folder only loses the memory of which hints were shown


# -- which hints give the answer ------------------------------------------------------------------
def answer_levels(hints: list[str], fill: str | None = None) -> list[bool]:
    """For each hint, does it give the answer? `fill`: the solution's, when known."""
    fill = (fill or "").strip()
    spaceless = "" if not fill or fill == "___" or _LONE.fullmatch(fill) else re.sub(r"\s+", "", fill)
    levels = [bool(spaceless) and spaceless in re.sub(r"\s+", "", hint) for hint in hints]
    if len(hints) >= 2:
        levels[-1] = True
    return levels


def solution_fills(exercise: Exercise) -> list[str] | None:
    """None in a student edition (no solution)."""
    try:
        template = read(exercise.template_path).text
        solution = read(exercise.solution_path).text
    except Exception:  # noqa: BLE001 - no solution (a student edition), or unreadable: no fills
        return None
    fills = blanks_mod.align(template, solution)
    if fills is None or len(fills) != len(exercise.blanks):
        return None
    return [f.text for f in fills]


# -- held-back hints, masked -----------------------------------------------------------------------
def _key(course: str, exercise: str, blank: str, level: int, size: int) -> bytes:
    seed = b"\0".join([_SALT, course.encode(), exercise.encode(), blank.encode(), str(level).encode()])
    return b"".join(hashlib.sha256(seed + i.to_bytes(4, "big")).digest() for i in range(size // 32 + 1))[:size]


def mask(text: str, course: str, exercise: str, blank: str, level: int) -> str:
    packed = zlib.compress(text.encode("utf-8"), 9)
    key = _key(course, exercise, blank, level, len(packed))
    return base64.b64encode(bytes(a ^ b for a, b in zip(packed, key))).decode("ascii")


def unmask(token: str, course: str, exercise: str, blank: str, level: int) -> str:
    data = base64.b64decode(token.encode("ascii"), validate=True)
    key = _key(course, exercise, blank, level, len(data))
    return zlib.decompress(bytes(a ^ b for a, b in zip(data, key))).decode("utf-8")


def held_document(course_id: str, exercises: list[Exercise], split: dict[tuple[str, str], int]) -> dict:
    """`.trous/indices.json`: by « exercice/trou », how many of course.yaml's hints are real (`lisibles`),
    then the held-back ones, masked."""
    blanks = {}
    for exercise in exercises:
        for blank in exercise.blanks:
            shown = split[(exercise.id, blank.id)]
            hints = blank.hints
            blanks[f"{exercise.id}/{blank.id}"] = {
                "lisibles": shown,
                "caches": [mask(text, course_id, exercise.id, blank.id, level)
                           for level, text in enumerate(hints[shown:], start=shown)],
            }
    return {"version": HELD_VERSION, "cours": course_id, "trous": blanks}


@dataclass(frozen=True)
class Hint:
    text: str
    number: int  # from 1
    total: int
    gives_answer: bool
    next_gives_answer: bool  # the hint the next call would show gives the answer


def next_hint(exercise: Exercise, blank_index: int) -> Hint:
    """The blank's next hint (the last one stays once reached). Which give the answer: in an edition,
    the held-back ones; in the teacher's course, judged with the solution."""
    blank, course = exercise.blanks[blank_index], exercise.course
    key = f"{exercise.id}/{blank.id}"
    held = _read(course.root / HELD_FILE)
    held = held if isinstance(held, dict) and held.get("version") == HELD_VERSION else {}
    entry = held.get("trous", {}).get(key)
    if entry is not None:
        readable = int(entry.get("lisibles", 0))
        texts = list(blank.hints[:readable])
        for level, token in enumerate(entry.get("caches", []), start=readable):
            texts.append(unmask(token, course.id, exercise.id, blank.id, level))
        answers = [i >= readable for i in range(len(texts))]
    else:
        fills = solution_fills(exercise)
        texts = list(blank.hints)
        answers = answer_levels(texts, fills[blank_index] if fills else None)
    state = _read(course.root / STATE_FILE)
    state = state if isinstance(state, dict) else {}
    level = state.get("hints", {}).get(key, 0)
    shown = min(level, len(texts) - 1)
    state.setdefault("hints", {})[key] = min(level + 1, len(texts))
    _save(course.root, state)
    following = shown + 1 < len(texts) and answers[shown + 1]
    return Hint(texts[shown], shown + 1, len(texts), answers[shown], following)
