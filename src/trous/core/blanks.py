"""Blanks: the `___` placeholders of an exercise, and what a copy of it wrote in their place.

A copy (a student's file, or the reference solution) is compared with the *template* token by token,
not line by line: it must equal the template except that each `___` became some balanced run of tokens
(the *fill*), so comments, blank lines, spacing, the kind of quotes and line continuations inside
brackets do not matter, and a `___` inside a string or a comment is not a blank.
"""

from __future__ import annotations

import ast
import difflib
import io
import itertools
import tokenize
from dataclasses import dataclass
from functools import cache, lru_cache

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
    starts = [0, *itertools.accumulate(map(len, text.splitlines(keepends=True)))]
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
    """The fill of every blank of `template` in `copy`, or None when the copy changed other code. Each
    fill is a non-empty, bracket-balanced run of tokens on one logical line; when several splits fit, the
    earliest end for each blank wins, with backtracking, so `[___ for t in x]` filled with
    `sum(a * b for a, b in zip(t, u))` splits at the outer `for`."""
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

    @cache
    def solve(s: int, pos: int) -> tuple[tuple[int, int], ...] | None:
        """Segment s starts at pos: the (start, end) token spans of the later blanks, or None."""
        seg = segments[s]
        if keys[pos:pos + len(seg)] != seg:
            return None
        after = pos + len(seg)
        if s == len(segments) - 1:
            return () if after == n else None
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
                    return ((after, end + 1), *rest)
        return None

    spans = solve(0, 0)
    if spans is None:
        return None
    fills = []
    for index, (a, b) in enumerate(spans):
        first, last = copy_toks[a], copy_toks[b - 1]
        fills.append(Fill(index, copy[first.begin:last.stop], first.start[0], first.start[1], last.end[0],
                          first.begin, last.stop, filled=not any(t.is_blank for t in copy_toks[a:b])))
    return fills


def leftover_blanks(template: str, copy: str) -> dict[int, tuple[int, int]]:
    """Blanks still written `___` in a copy that no longer aligns: {blank index: (line, column)}, a
    best effort (for feedback only) by a sequence match of the token streams."""
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


@dataclass(frozen=True)
class LineMap:
    """The lines of a copy against its template's: a fill spanning k lines pushes what follows it
    down by k - 1 lines."""

    blanks: tuple[tuple[int, int], ...]  # (template line of each blank, extra lines its fill adds), in order

    @classmethod
    def of(cls, template_lines: list[int], extras: list[int]) -> "LineMap":
        return cls(tuple(sorted(zip(template_lines, extras))))

    def to_template(self, line: int) -> int:
        shift = 0
        for tline, extra in self.blanks:
            start = tline + shift  # where this fill begins in the copy
            if line <= start:
                break
            if line <= start + extra:
                return tline  # inside a fill that spans lines: its blank's line
            shift += extra
        return line - shift

    def to_copy(self, tline: int) -> int:
        return tline + sum(extra for line, extra in self.blanks if line < tline)


def extra_lines(text: str) -> int:
    return text.count("\n")


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


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@lru_cache(maxsize=65536)
def _single_fill(text: str) -> bool | None:
    """Whether a one-line fill contains a `___`; None when it is not one balanced run of tokens."""
    if not text.strip() or "\n" in text or "#" in text or "\\" in text:
        return None
    try:
        toks = tokens(text)
    except TokenizeError:
        return None
    depth = 0
    for tok in toks:
        if tok.type in (tokenize.INDENT, tokenize.DEDENT):
            return None
        if tok.type == tokenize.OP and tok.string in _OPENERS:
            depth += 1
        elif tok.type == tokenize.OP and tok.string in _CLOSERS:
            depth -= 1
            if depth < 0:
                return None
    if depth != 0 or not any(t.type != tokenize.NEWLINE for t in toks):
        return None
    return any(t.is_blank for t in toks)


def align_text(template: str, blank_offsets: list[tuple[int, int]], copy: str) -> list[Fill] | None:
    """The fast path of `align`, for the usual copy: the template's text unchanged outside the blanks
    and one-line fills. Returns None when it cannot tell (then `align` decides, token by token)."""
    # Comment lines and blank lines after the code (a student's notes at the end) do not matter.
    template, full_copy = template[:_code_end(template)], copy
    copy = copy[:_code_end(copy)]
    segments, last = [], 0
    for begin, stop in blank_offsets:
        segments.append(template[last:begin])
        last = stop
    segments.append(template[last:])
    # Spaces right after a blank may change (comments realigned): a fill absorbs them.
    segments = [segments[0]] + [seg.lstrip(" \t") for seg in segments[1:]]
    if not copy.startswith(segments[0]) or not copy.endswith(segments[-1]):
        return None
    pos, spans = len(segments[0]), []
    for following in segments[1:]:
        # The tail must still hold every later segment: a fill stops at the earliest place that fits.
        search, found = pos, None
        while True:
            end = copy.find(following, search + 1) if following else len(copy)
            if end < 0 or end < pos + 1:
                return None
            fill = copy[pos:end]
            checked = _single_fill(fill)
            if checked is not None and not (pos > 0 and _is_word(copy[pos - 1]) and _is_word(fill[0])) and not (
                    following and _is_word(fill[-1]) and _is_word(following[0])):
                found = (end, checked)
                break
            if not following:
                return None
            search = end
        end, has_blank = found
        spans.append((pos, end, has_blank))
        pos = end + len(following)
    if pos != len(copy):
        return None
    copy = full_copy
    fills = []
    for index, (begin, stop, has_blank) in enumerate(spans):
        raw = copy[begin:stop]
        begin += len(raw) - len(raw.lstrip())
        text = raw.strip()
        line = copy.count("\n", 0, begin) + 1
        column = begin - (copy.rfind("\n", 0, begin) + 1)
        fills.append(Fill(index, text, line, column, line, begin, begin + len(text), not has_blank))
    return fills


def _code_end(text: str) -> int:
    """Where the code ends: after the last line that is neither blank nor a comment."""
    end = len(text)
    for line in reversed(text.splitlines(keepends=True)):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        end -= len(line)
    return end


def blank_offsets(template: str) -> list[tuple[int, int]]:
    return [(t.begin, t.stop) for t in tokens(template) if t.is_blank]


# -- what a file gives ready-made ----------------------------------------------------------------
def defined_name(node: ast.stmt) -> str | None:
    """The name a top-level `def` or `name = …` defines."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def has_blank(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == BLANK for n in ast.walk(node))


def defines(path, names) -> bool:
    """Does the file define every name, blank-free, at top level? (What a course's own notebook,
    course.yaml's `explorer.needs`, reads from an exercise.)"""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), str(path))
    except (OSError, SyntaxError, ValueError):
        return False
    found = {defined_name(n) for n in tree.body if defined_name(n) and not has_blank(n)}
    return set(names) <= found
