"""An nbgrader course directory as `trous grade` reads it (input kind « nbgrader »): the course it
carries, graded without the course directory it was built from, and its
`submitted/<student>/<assignment>/<exercise>.ipynb` as `Submission`s.

`load` rebuilds the course from the source notebooks' grade cells and, before reading any copy,
refuses when it cannot promise the grades nbgrader would give (another trous version than the
build's `manifest`, hidden data changed since, points other than course.yaml's, nbgrader's gradebook
holding other grade cells, `-C COURSE` differing from what was distributed), naming both sides and
what to run. Only JSON and one literal per exercise are read (never nbgrader or jupytext), so that
`trous grade` starts fast. A submitted notebook becomes its exercise's text exactly as the hidden
cells build it in the kernel (answers.py), so that `trous grade` and `nbgrader autograde` grade the
same program; only what nbgrader grades is graded, every other file named with why.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import trous

from ..core.course import Course, CourseError, Exercise
from ..core.safetext import printable
from ..core.submission import Again, IgnoredFile, Stored, Submission
from ..core.wording import count
from . import answers, intake as intake_mod, moodle as moodlefolders
from .answers import LockedCell, last_cells, nbgrader_meta, points_of, source_cell
from .bundle import Bundle, answer_cells, cell_source, check_bundle_of, hidden_calls, materialize_course, of
from .nbgrader_dir import course_root

MANIFEST = "trous-cours.json"
FORMAT = 1
RESULTS = "trous-resultats"  # where `trous grade .` writes its results by default (build.py git-ignores it)
REBUILD = "trous nbgrader build {root} --force (depuis le dossier du cours trous)"
MAX_NOTEBOOK = intake_mod.IntakeLimits.notebook_bytes  # the bound on a notebook read, as for any copy
NAME = "nbgrader"
DESCRIPTION = ("un cours nbgrader (nbgrader_config.py, submitted/<élève>/<devoir>/<exercice>.ipynb après nbgrader "
               "collect), notes écrites aussi dans son carnet de notes")


class StandaloneError(intake_mod.IntakeError):
    """The nbgrader course cannot be graded as it is; the message is French and says what to do."""


def grader_fingerprint(bundles: list[Bundle], version: str = trous.__version__) -> str:
    """What decides a grade: trous's version and every exercise's hidden bundle, in course order."""
    h = hashlib.sha256(f"trous {version}\0".encode())
    for bundle in bundles:
        h.update(json.dumps(bundle.to_dict(), sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Built:
    """One exercise as the build wrote it."""

    exercise: Exercise
    path: str  # relative to the course root: source/<assignment>/<exercise>.ipynb
    data: bytes
    bundle: Bundle  # its hidden bundle


def manifest(course: Course, built: list[Built]) -> dict:
    assignments = [{"id": a, "exercices": [b.exercise.id for b in items]}
                   for a, items in itertools.groupby(built, key=lambda b: b.exercise.assignment.id)]
    return {
        "format": FORMAT,
        "explication": "écrit par trous nbgrader build : ce dont trous grade a besoin pour corriger ce cours "
                       "sans son dossier d'origine (ne pas modifier)",
        "trous": trous.__version__,
        "cours": course.id,
        "devoirs": assignments,
        "empreinte": grader_fingerprint([b.bundle for b in built]),
        "carnets": {b.path: {"exercice": b.exercise.id, "octets": hashlib.sha256(b.data).hexdigest(),
                             "correcteur": b.bundle.digest} for b in built},
    }


def manifest_bytes(data: dict) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def read_manifest(root: Path) -> dict | None:
    path = Path(root) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StandaloneError(f"{path} : illisible ({exc}) ; reconstruisez : " + REBUILD.format(root=root)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("devoirs"), list):
        raise StandaloneError(f"{path} : format inconnu (écrit par une autre version de trous ?) ; reconstruisez : "
                              + REBUILD.format(root=root))
    return data


@dataclass
class SourceExercise:
    path: Path
    bundle: Bundle  # hidden bundle, from the first grade cell
    points: dict[str, float] = field(default_factory=dict)  # blank id → points of its grade cell
    cells: dict[str, str] = field(default_factory=dict)  # blank id → grade_id of its grade cell
    sources: dict[str, str] = field(default_factory=dict)  # grade_id → source of the grade cell
    locked: dict[str, LockedCell] = field(default_factory=dict)  # grade_id → each nbgrader cell, as released


_read: dict[tuple, SourceExercise] = {}


def read_source(path: Path, shown: str | None = None) -> SourceExercise:
    """The exercise a source notebook grades (cached while the file does not change)."""
    path = Path(path)
    shown = shown or str(path)
    try:
        info = path.stat()
        key = (str(path), info.st_mtime_ns, info.st_size)
        if key in _read:
            return _read[key]
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except FileNotFoundError:
        raise StandaloneError(f"{shown} : carnet source absent") from None
    except (OSError, ValueError, AttributeError) as exc:
        raise StandaloneError(f"{shown} : carnet source illisible ({exc})") from None
    rebuild = REBUILD.format(root=path.parent.parent.parent)
    found: SourceExercise | None = None
    cells = [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []
    for cell in cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade") or cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        for line in source.split("\n"):
            if not line.startswith("corriger_trou("):
                continue
            parsed = hidden_calls(line)
            if not parsed:
                raise StandaloneError(f"{shown}, cellule {meta.get('grade_id')} : données de correction illisibles "
                                      "(cellule cachée modifiée à la main ?) ; reconstruisez : " + rebuild)
            blank_id, data = parsed[0]
            try:
                bundle = Bundle.from_dict(data)
            except (ValueError, KeyError, TypeError) as exc:
                raise StandaloneError(f"{shown} : {exc}") from None
            found = found or SourceExercise(path, bundle)
            if bundle != found.bundle:
                raise StandaloneError(f"{shown} : les cellules de correction ne portent pas toutes le même corrigé "
                                      "(cellules cachées modifiées à la main ?) ; reconstruisez : " + rebuild)
            found.points[blank_id] = meta.get("points")
            found.cells[blank_id] = str(meta.get("grade_id"))
            found.sources[str(meta.get("grade_id"))] = source
    if found is None:
        raise StandaloneError(f"{shown} : aucune cellule de correction de trous (ce carnet n'a pas été écrit par "
                              "trous nbgrader build)")
    kept = last_cells(cells)[0]  # every nbgrader cell, as released (answers.changes compares with them)
    found.locked = {grade_id: source_cell(cell, nbgrader_meta(cell)) for grade_id, cell in kept.items()}
    _read[key] = found
    return found


def _points(value) -> str:
    try:
        return count(float(value), "point")
    except (TypeError, ValueError):
        return f"« {value} »"


def check_points(source: SourceExercise, shown: str) -> list[str]:
    """Each grade cell's points against the blank's points in course.yaml (as the bundle carries them)."""
    problems = []
    blanks = {b["id"]: b for b in source.bundle.exercise.get("blanks", [])}
    for blank_id, spec in blanks.items():
        if blank_id not in source.points:
            problems.append(f"{shown} : pas de cellule de correction pour le trou « {blank_id} » de course.yaml")
            continue
        given, expected = source.points[blank_id], float(spec.get("points", 1.0))
        if points_of(given) != expected:
            problems.append(f"{shown}, cellule {source.cells[blank_id]} : {_points(given)} ; course.yaml, trou "
                            f"« {blank_id} » de {source.bundle.exercise_id} : {_points(expected)}")
    for blank_id in source.points:
        if blank_id not in blanks:
            problems.append(f"{shown}, cellule {source.cells[blank_id]} : trou « {blank_id} » absent de course.yaml")
    return problems


def gradebook_rows(root: Path, query: str) -> list[tuple] | None:
    """The rows of a query on nbgrader's gradebook, read-only; None when there is no gradebook, or
    another schema (nbgrader's own checks then apply when the grades are written)."""
    path = Path(root) / "gradebook.db"
    if not path.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return connection.execute(query).fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return None


def check_gradebook(root: Path, sources: dict[str, tuple[str, SourceExercise]]) -> list[str]:
    """The grade cells nbgrader recorded at generate_assignment against the source notebooks: what
    `nbgrader autograde` grades with must be what `trous grade` grades with."""
    rows = gradebook_rows(root, "SELECT a.name, n.name, b.name, g.max_score, s.source FROM grade_cells g "
                                "JOIN base_cell b ON b.id = g.id JOIN notebook n ON n.id = b.notebook_id "
                                "JOIN assignment a ON a.id = n.assignment_id LEFT JOIN source_cell s "
                                "ON s.name = b.name AND s.notebook_id = b.notebook_id")
    # (assignment, notebook, cell) → (max score, stored source) of every grade cell
    cells = {(a, n, c): (float(score), source) for a, n, c, score, source in rows or []}
    if not cells:
        return []
    assignments = {a for a, _, _ in cells}
    problems = []
    for exercise_id, (assignment, source) in sources.items():
        if assignment not in assignments:
            continue  # not generated yet: nothing to disagree with
        stale = []
        for blank_id, grade_id in source.cells.items():
            stored = cells.get((assignment, exercise_id, grade_id))
            if stored is None:
                stale.append(f"{grade_id} absente")
                continue
            if stored[0] != float(source.points[blank_id]):
                problems.append(f"gradebook.db (nbgrader), cellule {grade_id} : {_points(stored[0])} ; "
                                f"source/{assignment}/{exercise_id}.ipynb : {_points(source.points[blank_id])}")
            if stored[1] is not None and stored[1] != source.sources[grade_id]:
                stale.append(f"{grade_id} différente")
        if stale:
            problems.append(f"gradebook.db (nbgrader) garde d'autres cellules de correction pour {exercise_id} que "
                            f"source/{assignment}/{exercise_id}.ipynb ({', '.join(stale[:3])}"
                            f"{'…' if len(stale) > 3 else ''}) : nbgrader autograde corrigerait avec elles ; "
                            f"relancez nbgrader generate_assignment {assignment} --force")
    return problems


_built: dict[tuple, Course] = {}


def _materialized(key: tuple, prefix: str, bundles: list[Bundle], order: list[tuple[str, list[str]]]
                  ) -> Course:
    """The course of these bundles, written once per process in a folder removed at exit."""
    if key not in _built:
        where = tempfile.mkdtemp(prefix=prefix)
        atexit.register(shutil.rmtree, where, ignore_errors=True)
        _built[key] = materialize_course(bundles, order, where)
    return _built[key]


def _compare(given: Course, bundles: list[Bundle]) -> list[str]:
    """What differs between a course directory and the bundles the nbgrader course carries."""
    differ = []
    for bundle in bundles:
        try:
            exercise = given.exercise(bundle.exercise_id)
        except KeyError:
            differ.append(f"{bundle.exercise_id} : absent de {given.root / 'course.yaml'}")
            continue
        read = lambda p: p.read_text(encoding="utf-8") if p.is_file() else None  # noqa: E731
        files = [(exercise.template_path, bundle.template), (exercise.checks_path, bundle.checks),
                 (exercise.solution_path, bundle.solution), (exercise.grader_path, bundle.grader)]
        changed = [p.relative_to(given.root).as_posix() for p, text in files if read(p) != text]
        spec = exercise.spec.model_dump(mode="json", exclude_none=True)
        carried = bundle.exercise
        for blank, carried_blank in zip(spec.get("blanks", []), carried.get("blanks", [])):
            blank["hint"] = carried_blank.get("hint")  # only the first hint travels (bundle.py)
        if spec != carried:
            changed.append("course.yaml (entrée de l'exercice)")
        if changed:
            differ.append(f"{bundle.exercise_id} : {', '.join(changed)}")
    return differ


def load(root: str | Path, given: str | Path | None = None) -> Course:
    root = Path(root).resolve()
    data = read_manifest(root)
    if data is None:
        if given is None:
            raise StandaloneError(f"{root / MANIFEST} absent : ce cours nbgrader a été construit par une version de "
                                  "trous qui ne l'écrivait pas, ou pas par trous ; reconstruisez-le : "
                                  + REBUILD.format(root=root) + ", ou donnez le dossier du cours : trous -C COURS grade")
        return _legacy(root, Course.load(given))
    if data.get("trous") != trous.__version__:
        raise StandaloneError(
            f"ce cours nbgrader a été construit par trous {data.get('trous')} ; trous {trous.__version__} est installé "
            "ici : son moteur pourrait noter autrement que les cellules de correction des carnets. Installez la même "
            f"version (python -m pip install \"trous=={data.get('trous')}\") ou reconstruisez le cours : "
            + REBUILD.format(root=root))
    order: list[tuple[str, list[str]]] = []
    sources: dict[str, tuple[str, SourceExercise]] = {}
    problems: list[str] = []
    changed: list[str] = []
    recorded = {v.get("exercice"): v for v in (data.get("carnets") or {}).values() if isinstance(v, dict)}
    for assignment in data["devoirs"]:
        ids = [str(e) for e in assignment.get("exercices", [])]
        order.append((str(assignment.get("id")), ids))
        for exercise_id in ids:
            rel = f"source/{assignment.get('id')}/{exercise_id}.ipynb"
            try:
                source = read_source(root / rel, rel)
            except StandaloneError as exc:
                problems.append(str(exc))
                continue
            if source.bundle.exercise_id != exercise_id:
                problems.append(f"{rel} : carnet de l'exercice {source.bundle.exercise_id}, pas de {exercise_id}")
                continue
            sources[exercise_id] = (str(assignment.get("id")), source)
            problems += check_points(source, rel)
            if exercise_id in recorded and recorded[exercise_id].get("correcteur") != source.bundle.digest:
                changed.append(rel)
    if problems:
        raise StandaloneError("ce cours nbgrader ne peut pas être corrigé tel quel :\n  " + "\n  ".join(problems))
    bundles = [sources[e][1].bundle for _, ids in order for e in ids]
    if grader_fingerprint(bundles) != data.get("empreinte"):
        which = ", ".join(changed) or "les carnets sources"
        raise StandaloneError(f"{which} : les données de correction ont changé depuis trous nbgrader build (empreinte "
                              "du correcteur différente) ; reconstruisez : " + REBUILD.format(root=root))
    problems = check_gradebook(root, sources)
    if problems:
        raise StandaloneError("le carnet de notes de nbgrader et les carnets sources ne disent pas la même chose :\n  "
                              + "\n  ".join(problems))
    if given is not None:
        differ = _compare(Course.load(given), bundles)
        if differ:
            raise StandaloneError(f"le cours {Path(given).resolve()} et le cours nbgrader {root} diffèrent (le cours "
                                  "nbgrader corrige avec ce qu'il a distribué) :\n  " + "\n  ".join(differ)
                                  + "\npour corriger avec le cours : " + REBUILD.format(root=root)
                                  + ", puis nbgrader generate_assignment --force ; sinon, corrigez sans -C")
    try:
        return _materialized((str(root), data.get("empreinte")), "trous-cours-nbgrader-", bundles, order)
    except CourseError as exc:
        raise StandaloneError(f"{root} : cours illisible ({exc})") from None


def _legacy(root: Path, given: Course) -> Course:
    """No manifest (built by an older trous): grade with the course given, if the notebooks agree."""
    sources: dict[str, tuple[str, SourceExercise]] = {}
    problems = []
    for path in sorted((root / "source").glob("*/*.ipynb")):
        rel = path.relative_to(root).as_posix()
        try:
            source = read_source(path, rel)
        except StandaloneError:
            continue  # not a trous notebook
        sources[source.bundle.exercise_id] = (path.parent.name, source)
        problems += check_points(source, rel)
    differ = _compare(given, [s.bundle for _, s in sources.values()])
    if differ:
        problems.append(f"le cours {given.root} et les carnets de {root / 'source'} diffèrent : " + " ; ".join(differ))
    problems += check_gradebook(root, sources)
    if problems:
        raise StandaloneError("ce cours nbgrader ne peut pas être corrigé tel quel :\n  " + "\n  ".join(problems)
                              + "\nreconstruisez-le : " + REBUILD.format(root=root))
    return given


def course_from_notebooks(folder: str | Path) -> tuple[Course, dict[str, str]]:
    """The course the exercise notebooks of a student's folder describe (their check cells' public
    bundles, no solution), and each exercise's notebook name: for the course's own notebook
    (course.yaml's `explorer:`), released where no course directory exists."""
    folder = Path(folder)
    found: dict[str, tuple[Bundle, str]] = {}
    for path in sorted(folder.glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError, AttributeError):
            continue
        for cell in cells if isinstance(cells, list) else []:
            bundle = check_bundle_of(cell) if isinstance(cell, dict) else None
            if bundle is not None and bundle.exercise_id not in found:
                found[bundle.exercise_id] = (bundle, path.name)
                break
    if not found:
        raise StandaloneError(f"{folder} : aucun carnet d'exercice de trous ici (ni course.yaml)")
    by_assignment = itertools.groupby(sorted(found), key=lambda e: found[e][0].assignment.get("id"))
    order = [(a, list(ids)) for a, ids in by_assignment]
    key = ("carnets", str(folder.resolve()), tuple(sorted((e, b.digest) for e, (b, _) in found.items())))
    course = _materialized(key, "trous-carnets-eleve-", [b for b, _ in found.values()], order)
    return course, {e: name for e, (_, name) in found.items()}


# -- submitted/: the copies -------------------------------------------------------------------------
_bundles: dict[tuple, Bundle] = {}


def _course_bundle(exercise: Exercise) -> Bundle:
    """The exercise's public bundle built from the course (jupytext, slower to import)."""
    path = exercise.template_path
    key = (str(path), path.stat().st_mtime_ns, str(exercise.checks_path), exercise.id)
    if key not in _bundles:
        _bundles[key] = of(exercise, answer_cells(exercise), hidden=False)
    return _bundles[key]


def notebook_exercise(exercise: Exercise, data: bytes, shown: str, notes: list[str],
                      root: Path | None = None) -> bytes | None:
    """The exercise text a submitted notebook gives, or None (with a note) when it cannot be read."""
    if len(data) > MAX_NOTEBOOK:
        notes.append(f"{shown} : carnet trop gros ({len(data) // (1024 * 1024)} Mio) : compté comme absent")
        return None
    try:
        nb = json.loads(data.decode("utf-8"))
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError):
        notes.append(f"{shown} : carnet illisible (ce n'est pas un .ipynb valide) : compté comme absent")
        return None
    cells = [c for c in cells if isinstance(c, dict)]
    # What the source notebook of the exercise says (what was released), if trous built it.
    path = root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb" if root else None
    try:
        source = read_source(path) if path is not None and path.is_file() else None
    except StandaloneError:
        source = None  # not a notebook trous built: the course's own exercise
    bundle = source.bundle.public() if source else _course_bundle(exercise)
    found = answers.from_cells(cells)
    missing = [c.grade_id for c in bundle.cells if c.grade_id not in found]
    if missing:
        notes.append(f"{shown} : cellule(s) de réponse supprimée(s) : {', '.join(missing)}")
    if source is not None:
        notes.extend(answers.changes(cells, source.locked, shown))
    return answers.exercise_text(bundle, found).encode("utf-8", "surrogatepass")


