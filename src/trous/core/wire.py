"""What comes out of a sandbox, read under bounds before anything is rebuilt from it.

Student code runs in the very process that encodes its values (core/encode.py), so nothing a sandbox
sends is trusted. Every teacher's process that reads it goes through here: a line is cut at its
bound while it is read (`Lines`) and never parsed past it; it must be strict UTF-8 and strict JSON;
a value is walked once, without recursion (`check`), counting items, nesting and texts against
`Bounds`; tagged forms ({"$nd": …}, {"$float": …}…) must be well formed, and an array must carry
exactly the values its shape announces. What is out of bounds becomes that probe's (or unit's)
error, with a French reason that echoes none of the data (a forged value could carry hidden results).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .encode import MAX_DEPTH, MAX_ITEMS, MAX_STR

_INF, _NINF = float("inf"), float("-inf")
_NUMBERS = frozenset({int, float, bool})
_SCALARS = frozenset({int, float, bool, str, type(None)})
FLOAT_TAGS = frozenset({"nan", "inf", "-inf"})
SUMMARY_KEYS = frozenset({"n", "total", "abs", "sq", "min", "max", "at", "sample"})
ARRAY_KINDS = frozenset("biufO")
MAX_NDIM = 32  # NumPy's own limit
MAX_SUMMARISED = 1 << 48  # elements a state summary may describe (it carries none of them)


class WireError(ValueError):
    """Data from a sandbox out of bounds or malformed (no encoder writes such data: it was forged,
    hence the kind "invalid"); the text is French and names no data."""

    kind = "invalid"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Bounds:
    """What one value from a copy may hold once decoded (the encoder's own bounds, with room)."""

    value_bytes: int = 1 << 20  # its texts in all, in characters (Limits.value_kb)
    items: int = 2 * MAX_ITEMS  # JSON nodes: the encoder counts elements, arrays add their rows
    depth: int = 4 * MAX_DEPTH + MAX_NDIM  # nesting: the encoder's levels, each with its tags and rows
    text: int = MAX_STR + 1  # one text (the encoder cuts longer ones and adds « … »)
    memory_mb: int | None = None  # the copy's memory bound, said with a memory error

    @classmethod
    def of(cls, limits) -> "Bounds":
        return cls(value_bytes=max(1024, int(limits.value_kb) * 1024), memory_mb=int(limits.memory_mb))

    def line_bytes(self, values: int, extra: int = 0) -> int:
        """The longest line that may carry `values` values (probes, a state) and `extra` more bytes
        (captured output, error texts): JSON escapes may make a text up to six times longer."""
        return 6 * (values * self.value_bytes + extra) + (256 << 10)


# -- lines -------------------------------------------------------------------------------------
class Lines:
    """Lines read from a stream, each at most `limit` bytes. A line past it is never handed out: its
    bytes are dropped as they come, and `overflow` says the stream is not to be believed any more."""

    def __init__(self, limit: int):
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.overflow = False
        self.ready: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._add(chunk[start:] if start else chunk)
                return
            self._add(chunk[start:end])
            if self.size <= self.limit and not self.overflow:
                self.ready.append(b"".join(self.parts))
            self.parts, self.size = [], 0
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self.size += len(piece)
        if self.size > self.limit:
            self.overflow = True
            self.parts = []
        elif not self.overflow:
            self.parts.append(piece)

    def pop(self) -> bytes | None:
        return self.ready.pop(0) if self.ready else None


def parse_line(line: bytes, limit: int) -> dict:
    if len(line) > limit:
        raise WireError(f"réponse trop longue (plus de {limit // 1024} Kio)")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("réponse en UTF-8 invalide") from None
    try:
        data = json.loads(text, parse_constant=_constant)
    except WireError:
        raise
    except (ValueError, RecursionError):
        raise WireError("réponse illisible (JSON invalide)") from None
    if not isinstance(data, dict):
        raise WireError("réponse illisible (pas un objet JSON)")
    return data


def _constant(name: str):
    raise WireError("nombre NaN ou infini écrit sans son étiquette")


# -- values ------------------------------------------------------------------------------------
def check(value, bounds: Bounds, *, state: bool = False) -> None:
    """Raise WireError when `value` (JSON, as parsed) is not what the encoder could have written within
    `bounds`. `state`: a program's variable, which may also be an array's summary or {"$missing": true}."""
    _Walk(bounds, state).run(value)


class _Walk:
    def __init__(self, bounds: Bounds, state: bool):
        self.bounds, self.state = bounds, state
        self.items = bounds.items
        self.text = bounds.value_bytes

    def spend(self, n: int) -> None:
        self.items -= n
        if self.items < 0:
            raise WireError(f"plus de {self.bounds.items:,} éléments".replace(",", " "))

    def string(self, s: str) -> None:
        if len(s) > self.bounds.text:
            raise WireError(f"texte de plus de {self.bounds.text:,} caractères".replace(",", " "))
        self.text -= len(s)
        if self.text < 0:
            raise WireError(f"textes de plus de {self.bounds.value_bytes // 1024} Kio en tout")
        if not s.isascii():
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                raise WireError("texte invalide (caractère UTF-16 isolé)") from None

    def run(self, value) -> None:
        stack = [(value, 0)]
        depth_bound = self.bounds.depth
        while stack:
            v, depth = stack.pop()
            self.spend(1)
            t = type(v)
            if t is str:
                self.string(v)
            elif t is float:
                if v in (_INF, _NINF):  # JSON gives no NaN (refused while parsing), but 1e999 is infinite
                    raise WireError("nombre infini écrit sans son étiquette")
            elif t is int or t is bool or v is None:
                continue
            elif depth >= depth_bound:
                raise WireError(f"valeur imbriquée sur plus de {depth_bound} niveaux")
            elif t is list:
                self.sequence(v, depth, stack)
            elif t is dict:
                self.mapping(v, depth, stack)
            else:  # pragma: no cover - json.loads gives nothing else
                raise WireError("type de valeur inconnu")

    def sequence(self, items: list, depth: int, stack: list) -> None:
        kinds = set(map(type, items))
        if kinds <= _SCALARS:  # the usual case, a list of numbers or texts: no push per item
            self.spend(len(items))
            if float in kinds and (_INF in items or _NINF in items):
                raise WireError("nombre infini écrit sans son étiquette")
            if str in kinds:
                for s in items:
                    if type(s) is str:
                        self.string(s)
            return
        stack.extend((x, depth + 1) for x in items)

    def mapping(self, d: dict, depth: int, stack: list) -> None:
        if len(d) == 1 and next(iter(d))[:1] == "$" and self.tagged(d, depth, stack):
            return
        for key, item in d.items():
            self.spend(1)
            self.string(key)
            stack.append((item, depth + 1))

    def tagged(self, d: dict, depth: int, stack: list) -> bool:
        """A tagged form, checked (True), or a plain dict whose keys start with « $ » (False): the
        decoders read a tag from the keys alone, so must this."""
        keys = set(d)
        if keys == {"$float"}:
            if type(d["$float"]) is not str or d["$float"] not in FLOAT_TAGS:
                raise WireError("nombre étiqueté mal formé")
        elif keys == {"$type"}:
            if type(d["$type"]) is not str:
                raise WireError("objet étiqueté mal formé")
            self.string(d["$type"])
        elif keys == {"$complex"}:
            pair = d["$complex"]
            if type(pair) is not list or len(pair) != 2 or not all(self.number(x) for x in pair):
                raise WireError("nombre complexe mal formé")
        elif keys == {"$missing"}:
            if not self.state or d["$missing"] is not True:
                raise WireError("valeur étiquetée mal formée")
        elif keys == {"$nd"} and type(d["$nd"]) is dict:
            self.array(d["$nd"], depth + 1, stack)
        else:
            return False
        return True

    @staticmethod
    def number(x) -> bool:
        """A number as the encoder writes one (finite, or tagged)."""
        t = type(x)
        if t is int or t is bool:
            return True
        if t is float:
            return x not in (_INF, _NINF)
        return t is dict and len(x) == 1 and type(x.get("$float")) is str and x["$float"] in FLOAT_TAGS

    @classmethod
    def numbers(cls, items: list) -> bool:
        """Every item a number as the encoder writes one (one by one only for the tagged ones)."""
        kinds = set(map(type, items))
        if kinds <= _NUMBERS:
            return not (float in kinds and (_INF in items or _NINF in items))
        if not kinds <= _NUMBERS | {dict}:
            return False
        return all(cls.number(x) for x in items)

    def array(self, a: dict, depth: int, stack: list) -> None:
        kind, shape = a.get("k"), a.get("s")
        if len(a) != 3 or ("v" in a) == ("sum" in a) or kind is None or shape is None:
            raise WireError("tableau mal décrit")
        if type(kind) is not str or kind not in ARRAY_KINDS:
            raise WireError("tableau mal décrit (type d'éléments inconnu)")
        if type(shape) is not list or len(shape) > MAX_NDIM:
            raise WireError("tableau mal décrit (forme illisible)")
        size = 1
        for n in shape:
            if type(n) is not int or n < 0:
                raise WireError("tableau mal décrit (forme illisible)")
            size *= n
            if size > MAX_SUMMARISED or n > MAX_SUMMARISED:
                raise WireError("tableau mal décrit (forme démesurée)")
        if "sum" in a:
            self.summary(a["sum"], size, kind)
            return
        if size > self.bounds.items:
            raise WireError(f"tableau annoncé de plus de {self.bounds.items:,} éléments".replace(",", " "))
        if len(shape) + depth >= self.bounds.depth:
            raise WireError(f"valeur imbriquée sur plus de {self.bounds.depth} niveaux")
        # The values must be nested exactly as the shape says: rows of the announced lengths.
        level = [a["v"]]
        rows = 0
        for n in shape:
            rows += len(level)
            following: list = []
            for row in level:
                if type(row) is not list or len(row) != n:
                    raise WireError("tableau mal décrit (sa forme ne correspond pas à ses valeurs)")
                following += row
            level = following
        if kind == "O":
            self.spend(rows)
            stack.extend((x, depth + len(shape) + 1) for x in level)
            return
        self.spend(rows + len(level))
        if not self.numbers(level):
            raise WireError("tableau de nombres qui contient autre chose que des nombres")

    def summary(self, numbers, size: int, kind: str) -> None:
        """A state's summary of a large numeric array (encode.summary): a few numbers, no values."""
        if not self.state or kind == "O" or type(numbers) is not dict or not set(numbers) <= SUMMARY_KEYS:
            raise WireError("résumé de tableau mal formé")
        if size > MAX_SUMMARISED:
            raise WireError("résumé de tableau mal formé (forme démesurée)")
        for key, x in numbers.items():
            if key in ("at", "sample"):
                if type(x) is not list or len(x) > 64 or not self.numbers(x):
                    raise WireError("résumé de tableau mal formé")
                self.spend(len(x))
            elif not self.number(x):
                raise WireError("résumé de tableau mal formé")
            self.spend(1)
