"""Counts in French: « 0 copie », « 1 copie », « 2 copies » (the plural starts at two)."""

from __future__ import annotations


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """The word agreeing with `count` (without the number): the plural is `plural_form`, or the
    singular with an « s » on each word (« copie corrigée » → « copies corrigées »)."""
    if abs(count) < 2:
        return singular
    return plural_form if plural_form is not None else " ".join(w + "s" for w in singular.split(" "))


def count(n: int, singular: str, plural_form: str | None = None) -> str:
    """« 1 copie », « 3 copies »."""
    return f"{n} {plural(n, singular, plural_form)}"
