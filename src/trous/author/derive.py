"""One source per exercise: the solution, with a marker on each line whose value is a blank; the
student's file (with its `___`) and the list and order of the blanks are derived from it:

    moyenne = sum(notes) / n                          # ___
    sigma = math.sqrt(variance)                       # ___ ecart_type
    scores = [sum(a * b for a, b in zip(t, q)) for t in x]   # ___ : [___ for t in x]

`# ___` makes the value of the line's statement (an assignment's right-hand side, a `return`, an
expression) a blank, whose id is the name the line assigns unless one follows the marker. After a
colon, the student's version of that value, with its own `___` (several need their ids, separated
by commas: `# ___ a, b : (___, ___)`). A comment before the marker is kept for the student; a comment
alone on its line is never a marker. Like otter-grader's `# SOLUTION`, the fill is written once,
where it is used. Solutions without a marker are today's format, untouched.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from itertools import accumulate

from ..core.blanks import BLANK, TokenizeError, align, find_blanks

_MARKER = re.compile(r"#\s*___(?![\w])(?P<rest>[^#]*)$")
_REST = re.compile(r"^\s*(?P<ids>[a-z][a-z0-9_]*(?:\s*,\s*[a-z][a-z0-9_]*)*)?\s*(?::\s*(?P<template>.*?))?\s*$")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_VALUED = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)


class DeriveError(Exception):
    """A marker that cannot be read or applied: the solution's line and what to write."""

    def __init__(self, line: int, message: str):
        super().__init__(f"ligne {line} : {message}")
        self.line, self.message = line, message


@dataclass(frozen=True)
class Marked:
    id: str
    line: int  # the solution's line with the marker


@dataclass(frozen=True)
class Derived:
    student: str
    blanks: list[Marked]

    @property
    def ids(self) -> list[str]:
        return [b.id for b in self.blanks]


@dataclass(frozen=True)
class _Marker:
    line: int
    comment_begin: int  # offsets of the whole comment token in the text
    comment_end: int
    kept: str  # the comment the student keeps ("" for none)
    ids: list[str]
    template: str | None


def _offsets(text: str) -> list[int]:
    return list(accumulate(map(len, text.splitlines(keepends=True)), initial=0))


def markers(text: str) -> list[_Marker]:
    """The marker comments of a solution, in order (none: today's format)."""
    starts, found = _offsets(text), []
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in comments:
        match = _MARKER.search(tok.string)
        if not match or not tok.line[:tok.start[1]].strip():
            continue  # a comment alone on its line (a Markdown cell's text) is never a marker
        line = tok.start[0]
        rest = _REST.match(match.group("rest"))
        if rest is None:
            raise DeriveError(line, f"marqueur illisible « {match.group(0).strip()} » : écris « # ___ », « # ___ id » "
                                    "ou « # ___ id : valeur avec ___ »")
        ids = [i.strip() for i in rest.group("ids").split(",")] if rest.group("ids") else []
        kept = tok.string[:match.start()].rstrip()
        begin = starts[line - 1] + tok.start[1]
        found.append(_Marker(line, begin, begin + len(tok.string), kept if kept.strip("# ") else "",
                             ids, rest.group("template") or None))
    return found


def has_markers(text: str) -> bool:
    try:
        return bool(markers(text))
    except DeriveError:
        return True


def _char_offset(lines: list[str], starts: list[int], line: int, byte_col: int) -> int:
    return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def _valued(solution: str, tree: ast.AST) -> list[tuple[ast.AST, int, int]]:
    """Each statement that gives a value, with its value's offsets in the text."""
    lines, starts = solution.splitlines(keepends=True), _offsets(solution)
    return [(n, _char_offset(lines, starts, n.value.lineno, n.value.col_offset),
             _char_offset(lines, starts, n.value.end_lineno, n.value.end_col_offset))
            for n in ast.walk(tree) if isinstance(n, _VALUED) and getattr(n, "value", None) is not None]


def _names(node: ast.AST) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    stored = [sub for target in targets if target is not None for sub in ast.walk(target)
              if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Store)]
    return [sub.id if isinstance(sub, ast.Name) else sub.attr for sub in stored]


