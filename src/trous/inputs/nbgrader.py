"""nbgrader's `submitted/<student>/<assignment>/<exercise>.ipynb` as trous `Submission`s: the input
kind « nbgrader » of `trous grade` (an nbgrader course directory, or its `submitted/` folder).

Each notebook becomes the text of its exercise, rebuilt from its answer cells exactly as the hidden
cells do in the kernel (answers.py), so that `trous grade` and `nbgrader autograde` grade the same
program. Files are read as intake.py reads them (no link followed, bounded, read again when graded:
`Stored`); an unreadable notebook counts as absent, with a note. Only what nbgrader grades is graded
(`<assignment>/<exercise>.ipynb`, exactly so named); every other file is named in the feedback with
why, and every entry of `submitted/` that is not a student is listed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from ..core.course import Course, CourseError, Exercise
from . import intake as intake_mod, moodle as moodlefolders
from ..core.safetext import printable
from ..core.submission import Again, IgnoredFile, Stored, Submission
from . import answers, standalone
from .bundle import Bundle, answer_cells, of
from .nbgrader_dir import course_root, without_iri_grammars

MAX_NOTEBOOK = 32 * 1024 * 1024
NAME = "nbgrader"
DESCRIPTION = ("un cours nbgrader (nbgrader_config.py, submitted/<élève>/<devoir>/<exercice>.ipynb après nbgrader "
               "collect), notes écrites aussi dans son carnet de notes")
without_iri_grammars()  # whatever imports nbformat later in this process (session.py says why)
_bundles: dict[tuple, Bundle] = {}


def _source(root: Path | None, exercise: Exercise) -> standalone.SourceExercise | None:
    """What the nbgrader course's source notebook of the exercise says (what was released), if trous built it."""
    path = root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb" if root else None
    if path is not None and path.is_file():
        try:
            return standalone.read_source(path)
        except standalone.StandaloneError:
            pass  # not a notebook trous built: the course's own exercise
    return None


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
    source = _source(root, exercise)
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


def student_submission(course: Course, folder: Path, root: Path | None = None,
                       limits: intake_mod.IntakeLimits | None = None, full_name: str = "") -> Submission:
    limits = limits or intake_mod.IntakeLimits()
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


def load(path: Path, course: Course, limits=None, assignments: list[str] | None = None, **_) -> intake_mod.Intake:
    """The submitted notebooks; `assignments`: those chosen with --devoir, the only ones whose Moodle
    folders are read (outputs/writing.py writes nbgrader's gradebook from the grades)."""
    intake_mod.of_kind(path, course_root, DESCRIPTION)
    root = course_root(path)
    result = intake_mod.Intake(NAME, root)
    names = student_names(root)
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
            result.submissions.append(student_submission(course, folder, root, limits, names.get(name, "")))
    result.moodle, moodle_notes = moodle_copies(root, [s.student for s in result.submissions], assignments)
    result.warnings += moodle_notes
    return result


def moodle_copies(root: Path, students: list[str], assignments: list[str] | None = None):
    """(Copies, notes for the teacher) of the Moodle participants among the course's students: those
    `nbgrader zip_collect` took from a Moodle archive, whose id is the participant number. Read from
    the archive's folders zip_collect leaves in `downloaded/<assignment>/extracted/` (only those of
    `assignments` when given: another assignment's numbers are other participants), with the rules
    of an archive graded directly (moodle.py); (None, []) when no Moodle folder is there."""
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


def student_names(root: Path) -> dict[str, str]:
    """Student id → « Prénom Nom » from nbgrader's gradebook (zip_collect records Moodle's names there,
    formgrader edits them), read-only; {} when there is none."""
    rows = standalone.gradebook_rows(root, "SELECT id, first_name, last_name FROM student") or []
    return {sid: " ".join(n for n in (first, last) if n) for sid, first, last in rows if first or last}


def carried_course(path: Path, given: str | None) -> Course:
    """The course the nbgrader course directory carries (standalone.py), checked."""
    try:
        return standalone.load(course_root(path) or path, given)
    except standalone.StandaloneError as exc:
        raise intake_mod.IntakeError(str(exc)) from None
    except CourseError as exc:
        raise intake_mod.IntakeError(f"-C {given} : {exc}") from None


def results_place(path: Path) -> Path:
    """In the nbgrader course, in the folder its .gitignore keeps out of git (build.py)."""
    return (course_root(path) or Path(path)).resolve() / standalone.RESULTS

