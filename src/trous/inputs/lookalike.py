"""Students whose names only look alike: two copies a teacher would take for one (« Alice » and
« alice », a Cyrillic « А », a zero-width space).

Names are compared by their skeleton, in the spirit of UTS #39: those with one skeleton but
different spellings are listed; nothing is merged.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from ..core.safetext import printable


SCRIPTS = {"CYRILLIC": "cyrillique", "GREEK": "grec", "ARMENIAN": "arménien", "CHEROKEE": "cherokee",
           "COPTIC": "copte", "HEBREW": "hébreu", "ARABIC": "arabe"}


def _invisible(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf" or 0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF


def _latin(ch: str) -> str:
    from confusable_homoglyphs import categories, confusables  # noqa: PLC0415 - 900 kB of data, loaded when needed

    if ch.isascii() or categories.alias(ch) in ("LATIN", "COMMON"):
        return ch
    for glyph in confusables.confusables_data.get(ch) or ():
        if len(glyph["c"]) == 1 and glyph["n"].startswith("LATIN "):
            return glyph["c"]
    return ch


def _visible(name: str) -> str:
    return " ".join("".join(ch for ch in unicodedata.normalize("NFKC", name) if not _invisible(ch)).split())


def skeleton(name: str) -> str:
    return " ".join("".join(_latin(ch) for ch in _visible(name).casefold()).split())


def _why(names: list[str]) -> str:
    reasons = []
    if any(_invisible(ch) for name in names for ch in name):
        reasons.append("caractère invisible")
    visible = {_visible(n) for n in names}
    if len({v.casefold() for v in visible}) > 1:
        from confusable_homoglyphs import categories  # noqa: PLC0415

        scripts = {categories.alias(ch) for n in names for ch in n if not ch.isascii() and ch.isalpha()} - {"LATIN"}
        reasons.append("lettres d'un autre alphabet (" + ", ".join(sorted(SCRIPTS.get(s, s.lower()) for s in scripts)) + ")"
                       if scripts else "lettres qui se ressemblent")
    if len(visible) > len({v.casefold() for v in visible}):
        reasons.append("majuscules et minuscules")
    return ", ".join(reasons) or "espaces"


def _codes(name: str) -> str:
    odd = [f"U+{ord(ch):04X}" for ch in name if _invisible(ch) or (not ch.isascii() and _latin(ch) != ch)]
    return f" [{', '.join(dict.fromkeys(odd))}]" if odd else ""


def lookalikes(copies: Iterable[tuple[str, str]]) -> list[str]:
    """French notes about the copies whose names look alike; `copies`: (student id, name shown)."""
    groups: dict[str, dict[str, list[str]]] = {}
    for student, name in copies:
        groups.setdefault(skeleton(name), {}).setdefault(name, []).append(student)
    notes = []
    for spellings in groups.values():
        if len(spellings) < 2:
            continue
        names = sorted(spellings)
        shown = " et ".join(f"« {printable(n)} »{_codes(n)} ({', '.join(printable(s) for s in spellings[n])})"
                            for n in names)
        notes.append(f"noms qui se ressemblent ({_why(names)}) : {shown} : deux copies distinctes, "
                     "corrigées chacune pour elle ; vérifie qu'il s'agit bien de deux étudiants")
    return notes
