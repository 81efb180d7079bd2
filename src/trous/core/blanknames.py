"""What a blank's line assigns, against the id course.yaml gives it. The ids follow the order of the
`___`, and an author who swaps two gives each blank the other's points and hints. When course.yaml
calls a blank by the name another blank assigns (`total = ___`, `sigma = ___`), that contradiction
is named with its line and its fix; an id that is merely another word (`somme_exp`) is fine.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .blanks import BLANK, TokenizeError, find_blanks


@dataclass(frozen=True)
class BlankTarget:
    """Blank `index` (0-based) of a template, on `line`, in a statement assigning `names` (may be empty);
    `part`: the blank is what a call of that value is given (`poids = normalise(___)`)."""

    index: int
    line: int
    names: tuple[str, ...]
    part: bool = False


@dataclass(frozen=True)
class Contradiction:
    index: int  # the blank course.yaml misnames (0-based)
    line: int
    message: str  # French, with the fix


def _target_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):  # self.mu = ___ assigns « mu »
        return [node.attr]
    if isinstance(node, ast.Starred):
        return _target_names(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for element in node.elts for n in _target_names(element)]
    return []  # d[k] = ___ assigns no name


def _assignments(tree: ast.AST):
    """(names assigned, the expression whose value is assigned), outermost first."""
    for node in ast.walk(tree):  # breadth first: an inner assignment (a := ___) comes later and wins
        if isinstance(node, ast.Assign):
            yield [n for t in node.targets for n in _target_names(t)], node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            yield _target_names(node.target), node.value
        elif isinstance(node, ast.NamedExpr):
            yield _target_names(node.target), node.value


def targets(template: str) -> list[BlankTarget]:
    """Each blank of `template` and the names its statement assigns; [] when the file cannot be read
    as Python (other checks say why)."""
    try:
        blanks = find_blanks(template)
        tree = ast.parse(template)
    except (TokenizeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == BLANK),
                   key=lambda n: (n.lineno, n.col_offset))
    if len(nodes) != len(blanks):
        return []
    names: dict[int, tuple[list[str], bool]] = {}
    for assigned, value in _assignments(tree):
        given = {id(n) for call in ast.walk(value) if isinstance(call, ast.Call)
                 for arg in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(arg)}
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id == BLANK:
                names[id(node)] = assigned, id(node) in given
    return [BlankTarget(b.index, b.line, tuple(dict.fromkeys(names.get(id(n), ([], False))[0])),
                        names.get(id(n), ([], False))[1]) for b, n in zip(blanks, nodes)]


def _lower(names) -> set[str]:
    return {n.lower() for n in names}


def _owners(found: list[BlankTarget], index: int, blank_id: str) -> list[BlankTarget]:
    """The other blanks that assign the variable `blank_id`, when blank `index` does not. A blank given
    to a call (`poids = normalise(___)`) may well be named after what the student writes there
    (`scores`, which another blank assigns): no contradiction is read from its id."""
    if blank_id in _lower(found[index].names) or found[index].part:
        return []
    return [t for t in found if t.index != index and blank_id in _lower(t.names)]


def _order(found: list[BlankTarget], ids: list[str]) -> list[str] | None:
    """The ids in an order that contradicts nothing, when there is one that keeps the rest in place."""
    order: list[str | None] = [None] * len(ids)
    rest = []
    for blank_id in ids:
        places = [t.index for t in found if blank_id in _lower(t.names) and order[t.index] is None]
        if places:
            order[places[0]] = blank_id
        else:
            rest.append(blank_id)
    for i, value in enumerate(order):
        if value is None:
            order[i] = rest.pop(0)
    if any(_owners(found, i, blank_id) for i, blank_id in enumerate(order)):
        return None
    return order  # type: ignore[return-value]


def contradictions(template: str, ids: list[str]) -> list[Contradiction]:
    """Where the ids of course.yaml (in their order) contradict what the blanks of `template` assign."""
    found = targets(template)
    if not found or len(found) != len(ids):
        return []  # the count itself is reported elsewhere
    result = []
    for i, blank_id in enumerate(ids):
        owners = _owners(found, i, blank_id)
        if not owners:
            continue
        here = found[i]
        what = (f"affecte `{', '.join(here.names)}`" if here.names else "n'affecte aucune variable")
        other = owners[0]
        result.append(Contradiction(i, here.line, (
            f"le trou {i + 1} de la ligne {here.line} {what}, course.yaml l'appelle `{blank_id}` — "
            f"le nom qu'affecte le trou {other.index + 1} (ligne {other.line})")))
    if not result:
        return []
    order = _order(found, ids)
    fix = (f"les trous de course.yaml suivent l'ordre des ___ du fichier : écris-les dans cet ordre : "
           f"{', '.join(order)}" if order and order != ids else
           "les trous de course.yaml suivent l'ordre des ___ du fichier : remets-les dans cet ordre, ou "
           "renomme celui qui porte le nom d'une autre variable")
    return [Contradiction(c.index, c.line, f"{c.message} ; {fix}") for c in result]