class _AssignmentSorter(intake_mod.Sorter):
    """In `submitted/<student>/<assignment>/`, nbgrader grades `<exercise>.ipynb` at the top, exactly
    so named, and nothing else: trous grades the same files (the grades must be nbgrader's), and
    names every other one with why (a renamed notebook most of all)."""

    def __init__(self, course: Course, assignment: str):
        super().__init__(course)
        self.course = course
        self.assignment = assignment
        self.expected = {f"{e.id}.ipynb" for e in course.exercises if e.assignment.id == assignment}

    def keep(self, name: str) -> bool:
        return name in self.expected

    def reason(self, name: str) -> tuple[str, int] | None:
        if name in NBGRADER_FILES:
            return None  # nbgrader's own bookkeeping, not the student's
        match = self.matcher.match(name)
        if match is not None:
            exercise = self.course.exercise(match.exercise)
            expected = f"{exercise.id}.ipynb"
            if exercise.assignment.id != self.assignment:
                return (f"exercice d'un autre devoir ({exercise.assignment.id}) : non corrigé avec "
                        f"{self.assignment}"), intake_mod.CANDIDATE
            if not match.notebook:
                return f"fichier .py : nbgrader ne corrige que le carnet {expected}", intake_mod.CANDIDATE
            return (f"nom différent de {expected} ({match.how}) : nbgrader ne corrige que {expected} "
                    "(renomme le carnet)"), intake_mod.CANDIDATE
        reason, rank = super().reason(name)
        if reason in (intake_mod.NOT_EXERCISE, intake_mod.PYTHON_EXTRA):
            return f"pas un carnet du devoir {self.assignment}", rank
        return reason, rank


