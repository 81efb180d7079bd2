"""Plausible wrong fills for a blank, generated from its solution: the mistakes a grader must catch.

Each mutant changes one thing in the solution's fill: an integer or an index off by one, a
division dropped (a missing normalisation), a sign flipped, `-inf` replaced by 0 or by a big finite
number, an operator or a reduction swapped, an axis changed, one name used in place of another. The
"hard-coded literal" mutants and the mutants that change the kind of a value (a list where the course
builds a NumPy array, an int where it builds a float) need what the fill gives at run time: quality.py
builds them with `literal` and `kind_mutants`.

Each mutant belongs to a family (`family`): the doctor fails a course whose public checks let a
hard-coded or an off-by-one mutant through, and only reports the others.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

MAX_PER_BLANK = 40

HARD_CODED, OFF_BY_ONE, KIND, OTHER = "écrit en dur", "décalé de un", "autre nature", "autre"
HARD_CODED_LABELS = ("valeur écrite en dur dans le trou", "résultat écrit en dur", "résultat arrondi écrit en dur")
AS_LIST, AS_INT = "liste au lieu d'un tableau NumPy", "entier au lieu d'un nombre à virgule"
_OFF_BY_ONE_LABELS = ("entier +1", "entier −1", "indice +1", "indice −1", "range −1", "range +1", "len −1",
                      "exposant −1", "diagonale k=1", "diagonale k=-1", "diagonale décalée")


def family(label: str) -> str:
    """The family of a mutant, from its label."""
    if label in HARD_CODED_LABELS:
        return HARD_CODED
    if label in _OFF_BY_ONE_LABELS:
        return OFF_BY_ONE
    if label in (AS_LIST, AS_INT):
        return KIND
    return OTHER


def _unparse(node: ast.AST) -> str | None:
    try:
        text = ast.unparse(node)
        ast.parse(text, mode="eval")
        return text
    except (SyntaxError, ValueError, RecursionError):
        return None


def _replacements(node: ast.AST, names: list[str]) -> Iterator[tuple[str, ast.AST]]:
    """(what changed, replacement node) for one node of the fill."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        yield "entier +1", ast.Constant(node.value + 1)
        yield "entier −1", ast.Constant(node.value - 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        yield "constante ×2", ast.Constant(node.value * 2)
    if isinstance(node, ast.Subscript):
        index = node.slice
        if not isinstance(index, (ast.Slice, ast.Tuple)):
            for op, label in ((ast.Add(), "indice +1"), (ast.Sub(), "indice −1")):
                yield label, ast.Subscript(node.value, ast.BinOp(copy.deepcopy(index), op, ast.Constant(1)), node.ctx)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name, args = node.func.id, node.args
        if name == "range" and len(args) == 1:
            for op, label in ((ast.Sub(), "range −1"), (ast.Add(), "range +1")):
                yield label, ast.Call(node.func, [ast.BinOp(copy.deepcopy(args[0]), op, ast.Constant(1))], [])
        if name == "len" and len(args) == 1:
            yield "len −1", ast.BinOp(copy.deepcopy(node), ast.Sub(), ast.Constant(1))
        if name == "float" and len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value in ("-inf", "inf"):
            yield "0 au lieu de l'infini", ast.Constant(0)
            yield "infini de signe opposé", ast.Call(node.func, [ast.Constant("inf" if args[0].value == "-inf" else "-inf")], [])
            # The course's rule: a masked score is −∞, never a big finite number (exp(−1e9) is 0
            # only by underflow, and not at all once the other scores are as negative).
            yield "grand nombre au lieu de l'infini", ast.Constant(-1e9 if args[0].value == "-inf" else 1e9)
        for a, b in (("sum", "max"), ("max", "min"), ("min", "max"), ("max", "sum")):
            if name == a:
                yield f"{a} → {b}", ast.Call(ast.Name(b, ast.Load()), node.args, node.keywords)
        if name in ("sqrt",) and len(args) == 1:
            yield "racine oubliée", copy.deepcopy(args[0])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr == "sqrt" and len(node.args) == 1:
            yield "racine oubliée", copy.deepcopy(node.args[0])
        for a, b in (("sum", "mean"), ("mean", "sum"), ("max", "min"), ("exp", "log"), ("tril", "triu"), ("triu", "tril")):
            if attr == a:
                yield f"{a} → {b}", ast.Call(ast.Attribute(node.func.value, b, ast.Load()), node.args, node.keywords)
        for i, kw in enumerate(node.keywords):
            if kw.arg == "axis" and isinstance(kw.value, (ast.Constant, ast.UnaryOp)):
                # The other axis of a matrix: axis=-1 and axis=1 are the same there, so 0 (or 1).
                other = 1 if isinstance(kw.value, ast.Constant) and kw.value.value == 0 else 0
                keywords = list(node.keywords)
                keywords[i] = ast.keyword("axis", ast.Constant(other))
                yield f"axis={other}", ast.Call(node.func, node.args, keywords)
            if kw.arg == "keepdims":
                yield "keepdims oublié", ast.Call(node.func, node.args, [k for k in node.keywords if k.arg != "keepdims"])
            if kw.arg == "k" and attr in ("tril", "triu"):
                yield "diagonale décalée", ast.Call(node.func, node.args, [k for k in node.keywords if k.arg != "k"])
        if attr in ("tril", "triu") and not any(kw.arg == "k" for kw in node.keywords):
            for k in (1, -1):
                yield f"diagonale k={k}", ast.Call(node.func, node.args, node.keywords + [ast.keyword("k", ast.Constant(k))])
    if isinstance(node, ast.Attribute) and node.attr == "T":
        yield "transposée oubliée", copy.deepcopy(node.value)
    if isinstance(node, ast.Attribute) and node.attr == "inf":
        yield "0 au lieu de l'infini", ast.Constant(0)
        yield "grand nombre au lieu de l'infini", ast.Constant(1e9)
    if isinstance(node, ast.BinOp):
        left, right = copy.deepcopy(node.left), copy.deepcopy(node.right)
        if isinstance(node.op, ast.Div):
            yield "normalisation oubliée", left
            yield "× au lieu de ÷", ast.BinOp(left, ast.Mult(), right)
        if isinstance(node.op, ast.Sub):
            yield "+ au lieu de −", ast.BinOp(left, ast.Add(), right)
            yield "opérandes inversés", ast.BinOp(right, ast.Sub(), left)
        if isinstance(node.op, ast.Add):
            yield "− au lieu de +", ast.BinOp(left, ast.Sub(), right)
        if isinstance(node.op, ast.Mult):
            yield "+ au lieu de ×", ast.BinOp(left, ast.Add(), right)
        if isinstance(node.op, ast.MatMult):
            yield "* au lieu de @", ast.BinOp(left, ast.Mult(), right)
            yield "opérandes inversés", ast.BinOp(right, ast.MatMult(), left)
        if isinstance(node.op, ast.Pow):
            yield "× au lieu de **", ast.BinOp(left, ast.Mult(), right)
            if isinstance(node.right, ast.Constant) and isinstance(node.right.value, (int, float)):
                yield "exposant −1", ast.BinOp(left, ast.Pow(), ast.Constant(node.right.value - 1))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield "signe oublié", copy.deepcopy(node.operand)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        for other in names:
            if other != node.id:
                yield f"{node.id} → {other}", ast.Name(other, ast.Load())


def _paths(tree: ast.AST):
    """Every (parent, field, index) slot holding a node, so one node can be swapped at a time."""
    for parent in ast.walk(tree):
        for field_name, value in ast.iter_fields(parent):
            if isinstance(value, ast.AST):
                yield parent, field_name, None, value
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        yield parent, field_name, i, item


def mutants(fill: str) -> list[tuple[str, str]]:
    """[(description, mutant fill text)] for a solution fill, deduplicated, at most MAX_PER_BLANK."""
    try:
        tree = ast.parse(fill.strip(), mode="eval")
    except SyntaxError:
        return []
    # Names of values only: swapping a function or a module for a variable is no plausible mistake.
    callers = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    callers |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and id(n) not in callers})
    original = _unparse(tree)
    found: dict[str, str] = {}
    whole = ast.UnaryOp(ast.USub(), copy.deepcopy(tree.body))
    text = _unparse(ast.Expression(whole))
    if text:
        found[text] = "signe inversé"
    for index, (_, _, _, node) in enumerate(list(_paths(tree))):
        for label, replacement in _replacements(node, names):
            # Swap the same slot in a fresh copy: walking a copy visits its nodes in the same order.
            mutated = copy.deepcopy(tree)
            m_parent, m_field, m_position, _ = list(_paths(mutated))[index]
            ast.copy_location(replacement, node)
            if m_position is None:
                setattr(m_parent, m_field, replacement)
            else:
                getattr(m_parent, m_field)[m_position] = replacement
            text = _unparse(ast.fix_missing_locations(mutated))
            if text and text != original and text not in found:
                found[text] = label
    items = [(label, text) for text, label in found.items()]
    return items[:MAX_PER_BLANK]