def derive(solution: str) -> Derived:
    """The student's file and its blanks, from a solution with markers (DeriveError otherwise)."""
    found = markers(solution)
    if not found:
        raise DeriveError(1, "aucun marqueur « # ___ » dans la solution")
    try:
        tree = ast.parse(solution)
    except SyntaxError as exc:
        raise DeriveError(exc.lineno or 1, f"la solution n'est pas du Python valide : {exc.msg}") from None
    line = next((n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == BLANK), None)
    if line is not None:
        raise DeriveError(line, "la solution contient un ___ : elle doit être complète (le ___ est déduit du marqueur)")
    starts, statements = _offsets(solution), _valued(solution, tree)
    edits: list[tuple[int, int, str]] = []  # (begin, end, replacement), in the solution's offsets
    pending: list[tuple[_Marker, list[str | None]]] = []
    for marker in found:
        here = [s for s in statements if s[0].end_lineno == marker.line]
        if not here:
            raise DeriveError(marker.line, "le marqueur « # ___ » doit finir une ligne qui donne une valeur "
                                           "(x = …, return …) : rien à mettre en trou ici")
        # the line's last statement (`a = 1; b = 2  # ___`)
        node, begin, end = max(here, key=lambda s: (s[0].col_offset, s[0].lineno))
        replacement = marker.template or BLANK
        count = _blank_count(replacement, marker.line)
        if marker.template is not None and align(replacement, solution[begin:end]) is None:
            raise DeriveError(marker.line, f"« {marker.template} » n'est pas la valeur de la ligne avec des ___ à la "
                                           f"place de morceaux : la valeur est « {_short(solution[begin:end])} »")
        ids: list[str | None] = list(marker.ids)
        if ids and len(ids) != count:
            raise DeriveError(marker.line, f"{len(ids)} id(s) pour {count} trou(s) : un id par ___, séparés par des virgules")
        if not ids:
            names = _names(node)
            ids = [names[0].lower()] if count == 1 and len(names) == 1 and _ID.match(names[0].lower()) else [None] * count
        pending.append((marker, ids))
        edits.append((begin, end, replacement))
        # A comment kept replaces the marker's; else the comment and the spaces before it go.
        before = solution[starts[marker.line - 1]:marker.comment_begin].rstrip()
        cut = marker.comment_begin if marker.kept else starts[marker.line - 1] + len(before)
        edits.append((cut, marker.comment_end, marker.kept))
    student = _apply(solution, edits)
    _check_ids(pending)
    marked = [Marked(blank_id, marker.line) for marker, ids in pending for blank_id in ids]
    if len(find_blanks(student)) != len(marked):  # a marker's template mixed with others: should not happen
        raise DeriveError(found[0].line, "les ___ déduits ne correspondent pas aux marqueurs")
    if align(student, solution) is None:
        raise DeriveError(found[0].line, "le fichier déduit ne s'aligne pas sur la solution")
    return Derived(student, marked)


def _blank_count(template: str, line: int) -> int:
    try:
        count = len(find_blanks(template))
    except TokenizeError as exc:
        raise DeriveError(line, f"valeur du marqueur illisible : {exc.message}") from None
    if count == 0:
        raise DeriveError(line, f"« {template} » n'a pas de ___ : après « : », écris la valeur que voit l'élève, avec ses ___")
    return count


def _check_ids(pending: list[tuple[_Marker, list[str | None]]]) -> None:
    seen: dict[str, int] = {}
    for marker, ids in pending:
        for blank_id in ids:
            if blank_id is None:
                raise DeriveError(marker.line, "quel id pour ce trou ? La ligne n'affecte pas une seule variable : "
                                               "écris-le après le marqueur (« # ___ mon_id »)")
            if blank_id in seen:
                raise DeriveError(marker.line, f"deux trous s'appelleraient « {blank_id} » (lignes {seen[blank_id]} et "
                                               f"{marker.line}) : donne à l'un un autre id (« # ___ {blank_id}_2 »)")
            seen[blank_id] = marker.line


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for begin, end, replacement in sorted(edits):
        out += [text[last:begin], replacement]
        last = end
    return "".join(out) + text[last:]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79] + "…"


# -- against the course ------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    path: str  # relative to the course
    line: int | None
    message: str


def id_problems(derived: Derived, declared: list[str], solution_path: str) -> list[Problem]:
    """Where course.yaml's blank ids (in order) differ from those the solution's markers give."""
    ids = derived.ids
    if ids == declared:
        return []
    missing = [i for i in ids if i not in declared]
    extra = [i for i in declared if i not in ids]
    if len(ids) != len(declared) or (set(ids) != set(declared) and not len(missing) == len(extra) == 1):
        text = (f"la solution marque {len(ids)} trou(s) ({', '.join(ids)}), course.yaml en déclare "
                f"{len(declared)} ({', '.join(declared)})")
        if missing:
            text += " ; à ajouter dans course.yaml, dans cet ordre : " + " ; ".join(
                f"« - id: {i} » avec son hint" for i in missing)
        if extra:
            text += f" ; inconnus de la solution : {', '.join(extra)}"
        return [Problem(solution_path, derived.blanks[0].line if derived.blanks else None, text)]
    problems, order = [], ", ".join(ids)
    for i, (blank, name) in enumerate(zip(derived.blanks, declared)):
        if blank.id == name:
            continue
        if name in ids:
            j = ids.index(name)
            fix = (f"c'est le nom du trou {j + 1} (ligne {derived.blanks[j].line}) ; les trous de course.yaml suivent "
                   f"l'ordre des marqueurs : écris-les dans cet ordre : {order}")
        else:
            fix = (f"renomme-le « {blank.id} » dans course.yaml, ou écris « # ___ {name} » à la ligne {blank.line} "
                   "de la solution")
        problems.append(Problem(solution_path, blank.line, f"le trou {i + 1} de la ligne {blank.line} s'appelle "
                                                           f"`{blank.id}` dans la solution, course.yaml l'appelle "
                                                           f"`{name}` : {fix}"))
    return problems


