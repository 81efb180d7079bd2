"""What each blank reads, in each check: the values of its fill's sub-expressions (part of `trous doctor`).

A wrong fill right on every public input (`range(2)` for `range(len(v))` while every public check has
`len(v)` 2, a formula right only for a symmetric matrix) is « juste » in public, then loses the point in
the hidden grader. So the solution runs with each sub-expression of its fills reporting the *features*
of its value (value, sizes; all equal, mean zero, square, symmetric) in each *world*: a check (the
program with its variant, then its expression) or a test function. A feature every public world of a
blank sees alike and a hidden world sees otherwise is a gap (`gaps`); the run on the course's own
inputs gives quality.py the example's values.
"""

from __future__ import annotations

import ast
import copy
import json
from dataclasses import dataclass, field

from ..core import blanks as blanks_mod
from ..core.checks import Check
from ..core.course import Exercise
from ..core.protocol import Job, Limits, Probe, Unit

# Features of a value whose every public value must differ somewhere when a hidden one differs.
PROPERTIES = {"toutes égales": "a toutes ses valeurs égales", "moyenne nulle": "a une moyenne nulle",
              "carrée": "est une matrice carrée", "symétrique": "est une matrice symétrique"}
BOUNDS = 64  # sizes up to this are ones a student may write out as a bound
PROGRAM = "programme"  # the tag of what the program itself evaluates, before any check's expression
MAX_SHOWN_ITEMS = 4