NBGRADER_FILES = {"timestamp.txt"}  # written by nbgrader submit and collect in every submitted folder
# nbgrader finds students with glob's « * » (CourseDirectory.student_id), which never matches a name
# starting with « . »: such a folder is nobody nbgrader grades, so trous does not grade it either.
HIDDEN_STUDENT = "dossier caché : nbgrader ne le prend pas pour un élève (son motif « * » ignore les noms en « . »)"


def _again(read, exercise: Exercise, shown: str, root: Path | None) -> bytes | None:
    """A notebook's exercise text, read again when its copy is graded (None if it cannot be any more)."""
    try:
        return notebook_exercise(exercise, read(MAX_NOTEBOOK + 1), shown, [], root)
    except OSError:
        return None


def student_submission(course: Course, folder: Path, root: Path, limits: intake_mod.IntakeLimits,
                       full_name: str) -> Submission:
    files: dict[str, tuple[bytes, Again] | None] = {e.id: None for e in course.exercises}
    origins: dict[str, str] = {}
    ledger = intake_mod.Ledger(limits)
    known = {a.id for a in course.spec.assignments}
    handed: list[str] = []  # the assignment folders read: what this student hands in
    try:
        listing = intake_mod.scan(folder, (), lambda name: False)
    except OSError as exc:
        ledger.note(f"dossier illisible ({exc.strerror or exc})")
        listing = []
    for name, kind, _ in listing:
        if kind == intake_mod.LINK:
            ledger.ignore(name, intake_mod.LINK_NEVER_FOLLOWED, intake_mod.REFUSED)
            continue
        if kind != "dir":
            if name not in NBGRADER_FILES:
                ledger.ignore(name, "hors des dossiers de devoirs : nbgrader ne le corrige pas")
            continue
        if name not in known:
            reason = intake_mod.SKIPPED_DIRS.get(name) or "devoir inconnu du cours : non corrigé"
            rank = intake_mod.FOLDER if name in intake_mod.SKIPPED_DIRS else intake_mod.OTHER
            ledger.ignore(name + "/", reason, rank)
            continue
        handed.append(name)
        sorter = _AssignmentSorter(course, name)
        for candidate in sorted(intake_mod.walk(folder / name, limits, ledger, sorter, under=(name,)),
                                key=lambda e: e.parts):
            shown, parts = candidate.path, candidate.parts
            exercise_id = parts[-1][: -len(".ipynb")]
            if len(parts) > 2:
                ledger.ignore(shown, f"pas à la racine du devoir : nbgrader ne corrige que {name}/{parts[-1]}",
                              intake_mod.CANDIDATE, exercise_id)
                continue
            if candidate.kind != intake_mod.FILE:
                ledger.ignore(shown, intake_mod.NOT_REGULAR, intake_mod.CANDIDATE, exercise_id)
                continue
            try:
                data = candidate.read(MAX_NOTEBOOK + 1)
            except OSError as exc:
                ledger.ignore(shown, f"lecture impossible ({exc.strerror or exc}) : compté comme absent",
                              intake_mod.CANDIDATE, exercise_id)
                continue
            exercise, notes = course.exercise(exercise_id), []
            text = notebook_exercise(exercise, data, shown, notes, root)
            for note in notes:
                ledger.note(note)
            if text is not None:
                files[exercise_id] = (hashlib.sha256(text).digest(),
                                      functools.partial(_again, candidate.read, exercise, shown, root))
                origins[exercise_id] = shown
    return ledger.submission(folder.name, Stored(files), source=str(folder), origins=origins, assignments=tuple(handed),
                             name=full_name)