def first_line_differing(a: str, b: str) -> int:
    a_lines, b_lines = a.splitlines(), b.splitlines()
    differing = (n for n, (x, y) in enumerate(zip(a_lines, b_lines), 1) if x != y)
    return next(differing, min(len(a_lines), len(b_lines)) + 1)


def check(exercise, solution: str) -> tuple[Derived | None, list[Problem]]:
    """A marked exercise against its derived form: the markers readable, exercises/NN.py what they
    give, course.yaml's ids theirs. (None, []) for an exercise in today's format."""
    root = exercise.course.root
    solution_path = str(exercise.solution_path.relative_to(root))
    if not has_markers(solution):
        return None, []
    try:
        derived = derive(solution)
    except DeriveError as exc:
        return None, [Problem(solution_path, exc.line, exc.message)]
    problems = id_problems(derived, [b.id for b in exercise.blanks], solution_path)
    try:
        current = exercise.path.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != derived.student:
        where = first_line_differing(current, derived.student) if current is not None else None
        what = "n'existe pas" if current is None else f"n'est plus celui que donne {solution_path} (ligne {where})"
        problems.append(Problem(str(exercise.path.relative_to(root)), where,
                                f"{exercise.path.name} {what} : lance « trous exercices » pour l'écrire"))
    return derived, problems


