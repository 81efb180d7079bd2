"""Plausible wrong fills for a blank, generated from its solution: the mistakes a grader must catch.

Each mutant changes one thing in the fill and belongs to a family (`FAMILIES`): *décalé de un*, *axe*,
*coïncide sur l'exemple* (right only for special values: a zero mean, a symmetric matrix), *autre*;
quality.py adds those that need run-time values. `facts` (what observe.py saw of each sub-expression
on every check) leaves out the rewrites that are the solution itself on every input the course has
(`.T` forgotten on an always symmetric matrix): both sides would accept them.
"""

from __future__ import annotations

import ast
import copy
import math
import re
from collections.abc import Iterator
from itertools import zip_longest
from typing import NamedTuple

from ..core.compare import Array, Opaque, decode
from .observe import _eligible, parse, swapped, unparsed

MAX_PER_BLANK = 60

HARD_CODED, OFF_BY_ONE, KIND, OTHER = "écrit en dur", "décalé de un", "autre nature", "autre"
EXAMPLE, PASTED, AXIS, COINCIDENT = "valeur de l'exemple", "sortie collée", "axe", "coïncide sur l'exemple"
FAMILIES = (HARD_CODED, EXAMPLE, PASTED, AXIS, OFF_BY_ONE, COINCIDENT, KIND, OTHER)
HARD_CODED_LABELS = ("valeur écrite en dur dans le trou", "résultat écrit en dur", "résultat arrondi écrit en dur")
AS_LIST, AS_INT = "liste au lieu d'un tableau NumPy", "entier au lieu d'un nombre à virgule"
REDUCTIONS = ("sum", "mean", "max", "min", "std", "var", "prod", "argmax", "argmin", "any", "all", "cumsum", "median")
_MODULES = ("np", "numpy", "torch", "math")


class Candidate(NamedTuple):
    label: str
    text: str
    family: str


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _plus(node: ast.AST, n: int) -> ast.AST:
    if _is_int(node):
        return ast.Constant(node.value + n)
    return ast.BinOp(copy.deepcopy(node), ast.Add() if n > 0 else ast.Sub(), ast.Constant(abs(n)))


def _int_constant(node) -> int | None:
    if _is_int(node):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _int_constant(node.operand) is not None:
        return -_int_constant(node.operand)
    return None


def _reduced(axis, ndim: int):
    """The axes a reduction with `axis` (None: all) reduces on an array of `ndim` dimensions."""
    if ndim == 0:
        return frozenset()
    if axis is None:
        return frozenset(range(ndim))
    return frozenset({axis % ndim}) if -ndim <= axis < ndim else None


class _Facts:
    """What observe.py saw of each sub-expression of the fill, on every check."""

    def __init__(self, tree: ast.AST, facts: dict | None):
        facts = facts or {}
        self.by_node = {id(node): facts[k] for k, node in enumerate(_eligible(tree)) if k in facts}

    def values(self, node: ast.AST, feature: str) -> set | None:
        """Every value of `feature` seen for `node`, or None when nothing is known of it."""
        seen = self.by_node.get(id(node)) or {}
        return set(seen[feature]) if feature in seen else None

    def always(self, node: ast.AST, feature: str) -> bool:
        return self.values(node, feature) == {True}

    def same_axes(self, node: ast.AST, a, b) -> bool:
        """Reducing `node` along `a` or `b` is the same on every array the checks gave it."""
        ndims = self.values(node, "dimensions")
        return bool(ndims) and all(_reduced(a, n) == _reduced(b, n) and _reduced(a, n) is not None for n in ndims)


def _axis_of(node: ast.Call) -> tuple[bool, object]:
    """(has an axis, its value: an int, None for « all », "?" for one not written out)."""
    for kw in node.keywords:
        if kw.arg == "axis":
            value = _int_constant(kw.value)
            if value is None and not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                return True, "?"
            return True, value
    return False, None