# Runs before the solution, in its process: __trous_obs__ records the features of each instrumented
# sub-expression's value (its first 256 evaluations per check) and gives it back unchanged, whatever happens.
RUNTIME = r'''
def __trous_runtime__():
    import sys, hashlib, math
    log, at = {}, ["programme"]

    def digest(data):
        return hashlib.blake2b(data, digest_size=10).hexdigest()

    def scalar(v):
        """The features of a number, a bool or None: its value, and as Python when it can be written."""
        t = type(v)
        if t is int or (t is float and math.isfinite(v)):
            return (("valeur", repr(v)), ("littéral", repr(v)))
        if t in (bool, float) or v is None:
            return (("valeur", repr(v)),)
        return None

    def props(flat, shape, out):
        if len(flat) >= 2:
            out.append(("toutes égales", all(x == flat[0] for x in flat)))
            if all(type(x) in (int, float) for x in flat):
                m = sum(flat) / len(flat)
                scale = max(abs(x) for x in flat)
                out.append(("moyenne nulle", abs(m) <= 1e-12 * scale if scale else True))
        if len(shape) == 2 and min(shape) >= 2:
            square = shape[0] == shape[1]
            out.append(("carrée", square))
            if square:
                n = shape[0]
                out.append(("symétrique", all(flat[i * n + j] == flat[j * n + i] for i in range(n) for j in range(i))))

    def nested(v, depth=0):
        """(shape, flat list of scalars) of a rectangular nest of lists/tuples of numbers, else None."""
        if type(v) in (list, tuple):
            if not v:
                return (0,), []
            if depth > 4:
                return None
            parts = [nested(x, depth + 1) for x in v]
            if any(p is None for p in parts) or len({p[0] for p in parts}) != 1:
                return None
            return (len(v),) + parts[0][0], [x for p in parts for x in p[1]]
        if type(v) in (int, float, bool):
            return (), [v]
        return None

    def features(v):
        t, s, np = type(v), scalar(v), sys.modules.get("numpy")
        if s is not None:
            return s
        if np is not None and isinstance(v, np.generic):  # a NumPy scalar (never an array)
            return scalar(v.item())  # what cannot be read is nothing, in obs
        if t in (str, dict):
            r = repr(v)
            out = (("valeur", r if len(r) <= 120 else "#" + digest(r.encode("utf-8", "replace"))), ("longueur", len(v)))
            return out + (("littéral", r),) if t is str and len(r) <= 120 else out
        if t is range:
            r = repr(v).replace("range(0, ", "range(")
            return (("valeur", r), ("littéral", r))
        if np is not None and t is np.ndarray:
            if v.dtype.kind not in "biuf" or v.size > 5_000_000:
                return None
            out = [("valeur", "%s%s#%s" % (v.dtype.str, v.shape, digest(np.ascontiguousarray(v).tobytes()))),
                   ("nature", "tableau NumPy"), ("dimensions", v.ndim)]
            out += [("dimension %d" % i, n) for i, n in enumerate(v.shape)]
            if v.size >= 2:
                flat = v.ravel()
                out.append(("toutes égales", bool((flat == flat[0]).all())))
                if v.dtype.kind != "b":
                    a = flat.astype(float)
                    finite = bool(np.isfinite(a).all())
                    scale = float(np.abs(a).max()) if finite else 0.0
                    out.append(("moyenne nulle", bool(abs(a.mean()) <= 1e-12 * scale) if scale else finite))
            if v.ndim == 2 and min(v.shape) >= 2:
                square = v.shape[0] == v.shape[1]
                out.append(("carrée", square))
                if square:
                    out.append(("symétrique", bool((v == v.T).all())))
            if v.ndim <= 1 and v.size <= 4:
                out.append(("littéral", "__import__('numpy').array(%r)" % (v.tolist(),)))
            return tuple(out)
        if t in (list, tuple):
            r = repr(v) if len(v) <= 2000 else None
            key = r if r is not None and len(r) <= 120 else "#" + digest((r or "%d:%r" % (len(v), v[:50])).encode("utf-8", "replace"))
            out = [("valeur", key), ("nature", "liste" if t is list else "n-uplet"), ("dimension 0", len(v))]
            shaped = nested(v)
            if shaped is not None:
                shape, flat = shaped
                out.append(("dimensions", len(shape)))
                out += [("dimension %d" % i, n) for i, n in enumerate(shape) if i]
                props(flat, shape, out)
                if len(shape) == 1 and len(v) <= 4 and r is not None \
                        and all(len(scalar(x) or ()) == 2 for x in v):  # each written as Python
                    out.append(("littéral", r))
            return tuple(out)
        return None  # functions, modules, generators, objects: no data to compare

    def obs(key, value):
        try:
            nodes = log.setdefault(at[0], {})
            entry = nodes.get(key)
            if entry is None:
                entry = nodes[key] = [0, {}]
            if entry[0] < 256:
                entry[0] += 1
                f = features(value)
                if f is not None and len(entry[1]) < 64:
                    entry[1].setdefault(f, None)
        except Exception:
            pass
        return value

    def tag(name):
        at[0] = name

    def dump():
        import json
        text = json.dumps({t: {k: [list(map(list, f)) for f in e[1]] for k, e in nodes.items()}
                           for t, nodes in log.items()})
        return [text[i:i + 10000] for i in range(0, len(text), 10000)]  # a probe's strings are cut at 20 000

    return obs, tag, dump


__trous_obs__, __trous_tag__, __trous_dump__ = __trous_runtime__()
del __trous_runtime__
'''


