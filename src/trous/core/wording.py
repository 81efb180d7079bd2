"""French words that agree with their number (« 1 trou », « 3 trous », « 0 copie »), and messages
of Python's, argparse's or pydantic's said in French through a table of patterns."""

from __future__ import annotations

import re


def plural(count: float, singular: str, plural_form: str | None = None) -> str:
    """The word for `count` things (French: singular for 0 and 1, as in « 0 trou rempli »)."""
    if abs(count) < 2:
        return singular
    if plural_form is not None:
        return plural_form
    return " ".join(_plural_word(word) for word in singular.split(" "))


def count(n: float, singular: str, plural_form: str | None = None) -> str:
    """« 1 trou », « 46 trous », « 2 copies corrigées », « 0,5 point »."""
    return f"{french_number(n)} {plural(n, singular, plural_form)}"


def french_number(value: float) -> str:
    """Points and other numbers for people: « 0,33 », « 2 », « 1,5 »."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return ("0" if text in ("-0", "") else text).replace(".", ",")


def seconds(value) -> str:
    """« 2 s », « 0,5 s »."""
    if type(value) not in (int, float):
        return "?"
    return f"{value:.0f} s" if value == int(value) else f"{value:.1f} s".replace(".", ",")


def _plural_word(word: str) -> str:
    # Enough for the words trous writes; articles and prepositions stay as they are.
    if word in ("de", "à", "en", "du", "la", "le", "des", "sur", "au", "par") or not word[:1].isalpha():
        return word
    if word.endswith(("s", "x", "z")):
        return word
    if word.endswith("al"):
        return word[:-2] + "aux"
    if word.endswith(("au", "eu")):
        return word + "x"
    return word + "s"


def translated(table: list[tuple[str, str]], text: str) -> str | None:
    """`text` rewritten by the first (pattern, replacement) of `table` that matches it."""
    for pattern, replacement in table:
        if re.match(pattern, text):
            return re.sub(pattern, replacement, text)
    return None
