"""A copy of an exercise (a student's file, or a solution) read against its template: which blanks
are filled, with what, and whether the rest of the code is still the template's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import blanks as blanks_mod
from .course import Exercise
from .source import Source, SourceError, decode, read

MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class SyntaxProblem:
    line: int
    column: int
    message: str
    text: str


@dataclass(frozen=True)
class Analysis:
    exercise: Exercise
    path: str  # as shown to the student
    source: Source | None = None
    error: str | None = None  # unreadable file (missing, binary, not UTF-8…)
    error_line: int | None = None
    syntax: SyntaxProblem | None = None
    fills: list[blanks_mod.Fill] | None = None  # None when code outside the blanks changed
    unfilled: dict[int, tuple[int, int]] = field(default_factory=dict)  # blank index → (line, column)
    template_has_blanks: bool = True

    @property
    def readable(self) -> bool:
        return self.source is not None

    @property
    def aligned(self) -> bool:
        return self.fills is not None

    def is_filled(self, index: int) -> bool:
        return index not in self.unfilled

    def line_of(self, index: int) -> int | None:
        if index in self.unfilled:
            return self.unfilled[index][0]
        if self.fills is not None and index < len(self.fills):
            return self.fills[index].line
        return None

    def fill_text(self, index: int) -> str | None:
        if self.fills is None or index >= len(self.fills):
            return None
        return self.fills[index].text


@lru_cache(maxsize=256)
def _template(path: str, mtime: float) -> tuple[str, list, list]:
    """The template's text, tokens and blank offsets (`mtime`: read again when the file changes)."""
    text = read(path).text
    toks = blanks_mod.tokens(text)
    return text, toks, [(t.begin, t.stop) for t in toks if t.is_blank]


def analyse_bytes(exercise: Exercise, data: bytes | None, shown: str) -> Analysis:
    if data is None:
        return Analysis(exercise, shown, error="fichier introuvable : il manque dans la copie")
    if len(data) > MAX_BYTES:
        return Analysis(exercise, shown, error=f"fichier trop gros ({len(data) // 1024} Kio) pour un exercice")
    try:
        source = decode(data, shown)
    except SourceError as exc:
        return Analysis(exercise, shown, error=exc.message, error_line=exc.line)
    return analyse_source(exercise, source)


def analyse_path(exercise: Exercise, path: str | Path) -> Analysis:
    shown = _display(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        data = None
    except (IsADirectoryError, PermissionError, OSError) as exc:
        return Analysis(exercise, shown, error=f"lecture impossible ({getattr(exc, 'strerror', exc)})")
    return analyse_bytes(exercise, data, shown)


def _display(path: str | Path) -> str:
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def analyse_source(exercise: Exercise, source: Source) -> Analysis:
    path = exercise.template_path
    template, template_tokens, offsets = _template(str(path), path.stat().st_mtime)
    n_blanks = len(offsets)
    # Most copies only changed the blanks: matching the text avoids tokenizing the whole file.
    quick = blanks_mod.align_text(template, offsets, source.text) if n_blanks else None
    if quick is not None:
        unfilled = {f.index: (f.line, f.column) for f in quick if not f.filled}
        return Analysis(exercise, source.path, source=source, fills=quick, unfilled=unfilled)
    syntax = None
    try:
        copy_tokens = blanks_mod.tokens(source.text)
    except blanks_mod.TokenizeError as exc:
        copy_tokens = None
        syntax = syntax_problem(source.text, source.path) or SyntaxProblem(
            exc.line, exc.column, exc.message, source.line(exc.line))
    fills = None
    if copy_tokens is not None and n_blanks:
        fills = blanks_mod.align_tokens(template_tokens, copy_tokens, source.text)
    if fills is None and syntax is None:
        # Aligned copies are compiled blank by blank when they run; the others are checked here.
        syntax = syntax_problem(source.text, source.path)
    unfilled: dict[int, tuple[int, int]] = {}
    if fills is not None:
        unfilled = {f.index: (f.line, f.column) for f in fills if not f.filled}
    elif copy_tokens is not None and n_blanks:
        unfilled = blanks_mod.leftover_blanks(template, source.text)
        # A `___` left somewhere we could not map still means "not finished": given to the first
        # unmapped blanks, in order.
        mapped = set(unfilled.values())
        strays = [t.start for t in copy_tokens if t.is_blank and t.start not in mapped]
        unfilled.update(zip([i for i in range(n_blanks) if i not in unfilled], strays))
    return Analysis(exercise, source.path, source=source, syntax=syntax, fills=fills, unfilled=unfilled,
                    template_has_blanks=n_blanks > 0)


def syntax_problem(text: str, filename: str) -> SyntaxProblem | None:
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno or 1
        lines = text.split("\n")
        shown = lines[line - 1] if 0 < line <= len(lines) else (exc.text or "")
        return SyntaxProblem(line, exc.offset or 0, exc.msg or "syntaxe invalide", shown.rstrip())
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return SyntaxProblem(1, 0, f"fichier impossible à compiler ({type(exc).__name__})", "")
    return None
