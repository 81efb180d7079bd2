"""What a notebook carries about its exercise, so that it can be checked and graded without the course.

The *public* bundle (in the check cell, shipped to students) holds what the self-check needs; the
*hidden* one (in hidden-test blocks only, stripped from the release) adds the reference solution and
the hidden grader. `materialize` writes a bundle back as a course directory, so that the very same
engine and self-check run on it: the notebook's grades are the engine's grades.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import yaml

from ..core.blanks import find_blanks
from ..core.course import Course, Exercise
from ..core.course import TEMPLATES_DIR

FORMAT = 1


@dataclass(frozen=True)
class AnswerCell:
    grade_id: str  # nbgrader grade_id of the answer cell
    template: str  # its source in the template (with the `___` blanks)


@dataclass(frozen=True)
class Bundle:
    course: dict  # {"id", "title", "language", "version"}
    limits: dict  # course.yaml `limits:` (only the values set)
    assignment: dict  # {"id", "title", "source"}
    exercise: dict  # course.yaml's exercise entry
    template: str  # exercises/<id>.py
    checks: str  # exercises/test_<id>.py
    cells: tuple[AnswerCell, ...]
    solution: str | None = None  # hidden bundle only
    grader: str | None = None  # hidden bundle only

    @property
    def exercise_id(self) -> str:
        return self.exercise["id"]

    @property
    def hidden(self) -> bool:
        return self.solution is not None

    def public(self) -> "Bundle":
        return replace(self, solution=None, grader=None)

    def to_dict(self) -> dict:
        data = {"format": FORMAT, **asdict(self)}
        data["cells"] = [[c.grade_id, c.template] for c in self.cells]
        if not self.hidden:
            del data["solution"], data["grader"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Bundle":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("données d'exercice illisibles (cellule modifiée ou version de trous différente)")
        return cls(data["course"], data["limits"], data["assignment"], data["exercise"], data["template"],
                   data["checks"], tuple(AnswerCell(g, t) for g, t in data["cells"]),
                   data.get("solution"), data.get("grader"))

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


def of(exercise: Exercise, cells: list[AnswerCell], hidden: bool) -> Bundle:
    course = exercise.course
    info = course.spec.course.model_dump(mode="json")
    limits = course.spec.limits.model_dump(mode="json", exclude_none=True)
    assignment = {"id": exercise.assignment.id, "title": exercise.assignment.title,
                  "source": exercise.assignment.source}
    entry = exercise.spec.model_dump(mode="json", exclude_none=True)
    for blank, spec in zip(entry["blanks"], exercise.blanks):
        blank["hint"] = spec.hints[0]  # the one feedback shows; the later ones come close to the answer
    read = lambda p: p.read_text(encoding="utf-8")  # noqa: E731
    return Bundle(info, limits, assignment, entry, read(exercise.template_path), read(exercise.checks_path),
                  tuple(cells), read(exercise.solution_path) if hidden else None,
                  read(exercise.grader_path) if hidden else None)


def materialize(bundle: Bundle, root: str | Path) -> Exercise:
    """Write the bundle as a course directory with this one exercise; the student's file is
    `exercises/<id>.py` (the caller writes it), the template a pristine copy beside it."""
    order = [(bundle.assignment.get("id"), [bundle.exercise_id])]
    return materialize_course([bundle], order, root, bundle.hidden).exercise(bundle.exercise_id)


def materialize_course(bundles: list[Bundle], order: list[tuple[str, list[str]]], root: str | Path,
                       hidden: bool = True) -> Course:
    """Write bundles back as a course directory, its assignments and exercises in `order` ((assignment
    id, exercise ids)), without student files; with the solutions and hidden graders when `hidden`."""
    by_id = {b.exercise_id: b for b in bundles}
    assignments = []
    for assignment_id, exercise_ids in order:
        exercises = [by_id[e] for e in exercise_ids]
        if any(b.assignment.get("id") != assignment_id for b in exercises):
            raise ValueError(f"devoir {assignment_id} : un exercice y est rangé sous un autre devoir")
        assignments.append({**exercises[0].assignment, "exercises": [b.exercise for b in exercises]})
    spec = {"course": bundles[0].course, "assignments": assignments}
    if bundles[0].limits:
        spec["limits"] = bundles[0].limits
    files = {"course.yaml": yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)}
    for bundle in bundles:
        ex = bundle.exercise_id
        files[f"{TEMPLATES_DIR}/{ex}.py"], files[f"exercises/test_{ex}.py"] = bundle.template, bundle.checks
        if hidden:
            files[f"solutions/{ex}.py"] = bundle.solution or ""
            files[f"graders/test_{ex}.py"] = bundle.grader or ""
    for rel, text in files.items():
        (Path(root) / rel).parent.mkdir(parents=True, exist_ok=True)
        (Path(root) / rel).write_text(text, encoding="utf-8")
    return Course.load(root)


# -- reading the bundles back from cell sources (one-line literal calls, never executed) ---------------
def cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _calls(source: str, name: str) -> list[list]:
    found = []
    for line in source.split("\n"):
        if not line.startswith(name + "("):
            continue
        try:
            call = ast.parse(line, mode="eval").body
            found.append([ast.literal_eval(a) for a in call.args])
        except (SyntaxError, ValueError, TypeError, AttributeError, MemoryError, RecursionError):
            continue
    return found


def hidden_calls(source: str) -> list[tuple[str, dict]]:
    """(blank id, hidden bundle) of each `corriger_trou(...)` line of a grade cell's source."""
    return [(args[0], args[1]) for args in _calls(source, "corriger_trou")
            if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], dict)]


