"""The data flow between the blanks of an exercise, read from the exercise file itself (calling
`normalise` depends on the blank inside it): the self-check uses it to tell a wrong blank from a right
one that merely uses a wrong one, with nothing hand-written.

Static and coarse: a name depends on everything ever assigned to it (both branches, every turn of a
loop), a method call may change its object (`x.append(…)`), a function's result depends on every blank
in its body. The `if __name__ == "__main__":` block never runs in a check: it is left out.
"""

from __future__ import annotations

import ast
import bisect
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .blanks import BLANK, TokenizeError, blank_offsets

EMPTY: frozenset = frozenset()
MAIN = "__main__"  # the scope of blanks under `if __name__ == "__main__":`


@dataclass(frozen=True)
class BlankFlow:
    index: int
    line: int  # where the blank starts
    scope: str  # "" at the top of the file, else the function holding it ("normalise", "Tete.calcul")
    statement: tuple[int, int]  # first and last line of the statement holding the blank
    reads: frozenset[str]  # the names that statement reads
    inputs: frozenset[int]  # blanks whose results reach that statement (itself excluded)
    assigns: frozenset[str]  # top-level names the statement assigns (a blank in a def: the function)
    changes: frozenset[str]  # top-level names whose value it changes in place (append, x[i] = …)


@dataclass(eq=False)
class _Function:
    name: str
    blanks: frozenset[int]
    free: frozenset[str]  # the names its body reads from outside
    outer: "_Scope"
    node: ast.AST
    scope: str = ""  # the scope its body is (« Tete.calcul »)


class _Scope:
    def __init__(self, name: str, outer: "_Scope | None" = None, function: _Function | None = None):
        self.name, self.outer, self.function = name, outer, function
        self.vars: dict[str, frozenset] = {}

    def lookup(self, name: str) -> frozenset | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.outer
        return None

    def merge(self, *branches: dict[str, frozenset]) -> None:
        merged: dict[str, frozenset] = {}
        for branch in branches:
            for name, atoms in branch.items():
                merged[name] = merged.get(name, EMPTY) | atoms
        self.vars = merged


@dataclass(frozen=True)
class _Statement:
    first: int
    last: int
    scope: str
    reach: frozenset[int]  # blanks whose results can influence it, its own blanks included


# -- reading names ---------------------------------------------------------------------------------
class _Loads(ast.NodeVisitor):
    """Names an expression (or statement) reads, without those bound inside its own comprehensions
    and lambdas; nested defs and classes are their own scopes (see _Function.free)."""

    def __init__(self):
        self.names: set[str] = set()
        self.bound: list[set[str]] = []

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id != BLANK and not any(node.id in b for b in self.bound):
            self.names.add(node.id)

    def _comprehension(self, node) -> None:
        bound: set[str] = set()
        self.bound.append(bound)
        for generator in node.generators:
            # The first iterable is evaluated outside; the later ones see the earlier targets.
            self.visit(generator.iter)
            bound.update(_target_names(generator.target))
            for condition in generator.ifs:
                self.visit(condition)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self.visit(getattr(node, part))
        self.bound.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in _header(node):
            self.visit(default)
        self.bound.append(_parameters(node.args))
        self.visit(node.body)
        self.bound.pop()

    def visit_FunctionDef(self, node) -> None:
        for expr in _header(node):
            self.visit(expr)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef


def _header(node) -> list[ast.expr]:
    """What a def, class or lambda evaluates where it stands: decorators, defaults, bases."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    return [*getattr(node, "decorator_list", ()), *defaults]


def _loads(*nodes: ast.AST | None) -> frozenset[str]:
    visitor = _Loads()
    for node in nodes:
        if node is not None:
            visitor.visit(node)
    return frozenset(visitor.names)


def _target_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*map(_target_names, target.elts))
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _root_name(node: ast.AST) -> str | None:
    """`x` for x, x[i], x.a, x.a[i].b: the variable whose value an assignment or a method changes."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _changed_roots(target: ast.AST) -> set[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*map(_changed_roots, target.elts))
    root = _root_name(target) if isinstance(target, (ast.Attribute, ast.Subscript)) else None
    return {root} if root else set()


