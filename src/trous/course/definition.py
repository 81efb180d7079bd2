"""The course: `course.yaml`, validated, and where each exercise's files are.

Layout of a course directory (the repository root, or a student edition):

    course.yaml                      this description
    exercises/NN_slug.py             what students fill in (the template)
    exercises/test_NN_slug.py        the public checks, shipped to students
    solutions/NN_slug.py             the reference solution (teachers only)
    graders/test_NN_slug.py          the hidden grader (teachers only)
    .trous/modeles/NN_slug.py        a pristine copy of each template, in a student edition

Every error names the file, the line, and what to write instead.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import yamlpos

COURSE_FILE = "course.yaml"
TEMPLATES_DIR = Path(".trous") / "modeles"

# What to write instead, by field name: shown with every error about that field.
EXAMPLES = {
    "id": "id: 01_toux   (exercice : deux chiffres, « _ », minuscules ; trou : minuscules et « _ »)",
    "title": 'title: "L\'attention de « toux » à la main"',
    "language": "language: fr",
    "version": 'version: "2026.1"',
    "file": "file: exercises/01_toux.py",
    "source": 'source: "003 — À toi de coder : L\'attention de « toux » à la main"',
    "timeout": "timeout: 8   (secondes, entre 1 et 60)",
    "points": "points: 1   (nombre positif)",
    "hint": 'hint: "Additionne toutes les valeurs de la liste e."',
    "blanks": "blanks:\n  - id: somme_exp\n    points: 1\n    hint: \"…\"",
    "exercises": "exercises:\n  - id: 01_toux\n    title: …\n    file: exercises/01_toux.py\n    blanks: …",
    "assignments": "assignments:\n  - id: partie5\n    title: …\n    exercises: …",
    "course": "course:\n  id: attention\n  title: …\n  language: fr",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlankSpec(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)
    points: float = Field(default=1.0, gt=0, le=100)
    hint: str | list[str]
    title: str | None = None  # a few words naming what the blank computes (reports)

    @field_validator("hint")
    @classmethod
    def _hint_not_empty(cls, value):
        hints = [value] if isinstance(value, str) else value
        if not hints or any(not h.strip() for h in hints):
            raise ValueError("indice vide")
        return value

    @property
    def hints(self) -> list[str]:
        return [self.hint] if isinstance(self.hint, str) else list(self.hint)


class LimitsSpec(_Strict):
    wall: float | None = Field(default=None, gt=0, le=600)
    cpu: int | None = Field(default=None, gt=0, le=3600)
    memory_mb: int | None = Field(default=None, ge=64, le=16384)
    processes: int | None = Field(default=None, ge=1, le=1024)
    output_kb: int | None = Field(default=None, ge=1, le=65536)
    file_mb: int | None = Field(default=None, ge=1, le=4096)
    files: int | None = Field(default=None, ge=0, le=100000)
    value_kb: int | None = Field(default=None, ge=1, le=65536)  # largest value a check reads back
    # Seconds of wall time for a whole copy (every exercise): past it, the rest is not run.
    copy_wall: float | None = Field(default=None, gt=0, le=3600)


class ExerciseSpec(_Strict):
    id: str = Field(pattern=r"^[0-9]{2}_[a-z0-9_]+$", max_length=60)
    title: str = Field(min_length=1)
    file: str
    source: str = Field(min_length=1)
    # Seconds for the program; its checks may use 2 s more, so an endless loop costs at most ~10 s.
    timeout: float = Field(default=8.0, ge=1, le=60)
    blanks: list[BlankSpec] = Field(min_length=1)
    requires: list[str] = Field(default_factory=list)  # modules needed by the exercise (numpy…)

    @model_validator(mode="after")
    def _consistent(self):
        expected = f"exercises/{self.id}.py"
        if self.file != expected:
            raise ValueError(f"file doit valoir « {expected} » (le nom du fichier est l'id de l'exercice)")
        seen = set()
        for blank in self.blanks:
            if blank.id in seen:
                raise ValueError(f"deux trous s'appellent « {blank.id} » : chaque id de trou est unique")
            seen.add(blank.id)
        return self


class AssignmentSpec(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=60)
    title: str = Field(min_length=1)
    source: str = Field(min_length=1)
    exercises: list[ExerciseSpec] = Field(min_length=1)


class CourseInfo(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = Field(min_length=1)
    language: Literal["fr"] = "fr"
    version: str = "1"


class CourseSpec(_Strict):
    course: CourseInfo
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    assignments: list[AssignmentSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        seen_ex, seen_as = set(), set()
        for assignment in self.assignments:
            if assignment.id in seen_as:
                raise ValueError(f"deux devoirs s'appellent « {assignment.id} »")
            seen_as.add(assignment.id)
            for exercise in assignment.exercises:
                if exercise.id in seen_ex:
                    raise ValueError(f"deux exercices s'appellent « {exercise.id} »")
                seen_ex.add(exercise.id)
        return self


class CourseError(Exception):
    """A `course.yaml` problem: file, line, message, what to write instead."""

    def __init__(self, path: str, line: int | None, message: str, example: str | None = None):
        self.path, self.line, self.message, self.example = path, line, message, example
        text = f"{path}:{line} : {message}" if line else f"{path} : {message}"
        if example:
            text += "\n    à écrire par exemple :\n" + "\n".join("      " + ln for ln in example.splitlines())
        super().__init__(text)


_FRENCH = [
    (r"^Field required$", "champ obligatoire manquant"),
    (r"^Extra inputs are not permitted$", "clé inconnue"),
    (r"^Input should be a valid string$", "doit être un texte"),
    (r"^Input should be a valid number.*$", "doit être un nombre"),
    (r"^Input should be a valid integer.*$", "doit être un nombre entier"),
    (r"^Input should be a valid list$", "doit être une liste (lignes commençant par « - »)"),
    (r"^Input should be a valid dictionary.*$", "doit être un bloc « clé: valeur »"),
    (r"^Input should be greater than (\S+)$", r"doit être plus grand que \1"),
    (r"^Input should be greater than or equal to (\S+)$", r"doit être au moins \1"),
    (r"^Input should be less than or equal to (\S+)$", r"doit être au plus \1"),
    (r"^String should match pattern .*$", "forme invalide"),
    (r"^String should have at least 1 character$", "ne doit pas être vide"),
    (r"^List should have at least 1 item.*$", "la liste ne doit pas être vide"),
    (r"^Input should be 'fr'$", "seule la langue « fr » est prise en charge"),
    (r"^Value error, (.*)$", r"\1"),
]


def _french(message: str) -> str:
    for pattern, replacement in _FRENCH:
        if re.match(pattern, message):
            return re.sub(pattern, replacement, message)
    return message


def _known_keys(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


def _model_at(loc: tuple) -> type[BaseModel]:
    """The model whose field list applies at an error location (for 'did you mean')."""
    model: type[BaseModel] = CourseSpec
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            break
        annotation = field.annotation
        inner = getattr(annotation, "__args__", (annotation,))[0] if hasattr(annotation, "__args__") else annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            model = inner
    return model


def parse(text: str, path: str = COURSE_FILE) -> CourseSpec:
    try:
        data, lines = yamlpos.load(text, path)
    except yamlpos.YamlError as exc:
        raise CourseError(path, exc.line, exc.message) from None
    if not isinstance(data, dict):
        raise CourseError(path, 1, "le fichier doit être un bloc « clé: valeur » (course:, assignments:)",
                          EXAMPLES["course"])
    try:
        return CourseSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A misspelt key also makes the right one "missing": name the typo, it is the real mistake.
        error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(error["loc"])
        field = next((p for p in reversed(loc) if isinstance(p, str)), "")
        message = _french(error["msg"])
        if error["type"] == "extra_forbidden":
            model = _model_at(loc)
            close = difflib.get_close_matches(str(loc[-1]), _known_keys(model), n=1)
            message = f"clé inconnue « {loc[-1]} »" + (f" : vouliez-vous écrire « {close[0]} » ?" if close else "")
            message += f" (clés possibles : {', '.join(_known_keys(model))})"
            line = lines.get(loc + ("__key__",)) or yamlpos.line_of(lines, loc)
            field = close[0] if close else field
        elif error["type"] == "missing":
            line = yamlpos.line_of(lines, loc[:-1])
            message = f"« {loc[-1]} » manquant"
        else:
            line = yamlpos.line_of(lines, loc)
        where = ".".join(str(p) for p in loc if not isinstance(p, int))
        raise CourseError(path, line, f"{where} : {message}" if where else message, EXAMPLES.get(field)) from None


@dataclass(frozen=True)
class Exercise:
    course: "Course"
    spec: ExerciseSpec
    assignment: AssignmentSpec
    number: int  # 1-based position in the course

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def blanks(self) -> list[BlankSpec]:
        return self.spec.blanks

    @property
    def points(self) -> float:
        return sum(b.points for b in self.spec.blanks)

    @property
    def path(self) -> Path:
        """The student's working copy."""
        return self.course.root / self.spec.file

    @property
    def template_path(self) -> Path:
        pristine = self.course.root / TEMPLATES_DIR / f"{self.id}.py"
        return pristine if pristine.exists() else self.path

    @property
    def checks_path(self) -> Path:
        return self.course.root / "exercises" / f"test_{self.id}.py"

    @property
    def solution_path(self) -> Path:
        return self.course.root / "solutions" / f"{self.id}.py"

    @property
    def grader_path(self) -> Path:
        return self.course.root / "graders" / f"test_{self.id}.py"

    def blank(self, key: str | int) -> BlankSpec:
        if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
            return self.spec.blanks[int(key) - 1]
        for blank in self.spec.blanks:
            if blank.id == key:
                return blank
        raise KeyError(key)

    def blank_index(self, blank_id: str) -> int:
        return [b.id for b in self.spec.blanks].index(blank_id)