def load_submitted(path: Path, course: Course, limits=None, assignments: list[str] | None = None,
                   **_) -> intake_mod.Intake:
    """The submitted notebooks; `assignments`: those chosen with --devoir (see `moodle_copies`)."""
    intake_mod.of_kind(path, course_root, DESCRIPTION)
    root = course_root(path)
    result = intake_mod.Intake(NAME, root)
    # « Prénom Nom » from nbgrader's gradebook (zip_collect records Moodle's names there, formgrader edits them)
    rows = gradebook_rows(root, "SELECT id, first_name, last_name FROM student") or []
    names = {sid: " ".join(n for n in (first, last) if n) for sid, first, last in rows if first or last}
    for name, kind, _ in intake_mod.scan(root / "submitted", (), lambda name: False):
        shown = printable(name)
        if kind == intake_mod.LINK:
            result.ignored.append(IgnoredFile(shown, intake_mod.LINK_NEVER_FOLLOWED))
        elif kind != "dir":
            result.ignored.append(IgnoredFile(shown, "pas un dossier d'élève de nbgrader : pas une copie"))
        elif name in intake_mod.SKIPPED_DIRS:
            result.ignored.append(IgnoredFile(shown + "/", intake_mod.SKIPPED_DIRS[name]))
        elif name.startswith("."):
            result.ignored.append(IgnoredFile(shown + "/", HIDDEN_STUDENT))
        else:  # nbgrader's student ids are the folder names (its gradebook is keyed by them): graded as
            # they are; only what is shown is cleaned.
            folder = root / "submitted" / name
            result.submissions.append(student_submission(course, folder, root, limits or intake_mod.IntakeLimits(),
                                                         names.get(name, "")))
    result.moodle, moodle_notes = moodle_copies(root, [s.student for s in result.submissions], assignments)
    result.warnings += moodle_notes
    return result


