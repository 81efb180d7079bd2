"""The explorer's page, as data: every number already written the French way ("0,21", "[0,79 ; 0,79]",
"−∞"), so the browser side only lays out what it receives and computes nothing.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from .calcul import Attention, ComputationError, Row, Sentence, Settings, rnn_comparison, sentence


def number(x: float, decimals: int = 2) -> str:
    """As the course writes numbers: 0,21 ; 1 ; 1,86 ; −∞."""
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    if math.isnan(x):
        return "nan"  # a student's softmax may give it
    # Half up, as by hand (0,125 → 0,13), from the shortest decimal that reads back as x.
    r = Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    if r == 0:
        r = Decimal(0)  # no "-0"
    text = f"{r:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace(".", ",").replace("-", "−")


def small(x: float) -> str:
    """A share that may be tiny: 0,125 ; 0,063 ; then two significant digits (0,0039)."""
    if x == 0 or abs(x) >= 0.01:
        return number(x, 3)
    digits = -math.floor(math.log10(abs(x))) + 1
    return number(x, digits)


def vector(v: list[float]) -> str:
    return "[" + " ; ".join(number(c) for c in v) + "]"


def fraction(share: float) -> str:
    """1/256 when the share is one over a whole number, ≈ 1/593 for a small share, else nothing."""
    if share <= 0 or share >= 1:
        return ""
    inverse = 1 / share
    whole = round(inverse)
    if abs(inverse - whole) < 1e-9 * inverse:
        return f"1/{whole}"
    return f"≈ 1/{whole}" if share < 0.1 else ""


def _quoted(label: str) -> str:
    return f"« {label} »"


def _dot_text(q: list[float], k: list[float]) -> str:
    return " + ".join(f"{number(a)} × {number(b)}" for a, b in zip(q, k))


def steps(s: Sentence, row: Row, scale: bool) -> dict:
    """Row `row.index`'s computation, step by step, with the actual numbers."""
    i, labels, X = row.index, s.labels, s.inputs
    d = len(X[i])
    parts = []
    if s.place_vectors is not None:
        vec = (f"{vector(s.embeddings[i])} + place {vector(s.place_vectors[i])} = {vector(X[i])}")
    else:
        vec = vector(X[i])
    parts.append({"title": f"1. Le vecteur de {_quoted(labels[i])}", "lines": [vec]})
    lines = [f"avec {_quoted(labels[k])} {vector(X[k])} : {_dot_text(X[i], X[k])} = {number(row.scores[k])}"
             for k in range(len(X))]
    parts.append({"title": "2. Les scores : un produit scalaire par token, lui compris", "lines": lines})
    if scale:
        root = math.sqrt(d)
        parts.append({"title": f"Division par √d = √{d} ≈ {number(root)}",
                      "lines": [f"{number(sc)} / {number(root)} = {number(sc / root)}" for sc in row.scores]})
    if s.masked:
        parts.append({"title": "Masque : le score des <rempl> devient −∞ avant la softmax",
                      "lines": [f"{_quoted(labels[k])} : −∞" for k in sorted(s.masked)]})
    exps = [f"exp({number(u)}) = {number(e)}" for u, e in zip(row.used, row.exps)]
    parts.append({"title": "3. Les exponentielles et leur somme",
                  "lines": exps + [f"somme = {' + '.join(number(e) for e in row.exps)} = {number(row.total)}"]})
    parts.append({"title": "4. Les poids : chaque exponentielle divisée par la somme",
                  "lines": [f"{_quoted(labels[k])} : {number(e)} / {number(row.total)} = {number(w)}"
                            for k, (e, w) in enumerate(zip(row.exps, row.weights))]})
    terms = " + ".join(f"{number(w)} × {vector(x)}" for w, x in zip(row.weights, X))
    parts.append({"title": "5. Le nouveau vecteur : la somme des poids × vecteurs",
                  "lines": [f"{terms} = {vector(row.new)}"]})
    return {"token": labels[i], "index": i, "parts": parts, "result": vector(row.new)}


def scores_heading(d: int, masked: bool, labels: list[str]) -> str:
    """The scores column's heading: what its numbers are, as the toggles make them."""
    what = "scores" + (f" ÷ √{d}" if d else "") + (" (−∞ pour les <rempl>)" if masked else "")
    return f"{what} : {', '.join(labels)}"


def build(settings: Settings, attention: Attention, places: list[list[float]],
          rnn: tuple[list[str], dict] | None) -> dict:
    view: dict = {"error": None, "rnn_error": None, "d": 2}
    try:
        s = sentence(settings, places)
        rows = [attention.row(s.inputs, i, scale=settings.scale, masked=s.masked) for i in range(len(s.inputs))]
    except ComputationError as exc:
        return {**view, "error": str(exc), "rows": [], "matrix": [], "steps": None, "rnn": None}
    view["d"] = len(s.inputs[0]) if s.inputs else 0
    view["tokens"] = [{"label": lab, "embedding": vector(e), "input": vector(x),
                       "place": vector(s.place_vectors[k]) if s.place_vectors else None,
                       "masked": k in s.masked}
                      for k, (lab, e, x) in enumerate(zip(s.labels, s.embeddings, s.inputs))]
    # The scores column shows what the softmax receives: divided by √d, −∞ where masked, when asked.
    view["rows"] = [{"label": s.labels[r.index], "input": vector(s.inputs[r.index]),
                     "scores": [number(v) for v in r.used], "weights": [number(v) for v in r.weights],
                     "new": vector(r.new)} for r in rows]
    view["scores_heading"] = scores_heading(settings.scale and view["d"], bool(s.masked), s.labels)
    view["matrix"] = [[w for w in r.weights] for r in rows]
    view["matrix_text"] = [[number(w) for w in r.weights] for r in rows]
    view["labels"] = s.labels
    selected = settings.selected
    view["steps"] = steps(s, rows[selected], settings.scale) if 0 <= selected < len(rows) else None
    view["rnn"] = None
    if rnn is not None:
        phrase, vec = rnn
        try:
            c = rnn_comparison(attention, phrase, vec, settings.w)
        except (ComputationError, KeyError, ValueError) as exc:
            view["rnn_error"] = f"comparaison RNN impossible : {exc}"
        else:
            view["rnn"] = {
                "phrase": " ".join(c.phrase), "distance": c.distance, "w": number(c.w),
                "share": small(c.share), "fraction": fraction(c.share), "weight": number(c.weight),
                "rows": [{"distance": r.words_between, "rnn": small(r.rnn_share), "rnn_value": r.rnn_share,
                          "attention": number(r.attention_weight), "attention_value": r.attention_weight}
                         for r in c.by_distance],
            }
    return view
