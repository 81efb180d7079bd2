"""The attention explorer: a notebook widget (anywidget) over the course's own functions.

The browser holds the controls (tokens, toggles, the row clicked, w) and draws `view`; the kernel
recomputes `view` whenever a control changes, with `softmax` and `attention` taken from the course
(exercise 2) and the RNN sentence from exercise 4. See computation.py and view.py.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from ..course.definition import Course, CourseError
from . import definitions
from .computation import DEFAULT_NAMES, Attention, Settings
from .view import build

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


def source_text(course: Course, where: Path, names: dict[str, str] | None = None) -> str:
    """Where the explorer's functions come from, named as the student knows that file: an edition
    reads them from its pristine copy (.trous/modeles/), the student edits exercises/; in an nbgrader
    assignment, `names` gives each exercise's notebook."""
    for exercise in course.exercises:
        if exercise.template_path.resolve() == Path(where).resolve():
            shown = (names or {}).get(exercise.id) or exercise.path.relative_to(course.root).as_posix()
            return f"softmax et attention : les fonctions de l'exercice {exercise.number} ({shown})"
    return f"softmax et attention : les fonctions de {where}"


def course_here(where: str | Path | None) -> tuple[Course, dict[str, str] | None]:
    """The course around `where` (the kernel's folder): a course directory or a student edition, else
    an nbgrader assignment folder, whose exercise notebooks carry their templates."""
    try:
        return Course.find(where or Path.cwd()), None
    except CourseError:
        from ..nbgrader_course.standalone import StandaloneError, course_from_notebooks  # noqa: PLC0415

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
        self._attention = Attention.from_course(course)
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
        super().__init__(source=source_text(course, self._attention.source, names), **kwargs)
        self._refresh()

    @traitlets.observe("names", "vectors", "padding", "places", "scale", "mask", "selected", "w")
    def _changed(self, change) -> None:
        if change["name"] == "mask" and change["new"] and not any(self.padding):
            # The mask is about padding: with none yet, the last token becomes <rempl>.
            self.padding = [False] * (len(self.names) - 1) + [True]
            return  # setting padding refreshes
        self._refresh()

    def settings(self) -> Settings:
        n = len(self.names)
        vectors = [[_clamp(c) for c in (list(v) + [0, 0])[:2]] for v in (list(self.vectors) + [[0, 0]] * n)[:n]]
        padding = [bool(p) for p in (list(self.padding) + [False] * n)[:n]]
        w = min(1.0, max(0.0, float(self.w)))
        return Settings(list(self.names), vectors, padding, self.places, self.scale, self.mask, self.selected, w)

    def _refresh(self) -> None:
        self.view = build(self.settings(), self._attention, self._places, self._rnn)
        if self._rnn is None:
            self.view = {**self.view, "rnn_error": "comparaison RNN indisponible : aucun exercice ne définit "
                                                   "phrase et vec sans trou"}