def with_prelude(source: str, prelude: str) -> str:
    """`source` with `prelude` run first, after its docstring and `from __future__` imports."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return prelude + source
    after = 0
    for i, node in enumerate(body):
        first = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if first or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            after = node.end_lineno
        else:
            break
    lines = source.split("\n")
    return "\n".join(lines[:after] + [prelude] + lines[after:])


# -- which sub-expressions, and how to wrap them ----------------------------------------------------
def _eligible(tree: ast.AST) -> list[ast.expr]:
    """The data sub-expressions of a fill, in a fixed order: no literal, no function being called,
    no assignment target, nothing inside an f-string, no slice (which cannot be wrapped in a call)."""
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.comprehension, ast.NamedExpr)):
            skip |= {id(n) for n in ast.walk(node.target)}
        if isinstance(node, ast.JoinedStr):
            skip |= {id(n) for n in ast.walk(node)} - {id(node)}
        if isinstance(node, ast.Lambda):
            skip.add(id(node))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or id(node) in skip or id(node) in calls:
            continue
        if isinstance(node, (ast.Constant, ast.Slice, ast.Starred, ast.GeneratorExp)):
            continue
        if getattr(node, "ctx", None) is not None and not isinstance(node.ctx, ast.Load):
            continue
        if isinstance(node, ast.Tuple) and any(isinstance(e, (ast.Slice, ast.Starred)) for e in node.elts):
            continue
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            continue  # -1: a literal too
        found.append(node)
    return found


@dataclass(frozen=True)
class Node:
    key: str  # "blank:k", as the runtime reports it
    k: int
    text: str  # the sub-expression, as the solution writes it (unparsed)
    size: int  # number of AST nodes in it: the smallest are named first
    index: int | None = None  # it is read as node[index], with an integer written out


def parse(fill: str) -> ast.Expression | None:
    try:
        return ast.parse(fill.strip(), mode="eval")
    except SyntaxError:
        return None


def nodes_of(fill: str, blank: int) -> list[Node]:
    tree = parse(fill)
    if tree is None:
        return []
    indexed = {id(n.value): n.slice.value for n in ast.walk(tree) if isinstance(n, ast.Subscript)
               and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, int)}
    return [Node(f"{blank}:{k}", k, ast.unparse(n), sum(1 for _ in ast.walk(n)), indexed.get(id(n)))
            for k, n in enumerate(_eligible(tree))]


def _rebuilt(tree: ast.AST, changes: dict) -> ast.AST:
    """`tree` with each node whose id is in `changes` replaced by `changes[id](node)`, inner nodes first."""

    class Rebuild(ast.NodeTransformer):
        def visit(self, node):
            change = changes.get(id(node))
            node = self.generic_visit(node)
            return node if change is None else change(node)

    return ast.fix_missing_locations(Rebuild().visit(tree))


def instrument(fill: str, blank: int) -> str | None:
    """The fill with each eligible sub-expression wrapped in `__trous_obs__("blank:k", …)`."""
    tree = parse(fill)
    if tree is None:
        return None

    def wrap(k):
        return lambda node: ast.Call(ast.Name("__trous_obs__", ast.Load()), [ast.Constant(f"{blank}:{k}"), node], [])

    return unparsed(_rebuilt(tree, {id(n): wrap(k) for k, n in enumerate(_eligible(tree))}))


def swapped(tree: ast.AST, target: ast.AST, replacement: ast.AST) -> ast.AST:
    """A copy of `tree` with its node `target` replaced by `replacement` (`tree` itself unchanged)."""
    memo: dict = {}
    copied = copy.deepcopy(tree, memo)
    return _rebuilt(copied, {id(memo[id(target)]): lambda _: replacement})


def replace_node(fill: str, k: int, text: str) -> str | None:
    """The fill with its k-th eligible sub-expression replaced by the expression `text`."""
    tree, new = parse(fill), parse(text)
    if tree is None or new is None:
        return None
    return unparsed(swapped(tree, _eligible(tree)[k], new.body))


def unparsed(tree: ast.AST) -> str | None:
    """The source of an expression's tree, or None when it cannot be written back as one."""
    try:
        text = ast.unparse(ast.fix_missing_locations(tree))
        ast.parse(text, mode="eval")
        return text
    except (SyntaxError, ValueError, RecursionError):
        return None


# -- worlds ---------------------------------------------------------------------------------------
@dataclass
class World:
    """One check as the blank sees it: what each of its sub-expressions was, feature by feature."""

    hidden: bool
    what: str  # how a finding names it (French)
    inputs: tuple[str, ...] = ()  # the variables its variant replaces
    seen: dict[str, dict[str, set]] = field(default_factory=dict)  # node key → feature → values


