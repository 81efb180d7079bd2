"""Turn a probe's value into plain JSON data without trusting the value: only the exact built-in types
are read, through the base classes' own slots (a float subclass that lies in `__eq__`, `__repr__` or
`__float__` is read as the number it holds); any other object arrives as {"$type": "ClassName"}, which
equals nothing. A NumPy array keeps its kind ({"$nd": {"k": kind, "s": shape, "v": values}}); in a
program's *state*, a large one is sent as a summary, which bounds what the grader keeps per copy.
"""

from __future__ import annotations

import json
import math
import sys
from types import ModuleType as _ModuleType

# NumPy is optional and never imported here: no NumPy value exists before something imported it.
_np = sys.modules.get("numpy")


def _numpy():
    """NumPy once anything imported it (then also bound as _np)."""
    global _np
    if _np is None:
        _np = sys.modules.get("numpy")
    return _np

MAX_ITEMS = 200_000
MAX_DEPTH = 12
MAX_STR = 20_000
SUMMARY_AT = 4096  # state only: arrays with more elements are summarised
STATE_ITEM_BYTES = 64 * 1024  # state only: a variable whose values take more is described, not sent
SAMPLES = 16

_float_value = float.__float__
_int_value = int.__int__
_str_value = str.__str__
_tuple_len, _tuple_item = tuple.__len__, tuple.__getitem__
_list_len, _list_item = list.__len__, list.__getitem__
_dict_items = dict.items
_type_name = type.__dict__["__qualname__"].__get__
_dumps = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode


class _Budget:
    def __init__(self):
        self.items = 0


def _name(value) -> str:
    try:
        return str(_type_name(type(value)))[:80]
    except Exception:  # noqa: BLE001 - a metaclass may break anything
        return "?"


def encode(value, _depth: int = 0, _budget: _Budget | None = None):
    budget = _budget or _Budget()
    budget.items += 1
    if budget.items > MAX_ITEMS:
        raise OverflowError("valeur trop grande pour être vérifiée")
    if _depth > MAX_DEPTH:
        return {"$type": "trop imbriqué"}
    if value is None or value is True or value is False:
        return value
    if isinstance(value, int):
        return _int_value(value)
    if isinstance(value, float):
        return _number(_float_value(value))
    if isinstance(value, complex):
        return {"$complex": [_number(complex.real.__get__(value)), _number(complex.imag.__get__(value))]}
    if isinstance(value, str):
        text = _str_value(value)
        return text if len(text) <= MAX_STR else text[:MAX_STR] + "…"
    if isinstance(value, tuple):
        return [encode(_tuple_item(value, i), _depth + 1, budget) for i in range(_tuple_len(value))]
    if isinstance(value, list):
        return [encode(_list_item(value, i), _depth + 1, budget) for i in range(_list_len(value))]
    if isinstance(value, dict):
        out = {}
        for key, item in list(_dict_items(value)):
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                return {"$type": "dict"}
            out[_str_value(key) if isinstance(key, str) else str(_int_value(key))] = encode(item, _depth + 1, budget)
        return out
    if _numpy() is not None:
        if isinstance(value, _np.ndarray):
            array = _np.ndarray.view(value, _np.ndarray)
            if array.size > MAX_ITEMS:
                raise OverflowError("tableau trop grand pour être vérifié")
            kind = array.dtype.kind
            if kind in "biuf":
                budget.items += int(array.size)
                values = _clean(_np.ndarray.tolist(array))
            elif kind == "c":
                return {"$type": "tableau complexe"}
            elif array.ndim:
                values = [encode(item, _depth + 1, budget) for item in _np.ndarray.tolist(array)]
            else:
                values = encode(array[()], _depth + 1, budget)
            return {"$nd": {"k": kind if kind in "biuf" else "O", "s": [int(n) for n in array.shape], "v": values}}
        if isinstance(value, _np.generic):
            return encode(_np.generic.item(value), _depth + 1, budget)
    torch_value = _from_torch(value)
    if torch_value is not None:
        return encode(torch_value, _depth + 1, budget)
    return {"$type": _name(value)}


def _number(x: float):
    # JSON has no NaN or infinity: tagged.
    if math.isnan(x):
        return {"$float": "nan"}
    if math.isinf(x):
        return {"$float": "inf" if x > 0 else "-inf"}
    return x


def _clean(data):
    if isinstance(data, list):
        return [_clean(x) for x in data]
    if isinstance(data, float):
        return _number(data)
    return data


def _from_torch(value):
    # As NumPy: never imported here (a tensor exists only once the program imported torch).
    torch, module = sys.modules.get("torch"), type(value).__module__
    if torch is None or _numpy() is None or type(module) is not str or not module.startswith("torch"):
        return None
    if isinstance(value, torch.Tensor):
        return torch.Tensor.numpy(torch.Tensor.cpu(torch.Tensor.detach(value)))
    return None


def summary(value):
    """A large numeric array as its shape and a few numbers that any other array would change."""
    array = _np.ndarray.view(value, _np.ndarray)
    flat = _np.ravel(array).astype(_np.float64)
    positions = sorted({int(round(i * (flat.size - 1) / (SAMPLES - 1))) for i in range(SAMPLES)})
    with _np.errstate(all="ignore"):
        numbers = {"n": int(flat.size), "total": float(_np.sum(flat)), "abs": float(_np.sum(_np.abs(flat))),
                   "sq": float(_np.sum(flat * flat)), "min": float(_np.min(flat)), "max": float(_np.max(flat)),
                   "at": positions, "sample": [float(flat[i]) for i in positions]}
    return {"$nd": {"k": array.dtype.kind, "s": [int(n) for n in array.shape], "sum": _clean(numbers)}}


def _state_value(value) -> tuple:
    if (_numpy() is not None and isinstance(value, _np.ndarray) and value.dtype.kind in "biuf"
            and value.size > SUMMARY_AT):
        encoded = summary(value)
        return encoded, len(_dumps(encoded))
    encoded = encode(value)
    size = len(_dumps(encoded))
    if size > STATE_ITEM_BYTES:
        return {"$type": f"{_name(value)} (trop grand)"}, 32
    return encoded, size


def state(namespace: dict, names, budget: int | None = None) -> dict:
    """The program's data variables (not modules, functions or classes), in definition order; with
    `names`, those names only, a missing one as {"$missing": true}. Past `budget` written characters
    in all (a value's bound: the grader refuses a larger state), a variable is described, not sent."""
    wanted = list(names) if names else [n for n in namespace if not n.startswith("__")]
    out = {}
    total = 0
    for name in wanted:
        if name not in namespace:
            out[name] = {"$missing": True}
            continue
        value = namespace[name]
        if not names and (callable(value) or isinstance(value, (type, _ModuleType))):
            continue
        try:
            encoded, size = _state_value(value)
        except Exception as exc:  # noqa: BLE001 - an object that breaks encoding is described
            encoded, size = {"$type": f"{_name(value)} ({type(exc).__name__})"}, 128
        if budget is not None and total + size + len(name) > budget:
            encoded, size = {"$type": f"{_name(value)} (trop grand)"}, 100
            if total + size + len(name) > budget + (32 << 10):  # even described, too many: not sent
                break
        total += size + len(name) + 4
        out[name] = encoded
    return out