def write_exercises(course, only: list[str] | None = None, dry: bool = False) -> tuple[list[str], bool]:
    """`trous exercices`: exercises/NN.py written from each marked solution (or, `dry`, only
    checked). The lines to print, and whether everything agrees."""
    out, ok, marked = [], True, 0
    for exercise in [e for e in course.exercises if not only or e.id in only]:
        try:
            solution = exercise.solution_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        derived, problems = check(exercise, solution)
        if derived is None and not problems:
            continue  # today's format: the exercise file is the author's own
        marked, rel = marked + 1, exercise.path.relative_to(course.root)
        stale = [p for p in problems if p.path == str(rel)]
        for problem in [p for p in problems if dry or p not in stale]:
            ok = False
            out.append(f"erreur : {problem.path}{f':{problem.line}' if problem.line else ''} : {problem.message}")
        if derived is None:
            continue
        if stale and not dry:
            exercise.path.parent.mkdir(parents=True, exist_ok=True)
            exercise.path.write_text(derived.student, encoding="utf-8")
            out.append(f"{rel} écrit ({len(derived.blanks)} trou(s) : {', '.join(derived.ids)})")
        elif not stale:
            out.append(f"{rel} à jour ({len(derived.blanks)} trou(s) : {', '.join(derived.ids)})")
    known = {e.solution_path.name for e in course.exercises}
    for path in sorted((course.root / "solutions").glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name not in known and not only and has_markers(text):
            ok = False
            try:
                ids = ", ".join(derive(text).ids)
            except DeriveError as exc:
                ids = f"(illisibles : ligne {exc.line} : {exc.message})"
            out.append(f"erreur : solutions/{path.name} a des marqueurs « # ___ » mais course.yaml n'a pas d'exercice "
                       f"« {path.stem} » : ajoute son entrée (id: {path.stem}, file: exercises/{path.stem}.py, title, "
                       f"source, et un hint pour chacun de ses trous, dans cet ordre : {ids}), ou renomme le fichier")
    if not marked:
        out.append("aucune solution avec des marqueurs « # ___ » : les fichiers d'exercices sont ceux de l'auteur "
                   "(rien à écrire)")
    elif ok:
        out.append("étape suivante : trous doctor")
    return out, ok


# -- today's format, converted -----------------------------------------------------------------
def mark(template: str, solution: str, ids: list[str]) -> str:
    """The solution of today's format (an exercise and its solution kept in step by hand) with the
    markers that derive it: derive(mark(t, s, ids)) gives back t and ids, or DeriveError says why not."""
    fills = align(template, solution)
    if fills is None:
        raise DeriveError(1, "la solution ne correspond pas à l'exercice en dehors des trous (lance trous doctor)")
    if len(fills) != len(ids):
        raise DeriveError(1, f"{len(fills)} trous dans l'exercice, {len(ids)} dans course.yaml")
    spans = _valued(solution, ast.parse(solution))
    groups: dict[int, tuple] = {}  # id(statement) → ((statement, begin, end), its fills)
    for fill in fills:
        around = [s for s in spans if s[1] <= fill.begin and fill.stop <= s[2]]
        if not around:
            raise DeriveError(fill.line, f"le trou {fill.index + 1} n'est pas dans la valeur d'une ligne (x = …, "
                                         "return …) : un marqueur « # ___ » ne peut pas le dire")
        span = min(around, key=lambda s: s[2] - s[1])  # the innermost statement
        groups.setdefault(id(span[0]), (span, []))[1].append(fill)
    additions: dict[int, str] = {}  # line → marker text
    for (node, begin, end), group in groups.values():
        group_ids = [ids[f.index] for f in group]
        names = _names(node)
        named = len(group) == 1 and len(names) == 1 and names[0].lower() == group_ids[0]
        if len(group) == 1 and (group[0].begin, group[0].stop) == (begin, end):
            text = "# ___" if named else f"# ___ {group_ids[0]}"
        else:
            shown = _apply(solution[begin:end], [(f.begin - begin, f.stop - begin, BLANK) for f in group])
            if "\n" in shown or "#" in shown:
                raise DeriveError(node.lineno, "la valeur de cette ligne tient sur plusieurs lignes : le marqueur "
                                               "ne peut pas la redire (garde l'exercice tel quel)")
            text = f"# ___ : {shown}" if named else f"# ___ {', '.join(group_ids)} : {shown}"
        if node.end_lineno in additions:
            raise DeriveError(node.end_lineno, "deux marqueurs sur une même ligne : garde l'exercice tel quel")
        additions[node.end_lineno] = text
    lines = solution.splitlines(keepends=True)
    for number, text in additions.items():
        newline = "\n" if lines[number - 1].endswith("\n") else ""
        lines[number - 1] = f"{lines[number - 1].rstrip()}  {text}{newline}"
    marked = "".join(lines)
    derived = derive(marked)
    if not _same_but_spacing(derived.student, template) or derived.ids != ids:
        where = first_line_differing(derived.student, template)
        raise DeriveError(where, "l'exercice déduit des marqueurs ne serait pas tout à fait le fichier d'aujourd'hui "
                                 f"(ligne {where}) : garde l'exercice tel quel")
    return marked


_BEFORE_COMMENT = re.compile(r"[ \t]+#")


def _same_but_spacing(a: str, b: str) -> bool:
    """Equal but for the spaces before a trailing comment (comments aligned by hand in the exercise)."""
    def plain(text):
        return [_BEFORE_COMMENT.sub(" #", line.rstrip()) for line in text.splitlines()]
    return plain(a) == plain(b)


def mark_course(course, only: list[str] | None = None) -> tuple[list[str], bool]:
    """`trous exercices --marquer`: each exercise of today's format converted, when that gives back
    its very file; the others are named and left as they are."""
    out, ok = [], True
    for exercise in [e for e in course.exercises if not only or e.id in only]:
        rel = exercise.solution_path.relative_to(course.root)
        try:
            solution = exercise.solution_path.read_text(encoding="utf-8")
            template = exercise.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            out.append(f"erreur : {exercise.id} : {exc}")
            ok = False
            continue
        if has_markers(solution):
            out.append(f"{rel} a déjà ses marqueurs")
            continue
        try:
            marked = mark(template, solution, [b.id for b in exercise.blanks])
        except (DeriveError, SyntaxError) as exc:
            line = getattr(exc, "line", None) or getattr(exc, "lineno", None)
            out.append(f"{rel}:{line} : pas converti, reste au format d'aujourd'hui : {getattr(exc, 'message', exc)}")
            continue
        exercise.solution_path.write_text(marked, encoding="utf-8")
        student = derive(marked).student
        respaced = student != template
        if respaced:
            exercise.path.write_text(student, encoding="utf-8")
        out.append(f"{rel} : {len(exercise.blanks)} marqueur(s) « # ___ » ajouté(s) ; {exercise.spec.file} se déduit "
                   "désormais de la solution (trous exercices)"
                   + (", réécrit : seuls les espaces avant ses commentaires changent" if respaced else ""))
    return out, ok
