"""Every number the attention explorer shows, computed by the course's functions.

`attention(X, i)` of exercise 2 (the student's own file, see definitions.locate) computes the
scores of token i (its own dot product), calls `softmax` on them and returns the weighted sum. We
run that very function with `softmax` rebound, in its own namespace, to a wrapper that records the
scores it receives, applies the explorer's
options the way the course says (divide by √d, then −∞ for masked tokens, before the softmax), and
calls the course's `softmax`. So the scores, the weights and the new vector all come from the
exercise's code; only the exponentials shown step by step are `math.exp` of the scores (the
definition the step illustrates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from trous.core.course import Course
from trous.publish.notebooks import definitions

PADDING = "<rempl>"
PADDING_VECTOR = [0, 0]  # the course gives <rempl> the embedding [0 ; 0]
DEFAULT_NAMES = ["fièvre", "sans", "toux"]
MASKED = float("-inf")


class ComputationError(Exception):
    """French: why the explorer cannot compute (shown in the widget)."""


@dataclass
class Row:
    """One token reading the sentence: token `index` is the query."""

    index: int
    query: list[float]
    scores: list[float]  # the dot products, as attention() computed them
    used: list[float]  # what went into softmax (after √d and the mask)
    exps: list[float]
    total: float
    weights: list[float]  # what softmax() returned
    new: list[float]  # what attention() returned


class Attention:
    """The course's `attention`, with its call to `softmax` observed and, when asked, adjusted."""

    def __init__(self, softmax, attention, namespace: dict, source: Path | None = None, fallback: str | None = None):
        self.softmax, self.attention, self.source = softmax, attention, source
        self.fallback = fallback  # why the student's own file was not used, when it was not
        self._namespace = namespace
        self._adjust = None
        self._calls: list[tuple[list[float], list[float], list[float]]] = []
        namespace["softmax"] = self._observed_softmax  # attention() finds softmax in its globals

    @classmethod
    def from_course(cls, course: Course) -> "Attention":
        path, found, why = definitions.locate(course, ("softmax", "attention"))
        return cls(found["softmax"], found["attention"], found["__namespace__"], path, why)

    def stamp(self) -> tuple | None:
        """When its file last changed: the explorer reads the functions again after an edit."""
        try:
            info = self.source.stat() if self.source else None
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size) if info else None

    def _observed_softmax(self, scores):
        scores = [float(s) for s in scores]
        used = self._adjust(scores) if self._adjust else scores
        weights = [float(w) for w in self.softmax(used)]
        self._calls.append((scores, used, weights))
        return weights

    def row(self, X: list[list[float]], i: int, *, scale: bool = False, masked: frozenset[int] = frozenset()) -> Row:
        d = len(X[i])

        def adjust(scores: list[float]) -> list[float]:
            if len(scores) != len(X):
                raise ComputationError(f"softmax a reçu {len(scores)} scores pour {len(X)} tokens")
            out = [s / math.sqrt(d) for s in scores] if scale else list(scores)
            return [MASKED if k in masked else s for k, s in enumerate(out)]

        self._adjust, self._calls = adjust, []
        try:
            new = [float(v) for v in self.attention(X, i)]
        except ZeroDivisionError as exc:
            if len(masked) < len(X):
                raise self._failed(exc) from None
            raise ComputationError("tous les tokens sont masqués : la somme des exponentielles vaut 0") from None
        except OverflowError:
            raise ComputationError("exponentielle trop grande : choisis des composantes plus petites") from None
        except ComputationError:
            raise
        except Exception as exc:  # noqa: BLE001 - the student's own functions may fail: said, not raised
            raise self._failed(exc) from None
        finally:
            self._adjust = None
        if len(self._calls) != 1:
            raise ComputationError(f"attention() devait appeler softmax une fois, pas {len(self._calls)}")
        scores, used, weights = self._calls[0]
        exps = [math.exp(s) for s in used]
        return Row(i, list(X[i]), scores, used, exps, sum(exps), weights, new)

    def _failed(self, exc: Exception) -> ComputationError:
        where = self.source.name if self.source else "le cours"
        return ComputationError(f"le calcul s'arrête dans softmax ou attention ({where}) : {type(exc).__name__} : {exc}")

    def weights(self, X: list[list[float]], i: int) -> list[float]:
        return self.row(X, i).weights


@dataclass
class Settings:
    names: list[str] = field(default_factory=lambda: list(DEFAULT_NAMES))
    vectors: list[list[float]] = field(default_factory=lambda: [[1, 0], [0, 1], [1, 1]])
    padding: list[bool] = field(default_factory=lambda: [False, False, False])
    places: bool = False
    scale: bool = False
    mask: bool = False
    selected: int = -1
    w: float = 0.5


@dataclass
class Sentence:
    """What goes into attention once the settings are applied."""

    labels: list[str]
    embeddings: list[list[float]]
    place_vectors: list[list[float]] | None
    inputs: list[list[float]]
    masked: frozenset[int]


def sentence(settings: Settings, places: list[list[float]]) -> Sentence:
    labels, embeddings = [], []
    for name, vector, pad in zip(settings.names, settings.vectors, settings.padding):
        labels.append(PADDING if pad else name)
        embeddings.append(list(PADDING_VECTOR) if pad else [float(v) for v in vector])
    place_vectors = [list(p) for p in places[:len(embeddings)]] if settings.places else None
    if place_vectors is not None and len(place_vectors) < len(embeddings):
        raise ComputationError(f"le cours donne {len(places)} vecteurs de place pour {len(embeddings)} tokens")
    inputs = ([[a + b for a, b in zip(v, p)] for v, p in zip(embeddings, place_vectors)]
              if place_vectors is not None else [list(v) for v in embeddings])
    masked = frozenset(k for k, pad in enumerate(settings.padding) if pad) if settings.mask else frozenset()
    return Sentence(labels, embeddings, place_vectors, inputs, masked)


# -- the RNN comparison ----------------------------------------------------------------------------
@dataclass
class Distance:
    words_between: int  # « Pas » is this many words before « toux »
    rnn_share: float  # what is left of « Pas » after that many multiplications by w
    attention_weight: float  # the weight « toux » gives « Pas » in that arrangement


@dataclass
class RnnComparison:
    phrase: list[str]
    distance: int
    w: float
    share: float
    weight: float
    by_distance: list[Distance]


def rnn_comparison(attention: Attention, phrase: list[str], vec: dict, w: float,
                   first: str = "Pas", last: str = "toux") -> RnnComparison:
    """« Pas » moved 1, 2, … words before « toux » in the same words: the RNN keeps w**distance of
    it, attention gives it the weight the course's functions compute for that arrangement."""
    distance = phrase.index(last) - phrase.index(first)
    others = [m for m in phrase if m != first]
    rows = []
    for k in range(1, distance + 1):
        words = list(others)
        words.insert(words.index(last) - k + 1, first)
        X = [list(vec[m]) for m in words]
        weights = attention.weights(X, words.index(last))
        rows.append(Distance(k, w ** k, weights[words.index(first)]))
    X = [list(vec[m]) for m in phrase]
    weight = attention.weights(X, phrase.index(last))[phrase.index(first)]
    return RnnComparison(list(phrase), distance, w, w ** distance, weight, rows)