def _changed_by_call(node: ast.Expr) -> set[str]:
    """{"x"} for `x.append(…)` (or any method call) on a line of its own: x may change."""
    call = node.value
    root = _root_name(call.func.value) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
    return {root} if root else set()


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}


def _parameters(args: ast.arguments) -> set[str]:
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return names


class _Bound(ast.NodeVisitor):
    """Names a body binds locally (so they are not read from outside), and those whose value it
    changes in place (`x.append(…)`, `x[i] = …`)."""

    def __init__(self):
        self.names: set[str] = set()
        self.declared: set[str] = set()  # global / nonlocal
        self.changed: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.add(node.id)

    def visit_FunctionDef(self, node) -> None:
        self.names.add(node.name)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def _skip(self, node) -> None:
        pass  # lambdas and comprehensions bind in scopes of their own

    visit_Lambda = visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _skip

    def visit_Import(self, node) -> None:
        self.names |= _imported(node)

    visit_ImportFrom = visit_Import

    def visit_Global(self, node) -> None:
        self.declared.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Assign(self, node) -> None:
        for target in getattr(node, "targets", None) or [node.target]:
            self.changed |= _changed_roots(target)
        self.generic_visit(node)

    visit_AugAssign = visit_AnnAssign = visit_Delete = visit_Assign

    def visit_Expr(self, node) -> None:
        self.changed |= _changed_by_call(node)
        self.generic_visit(node)


def _free_names(node) -> frozenset[str]:
    """Names a def's body (or a class body) reads from the scopes around it."""
    bound = _Bound()
    body = node.body
    for stmt in body:
        bound.visit(stmt)
    local = bound.names - bound.declared
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        local |= _parameters(node.args)
    reads: set[str] = set()
    for stmt in body:
        reads |= _loads(stmt)
        for inner in ast.walk(stmt):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                reads |= _free_names(inner)
    return frozenset(reads - local)


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    parts = [test.left, *test.comparators]
    return (any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts)
            and any(isinstance(p, ast.Constant) and p.value == "__main__" for p in parts))


# -- positions -------------------------------------------------------------------------------------
class _Positions:
    """Character offsets of AST nodes (whose columns count UTF-8 bytes)."""

    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.starts = [0, *itertools.accumulate(len(line) + 1 for line in self.lines)]

    def offset(self, line: int, byte_col: int) -> int:
        if line < 1:
            return 0
        if line > len(self.lines):
            return self.starts[-1]
        text = self.lines[line - 1]
        column = len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return self.starts[line - 1] + column

    def span(self, node: ast.AST) -> tuple[int, int]:
        begin = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
        return begin, end

    def line_of(self, offset: int) -> int:
        return max(1, bisect.bisect_right(self.starts, offset))