def literal(value, array: bool = False) -> str | None:
    """Python source for a JSON value seen at run time (the "hard-coded" answer); `array`: the value
    was a NumPy array, written back as one (a list would be another mistake: see `kind_mutants`)."""
    from ..course.compare import Opaque, decode  # noqa: PLC0415

    value = decode(value)
    if isinstance(value, Opaque):
        return None
    text = repr(value)
    if "nan" in text or "inf" in text:
        text = text.replace("nan", 'float("nan")').replace("-inf", 'float("-inf")').replace("inf", 'float("inf")')
    if array:
        text = f"__import__('numpy').array({text})"
    return text if len(text) < 5000 else None


def is_array(kind: tuple[str, str] | None) -> bool:
    return kind is not None and tuple(kind) == ("numpy", "ndarray")


def is_float(kind: tuple[str, str] | None) -> bool:
    return kind is not None and (tuple(kind) == ("builtins", "float")
                                 or (kind[0] == "numpy" and kind[1].startswith("float")))


def kind_mutants(fill: str, kind: tuple[str, str] | None) -> list[tuple[str, str]]:
    """The fill giving the same numbers as another kind of value, where the course builds an array or a
    float: the mistakes that JSON alone does not see, and that often break a later line."""
    text = fill.strip()
    if is_array(kind):
        return [(AS_LIST, f"({text}).tolist()")]
    if is_float(kind):
        return [(AS_INT, f"int({text})")]
    return []


def rounded(value, decimals: int = 2):
    from ..course.compare import decode  # noqa: PLC0415

    value = decode(value)
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, list):
        return [rounded(v, decimals) for v in value]
    return value
