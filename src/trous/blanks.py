"""Blanks: the `___` placeholders of an exercise, and what a copy of it wrote in their place.

An exercise (the *template*) and a copy of it (a student's file, or the reference solution) are
compared token by token, not line by line: the copy must equal the template except that each `___`
became some balanced run of tokens (the *fill*). Comments, blank lines, spacing, the kind of quotes
and line continuations inside brackets do not matter. A `___` inside a string or a comment is not a
blank, because the tokenizer says it is not a name.
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from dataclasses import dataclass
from functools import lru_cache

BLANK = "___"

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
# Tokens whose text does not matter for alignment, only their presence (indentation width, "\n").
_LAYOUT = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


class TokenizeError(Exception):
    def __init__(self, message: str, line: int, column: int = 0):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@dataclass(frozen=True)
class Token:
    type: int
    string: str
    start: tuple[int, int]  # (line, column), 1-based line as in tokenize
    end: tuple[int, int]
    begin: int  # character offsets into the text
    stop: int

    @property
    def is_blank(self) -> bool:
        return self.type == tokenize.NAME and self.string == BLANK

    def key(self) -> tuple:
        """What must be equal for two tokens to be 'the same code'."""
        if self.type in _LAYOUT:
            return (self.type,)
        if self.type in (tokenize.STRING, tokenize.NUMBER):
            return (self.type, _literal(self.string))
        return (self.type, self.string)


@lru_cache(maxsize=4096)
def _literal(text: str):
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return ("raw", text)
    return (type(value).__name__, repr(value))


def tokens(text: str) -> list[Token]:
    """The significant tokens of `text` (universal newlines expected)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    result: list[Token] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _SKIPPED:
                continue
            if tok.type == tokenize.ERRORTOKEN and not tok.string.strip():
                continue
            (l1, c1), (l2, c2) = tok.start, tok.end
            begin = starts[l1 - 1] + c1 if l1 - 1 < len(starts) else len(text)
            stop = starts[l2 - 1] + c2 if l2 - 1 < len(starts) else len(text)
            result.append(Token(tok.type, tok.string, tok.start, tok.end, begin, stop))
    except tokenize.TokenError as exc:
        message, (line, column) = exc.args
        raise TokenizeError(_french_token_error(message), line, column) from None
    except (SyntaxError, IndentationError) as exc:  # 3.12+ raises these from the tokenizer
        raise TokenizeError(exc.msg, exc.lineno or 1, exc.offset or 0) from None
    return result


def _french_token_error(message: str) -> str:
    if "EOF in multi-line string" in message:
        return "chaîne de caractères sur plusieurs lignes jamais refermée (\"\"\" manquant)"
    if "EOF in multi-line statement" in message:
        return "parenthèse, crochet ou accolade jamais refermé"
    return message


@dataclass(frozen=True)
class Blank:
    """The n-th `___` of a template (0-based index)."""

    index: int
    line: int
    column: int


def find_blanks(text: str) -> list[Blank]:
    return [Blank(i, t.start[0], t.start[1]) for i, t in enumerate(t for t in tokens(text) if t.is_blank)]


@dataclass(frozen=True)
class Fill:
    """What a copy wrote in place of blank `index`."""

    index: int
    text: str  # source text of the fill, as written (may span lines inside brackets)
    line: int
    column: int
    end_line: int
    begin: int  # character offsets into the copy
    stop: int
    filled: bool  # False while the fill still contains a `___`


def align(template: str, copy: str) -> list[Fill] | None:
    """The fill of every blank of `template` in `copy`, or None when the copy changed other code.

    Each fill is a non-empty, bracket-balanced run of tokens on one logical line. When several
    splits fit, the earliest end for each blank wins, with backtracking, so `[___ for t in x]`
    filled with `sum(a * b for a, b in zip(t, toux))` splits at the outer `for`.
    """
    return align_tokens(tokens(template), tokens(copy), copy)


def align_tokens(tmpl: list[Token], copy_toks: list[Token], copy: str) -> list[Fill] | None:
    segments: list[list[tuple]] = [[]]
    for tok in tmpl:
        if tok.is_blank:
            segments.append([])
        else:
            segments[-1].append(tok.key())
    keys = [t.key() for t in copy_toks]
    n = len(keys)
    memo: dict[tuple[int, int], list[tuple[int, int]] | None] = {}

    def seg_matches(s: int, pos: int) -> bool:
        seg = segments[s]
        return pos + len(seg) <= n and keys[pos:pos + len(seg)] == seg

    def solve(s: int, pos: int) -> list[tuple[int, int]] | None:
        # Segment s must start at pos; returns the (start, end) token spans of the later blanks.
        if (s, pos) in memo:
            return memo[(s, pos)]
        memo[(s, pos)] = None
        if not seg_matches(s, pos):
            return None
        after = pos + len(segments[s])
        if s == len(segments) - 1:
            result = [] if after == n else None
            memo[(s, pos)] = result
            return result
        depth = 0
        for end in range(after, n):
            tok = copy_toks[end]
            if tok.type in _LAYOUT:
                break
            if tok.type == tokenize.OP and tok.string in _OPENERS:
                depth += 1
            elif tok.type == tokenize.OP and tok.string in _CLOSERS:
                depth -= 1
                if depth < 0:
                    break
            if depth == 0:
                rest = solve(s + 1, end + 1)
                if rest is not None:
                    memo[(s, pos)] = [(after, end + 1)] + rest
                    return memo[(s, pos)]
        return None

    spans = solve(0, 0)
    if spans is None:
        return None
    fills = []
    for index, (a, b) in enumerate(spans):
        first, last = copy_toks[a], copy_toks[b - 1]
        fills.append(Fill(
            index=index,
            text=copy[first.begin:last.stop],
            line=first.start[0],
            column=first.start[1],
            end_line=last.end[0],
            begin=first.begin,
            stop=last.stop,
            filled=not any(t.is_blank for t in copy_toks[a:b]),
        ))
    return fills


def leftover_blanks(template: str, copy: str) -> dict[int, tuple[int, int]]:
    """Blanks still written `___` in a copy that no longer aligns: {blank index: (line, column)}.

    A best effort for feedback only: a sequence match of the token streams maps each template blank
    to the copy where the surrounding code is unchanged.
    """
    tmpl, cp = tokens(template), tokens(copy)
    blank_at = {pos: i for i, pos in enumerate(p for p, t in enumerate(tmpl) if t.is_blank)}
    matcher = difflib.SequenceMatcher(None, [t.key() for t in tmpl], [t.key() for t in cp], autojunk=False)
    found: dict[int, tuple[int, int]] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            ti, ci = block.a + k, block.b + k
            if ti in blank_at and cp[ci].is_blank:
                found[blank_at[ti]] = cp[ci].start
    return found


def splice(copy: str, fills: list[Fill], replacements: dict[int, str]) -> str:
    """`copy` with the fills of the given blank indexes replaced by other source text."""
    out, last = [], 0
    for fill in sorted(fills, key=lambda f: f.begin):
        if fill.index in replacements:
            out.append(copy[last:fill.begin])
            # Verbatim is always legal: a fill that spans lines does so inside brackets that are
            # either its own or the template's, and the template's surround every copy alike.
            out.append(replacements[fill.index])
            last = fill.stop
    out.append(copy[last:])
    return "".join(out)