@dataclass(frozen=True)
class Course:
    root: Path
    spec: CourseSpec

    @classmethod
    def load(cls, root: str | Path) -> "Course":
        root = Path(root).resolve()
        path = root / COURSE_FILE
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise CourseError(str(path), None, "fichier introuvable : ce dossier n'est pas un cours trous") from None
        except UnicodeDecodeError:
            raise CourseError(str(path), None, "le fichier n'est pas en UTF-8") from None
        return cls(root, parse(text, str(path)))

    @classmethod
    def find(cls, start: str | Path = ".") -> "Course":
        """The course containing `start` (a directory or a file)."""
        here = Path(start).resolve()
        for folder in [here, *here.parents]:
            if (folder / COURSE_FILE).is_file():
                return cls.load(folder)
        raise CourseError(str(Path(start)), None,
                          "aucun course.yaml ici ni dans les dossiers parents : lance la commande "
                          "depuis le dossier du cours")

    @property
    def id(self) -> str:
        return self.spec.course.id

    @property
    def title(self) -> str:
        return self.spec.course.title

    @cached_property
    def exercises(self) -> list[Exercise]:
        result, n = [], 0
        for assignment in self.spec.assignments:
            for spec in assignment.exercises:
                n += 1
                result.append(Exercise(self, spec, assignment, n))
        return result

    def exercise(self, key: str) -> Exercise:
        """By id ('03_masque'), number ('3'), file name or a unique part of the id ('masque')."""
        key = str(key).strip()
        name = Path(key).name
        if name.startswith("test_"):
            name = name[5:]
        if name.endswith(".py") or name.endswith(".ipynb"):
            name = name.rsplit(".", 1)[0]
        for exercise in self.exercises:
            if name == exercise.id:
                return exercise
        if name.isdigit():
            for exercise in self.exercises:
                if exercise.number == int(name) or exercise.id.startswith(f"{int(name):02d}_"):
                    return exercise
        matches = [e for e in self.exercises if name and name in e.id]
        if len(matches) == 1:
            return matches[0]
        ids = ", ".join(e.id for e in self.exercises)
        if len(matches) > 1:
            raise KeyError(f"« {key} » désigne plusieurs exercices : {', '.join(e.id for e in matches)}")
        raise KeyError(f"exercice « {key} » inconnu ; exercices : {ids}")

    def exercise_for_path(self, path: str | Path) -> Exercise | None:
        p = Path(path).resolve()
        for exercise in self.exercises:
            if p in (exercise.path.resolve(), exercise.checks_path.resolve(), exercise.grader_path.resolve(),
                     exercise.solution_path.resolve()):
                return exercise
        return None