# -- the analysis ----------------------------------------------------------------------------------
class _Analysis:
    def __init__(self, tree: ast.Module, text: str, spans: Sequence[tuple[int, int]],
                 overridden: frozenset[str] = EMPTY):
        self.overridden = overridden  # top-level variables whose assignment a variant replaces
        self.positions = _Positions(text)
        self.spans = list(spans)
        self.module = _Scope("")
        self.statements: list[_Statement] = []
        self.found: dict[int, dict] = {}  # blank → what its statement says
        self.calls: list[tuple[frozenset, frozenset[int], _Scope]] = []  # (callees, argument blanks, caller)
        self.pending: list[tuple[_Function, _Scope]] = []
        self.tree = tree

    def blanks_in(self, node: ast.AST) -> frozenset[int]:
        begin, end = self.positions.span(node)
        return frozenset(i for i, (a, b) in enumerate(self.spans) if begin <= a and b <= end and a < b)

    def resolve(self, atoms: Iterable, seen: set | None = None) -> frozenset[int]:
        seen = set() if seen is None else seen
        out: set[int] = set()
        for atom in atoms:
            if isinstance(atom, int):
                out.add(atom)
            elif isinstance(atom, _Function) and atom not in seen:
                seen.add(atom)
                out |= atom.blanks
                for name in atom.free:
                    found = atom.outer.lookup(name)
                    if found:
                        out |= self.resolve(found, seen)
        return frozenset(out)

    def atoms_of(self, names: Iterable[str], scope: _Scope) -> frozenset:
        return frozenset().union(*(scope.lookup(name) or EMPTY for name in names))

    def note_calls(self, node: ast.AST, scope: _Scope) -> None:
        """Calls of the file's functions: their arguments' blanks are processed by the callee's blanks."""
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            callees = frozenset(a for a in scope.lookup(call.func.id) or () if isinstance(a, _Function))
            if callees:
                arguments = [*call.args, *(k.value for k in call.keywords)]
                blanks = frozenset().union(*(self.resolve(self.atoms_of(_loads(a), scope)) | self.blanks_in(a)
                                             for a in arguments))
                self.calls.append((callees, blanks, scope))

    def run(self) -> None:
        self.block(self.tree.body, self.module, EMPTY, top=True)
        while self.pending:  # function bodies, once the whole file has defined what they read
            function, scope = self.pending.pop(0)
            self.block(function.node.body, scope, EMPTY)

    def block(self, body: list[ast.stmt], scope: _Scope, control: frozenset[int], top: bool = False) -> None:
        for node in body:
            if top and _is_main_guard(node):
                continue
            if top and _assigned_name(node) in self.overridden:
                # A variant gives it a value of its own: it reads nothing of the file, its blanks do not run.
                last = node.end_lineno or node.lineno
                self.statements.append(_Statement(node.lineno, last, scope.name, control))
                self.bind(scope, [_assigned_name(node)], control)
            else:
                self.statement(node, scope, control)

    def record(self, node: ast.AST, part: ast.AST | None, scope: _Scope, reads_from: list, control: frozenset[int],
               binds: set[str], changes: set[str]) -> frozenset[int]:
        """One simple statement (or a compound statement's header): what reaches it, and its blanks."""
        reads = _loads(*reads_from)
        for item in reads_from:
            self.note_calls(item, scope)
        own = frozenset().union(*(self.blanks_in(n) for n in reads_from))
        incoming = self.resolve(self.atoms_of(reads, scope)) | control
        reach = incoming | own
        shown = part if part is not None else node
        first, last = shown.lineno, shown.end_lineno or shown.lineno
        self.statements.append(_Statement(first, last, scope.name, reach))
        for blank in own:
            previous = self.found.get(blank)
            entry = {"scope": scope.name, "statement": (first, last), "reads": reads,
                     "inputs": incoming - own, "binds": binds, "changes": changes}
            if previous is not None:  # a loop's second turn: the union
                entry["inputs"] = entry["inputs"] | previous["inputs"]
            self.found[blank] = entry
        return reach

    def bind(self, scope: _Scope, names: Iterable[str], atoms: frozenset, *, add: bool = False) -> None:
        for name in names:
            scope.vars[name] = (scope.vars.get(name, EMPTY) | atoms) if add else atoms

    def statement(self, node: ast.stmt, scope: _Scope, control: frozenset[int]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.define(node, scope, control)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            if isinstance(node, ast.AnnAssign) and node.value is None:
                return
            targets = getattr(node, "targets", None) or [node.target]
            binds = set().union(*map(_target_names, targets))
            changes = set().union(*map(_changed_roots, targets))
            reach = self.record(node, None, scope, [node.value, *targets], control, binds, changes)
            self.bind(scope, binds, reach, add=isinstance(node, ast.AugAssign))
            self.bind(scope, changes, reach, add=True)
        elif isinstance(node, ast.Expr):
            changes = _changed_by_call(node)
            reach = self.record(node, None, scope, [node.value], control, set(), changes)
            self.bind(scope, changes, reach, add=True)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.bind(scope, _imported(node), control)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            names = _target_names(node.target)
            reach = self.record(node, node.iter, scope, [node.iter], control, names, set())
            self.bind(scope, names, reach)
            before = dict(scope.vars)
            for _ in range(2):  # a second turn sees what the first one assigned
                self.block(node.body, scope, control | reach)
            scope.merge(before, dict(scope.vars))
            self.block(node.orelse, scope, control)
        elif isinstance(node, ast.While):
            before = dict(scope.vars)
            for _ in range(2):
                reach = self.record(node, node.test, scope, [node.test], control, set(), set())
                self.block(node.body, scope, control | reach)
            scope.merge(before, dict(scope.vars))
            self.block(node.orelse, scope, control)
        elif isinstance(node, ast.If):
            reach = self.record(node, node.test, scope, [node.test], control, set(), set())
            before = dict(scope.vars)
            self.block(node.body, scope, control | reach)
            after_body = dict(scope.vars)
            scope.vars = dict(before)
            self.block(node.orelse, scope, control | reach)
            scope.merge(after_body, dict(scope.vars))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                names = _target_names(item.optional_vars) if item.optional_vars is not None else set()
                reach = self.record(node, item.context_expr, scope, [item.context_expr], control, names, set())
                self.bind(scope, names, reach)
            self.block(node.body, scope, control)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            before = dict(scope.vars)
            self.block(node.body, scope, control)
            branches = [dict(scope.vars)]
            for handler in node.handlers:
                scope.vars = dict(branches[0])
                if handler.name:
                    self.bind(scope, [handler.name], control)
                self.block(handler.body, scope, control)
                branches.append(dict(scope.vars))
            scope.vars = dict(branches[0])
            self.block(node.orelse, scope, control)
            branches.append(dict(scope.vars))
            scope.merge(before, *branches)
            self.block(node.finalbody, scope, control)
        elif isinstance(node, (ast.Return, ast.Raise, ast.Assert, ast.Delete)):
            parts = [getattr(node, f, None) for f in ("value", "exc", "cause", "test", "msg")]
            parts += getattr(node, "targets", [])
            self.record(node, None, scope, [p for p in parts if p is not None], control, set(), set())
        else:  # match, global, pass, break…: read what they read, then the statements they hold
            expressions = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
            reach = self.record(node, expressions[0] if expressions else None, scope, expressions, control, set(), set())
            for case in getattr(node, "cases", ()):
                self.block(case.body, scope, control | reach)

    def define(self, node, scope: _Scope, control: frozenset[int]) -> None:
        function = _Function(node.name, self.blanks_in(node), _free_names(node), scope, node)
        header = self.resolve(self.atoms_of(_loads(*_header(node)), scope))
        scope.vars[node.name] = frozenset({function}) | header | control
        inner = _Scope(f"{scope.name}.{node.name}" if scope.name else node.name, scope, function)
        function.scope = inner.name
        if not isinstance(node, ast.ClassDef):
            for name in _parameters(node.args):
                inner.vars[name] = EMPTY
        self.pending.append((function, inner))


# -- the result ------------------------------------------------------------------------------------
class Flow:
    """The data flow of one exercise file (a template, or a student's copy with its fills)."""

    def __init__(self, text: str, spans: Sequence[tuple[int, int]], analysis: _Analysis | None):
        self.text, self.spans, self._analysis = text, list(spans), analysis
        self.blanks: tuple[BlankFlow, ...] = ()
        self._edges: dict[int, set[int]] = {i: set() for i in range(len(self.spans))}
        self._depends: dict[tuple[str, str | None], tuple[frozenset[int], frozenset[int]]] = {}
        if analysis is not None:
            self._collect(analysis)

    @property
    def known(self) -> bool:
        """False when the file could not be read as Python: every question then answers « nothing »."""
        return self._analysis is not None

    def _collect(self, analysis: _Analysis) -> None:
        blanks = []
        for index, (begin, _end) in enumerate(self.spans):
            entry = analysis.found.get(index, {})
            line = analysis.positions.line_of(begin)
            assigns, changes = frozenset(), frozenset()
            holder = _top_statement(analysis.tree, analysis.positions, begin)
            if holder is not None and _is_main_guard(holder):
                entry = {"scope": MAIN}  # never runs in a check: no flow, and no scope a check shares
            if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                assigns = frozenset({holder.name})
            elif entry.get("scope") == "":
                assigns, changes = frozenset(entry.get("binds", ())), frozenset(entry.get("changes", ()))
            blanks.append(BlankFlow(
                index=index, line=line, scope=entry.get("scope", ""),
                statement=entry.get("statement", (line, line)), reads=frozenset(entry.get("reads", ())),
                inputs=frozenset(entry.get("inputs", ())) - {index}, assigns=assigns, changes=changes))
        self.blanks = tuple(blanks)
        self._order(analysis)

    def _order(self, analysis: _Analysis) -> None:
        """Which blank's result another blank processes: its inputs feed it, except a function that
        receives the blank as an argument (`poids_max_moyen(___)`): that function's blanks come after."""
        consumers: dict[int, set[int]] = {i: set() for i in range(len(self.spans))}
        for callees, arguments, _scope in analysis.calls:
            inside = frozenset().union(*(f.blanks for f in callees))
            for blank in arguments:
                consumers[blank] |= inside - {blank}
        for blank in self.blanks:
            for source in blank.inputs:
                if source in consumers[blank.index]:
                    continue  # it consumes this blank's value: the edge goes the other way
                self._edges[source].add(blank.index)
        for blank, later in consumers.items():
            self._edges[blank] |= later

    # questions -----------------------------------------------------------------------------------
    def depends(self, expression: str, setup: str | None = None) -> frozenset[int]:
        """The blanks whose results `expression` reads (after `setup`, as a check runs them)."""
        return self._expression(expression, setup)[0]

    def value_depends(self, expression: str, setup: str | None = None) -> frozenset[int]:
        """The blanks whose results reach `expression` through values the program computed (`weights`,
        `Q`), not through a function of the file that the expression calls itself with inputs of its
        own (`normalise([1, 1, 2])`): a right value is evidence for the calls that made it."""
        return self._expression(expression, setup)[1]

    def _expression(self, expression: str, setup: str | None) -> tuple[frozenset[int], frozenset[int]]:
        key = (expression, setup)
        if key in self._depends:
            return self._depends[key]
        analysis, parsed = self._analysis, _parse(expression, setup)
        if analysis is None or parsed is None:
            return EMPTY, EMPTY
        node, helpers = parsed
        scope = _Scope("<vérification>", analysis.module)
        if helpers is not None:
            checker = _Analysis(helpers, setup or "", [])
            checker.module = scope
            checker.block(helpers.body, scope, EMPTY)  # its functions are read lazily, bodies unneeded
        reads = _loads(node)
        called = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        as_values = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in reads
                     and not any(isinstance(p, ast.Call) and p.func is n for p in ast.walk(node))}
        probed = {name for name in called - as_values
                  if any(isinstance(a, _Function) and a.blanks for a in (scope.lookup(name) or ()))}
        self._depends[key] = (analysis.resolve(analysis.atoms_of(reads, scope)),
                              analysis.resolve(analysis.atoms_of(reads - probed, scope)))
        return self._depends[key]

    def reads(self, expression: str, setup: str | None = None) -> frozenset[str] | None:
        """The top-level names `expression` reads (after `setup`), through the file's functions it
        calls too (their bodies read globals when they run). None when it cannot be read."""
        parsed = _parse(expression, setup)
        if self._analysis is None or parsed is None:
            return None
        node, helpers = parsed
        names = set(_loads(node))
        if helpers is not None:
            names |= _free_names(helpers) | _loads(*helpers.body)
        functions = {n.name: n for n in self._analysis.tree.body
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        todo = list(names)
        while todo:
            found = functions.get(todo.pop())
            if found is not None:
                for name in _free_names(found) - names:
                    names.add(name)
                    todo.append(name)
        return frozenset(names)

    def unfinished(self, line: int | None) -> frozenset[str] | None:
        """The top-level names the statement at `line` and the ones after it assign or change: what a
        run that stopped there had not yet computed. None when no top-level statement is there."""
        if self._analysis is None or line is None:
            return None
        body = [n for n in self._analysis.tree.body if not _is_main_guard(n)]
        start = next((k for k, n in enumerate(body) if n.lineno <= line <= (n.end_lineno or n.lineno)), None)
        return None if start is None else frozenset().union(*map(_stored, body[start:]))

    def reaching(self, line: int) -> tuple[str, frozenset[int]] | None:
        """(scope, blanks) for the statement at `line`: the blanks whose results can reach it, its
        own included. None when no statement of the file is there."""
        if self._analysis is None:
            return None
        found = [s for s in self._analysis.statements if s.first <= line <= s.last]
        if not found:
            return None
        smallest = min(s.last - s.first for s in found)
        chosen = [s for s in found if s.last - s.first == smallest]
        return chosen[0].scope, frozenset().union(*(s.reach for s in chosen))

    def could_stop(self, line: int) -> frozenset[int]:
        """Blanks whose results can reach the statement at `line`, inside a function too: what reaches
        the line there, and what its callers pass it (the program stopped there, before going on)."""
        found = self.reaching(line)
        if found is None:
            return EMPTY
        scope, reach = found
        return frozenset(reach | self._passed_into(scope, set()))

    def _passed_into(self, scope: str, seen: set[str]) -> set[int]:
        if not scope or scope in seen or self._analysis is None:
            return set()
        seen.add(scope)
        found: set[int] = set()
        for callees, arguments, caller in self._analysis.calls:
            if any(f.scope == scope for f in callees):
                found |= arguments
                found |= self._passed_into(caller.name, seen)
        return found

    def cannot_cause(self, line: int) -> frozenset[int]:
        """Blanks that cannot be why the program failed at `line`: those of the same function (or of
        the top of the file) whose results do not reach that line, as they run after it or beside it."""
        found = self.reaching(line)
        if found is None:
            return EMPTY
        scope, reach = found
        return frozenset(b.index for b in self.blanks if b.scope == scope and b.index not in reach)

    def feeds(self, a: int, b: int) -> bool:
        """Does blank `a`'s result flow, through any number of steps, into what blank `b` computes?"""
        seen, todo = set(), [a]
        while todo:
            current = todo.pop()
            for following in self._edges.get(current, ()):
                if following == b:
                    return True
                if following not in seen:
                    seen.add(following)
                    todo.append(following)
        return False

    def last_processors(self, blanks: Iterable[int]) -> list[int]:
        """Among `blanks`, those whose result no other one of them goes on to process (in file order)."""
        group = sorted(set(blanks))
        return [b for b in group if not any(self.feeds(b, other) and not self.feeds(other, b)
                                            for other in group if other != b)]


def _parse(expression: str, setup: str | None) -> tuple[ast.Expression, ast.Module | None] | None:
    try:
        return ast.parse(expression.strip(), mode="eval"), ast.parse(setup) if setup else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _stored(node: ast.AST) -> set[str]:
    """Names a top-level statement binds or changes in place (not the locals of a def it holds)."""
    bound = _Bound()
    bound.visit(node)
    return bound.names | bound.changed


def _assigned_name(node: ast.stmt) -> str | None:
    """`x` for a top-level `x = …` (or `x: t = …`): what a variant can replace (sandbox/supervisor.py)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _top_statement(tree: ast.Module, positions: _Positions, offset: int) -> ast.stmt | None:
    for node in tree.body:
        begin, end = positions.span(node)
        if begin <= offset < end or begin == offset:
            return node
    return None


@lru_cache(maxsize=128)
def _build(text: str, spans: tuple[tuple[int, int], ...], overridden: frozenset[str] = EMPTY) -> Flow:
    try:
        analysis = _Analysis(ast.parse(text), text, spans, overridden)
        analysis.run()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Flow(text, spans, None)
    return Flow(text, spans, analysis)


def analyse(text: str, spans: Sequence[tuple[int, int]] | None = None, overridden: Iterable[str] = ()) -> Flow:
    """The flow of `text`, whose blanks are at `spans` (character offsets); by default its `___`.
    `overridden`: the top-level variables a variant gives values of its own."""
    if spans is None:
        try:
            spans = blank_offsets(text)
        except TokenizeError:
            return Flow(text, [], None)
    return _build(text, tuple((int(a), int(b)) for a, b in spans), frozenset(overridden))
