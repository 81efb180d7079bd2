"""The attention explorer: a notebook widget (anywidget) over the course's own functions.

The browser holds the controls (tokens, toggles, the row clicked, w) and draws `view`; the kernel
recomputes `view` whenever a control changes, with `softmax` and `attention` taken from exercise 2
— the student's own file, read again when it changes — and the RNN sentence from exercise 4. See
calcul.py and vue.py. The caption under the widget names the file the functions come from.
The padding mask turns the last token into <rempl> when there is none; turned off, it gives that
token back.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from trous.core.course import Course, CourseError
from trous.inputs.standalone import StandaloneError, course_from_notebooks
from trous.publish.notebooks import definitions

from .calcul import DEFAULT_NAMES, Attention, Settings
from .vue import build

HERE = Path(__file__).resolve().parent
LIMIT = 10.0  # components beyond ±10 make exp() overflow for no teaching gain


def _clamp(value, default: float = 0.0) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return default
    if v != v:  # NaN
        return default
    return max(-LIMIT, min(LIMIT, v))


def source_text(course: Course, where: Path, names: dict[str, str] | None = None, fallback: str | None = None) -> str:
    """Where the explorer's functions come from, named as the student knows that file: in an edition,
    the student's own exercises/ file, or its pristine copy when that file no longer gives them
    (`fallback`: why); in an nbgrader assignment, `names` gives each exercise's notebook (whose given
    code is locked)."""
    where = Path(where).resolve()
    for exercise in course.exercises:
        if where in (exercise.path.resolve(), exercise.template_path.resolve()):
            shown = (names or {}).get(exercise.id) or exercise.path.relative_to(course.root).as_posix()
            if fallback:
                return (f"softmax et attention : celles du modèle de l'exercice {exercise.number}, car ton fichier "
                        f"{shown} ne les donne plus ({fallback})")
            own = " : si tu les modifies, l'explorateur suit" if where == exercise.path.resolve() and not names else ""
            return f"softmax et attention : les fonctions de l'exercice {exercise.number} ({shown}){own}"
    return f"softmax et attention : les fonctions de {where}"


def course_here(where: str | Path | None) -> tuple[Course, dict[str, str] | None]:
    """The course around `where` (the kernel's folder): a course directory or a student edition, else
    an nbgrader assignment folder, whose exercise notebooks carry their templates."""
    try:
        return Course.find(where or Path.cwd()), None
    except CourseError:
        try:
            return course_from_notebooks(where or Path.cwd())
        except StandaloneError:
            raise CourseError(str(where or Path.cwd()), None, "ni course.yaml ici ou au-dessus, ni carnet d'exercice "
                              "de trous : ouvre l'explorateur depuis le dossier du cours ou du devoir") from None


class Explorer(anywidget.AnyWidget):
    _esm = HERE / "explorer.js"
    _css = HERE / "explorer.css"

    names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    vectors = traitlets.List().tag(sync=True)
    padding = traitlets.List(traitlets.Bool()).tag(sync=True)
    places = traitlets.Bool(False).tag(sync=True)
    scale = traitlets.Bool(False).tag(sync=True)
    mask = traitlets.Bool(False).tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    w = traitlets.Float(0.5).tag(sync=True)
    view = traitlets.Dict().tag(sync=True)
    source = traitlets.Unicode("").tag(sync=True)  # where the functions come from, shown under the widget

    def __init__(self, course: Course | str | Path | None = None, **kwargs):
        names = None
        if not isinstance(course, Course):
            course, names = course_here(course)
        self._course, self._names = course, names
        self._mask_made: int | None = None  # the token the mask turned into <rempl>, given back when it goes
        self._attention = Attention.from_course(course)
        self._stamp = self._attention.stamp()
        values = definitions.load(self._attention.source, ("x", "places"))
        self._places = [list(p) for p in values["places"]]
        self._rnn = None
        try:
            path = definitions.find(course, ("phrase", "vec"))
            found = definitions.load(path, ("phrase", "vec"))
            self._rnn = (list(found["phrase"]), dict(found["vec"]))
        except definitions.DefinitionError:
            pass  # the RNN panel says so; the rest of the explorer works
        kwargs.setdefault("names", list(DEFAULT_NAMES))
        kwargs.setdefault("vectors", [list(v) for v in values["x"]])
        kwargs.setdefault("padding", [False] * len(kwargs["names"]))
        super().__init__(source=self._source_text(), **kwargs)
        self._refresh()

    def _source_text(self) -> str:
        return source_text(self._course, self._attention.source, self._names, self._attention.fallback)

    @traitlets.observe("names", "vectors", "padding", "places", "scale", "mask", "selected", "w")
    def _changed(self, change) -> None:
        if change["name"] == "mask" and change["new"] and not any(self.padding):
            # The mask is about padding: with none yet, the last token becomes <rempl>.
            self._mask_made = len(self.names) - 1
            self.padding = [False] * (len(self.names) - 1) + [True]
            return  # setting padding refreshes
        if change["name"] == "mask" and not change["new"] and self._mask_made is not None:
            made, self._mask_made = self._mask_made, None
            if made < len(self.padding) and self.padding[made]:
                self.padding = [p and k != made for k, p in enumerate(self.padding)]  # its token back
                return
        if change["name"] == "padding" and self._mask_made is not None and not (
                self._mask_made < len(self.padding) and self.padding[self._mask_made]):
            self._mask_made = None  # the student took it back already: the mask has nothing to give back
        self._refresh()

    def settings(self) -> Settings:
        n = len(self.names)
        vectors = [[_clamp(c) for c in (list(v) + [0, 0])[:2]] for v in (list(self.vectors) + [[0, 0]] * n)[:n]]
        padding = [bool(p) for p in (list(self.padding) + [False] * n)[:n]]
        w = min(1.0, max(0.0, float(self.w)))
        return Settings(list(self.names), vectors, padding, self.places, self.scale, self.mask, self.selected, w)

    def _reload(self) -> None:
        """The student changed the file the functions come from: read them again."""
        stamp = self._attention.stamp()
        if stamp == self._stamp and self._attention.fallback is None:
            return
        try:
            attention = Attention.from_course(self._course)
        except definitions.DefinitionError:
            return  # the pristine copy went missing: keep what was read
        self._attention, self._stamp = attention, attention.stamp()
        self.source = self._source_text()

    def _refresh(self) -> None:
        self._reload()
        self.view = build(self.settings(), self._attention, self._places, self._rnn)
        if self._rnn is None:
            self.view = {**self.view, "rnn_error": "comparaison RNN indisponible : aucun exercice ne définit "
                                                   "phrase et vec sans trou"}