def check_bundle_of(cell: dict) -> Bundle | None:
    """The public bundle a check cell carries: in its metadata (`trous.verification`), or, in notebooks
    built by older versions of trous, as the literal of its `verifier(...)` line."""
    meta = (cell.get("metadata") or {}).get("trous") if isinstance(cell, dict) else None
    data = meta.get("verification") if isinstance(meta, dict) else None
    source = cell_source(cell) if isinstance(cell, dict) else ""
    for found in [data] if isinstance(data, dict) else [args[0] for args in _calls(source, "verifier") if args]:
        try:
            return Bundle.from_dict(found).public()
        except (ValueError, KeyError, TypeError, IndexError):
            continue
    return None


TROUS_KEY = "trous"  # trous's own cell metadata in an nbgrader notebook


@functools.lru_cache(maxsize=256)
def _hidden_bundles(source: str) -> tuple[tuple[str, Bundle], ...]:
    # Every student's grade cells are the same (nbgrader restores them): parse each source once.
    found = []
    for blank_id, data in hidden_calls(source):
        try:
            found.append((blank_id, Bundle.from_dict(data)))
        except (ValueError, KeyError, TypeError):
            continue
    return tuple(found)


def grade_cells(nb) -> dict[str, list[tuple[object, str, Bundle]]]:
    """Exercise id → [(cell, blank id, hidden bundle)] for the trous grade cells of a notebook (its
    grade cells, as nbgrader's utils.is_grade says, whose hidden code carries a bundle)."""
    found: dict[str, list] = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or not (cell.get("metadata", {}).get("nbgrader") or {}).get("grade", False):
            continue
        for blank_id, bundle in _hidden_bundles(cell.source):
            found.setdefault(bundle.exercise_id, []).append((cell, blank_id, bundle))
    return found


def grade_id(exercise: Exercise, kind: str, key: str | int) -> str:
    """The id nbgrader's metadata gives a cell of the exercise's notebook (« 01_moyenne-reponse-1 »)."""
    return f"{exercise.id}-{kind}-{key}"


def answer_cells(exercise: Exercise) -> list[AnswerCell]:
    """The answer cells of the exercise's notebook, as the nbgrader build names them."""
    import jupytext  # noqa: PLC0415 - slow to import: only for a course whose source notebooks are not there

    template = jupytext.reads(exercise.template_path.read_text(encoding="utf-8"), fmt="py:percent")
    cells = [c for c in template.cells if c.cell_type == "code" and find_blanks(c.source)]
    return [AnswerCell(grade_id(exercise, "reponse", k), c.source) for k, c in enumerate(cells, 1)]