@dataclass
class Observations:
    nodes: dict[int, list[Node]]  # blank index → its sub-expressions
    worlds: dict[int, list[World]]  # blank index → its checks
    example: dict[str, list[tuple]] = field(default_factory=dict)  # node key → feature tuples, course's inputs
    lost: list[str] = field(default_factory=list)  # checks whose observations did not come back (why)

    def example_literal(self, key: str, blank: int) -> str | None:
        """The one value a sub-expression takes on the course's inputs (in every public check when the
        program never evaluates it), written as Python; None when it takes several or cannot be written."""
        seen = self.example.get(key)
        if seen:
            return dict(seen[0]).get("littéral") if len(seen) == 1 else None
        values: dict[str, set] = {}
        for world in [w for w in self.worlds.get(blank, []) if not w.hidden]:
            _union(values, world.seen.get(key, {}))
        if len(values.get("valeur", ())) == 1 and len(values.get("littéral", ())) == 1:
            return next(iter(values["littéral"]))
        return None

    def sizes(self, key: str, feature: str) -> set:
        """The sizes a sub-expression has when the program runs on the course's inputs."""
        return {dict(obs).get(feature) for obs in self.example.get(key, [])} - {None}

    def facts(self, blank: int) -> dict[int, dict[str, set]]:
        """Everything seen of each sub-expression of the blank, anywhere: {position: {feature: values}}."""
        out: dict[int, dict[str, set]] = {}
        for node in self.nodes.get(blank, []):
            merged = _gather({}, self.example.get(node.key, []))
            for world in self.worlds.get(blank, []):
                _union(merged, world.seen.get(node.key, {}))
            if merged:
                out[node.k] = merged
        return out


def _dumped(probe) -> dict | None:
    """The runtime's log in a probe of `__trous_dump__()`, or None when it did not come back whole."""
    if probe is None or probe.error is not None or not probe.evaluated or not isinstance(probe.value, list) \
            or not all(isinstance(part, str) for part in probe.value):
        return None
    try:
        raw = json.loads("".join(probe.value))
    except ValueError:
        return None
    return {tag: {key: [tuple((str(f[0]), tuple(f[1]) if isinstance(f[1], list) else f[1]) for f in obs)
                        for obs in observations] for key, observations in nodes.items()} for tag, nodes in raw.items()}


def _gather(into: dict[str, set], observations: list[tuple]) -> dict[str, set]:
    """`into` (feature → values) with the (feature, value) pairs of `observations`."""
    for obs in observations:
        for name, value in obs:
            into.setdefault(name, set()).add(value)
    return into


def _union(into: dict[str, set], features: dict[str, set]) -> None:
    for name, values in features.items():
        into.setdefault(name, set()).update(values)


def _add(world: World, dumped: dict, tag: str, blank: int) -> None:
    """The world's view of `blank`: what the check's own expression evaluated of the blank, else
    what the program evaluated (the expression then reads the program's results)."""
    prefix = f"{blank}:"
    own = {k: v for k, v in dumped.get(tag, {}).items() if k.startswith(prefix)}
    if not own:
        own = {k: v for k, v in dumped.get(PROGRAM, {}).items() if k.startswith(prefix)}
    for key, observations in own.items():
        _gather(world.seen.setdefault(key, {}), observations)


@dataclass
class Plan:
    """The job that observes one exercise, and what to read of its results."""

    exercise: Exercise
    fills: list
    text: str  # the instrumented solution
    job: Job
    tags: list  # per unit: [(blank index, hidden, expect, tag)]


def plan(exercise: Exercise, solution: str, fills, checks: list[Check], limits: Limits) -> Plan:
    """One unit per variant (the course's own inputs first), each expectation's expression tagged. A
    public check needing an optional module (torch…) is left out: a student without it does not get it."""
    texts = {f.index: f"({wrapped})" for f in fills if (wrapped := instrument(f.text, f.index)) is not None}
    text = with_prelude(blanks_mod.splice(solution, fills, texts), RUNTIME)
    by_blank_index = {b.id: i for i, b in enumerate(exercise.blanks)}
    plans: dict[tuple, list[tuple[int, bool, object]]] = {(): []}  # variant key → (blank, hidden, expect)
    for check in checks:
        hidden = any(e.hidden for e in check.expects)
        if check.blank not in by_blank_index or (check.requires and not hidden):
            continue
        for expect in check.expects:
            plans.setdefault(expect.overrides, []).append((by_blank_index[check.blank], hidden, expect))
    units, tags = [], []
    for key, expects in plans.items():
        probes: list[Probe] = []
        seen: dict[tuple, str] = {}
        unit_tags = []
        for index, hidden, expect in expects:
            ident = (expect.expr, expect.setup)
            if ident not in seen:
                seen[ident] = f"e{len(seen)}"
                probes += [Probe(f"__trous_tag__({seen[ident]!r})"), Probe(expect.expr, expect.setup)]
            unit_tags.append((index, hidden, expect, seen[ident]))
        probes.append(Probe("__trous_dump__()"))
        units.append(Unit(text, f"solutions/{exercise.id}.py", tuple(probes), overrides=key,
                          process=f"observe:{exercise.id}", group=f"observe:{exercise.id}:{len(units)}"))
        tags.append(unit_tags)
    return Plan(exercise, list(fills), text, Job(tuple(units), limits), tags)