def moodle_copies(root: Path, students: list[str], assignments: list[str] | None = None):
    """(Copies, notes) of the students `nbgrader zip_collect` took from a Moodle archive (their id is
    the participant number), from the folders it leaves in `downloaded/<assignment>/extracted/` (of
    `assignments` only: another assignment's numbers are other participants); (None, []) if none."""
    downloaded = root / "downloaded"
    if not downloaded.is_dir() or downloaded.is_symlink():
        return None, []
    roots = [p / "extracted" for p in sorted(downloaded.iterdir()) if p.is_dir() and not p.is_symlink()
             and (assignments is None or p.name in assignments)]
    tops: dict[str, moodlefolders.Name] = {}
    for entry, owner in moodlefolders.extracted(roots):
        tops.setdefault(entry.name, owner)
    if not tops:
        return None, []
    grouping = moodlefolders.group(tops, intake_mod.student_id)
    copies = moodlefolders.Copies(team=grouping.copies.team)
    for student in students:
        if not student.isdigit():
            continue
        number = moodlefolders.number(student)  # zip_collect keeps the digits as written
        if number in grouping.copies.conflicts:
            copies.conflicts[number] = grouping.copies.conflicts[number]
        elif number in grouping.copies.participants:
            copies.participants[student] = grouping.copies.participants[number]
    return copies, grouping.warnings
