"""What a valid `course.yaml` is, checked by pydantic, with errors in French that name the line.

`validate(text, path)` returns the validated course as plain data (lists, dicts, numbers, texts),
which definition.py turns into the course's records. Only this module imports pydantic (and YAML,
through yamlpos): a course already validated by this very code is read from its cache (cache.py)
without either.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import yamlpos
from .errors import COURSE_FILE, CourseError

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


class BlankSchema(_Strict):
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


class LimitsSchema(_Strict):
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


class ExerciseSchema(_Strict):
    id: str = Field(pattern=r"^[0-9]{2}_[a-z0-9_]+$", max_length=60)
    title: str = Field(min_length=1)
    file: str
    source: str = Field(min_length=1)
    # Seconds for the program; its checks may use 2 s more, so an endless loop costs at most ~10 s.
    timeout: float = Field(default=8.0, ge=1, le=60)
    blanks: list[BlankSchema] = Field(min_length=1)
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


class AssignmentSchema(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=60)
    title: str = Field(min_length=1)
    source: str = Field(min_length=1)
    exercises: list[ExerciseSchema] = Field(min_length=1)


class CourseInfoSchema(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = Field(min_length=1)
    language: Literal["fr"] = "fr"
    version: str = "1"


class CourseSchema(_Strict):
    course: CourseInfoSchema
    limits: LimitsSchema = Field(default_factory=LimitsSchema)
    assignments: list[AssignmentSchema] = Field(min_length=1)

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
    model: type[BaseModel] = CourseSchema
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


def validate(text: str, path: str = COURSE_FILE) -> dict:
    """The course described by `text`, validated, as plain data; else a CourseError."""
    try:
        data, lines = yamlpos.load(text, path)
    except yamlpos.YamlError as exc:
        raise CourseError(path, exc.line, exc.message) from None
    if not isinstance(data, dict):
        raise CourseError(path, 1, "le fichier doit être un bloc « clé: valeur » (course:, assignments:)",
                          EXAMPLES["course"])
    try:
        return CourseSchema.model_validate(data).model_dump()
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