def read(plan: Plan, results) -> Observations:
    observations = Observations({f.index: nodes_of(f.text, f.index) for f in plan.fills},
                                {i: [] for i in range(len(plan.exercise.blanks))})
    for unit, result, unit_tags in zip(plan.job.units, results, plan.tags):
        last = result.probes[-1] if result.probes else None
        dumped = _dumped(last)
        if dumped is None:
            where = ", ".join(f"{n} = …" for n, _ in unit.overrides) or "les entrées du cours"
            why = (result.error.message or result.error.kind) if result.error else \
                (last.error.message if last is not None and last.error else "réponse incomplète")
            observations.lost.append(f"{where} : {why}"[:200])
            dumped = {}
        if not unit.overrides:
            observations.example = dict(dumped.get(PROGRAM, {}))
        worlds: dict[tuple, World] = {}
        for index, hidden, expect, tag in unit_tags:
            if expect.variant is not None:
                what = f"la variante {'cachée' if hidden else 'montrée'} « {expect.variant.description} »"
            else:
                side = "cachée" if hidden else "publique"
                what = f"la vérification {side} « {expect.label or expect.expr} »"
            if (index, hidden, what) not in worlds:
                worlds[index, hidden, what] = World(hidden, what, tuple(n for n, _ in unit.overrides))
                observations.worlds[index].append(worlds[index, hidden, what])
            _add(worlds[index, hidden, what], dumped, tag, index)
    return observations


class _Recorder:
    """A session answering a test function's questions with the instrumented solution, keeping each dump."""

    def __init__(self, session):
        self.session = session
        self.dumps: list[tuple[dict, str]] = []  # (dump, the question's tag)
        self.lost = False  # a question's observations did not come back

    def ask(self, expr: str, *, setup=None, overrides=(), secret=False, fresh=False, wall=None):
        key, tag = tuple(overrides), f"q{len(self.dumps)}"
        self.session.ask(f"__trous_tag__({tag!r})", overrides=key, secret=secret, fresh=fresh, wall=wall)
        answer = self.session.ask(expr, setup=setup, overrides=key, secret=secret, wall=wall)
        dumped = self.session.ask("__trous_dump__()", overrides=key, secret=secret, wall=wall)
        decoded = _dumped(dumped.probes[0] if dumped.probes else None)
        self.lost |= decoded is None
        self.dumps.append((decoded or {}, tag))
        return answer


def observe_tests(found: Plan, tests, grader_tests, pool, observations: Observations, limits: Limits) -> None:
    """Each test function is a world: the questions it asks, answered by the instrumented solution."""
    exercise, text = found.exercise, found.text
    for test in tests:
        index = exercise.blank_index(test.blank)
        unit = Unit(text, f"solutions/{exercise.id}.py", wall=limits.wall)
        with pool.session(unit, limits) as session:
            recorder = _Recorder(session)
            grader_tests.run([test], recorder)
        side = "cachée" if test.hidden else "publique"
        world = World(test.hidden, f"la fonction de test {side} « {test.description} »")
        for dumped, tag in recorder.dumps:
            _add(world, dumped, tag, index)
        if recorder.lost:
            observations.lost.append(f"{test.name} : réponse incomplète")
        observations.worlds[index].append(world)


