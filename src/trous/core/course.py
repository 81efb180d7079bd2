"""The course: `course.yaml`, validated, and where each exercise's files are (`exercises/NN_slug.py`
and its public checks `exercises/test_NN_slug.py`, `solutions/NN_slug.py`, `graders/test_NN_slug.py`;
in a student edition, a pristine copy of each template in `.trous/modeles/`).

A student edition caches its validated `course.yaml` (`.trous/cours-valide.json`, only where `.trous/`
exists) so that each `pytest exercises/` does not import YAML and pydantic again: it is used only for
the same text validated by the same code (a fingerprint), and ignored when damaged or not writable.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zlib
from dataclasses import asdict, dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path

import trous

from .errors import COURSE_FILE, CourseError
from .protocol import Limits

TEMPLATES_DIR = Path(".trous") / "modeles"
CACHE = Path(".trous") / "cours-valide.json"
CACHE_FORMAT = 1
_CODE = ("course.py", "errors.py", "schema.py")  # what decides whether a course.yaml is valid


# Plain records of what schema.py validated: a cached course is read without pydantic or YAML, in
# a few milliseconds.
class _Record:
    _nested = {}  # field name → the record class of its value (or of each item of its list)

    @classmethod
    def from_data(cls, data: dict):
        return cls(**{f.name: _build(cls._nested.get(f.name), data[f.name]) for f in fields(cls) if f.name in data})

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False) -> dict:
        """As pydantic's (every value here is already JSON's, whatever `mode`)."""
        return asdict(self, dict_factory=_without_none if exclude_none else dict)


def _without_none(items: list[tuple]) -> dict:
    return {k: v for k, v in items if v is not None}


def _build(record: type | None, value):
    if record is None or value is None:
        return list(value) if isinstance(value, list) else value
    return [record.from_data(v) for v in value] if isinstance(value, list) else record.from_data(value)


@dataclass(frozen=True, kw_only=True)
class BlankSpec(_Record):
    id: str
    points: float = 1.0
    hint: str | list[str]
    title: str | None = None

    @property
    def hints(self) -> list[str]:
        return [self.hint] if isinstance(self.hint, str) else list(self.hint)


@dataclass(frozen=True, kw_only=True)
class LimitsSpec(_Record):
    wall: float | None = None
    cpu: int | None = None
    memory_mb: int | None = None
    processes: int | None = None
    output_kb: int | None = None
    file_mb: int | None = None
    files: int | None = None
    value_kb: int | None = None
    copy_wall: float | None = None  # seconds for a whole copy


@dataclass(frozen=True, kw_only=True)
class ExerciseSpec(_Record):
    id: str
    title: str
    file: str
    source: str
    timeout: float = 8.0  # seconds
    blanks: list[BlankSpec]
    requires: list[str] = field(default_factory=list)
    _nested = {"blanks": BlankSpec}


@dataclass(frozen=True, kw_only=True)
class AssignmentSpec(_Record):
    id: str
    title: str
    source: str
    exercises: list[ExerciseSpec]
    _nested = {"exercises": ExerciseSpec}


@dataclass(frozen=True, kw_only=True)
class CourseInfo(_Record):
    id: str
    title: str
    language: str = "fr"
    version: str = "1"


@dataclass(frozen=True, kw_only=True)
class ExplorerSpec(_Record):
    file: str
    title: str
    text: str
    code: str
    needs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class CourseSpec(_Record):
    course: CourseInfo
    limits: LimitsSpec = field(default_factory=LimitsSpec)
    explorer: ExplorerSpec | None = None
    assignments: list[AssignmentSpec]
    _nested = {"course": CourseInfo, "limits": LimitsSpec, "explorer": ExplorerSpec, "assignments": AssignmentSpec}


def parse(text: str, path: str = COURSE_FILE) -> CourseSpec:
    from .schema import validate  # noqa: PLC0415 - pydantic and YAML only when something is to validate

    return CourseSpec.from_data(validate(text, path))


# -- the cache of a validated course.yaml ------------------------------------------------------------
@cache
def fingerprint() -> str | None:
    """What validated a cached course; None when it cannot be told (then there is no cache)."""
    from importlib import metadata  # noqa: PLC0415 - only where a cache can be kept (a student edition)

    here = Path(__file__).parent
    try:
        code = zlib.crc32(b"".join((here / name).read_bytes() for name in _CODE))
        versions = " ".join(f"{name} {metadata.version(name)}" for name in ("pydantic", "pydantic_core", "PyYAML"))
    except (OSError, metadata.PackageNotFoundError):
        return None
    return f"trous {trous.__version__} {code:08x} {versions}"


def _cache_usable(root: Path) -> bool:
    return (root / CACHE).parent.is_dir() and fingerprint() is not None


def _cached(root: Path, text: str) -> CourseSpec | None:
    if not _cache_usable(root):
        return None
    try:
        stored = json.loads((root / CACHE).read_text(encoding="utf-8"))
        if stored.get("format") != CACHE_FORMAT or stored.get("source") != text or stored.get("by") != fingerprint():
            return None
        return CourseSpec.from_data(stored["course"]) if isinstance(stored["course"], dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # a damaged cache is ignored
        return None


def _cache(root: Path, text: str, course: dict) -> None:
    if not _cache_usable(root):
        return
    path = root / CACHE
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        data = {"format": CACHE_FORMAT, "by": fingerprint(), "source": text, "course": course}
        partial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, path)  # a run reading it meanwhile sees the old cache or the new one, whole
    except (OSError, ValueError):
        try:
            partial.unlink()
        except OSError:
            pass


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
        spec = _cached(root, text)
        if spec is None:
            spec = parse(text, str(path))
            _cache(root, text, spec.model_dump())
        return cls(root, spec)

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

    @property
    def explorer(self) -> ExplorerSpec | None:
        return self.spec.explorer

    @cached_property
    def exercises(self) -> list[Exercise]:
        pairs = [(a, spec) for a in self.spec.assignments for spec in a.exercises]
        return [Exercise(self, spec, assignment, n) for n, (assignment, spec) in enumerate(pairs, 1)]

    def exercise(self, key: str) -> Exercise:
        """By id ('03_masque'), number ('3'), file name or a unique part of the id ('masque')."""
        key = str(key).strip()
        name = Path(key).name.removeprefix("test_")
        if name.endswith((".py", ".ipynb")):
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
        if len(matches) > 1:
            raise KeyError(f"« {key} » désigne plusieurs exercices : {', '.join(e.id for e in matches)}")
        raise KeyError(f"exercice « {key} » inconnu ; exercices : {', '.join(e.id for e in self.exercises)}")

    def exercise_for_path(self, path: str | Path) -> Exercise | None:
        return self._by_path.get(Path(path).resolve())

    @cached_property
    def _by_path(self) -> dict[Path, Exercise]:
        # Resolved once: pytest asks for every file it collects, and each resolve() reads the disk.
        found: dict[Path, Exercise] = {}
        for exercise in self.exercises:
            for path in (exercise.path, exercise.checks_path, exercise.grader_path, exercise.solution_path):
                found.setdefault(path.resolve(), exercise)
        return found


def limits_for(exercise: Exercise) -> Limits:
    spec = exercise.course.spec.limits
    values = {k: v for k, v in spec.model_dump().items() if v is not None}
    values["wall"] = min(values.get("wall", exercise.spec.timeout), exercise.spec.timeout)
    return Limits.from_dict(values)


def available(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


COMMON = ("numpy",)  # what most courses' programs import


def _mentions(exercise, module: str) -> bool:
    """Whether the student's copy or its public checks name `module` (a comment naming it costs only
    a preload)."""
    for path in (exercise.path, exercise.checks_path):
        try:
            if module in path.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def preload_for(exercises, checks: dict | None = None, *, as_needed: bool = False) -> tuple[str, ...]:
    """Modules worth importing once in the runner: numpy, and what an exercise or a check `requires`;
    `as_needed` (the self-check): numpy only if these exercises name it, not to wait for its import."""
    wanted = [m for m in COMMON if not as_needed or any(_mentions(e, m) for e in exercises)]
    for exercise in exercises:
        wanted += exercise.spec.requires
        for check in (checks or {}).get(exercise.id, []):
            wanted += check.requires
    return tuple(m for m in dict.fromkeys(wanted) if available(m))


@cache
def course_at(folder: Path) -> Course | None:
    """The course holding `folder`, or None (cached: pytest's plugins ask for every file they collect)."""
    try:
        return Course.find(folder)
    except CourseError:
        return None


def course_for(folder: str | Path | None) -> Course:
    """The course named on a command line (`-C DOSSIER`), else the one holding the current folder."""
    return Course.load(folder) if folder else Course.find(Path.cwd())


def memory_bound(exercises) -> int | None:
    """The largest memory bound of these exercises, in MiB."""
    return max((limits_for(e).memory_mb for e in exercises), default=0) or None
