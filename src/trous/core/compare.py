"""Comparing a value that came back from a student's program with the expected one, and saying how
they differ in the course's notation ([0,79 ; 0,79]). Floats are compared with tolerances; `decimals=2`
means "as the course rounds": within half a unit of the 2nd decimal. The kind counts where the expected
value says it: an expected NumPy array (in a check, or built by the solution) wants an array of that
shape, while an expected list accepts an array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .encode import encode
from .wording import count, plural

DEFAULT_RTOL = 1e-6
DEFAULT_ATOL = 1e-9
MAX_SHOWN = 8  # values of a long list written before « … »
SMALL_TABLE = 25  # a 5 × 5 table is written whole: a mask's wrong cell is seen in place


@dataclass(frozen=True)
class Opaque:
    """A value the runner could not turn into data (an object of the student's own class…)."""

    type_name: str


@dataclass(frozen=True)
class Array:
    kind: str  # b, i, u, f or O
    shape: tuple[int, ...]
    values: Any = None  # nested lists, as decode gives them (None when summarised)
    summary: dict | None = None  # see trous.core.encode.summary


def decode(value: Any, arrays: bool = False) -> Any:
    """JSON data back to Python values; arrays as `Array` (to compare kinds) or as nested lists."""
    if isinstance(value, list):
        return [decode(v, arrays) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return float(value["$float"])
        if set(value) == {"$type"}:
            return Opaque(str(value["$type"]))
        if set(value) == {"$missing"}:
            return Opaque("absent")
        if set(value) == {"$nd"} and isinstance(value["$nd"], dict):
            return _array(value["$nd"], arrays)
        if set(value) == {"$complex"} and isinstance(value["$complex"], list) and len(value["$complex"]) == 2:
            re_, im = (decode(v) for v in value["$complex"])
            return complex(re_, im) if is_number(re_) and is_number(im) else Opaque("complex")
        return {k: decode(v, arrays) for k, v in value.items()}
    return value


def _array(data: dict, arrays: bool):
    shape = tuple(int(n) for n in data.get("s", ()) if isinstance(n, int))
    summary = data.get("sum") if isinstance(data.get("sum"), dict) else None
    values = None if summary is not None else decode(data.get("v"), arrays)
    if not arrays:
        return values if summary is None else Opaque(f"tableau NumPy de forme {shape_text(shape)}")
    return Array(str(data.get("k", "f"))[:1], shape, values,
                 {k: decode(v) for k, v in summary.items()} if summary is not None else None)


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def plain(value: Any) -> bool:
    """Data whose equality is equality of values: no bool among numbers (True == 1 in Python).
    Opaque objects ({"$type": name}) are equal when their type names are, as in compare()."""
    if isinstance(value, dict):
        # An array's kind is part of its data: equal arrays hold the same kinds of values.
        return "$nd" in value or all(plain(v) for v in value.values())
    if isinstance(value, list):
        return not any(isinstance(v, bool) for v in value) and all(plain(v) for v in value[:1])
    return True


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Mismatch:
    where: str  # "" for the whole value, "[2]", "[1][0]", "['clé']"
    reason: str  # French
    structural: bool = False  # about kinds, shapes or lengths only: it shows no value
    precise: int | None = None  # digits that tell the two numbers apart, when the usual ones do not


def compare(expected: Any, obtained: Any, *, decimals: int | None = None, rtol: float | None = None,
            atol: float | None = None) -> Mismatch | None:
    """None when `obtained` matches `expected`, else where and why it does not. Both are data as
    values come back (`wire` turns a value written in Python, NumPy arrays included, into that)."""
    if type(expected) is type(obtained) and expected == obtained and plain(expected):
        return None  # the same data (the usual case for a right answer): nothing to walk through
    if decimals is not None:
        r, a = rtol or 0.0, (atol if atol is not None else 0.5 * 10.0 ** -decimals + 1e-12)
    else:
        r, a = DEFAULT_RTOL if rtol is None else rtol, DEFAULT_ATOL if atol is None else atol
    if not isinstance(expected, (list, dict, str, int, float, bool, type(None))):
        expected = encode(expected)  # a NumPy value written directly (checks store theirs as data already)
    return _compare(decode(expected, arrays=True), decode(obtained, arrays=True), r, a, "", decimals)


def _compare(exp, obt, rtol, atol, where, decimals) -> Mismatch | None:
    if isinstance(exp, Array):
        return _compare_array(exp, obt, rtol, atol, where, decimals)
    if isinstance(exp, Opaque):  # an object of the program's own (a random generator…): same type
        if isinstance(obt, Opaque) and obt.type_name == exp.type_name:
            return None
        return Mismatch(where, f"{describe_type(obt)} au lieu d'un objet de type {exp.type_name}", True)
    if isinstance(obt, Array):  # the check wrote a list or a number: an array of those values will do
        if obt.summary is not None:
            return Mismatch(where, f"{describe_type(obt)} {_instead_of(describe_type(exp))}", True)
        obt = obt.values
    if isinstance(obt, Opaque):
        return Mismatch(where, f"un objet de type {obt.type_name} {_instead_of(describe_type(exp))}", True)
    if isinstance(exp, bool) or exp is None:
        if obt is exp or (isinstance(obt, bool) and obt == exp):
            return None
        return Mismatch(where, f"{format_value(obt, decimals)} au lieu de {format_value(exp, decimals)}")
    if is_number(exp):
        if not is_number(obt):
            return Mismatch(where, f"{describe_type(obt)} au lieu d'un nombre", True)
        if _close(float(exp), float(obt), rtol, atol):
            return None
        precise = distinct_precision(exp, obt, decimals)
        shown = (format_number(obt, decimals, precise), format_number(exp, decimals, precise))
        return Mismatch(where, f"{shown[0]} au lieu de {shown[1]}", precise=precise)
    if isinstance(exp, complex):
        if isinstance(obt, complex) and _close(exp.real, obt.real, rtol, atol) and _close(exp.imag, obt.imag, rtol, atol):
            return None
        return Mismatch(where, f"{format_value(obt)} au lieu de {format_value(exp)}")
    if isinstance(exp, str):
        if isinstance(obt, str) and obt == exp:
            return None
        return Mismatch(where, f"{format_value(obt)} au lieu de {format_value(exp)}")
    if isinstance(exp, list):
        if not isinstance(obt, list):
            return Mismatch(where, f"{describe_type(obt)} au lieu d'une liste de {len(exp)} éléments", True)
        if len(obt) != len(exp):
            return Mismatch(where, f"{len(obt)} éléments au lieu de {len(exp)}", True)
        for i, (e, o) in enumerate(zip(exp, obt)):
            found = _compare(e, o, rtol, atol, f"{where}[{i}]", decimals)
            if found:
                return found
        return None
    if isinstance(exp, dict):
        if not isinstance(obt, dict):
            return Mismatch(where, f"{describe_type(obt)} au lieu d'un dictionnaire", True)
        if set(obt) != set(exp):
            missing = sorted(set(exp) - set(obt))
            extra = sorted(set(obt) - set(exp))
            parts = ([f"clés manquantes : {', '.join(map(str, missing))}"] if missing else []) + (
                [f"clés en trop : {', '.join(map(str, extra))}"] if extra else [])
            return Mismatch(where, " ; ".join(parts))
        for key in exp:
            found = _compare(exp[key], obt[key], rtol, atol, f"{where}[{key!r}]", decimals)
            if found:
                return found
        return None
    return Mismatch(where, f"valeur attendue d'un type inconnu ({type(exp).__name__})")


def _compare_array(exp: Array, obt, rtol, atol, where, decimals) -> Mismatch | None:
    if not isinstance(obt, Array):
        return Mismatch(where, f"{describe_type(obt)} au lieu d'un tableau NumPy de forme {shape_text(exp.shape)}",
                        True)
    if obt.shape != exp.shape:
        return Mismatch(where, f"un tableau de forme {shape_text(obt.shape)} au lieu de {shape_text(exp.shape)}", True)
    if (exp.kind == "b") != (obt.kind == "b") and "O" not in (exp.kind, obt.kind):
        return Mismatch(where, "des booléens au lieu de nombres" if obt.kind == "b" else
                        "des nombres au lieu de booléens (vrai/faux)", True)
    if exp.summary is not None or obt.summary is not None:
        if exp.summary is None or obt.summary is None or not _same_summary(exp.summary, obt.summary, rtol, atol):
            return Mismatch(where, "des valeurs différentes")
        return None
    return _compare(exp.values, obt.values, rtol, atol, where, decimals)


def _same_summary(exp: dict, obt: dict, rtol: float, atol: float) -> bool:
    """Two large arrays of the same shape: the same sample, the same sums (within tolerances that
    grow with the number of terms)."""
    if exp.get("n") != obt.get("n") or exp.get("at") != obt.get("at"):
        return False
    n = max(1, int(exp.get("n") or 1))
    sample_e, sample_o = exp.get("sample") or [], obt.get("sample") or []
    if len(sample_e) != len(sample_o) or not all(
            is_number(a) and is_number(b) and _close(float(a), float(b), rtol, atol) for a, b in zip(sample_e, sample_o)):
        return False
    scale = float(exp.get("abs") or 0.0)
    for key, spread in (("total", rtol * scale + atol * n), ("sq", 2 * rtol * float(exp.get("sq") or 0.0) + atol * n),
                        ("min", None), ("max", None)):
        e, o = exp.get(key), obt.get(key)
        if not (is_number(e) and is_number(o)):
            return False
        if spread is None:
            if not _close(float(e), float(o), rtol, atol):
                return False
        elif not (math.isfinite(e) and math.isfinite(o) and abs(e - o) <= spread + 1e-9 * abs(e)) and e != o:
            return False
    return True


def _close(e: float, o: float, rtol: float, atol: float) -> bool:
    if math.isnan(e) or math.isnan(o):
        return math.isnan(e) and math.isnan(o)
    if math.isinf(e) or math.isinf(o):
        return e == o
    return abs(o - e) <= atol + rtol * abs(e)


def leaves(value: Any):
    """The values inside nested lists and dicts (a dict's values, not its keys)."""
    if isinstance(value, (list, dict)):
        for item in value.values() if isinstance(value, dict) else value:
            yield from leaves(item)
    else:
        yield value


def has_text(value: Any) -> bool:
    return any(isinstance(v, str) for v in leaves(value))


def has_number(value: Any) -> bool:
    return any(is_number(v) for v in leaves(value))


def _count(value: Any) -> int:
    return sum(1 for _ in leaves(value))


def _instead_of(description: str) -> str:
    return ("au lieu d'" if description.startswith(("un ", "une ")) else "au lieu de ") + description


def same_values(expected: Any, obtained: Any) -> bool:
    """The same numbers, whatever their kind (a list of lists holding an array's values)."""
    try:
        return _compare(decode(expected), decode(obtained), DEFAULT_RTOL, DEFAULT_ATOL, "", None) is None
    except (TypeError, ValueError, RecursionError):
        return False


def same_shape(expected: Any, obtained: Any) -> bool:
    """Numbers where numbers are expected, lists of the same lengths, all the way down."""
    expected, obtained = decode(expected), decode(obtained)
    if is_number(expected) or isinstance(expected, bool):
        return is_number(obtained) or isinstance(obtained, bool)
    if isinstance(expected, list):
        return (isinstance(obtained, list) and len(obtained) == len(expected)
                and all(same_shape(e, o) for e, o in zip(expected, obtained)))
    if isinstance(expected, dict):
        return isinstance(obtained, dict) and set(obtained) == set(expected) and all(
            same_shape(expected[k], obtained[k]) for k in expected)
    return type(expected) is type(obtained) and not isinstance(obtained, str)


def _shape(value: Any) -> tuple[int, ...] | None:
    """(5, 5) for a rectangular nested list of numbers, () for a number, None otherwise."""
    if is_number(value) or isinstance(value, bool):
        return ()
    if not isinstance(value, list) or not value:
        return None
    inner = _shape(value[0])
    if inner is None or any(_shape(v) != inner for v in value[1:]):
        return None
    return (len(value), *inner)


def _dimensions(shape: tuple[int, ...]) -> str:
    return " × ".join(str(n) for n in shape)


def describe_type(value: Any) -> str:
    if isinstance(value, Array):
        return f"un tableau NumPy de forme {shape_text(value.shape)}"
    if isinstance(value, Opaque):
        return f"un objet de type {value.type_name}"
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "un booléen"
    if is_number(value):
        return "un nombre"
    if isinstance(value, str):
        return "un texte"
    if isinstance(value, list):
        shape = _shape(value)
        if shape is not None and len(shape) >= 2:
            return f"une liste de {count(shape[0], 'liste')} ({_dimensions(shape)} {plural(_count(value), 'valeur')})"
        return "une liste vide" if not value else f"une liste de {count(len(value), 'élément')}"
    if isinstance(value, dict):
        return "un dictionnaire"
    return type(value).__name__


SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
LARGE, SMALL = 1e9, 1e-4  # beyond these, powers of ten: −1e308 is not 309 digits


def _scientific(x: float, digits: int = 3) -> str:
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    power = str(int(exponent)).translate(SUPERSCRIPTS)
    return f"{mantissa} × 10{power}".replace(".", ",").replace("-", "−")


def distinct_precision(expected: float, obtained: float, decimals: int | None = None) -> int | None:
    """None when the course's usual writing already tells the two numbers apart; else the fewest digits
    (decimals, or significant digits in powers of ten) that do: never « 1 au lieu de 1 »."""
    if format_number(obtained, decimals) != format_number(expected, decimals):
        return None
    for digits in range((4 if decimals is None else decimals) + 1, 18):
        if format_number(obtained, decimals, digits) != format_number(expected, decimals, digits):
            return digits
    return 17


def format_number(x: float, decimals: int | None = None, precise: int | None = None) -> str:
    """A number as the course writes it: decimal comma, true minus sign, powers of ten when huge or tiny.
    `precise`: that many decimals (significant digits in powers of ten), to show a difference."""
    if precise is not None and is_number(x) and math.isfinite(x):
        x = float(x)
        if x != 0 and (abs(x) >= LARGE or abs(x) < SMALL):
            return _scientific(x, precise)
        text = f"{x:.{precise}f}".rstrip("0").rstrip(".")
        return ("0" if text in ("-0", "") else text).replace(".", ",").replace("-", "−")
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, int):
        if abs(x) < 10**15:
            return str(x).replace("-", "−")
        digits = str(abs(x))  # too big for a float, maybe: the powers of ten from the digits themselves
        shown = digits[1:4].rstrip("0")
        mantissa = digits[0] + ("," + shown if shown else "")
        approx, sign = "≈ " if digits[4:].strip("0") else "", "−" if x < 0 else ""
        return f"{approx}{sign}{mantissa} × 10{str(len(digits) - 1).translate(SUPERSCRIPTS)}"
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    if x != 0 and (abs(x) >= LARGE or (abs(x) < SMALL and decimals is None)):
        return _scientific(x)
    if decimals is None:
        text = f"{x:.4f}".rstrip("0").rstrip(".")
    else:
        text = f"{x:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    if text in ("-0", "-0.0"):
        text = "0"
    return text.replace(".", ",").replace("-", "−")


def format_value(value: Any, decimals: int | None = None, precise: int | None = None) -> str:
    """The course's notation ([0,79 ; 0,79]): a table up to 5 × 5 is written whole, anything bigger is cut
    after MAX_SHOWN values with « … » and its size said. `precise`: see Mismatch.precise."""
    value = decode(value)
    shape = _shape(value) if isinstance(value, list) else None
    small_table = shape is not None and len(shape) <= 2 and _count(value) <= SMALL_TABLE
    left = [_count(value) if small_table else MAX_SHOWN]
    text = _format(value, decimals, left, precise)
    if left[0] < 0:
        text += f" ({_dimensions(shape)} valeurs)" if shape and len(shape) >= 2 else f" ({count(len(value), 'élément')})"
    return text


def _format(value: Any, decimals: int | None, left: list[int], precise: int | None = None) -> str:
    if isinstance(value, Opaque):
        return f"<objet {value.type_name}>"
    if value is None:
        return "None"
    if isinstance(value, bool) or is_number(value):
        left[0] -= 1
        return format_number(value, decimals, precise)
    if isinstance(value, complex):
        left[0] -= 1
        return f"{format_number(value.real, decimals)} + {format_number(value.imag, decimals)}i"
    if isinstance(value, str):
        left[0] -= 1
        shown = value if len(value) <= 80 else value[:77] + "…"
        return f"« {shown} »"
    if isinstance(value, list):
        items = []
        for item in value:
            if left[0] <= 0 or len(items) == MAX_SHOWN:
                items.append("…")
                left[0] = -1
                break
            items.append(_format(item, decimals, left, precise))
        return "[" + " ; ".join(items) + "]"
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if left[0] <= 0:
                items.append("…")
                left[0] = -1
                break
            items.append(f"{key} : {_format(item, decimals, left, precise)}")
        return "{" + " ; ".join(items) + "}"
    return repr(value)