def _with_axis(node: ast.Call, axis) -> ast.Call:
    keywords = [k for k in node.keywords if k.arg != "axis"]
    if axis is not None:
        keywords.insert(0, ast.keyword("axis", ast.Constant(axis) if axis >= 0
                                       else ast.UnaryOp(ast.USub(), ast.Constant(-axis))))
    return ast.Call(node.func, node.args, keywords)


def _reduction(node: ast.AST) -> tuple[str, ast.AST] | None:
    """(name, reduced operand) when `node` is `x.sum(...)` or `np.sum(x, ...)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REDUCTIONS):
        return None
    receiver = node.func.value
    if isinstance(receiver, ast.Name) and receiver.id in _MODULES:
        return (node.func.attr, node.args[0]) if node.args else None
    return node.func.attr, receiver


def _axis_rewrites(node: ast.Call, facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    found = _reduction(node)
    if found is None:
        return
    name, operand = found
    has, axis = _axis_of(node)
    if has and axis == "?":
        return
    if has:
        for other in [a for a in (0, 1, -1, None) if a != axis and not facts.same_axes(operand, axis, a)]:
            yield "axe oublié" if other is None else f"axis={other}", AXIS, _with_axis(node, other)
        if any(kw.arg == "keepdims" for kw in node.keywords):
            yield "keepdims oublié", AXIS, ast.Call(node.func, node.args, [k for k in node.keywords
                                                                            if k.arg != "keepdims"])
    elif name not in ("any", "all") and not (len(node.args) > (1 if operand is not node.func.value else 0)):
        for other in [a for a in (0, -1) if not facts.same_axes(operand, None, a)]:
            yield f"axis={other} ajouté", AXIS, _with_axis(node, other)


def _number_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if _is_int(node):
        yield "entier +1", OFF_BY_ONE, ast.Constant(node.value + 1)
        yield "entier −1", OFF_BY_ONE, ast.Constant(node.value - 1)
    if isinstance(node.value, float):
        yield "constante ×2", OTHER, ast.Constant(node.value * 2)


def _subscript_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    index = node.slice
    if isinstance(index, ast.Slice):
        for part in ("lower", "upper"):
            bound = getattr(index, part)
            if bound is not None and _int_constant(bound) is None:
                for n, sign in ((1, "+1"), (-1, "−1")):
                    changed = copy.deepcopy(index)
                    setattr(changed, part, _plus(bound, n))
                    yield f"borne de tranche {sign}", OFF_BY_ONE, ast.Subscript(node.value, changed, node.ctx)
    elif isinstance(index, ast.Tuple):
        if len(index.elts) == 2 and not any(isinstance(e, ast.Slice) for e in index.elts) \
                and not facts.always(node.value, "symétrique"):
            crossed = ast.Tuple([index.elts[1], index.elts[0]], ast.Load())
            yield "indices échangés", COINCIDENT, ast.Subscript(node.value, crossed, node.ctx)
    else:
        for op, label in ((ast.Add(), "indice +1"), (ast.Sub(), "indice −1")):
            yield label, OFF_BY_ONE, ast.Subscript(node.value, ast.BinOp(index, op, ast.Constant(1)), node.ctx)
        inner = node.value
        if isinstance(inner, ast.Subscript) and not isinstance(inner.slice, (ast.Slice, ast.Tuple)) \
                and not facts.always(inner.value, "symétrique"):
            # X[a][b] → X[b][a]: the same for a symmetric matrix only.
            crossed = ast.Subscript(ast.Subscript(inner.value, index, ast.Load()), inner.slice, node.ctx)
            yield "indices échangés", COINCIDENT, crossed
        if isinstance(inner, ast.Attribute) and inner.attr == "shape" and _int_constant(index) is not None:
            axis = _int_constant(index)
            for other in (0, 1, -1):
                if other != axis and not facts.always(inner.value, "carrée") \
                        and not facts.same_axes(inner.value, axis, other):
                    at = ast.Constant(other) if other >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(1))
                    shape = ast.Subscript(inner, at, node.ctx)
                    yield f"shape[{other}] au lieu de shape[{axis}]", COINCIDENT, shape


def _comparison_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}.get(type(node.ops[0]))
    if swap is not None and len(node.ops) == 1:
        yield "comparaison stricte ou large", OFF_BY_ONE, ast.Compare(node.left, [swap()], node.comparators)


def _function_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if isinstance(node.func, ast.Name):
        name, args = node.func.id, node.args
        if name == "range" and len(args) == 1:
            for n, label in ((-1, "range −1"), (1, "range +1")):
                yield label, OFF_BY_ONE, ast.Call(node.func, [_plus(args[0], n)], [])
            yield "range qui commence à 1", OFF_BY_ONE, ast.Call(node.func, [ast.Constant(1), args[0]], [])
        if name == "range" and len(args) == 2:
            for position in (0, 1):
                for n, sign in ((1, "+1"), (-1, "−1")):
                    changed = list(args)
                    changed[position] = _plus(args[position], n)
                    yield f"borne de range {sign}", OFF_BY_ONE, ast.Call(node.func, changed, [])
        if name == "len" and len(args) == 1:
            yield "len −1", OFF_BY_ONE, ast.BinOp(node, ast.Sub(), ast.Constant(1))
            yield "len +1", OFF_BY_ONE, ast.BinOp(node, ast.Add(), ast.Constant(1))
            arg = args[0]
            if not facts.always(arg, "carrée"):
                if isinstance(arg, ast.Subscript) and _int_constant(arg.slice) == 0:
                    yield "lignes au lieu de colonnes", COINCIDENT, ast.Call(node.func, [arg.value], [])
                elif facts.values(arg, "dimensions") != {1}:
                    rows = ast.Subscript(arg, ast.Constant(0), ast.Load())
                    yield "colonnes au lieu de lignes", COINCIDENT, ast.Call(node.func, [rows], [])
        if name == "float" and len(args) == 1 and isinstance(args[0], ast.Constant) \
                and args[0].value in ("-inf", "inf"):
            yield "0 au lieu de l'infini", OTHER, ast.Constant(0)
            opposite = "inf" if args[0].value == "-inf" else "-inf"
            yield "infini de signe opposé", OTHER, ast.Call(node.func, [ast.Constant(opposite)], [])
            # The course's rule: a masked score is −∞, never a big finite number (exp(−1e9) is 0
            # only by underflow, and not at all once the other scores are as negative).
            yield "grand nombre au lieu de l'infini", OTHER, ast.Constant(-1e9 if args[0].value == "-inf" else 1e9)
        for a, b in (("sum", "max"), ("max", "min"), ("min", "max"), ("max", "sum")):
            if name == a:
                yield f"{a} → {b}", OTHER, ast.Call(ast.Name(b, ast.Load()), node.args, node.keywords)
        if name == "sqrt" and len(args) == 1:
            yield "racine oubliée", OTHER, copy.deepcopy(args[0])


def _method_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr == "sqrt" and len(node.args) == 1:
            yield "racine oubliée", OTHER, copy.deepcopy(node.args[0])
        for a, b in (("sum", "mean"), ("mean", "sum"), ("max", "min"), ("exp", "log"), ("tril", "triu"),
                     ("triu", "tril")):
            if attr == a:
                yield f"{a} → {b}", OTHER, ast.Call(ast.Attribute(node.func.value, b, ast.Load()), node.args,
                                                    node.keywords)
        yield from _axis_rewrites(node, facts)
        reduced = _reduction(node)
        if reduced is not None and reduced[0] in ("std", "var") and not facts.always(reduced[1], "moyenne nulle"):
            # The mean of the squares: the variance only when the mean is zero.
            squares = ast.BinOp(reduced[1], ast.Pow(), ast.Constant(2))
            keywords = [k for k in node.keywords if k.arg != "ddof"]
            if node.func.value is reduced[1]:
                mean = ast.Call(ast.Attribute(squares, "mean", ast.Load()), [], keywords)
            else:
                mean = ast.Call(ast.Attribute(node.func.value, "mean", ast.Load()), [squares, *node.args[1:]],
                                keywords)
            rms = ast.BinOp(mean, ast.Pow(), ast.Constant(0.5)) if reduced[0] == "std" else mean
            yield "moyenne non retirée", COINCIDENT, rms
        if attr == "transpose" and node.args:
            yield ".T au lieu de transpose(...)", AXIS, ast.Attribute(node.func.value, "T", ast.Load())
        if attr in ("tril", "triu") and any(kw.arg == "k" for kw in node.keywords):
            yield "diagonale décalée", OFF_BY_ONE, ast.Call(node.func, node.args,
                                                            [k for k in node.keywords if k.arg != "k"])
        elif attr in ("tril", "triu"):
            for k in (1, -1):
                yield f"diagonale k={k}", OFF_BY_ONE, ast.Call(node.func, node.args,
                                                               node.keywords + [ast.keyword("k", ast.Constant(k))])


def _attribute_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if node.attr == "T" and not facts.always(node.value, "symétrique"):
        yield "transposée oubliée", COINCIDENT, copy.deepcopy(node.value)
    if node.attr == "inf":
        yield "0 au lieu de l'infini", OTHER, ast.Constant(0)
        yield "grand nombre au lieu de l'infini", OTHER, ast.Constant(1e9)


# One operator for another, as a student mistakes them.
_OPERATORS = {ast.Div: ("× au lieu de ÷", ast.Mult), ast.Sub: ("+ au lieu de −", ast.Add),
              ast.Add: ("− au lieu de +", ast.Sub), ast.Mult: ("+ au lieu de ×", ast.Add),
              ast.MatMult: ("* au lieu de @", ast.Mult), ast.Pow: ("× au lieu de **", ast.Mult)}


def _operator_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    left, right, op = copy.deepcopy(node.left), node.right, type(node.op)
    if op is ast.Div:
        yield "normalisation oubliée", OTHER, left
    if op in _OPERATORS:
        yield _OPERATORS[op][0], OTHER, ast.BinOp(left, _OPERATORS[op][1](), right)
    if op in (ast.Sub, ast.MatMult):
        yield "opérandes inversés", OTHER, ast.BinOp(right, op(), left)
    reduced = _reduction(node.right)
    if op is ast.Sub and reduced is not None and reduced[0] == "mean" and ast.dump(reduced[1]) == ast.dump(node.left) \
            and not facts.always(node.left, "moyenne nulle"):
        yield "moyenne non retirée", COINCIDENT, copy.deepcopy(node.left)
    if op is ast.MatMult and not facts.always(node, "symétrique") and facts.values(node, "dimensions") != {1}:
        yield "résultat transposé", COINCIDENT, ast.Attribute(ast.BinOp(left, ast.MatMult(), right), "T", ast.Load())
    if op is ast.Pow and isinstance(node.right, ast.Constant) and isinstance(node.right.value, (int, float)):
        yield "exposant −1", OFF_BY_ONE, ast.BinOp(left, ast.Pow(), ast.Constant(node.right.value - 1))


def _sign_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if isinstance(node.op, ast.USub):
        yield "signe oublié", OTHER, copy.deepcopy(node.operand)


def _name_rewrites(node: ast.AST, names: list[str], facts: _Facts) -> Iterator[tuple[str, str, ast.AST]]:
    if isinstance(node.ctx, ast.Load) and node.id in names:
        for other in [n for n in names if n != node.id]:
            yield f"{node.id} → {other}", OTHER, ast.Name(other, ast.Load())


# The rewrites of each kind of node (a call's: as a function or as a method).
_REWRITES = {ast.Constant: (_number_rewrites,), ast.Subscript: (_subscript_rewrites,),
             ast.Compare: (_comparison_rewrites,), ast.Call: (_function_rewrites, _method_rewrites),
             ast.Attribute: (_attribute_rewrites,), ast.BinOp: (_operator_rewrites,), ast.UnaryOp: (_sign_rewrites,),
             ast.Name: (_name_rewrites,)}


def mutants(fill: str, facts: dict | None = None) -> list[Candidate]:
    """The fill's mutants, at most MAX_PER_BLANK, the families taken in turn (a long fill's many operators
    must not crowd out its axes and bounds). `facts`: {sub-expression's position: {feature: values}}."""
    tree = parse(fill)
    if tree is None:
        return []
    known = _Facts(tree, facts)
    # Names of values only: swapping a function or a module for a variable is no plausible mistake.
    callers = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    callers |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and id(n) not in callers})
    original = unparsed(tree)
    found: dict[str, Candidate] = {}
    text = unparsed(ast.Expression(ast.UnaryOp(ast.USub(), tree.body)))
    if text:
        found[text] = Candidate("signe inversé", text, OTHER)
    # An axis written -1 or 1 changes as an axis (the axe family), not as a number off by one.
    axes = {id(n) for kw in ast.walk(tree) if isinstance(kw, ast.keyword) and kw.arg in ("axis", "keepdims")
            for n in ast.walk(kw.value)}
    for node in ast.walk(tree):
        if id(node) in axes:
            continue
        rewritten = (r for rewrites in _REWRITES.get(type(node), ()) for r in rewrites(node, names, known))
        for label, kind, replacement in rewritten:
            text = unparsed(swapped(tree, node, ast.copy_location(replacement, node)))
            if text and text != original and text not in found:
                found[text] = Candidate(label, text, kind)
    return _take(list(found.values()), MAX_PER_BLANK)