# -- coverage -------------------------------------------------------------------------------------
@dataclass
class Gap:
    """A feature of a sub-expression every public check of the blank sees alike, a hidden one otherwise."""

    node: Node
    feature: str
    public: object  # the one value the public checks see (`larger`: the largest)
    hidden: object
    world: World
    larger: bool = False  # a size larger than every public one: a bound written out would pass them

    def said(self) -> str:
        expr = self.node.text if len(self.node.text) <= 60 else self.node.text[:57] + "…"
        everywhere, what = "dans toutes les vérifications publiques", self.world.what
        if self.larger:
            axis = int(self.feature.split()[-1])
            size = f"len({expr})" if axis == 0 else f"la taille de {expr} selon l'axe {axis}"
            bound = f"({expr})[{', '.join([':'] * axis + [f':{self.public}'])}]"
            return f"{size} vaut {self.public} dans l'exemple et jamais plus dans les vérifications publiques, " \
                   f"{self.hidden} dans {what} (la taille de l'exemple écrite comme borne, {bound}, " \
                   "y passerait)"
        if self.feature in PROPERTIES:
            return f"{expr} {PROPERTIES[self.feature]} {everywhere}, pas dans {what}"
        hidden = self.hidden
        if self.feature == "valeur":
            public, hidden = _shown(self.public), _shown(self.hidden)
            if not (public and hidden):
                return f"{expr} a la même valeur {everywhere}, une autre dans {what}"
            head = f"{expr} vaut {public}"
        elif self.feature in ("longueur", "dimension 0"):
            head = f"len({expr}) vaut {self.public}"
        elif self.feature == "nature":
            head, hidden = f"{expr} est un(e) {self.public}", f"un(e) {self.hidden}"
        elif self.feature == "dimensions":
            head = f"{expr} a {self.public} dimension(s)"
        else:
            head = f"la taille de {expr} selon l'axe {self.feature.split()[-1]} vaut {self.public}"
        return f"{head} {everywhere}, {hidden} dans {what}"


def _shown(value) -> str | None:
    if isinstance(value, str) and not value.startswith("#") and "#" not in value and len(value) <= 40:
        return value
    return None


def gaps(observations: Observations, blank: int) -> list[Gap]:
    worlds = observations.worlds.get(blank, [])
    public: dict[str, dict[str, set]] = {}
    for key, features in [item for world in worlds if not world.hidden for item in world.seen.items()]:
        _union(public.setdefault(key, {}), features)
    found: dict[tuple[str, str], Gap] = {}
    nodes = {n.key: n for n in observations.nodes.get(blank, [])}
    for world in [w for w in worlds if w.hidden]:
        for key, features in [(k, f) for k, f in world.seen.items() if k in nodes and k in public]:
            for name, values in features.items():
                shown = public[key].get(name)
                where = (nodes[key].text, name)  # the same name read twice is said once
                if name == "littéral" or not shown or where in found:
                    continue
                if name in PROPERTIES:
                    if shown == {True} and False in values:
                        found[where] = Gap(nodes[key], name, True, False, world)
                elif len(shown) == 1 and values - shown:
                    (one,) = shown
                    found[where] = Gap(nodes[key], name, one, sorted(values - shown, key=repr)[0], world)
                elif name.startswith("dimension "):
                    # Sizes vary, but none is larger than the example's: the example's size written as a
                    # bound (x[:, :4]) passes every public check, and not a hidden one that is larger.
                    example = observations.sizes(key, name)
                    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in values)
                    if example and max(example) <= BOUNDS and ints and max(values) > max(example) \
                            and max(shown) <= max(example):
                        found[where] = Gap(nodes[key], name, max(example), max(values), world, larger=True)
    return sorted(found.values(), key=lambda g: (g.node.size, g.node.k, g.feature))


def coverage_message(blank_id: str, found: list[Gap]) -> str:
    said = list(dict.fromkeys(g.said() for g in found))  # len(W) and the length of W read alike
    items = said[:MAX_SHOWN_ITEMS]
    more = f" (et {len(said) - MAX_SHOWN_ITEMS} autre(s))" if len(said) > MAX_SHOWN_ITEMS else ""
    inputs = sorted({name for g in found for name in g.world.inputs})
    how = (f" — par exemple en remplaçant aussi {', '.join(inputs)}, comme le fait le correcteur caché"
           if inputs else "")
    return (f"le correcteur caché essaie le trou « {blank_id} » sur ce qu'aucune de ses vérifications publiques "
            f"n'essaie : {' ; '.join(items)}{more}. Un élève qui écrit ces valeurs en dur, ou une formule juste "
            f"seulement dans ce cas, lirait « juste » puis perdrait le point : ajoutez une variante montrée "
            f"(variant(..., shown=True)) où cela change{how}")
