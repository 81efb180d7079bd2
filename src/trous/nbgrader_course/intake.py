"""nbgrader's `submitted/<student>/<assignment>/<exercise>.ipynb` as trous `Submission`s.

Importing this module registers the input kind « nbgrader » of `trous grade` (the path is an nbgrader
course directory, or its `submitted/` folder). Each notebook becomes the text of its exercise, rebuilt
from its answer cells exactly as the hidden cells do in the kernel (answers.py), so that the engine
grades the same program under `trous grade` and under `nbgrader autograde`. Files are opened without
following symbolic links, read-only and bounded in size; an unreadable notebook counts as absent,
with a note.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from ..course.definition import Course, Exercise
from ..grading import intake as intake_mod
from ..grading.submissions import Submission
from . import answers
from .bundle import Bundle, check_bundle, of

MAX_NOTEBOOK = 32 * 1024 * 1024
NAME = "nbgrader"


@dataclass(frozen=True)
class Layout:
    root: Path  # the nbgrader course directory

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"


def layout(path: Path) -> Layout | None:
    path = Path(path)
    root = path.parent if path.name == "submitted" else path
    submitted = root / "submitted"
    if submitted.is_dir() and not submitted.is_symlink() and (
            (root / "nbgrader_config.py").is_file() or (root / "gradebook.db").is_file()):
        return Layout(root)
    return None


_bundles: dict[tuple, Bundle] = {}


def _public_bundle(exercise: Exercise, root: Path | None = None) -> Bundle:
    """The exercise's public bundle: the one the nbgrader course's source notebook embeds in its check
    cell (what was released), else built from the course (jupytext, slower to import)."""
    source = root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb" if root else None
    if source is not None and source.is_file():
        key = (str(source), source.stat().st_mtime_ns)
        if key not in _bundles:
            found = None
            try:
                for cell in json.loads(source.read_text(encoding="utf-8")).get("cells", []):
                    text = cell.get("source", "")
                    found = check_bundle("".join(text) if isinstance(text, list) else str(text))
                    if found is not None and found.exercise_id == exercise.id:
                        break
                    found = None
            except (OSError, ValueError, AttributeError):
                found = None
            _bundles[key] = found
        if _bundles[key] is not None:
            return _bundles[key]
    path = exercise.template_path
    key = (str(path), path.stat().st_mtime_ns, str(exercise.checks_path), exercise.id)
    if key not in _bundles:
        from .notebooks import answer_cells  # noqa: PLC0415 - jupytext: only when no source notebook

        _bundles[key] = of(exercise, answer_cells(exercise), hidden=False)
    return _bundles[key]


def _read(path: Path, limit: int = MAX_NOTEBOOK) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NOATIME", 0))
    except PermissionError:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


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
    bundle = _public_bundle(exercise, root)
    found = answers.from_cells(cells)
    missing = [c.grade_id for c in bundle.cells if c.grade_id not in found]
    if missing:
        notes.append(f"{shown} : cellule(s) de réponse supprimée(s) : {', '.join(missing)}")
    return answers.exercise_text(bundle, found).encode("utf-8", "surrogatepass")


def student_submission(course: Course, folder: Path, assignments: list[str] | None = None,
                       root: Path | None = None) -> Submission:
    student = folder.name
    files: dict[str, bytes | None] = {e.id: None for e in course.exercises}
    notes: list[str] = []
    known = {a.id for a in course.spec.assignments}
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name not in known:
            if not entry.name.startswith("."):
                notes.append(f"devoir inconnu du cours : {entry.name}")
            continue
        if assignments and entry.name not in assignments:
            continue
        for exercise in course.exercises:
            if exercise.assignment.id != entry.name:
                continue
            path = entry / f"{exercise.id}.ipynb"
            shown = f"{entry.name}/{exercise.id}.ipynb"
            if not os.path.lexists(path):
                continue
            try:
                data = _read(path)
            except OSError as exc:
                notes.append(f"{shown} : lecture impossible ({exc.strerror or exc}) : compté comme absent")
                continue
            if data is None:
                notes.append(f"{shown} : pas un fichier ordinaire (lien symbolique ?) : ignoré")
                continue
            files[exercise.id] = notebook_exercise(exercise, data, shown, notes, root)
    return Submission(student, files, source=str(folder), warnings=tuple(notes))


def load(path: Path, course: Course, limits=None, assignments: list[str] | None = None,
         students: list[str] | None = None) -> intake_mod.Intake:
    found = layout(path)
    if found is None:
        raise intake_mod.IntakeError(f"{path} : pas un cours nbgrader (attendu : le dossier qui contient "
                                     "nbgrader_config.py et submitted/)")
    result = intake_mod.Intake(NAME, found.root)
    for folder in sorted(found.submitted.iterdir()):
        if folder.is_symlink() or not folder.is_dir() or folder.name.startswith("."):
            continue
        if students and folder.name not in students:
            continue
        result.submissions.append(student_submission(course, folder, assignments, found.root))
    if not result.submissions:
        result.warnings.append(f"{found.submitted} : aucune copie (lancez d'abord nbgrader collect)")
    result.after = _after(found.root, assignments, _preload())
    return result


def _import_writer() -> None:
    from . import gradebook  # noqa: F401, PLC0415
    from nbgrader.converters import Autograde  # noqa: F401, PLC0415


def _preload() -> threading.Thread:
    """nbgrader takes seconds to import, about as long as grading a class: import it while the
    sandboxes grade (they work in other processes), so that it is ready when the grades are."""
    thread = threading.Thread(target=_import_writer, name="import-nbgrader", daemon=True)
    thread.start()
    return thread


def _after(root: Path, assignments: list[str] | None, preloading: threading.Thread | None = None):
    def write(course, grades) -> dict[str, Path]:
        if preloading is not None:
            preloading.join()
        from .gradebook import write_all  # noqa: PLC0415

        return write_all(root, course, grades, assignments)
    return write


intake_mod.register(intake_mod.Kind(
    NAME, "cours nbgrader : submitted/<élève>/<devoir>/<exercice>.ipynb, notes écrites aussi dans le carnet "
          "de notes de nbgrader", lambda p: layout(Path(p)) is not None, load))
