"""Student-controlled text (folder names, Moodle names, file names inside a copy) made safe to print
in a terminal (`printable`: no escape sequence, « \\x1b[2J » would clear the teacher's screen, nor
bidirectional override, « Trojan Source ») and to put in a CSV cell (`csv_cell`: never a formula, as
OWASP says, whatever separator a spreadsheet splits on: French Excel may split on « ; »).
"""

from __future__ import annotations

import re
import unicodedata

# ECMA-48: CSI (ESC [ or 8-bit 0x9B) … final byte; OSC, DCS, SOS, PM, APC … up to their terminator
# (BEL or ST, or the end of the text when it never comes); then any other two-byte escape.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"
    r"|\x1b[ -/]*[0-~]?",
    re.DOTALL,
)
_BREAKS = re.compile(r"[\n\r\t\v\f\x85\u2028\u2029]+")
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI_SET = frozenset(_BIDI)
_REMOVED = {ord(c): None for c in _BIDI}
_REMOVED.update({c: None for c in range(0x20)})
_REMOVED.update({c: None for c in range(0x7F, 0xA0)})
# Lone surrogates: an undecodable byte of a file name (os.listdir's surrogateescape). They cannot be
# written as UTF-8: shown as U+FFFD instead of crashing the terminal, a page or a CSV.
_REMOVED.update({c: "\ufffd" for c in range(0xD800, 0xE000)})

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?")


def printable(text: object) -> str:
    """`text` on one line, without escape sequences or other control characters."""
    text = str(text)
    if text.isprintable() and _BIDI_SET.isdisjoint(text):
        return text  # the usual case, kept fast: nothing to clean
    text = _ESCAPES.sub("", text)
    text = _BREAKS.sub(" ", text)
    return text.translate(_REMOVED)


def is_formula(text: str) -> bool:
    """Would a spreadsheet read this cell as a formula (or a DDE command)? A real number is not one;
    full-width forms of the signs are."""
    if _NUMBER.fullmatch(text):
        return False
    first = text.lstrip(" ")[:1]
    return bool(first) and (first in FORMULA_START or unicodedata.normalize("NFKC", first) in FORMULA_START)


_SEPARATORS = re.compile(r"([;,])")


def csv_cell(value: object) -> str:
    text = printable(value)
    if is_formula(text):
        text = "'" + text
    if ";" in text or "," in text:
        pieces = _SEPARATORS.split(text)  # [text, separator, text, separator, text…]
        for i in range(2, len(pieces), 2):
            if is_formula(pieces[i]):
                pieces[i] = "'" + pieces[i]
        text = "".join(pieces)
    return text