def _take(items: list[Candidate], limit: int) -> list[Candidate]:
    """At most `limit` items, one of each family in turn, in the order they were found."""
    if len(items) <= limit:
        return items
    turns = zip_longest(*([c for c in items if c.family == f] for f in FAMILIES))
    keep = {id(c) for c in [c for turn in turns for c in turn if c is not None][:limit]}
    return [c for c in items if id(c) in keep]


_NON_LITERAL = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(-?)\b(nan|inf)\b""")


def literal(value, array: bool = False) -> str | None:
    """Python source for a JSON value seen at run time (the "hard-coded" answer); an `array` is written
    back as one (a list would be another mistake: `kind_mutants`)."""
    value = decode(value)
    if isinstance(value, Opaque):
        return None
    # repr's only names that are no literal, spelt out as courses write them (float("-inf")); a string's
    # text (« banana ») is left as it is
    text = _NON_LITERAL.sub(lambda m: m.group(1) or f'float("{m.group(2)}{m.group(3)}")', repr(value))
    if array:
        text = f"__import__('numpy').array({text})"
    return text if len(text) < 5000 else None


def is_array(kind: tuple[str, str] | None) -> bool:
    return kind is not None and tuple(kind) == ("numpy", "ndarray")


def is_float(kind: tuple[str, str] | None) -> bool:
    return kind is not None and (tuple(kind) == ("builtins", "float")
                                 or (kind[0] == "numpy" and kind[1].startswith("float")))


def kind_mutants(fill: str, kind: tuple[str, str] | None) -> list[Candidate]:
    """The same numbers as another kind of value than the course's array or float: the mistakes JSON
    alone does not see, and that often break a later line."""
    text = fill.strip()
    if is_array(kind):
        return [Candidate(AS_LIST, f"({text}).tolist()", KIND)]
    if is_float(kind):
        return [Candidate(AS_INT, f"int({text})", KIND)]
    return []


def rounded_fills(fill: str, kind: tuple[str, str] | None, value) -> list[Candidate]:
    """The fill rounded as the example prints it (2 decimals): right on an example checked to 2
    decimals, wrong everywhere else."""
    text = fill.strip()
    plain = decode(value, arrays=True)
    numbers = plain.values if isinstance(plain, Array) else plain
    if numbers is None or rounded(numbers) == numbers:
        return []  # already as the example shows it: no one rounds that
    label = "arrondi à 2 décimales"
    if is_float(kind) and isinstance(plain, float):
        return [Candidate(label, f"round({text}, 2)", PASTED)]
    if is_array(kind):
        return [Candidate(label, f"__import__('numpy').round({text}, 2)", PASTED)]
    if isinstance(plain, list) and plain and all(isinstance(x, float) for x in plain):
        return [Candidate(label, f"[round(x, 2) for x in {text}]", PASTED)]
    return []


def rounded(value, decimals: int = 2):
    value = decode(value)
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, list):
        return [rounded(v, decimals) for v in value]
    return value


# -- the example's printed output, pasted in ---------------------------------------------------------
_PRINTED = re.compile(r"\[|\]|(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])"
                      r"|-?\binf\b|\bnan\b|\bTrue\b|\bFalse\b")


def printed_values(output: str) -> list[list | str]:
    """Every number and bracketed list of numbers printed, Python's ([1.0, 0.5]) and NumPy's
    ([[1.   0.5 ]]) alike; numbers stay text (their digits tell how the program rounded them)."""
    found: list = []
    stack: list[list] = []
    for token in _PRINTED.findall(output[:200_000]):
        if token == "[":
            stack.append([])
        elif token == "]":
            if not stack:
                continue
            done = stack.pop()
            found.append(done)
            if stack:
                stack[-1].append(done)
        elif stack:
            stack[-1].append(token)
        else:
            found.append(token)
    return found


def as_number(token: str) -> float | bool | None:
    if token in ("True", "False"):
        return token == "True"
    try:
        return float(token)
    except ValueError:
        return None


def _decimals(printed) -> int:
    if isinstance(printed, list):
        return max((_decimals(p) for p in printed), default=0)
    if printed in ("True", "False") or "inf" in printed or "nan" in printed:
        return 0
    mantissa, _, exponent = printed.lower().partition("e")
    return max(0, len(mantissa.partition(".")[2]) - int(exponent or 0))


def _matches(printed, value, tolerance: float) -> bool:
    if isinstance(printed, list) or isinstance(value, list):
        if not (isinstance(printed, list) and isinstance(value, list)) or len(printed) != len(value):
            return False
        return all(_matches(p, v, tolerance) for p, v in zip(printed, value))
    number = as_number(printed)
    if isinstance(value, bool) or isinstance(number, bool):
        return number is value
    if not isinstance(value, (int, float)) or number is None:
        return False
    if math.isinf(value) or math.isinf(number):
        return value == number
    return abs(number - value) <= tolerance + 1e-12 * abs(value)


def _source(printed) -> str:
    if isinstance(printed, list):
        return "[" + ", ".join(_source(p) for p in printed) + "]"
    if "inf" in printed or "nan" in printed:
        return f'float("{printed}")'
    return printed + "0" if printed.endswith(".") else printed


def pasted(output: str, value, array: bool = False) -> list[str]:
    """The statement's value as the program printed it (rounded as printed), written back as Python:
    what a student who pastes the example's output writes."""
    plain = decode(value, arrays=True)
    if isinstance(plain, Array):
        plain = plain.values
    if plain is None or isinstance(plain, (str, dict)):
        return []
    texts = []
    for printed in printed_values(output):
        tolerance = 0.5 * 10 ** -_decimals(printed)
        if _matches(printed, plain, tolerance):
            text = _source(printed)
            if array and isinstance(printed, list):
                text = f"__import__('numpy').array({text})"
            if text not in texts and len(text) < 5000:
                texts.append(text)
    return texts
