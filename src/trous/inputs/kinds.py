"""The kinds of input `trous grade` reads (`--format`), in one table: the first kind whose `detect`
accepts the path is taken, so the most specific comes first (an nbgrader course is also a folder).
An input without a single copy is refused here, the same words for every kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.course import Course, CourseError
from . import intake, standalone as nbgrader
from .nbgrader_dir import course_root, without_iri_grammars
from .intake import Intake, IntakeError

without_iri_grammars()  # whatever imports nbformat later in this process (nbgrader_dir.py says why)


@dataclass(frozen=True)
class Kind:
    description: str  # French, for `trous grade --help`
    detect: Callable[[Path], object]  # true (a path, True) when the input is of this kind
    load: Callable[..., Intake]  # (path, course, limits, results=, assignments=): each uses what it needs


KINDS: dict[str, Kind] = {
    nbgrader.NAME: Kind(nbgrader.DESCRIPTION, course_root, nbgrader.load_submitted),
    "moodle": Kind(intake.ZIP_KIND, intake.looks_like_zip, intake.load_zip),
    "dossier": Kind(intake.FOLDER_KIND, Path.is_dir, intake.load_folder),
}


def detected(path: str | Path, kind: str = "auto") -> Kind | None:
    if kind != "auto":
        return KINDS.get(kind)
    return next((k for k in KINDS.values() if k.detect(Path(path))), None)


def _nbgrader(path: str | Path, kind: str) -> bool:
    """Only an nbgrader course carries its own course, and has its own place for the results."""
    return Path(path).exists() and detected(path, kind) is KINDS[nbgrader.NAME]


def carried_course(path: str | Path, kind: str = "auto", given: str | None = None) -> Course | None:
    """The course an input carries itself, or None (then the course is the one around, or -C); raises
    IntakeError when it cannot be graded with it."""
    if not _nbgrader(path, kind):
        return None
    try:
        return nbgrader.load(course_root(path) or path, given)
    except CourseError as exc:
        raise IntakeError(f"-C {given} : {exc}") from None


def carried_results(path: str | Path, kind: str = "auto") -> Path | None:
    """In the nbgrader course, the folder its .gitignore keeps out of git (build.py)."""
    return (course_root(path) or Path(path)).resolve() / nbgrader.RESULTS if _nbgrader(path, kind) else None


def load(path: str | Path, course: Course, kind: str = "auto", limits: intake.IntakeLimits | None = None, *,
         results: Path | None = None, assignments: list[str] | None = None) -> Intake:
    """`results`: the folder this run writes its results in (listed as such if it lies among the
    copies, even before it carries trous's mark); `assignments`: those chosen with --devoir."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise IntakeError(f"{path} : introuvable (attendu : un dossier avec un sous-dossier par étudiant, "
                          "ou le .zip de Moodle)")
    if kind != "auto" and kind not in KINDS:
        raise IntakeError(f"type d'entrée inconnu « {kind} » (possibles : {', '.join(KINDS)})")
    chosen = detected(path, kind)
    if chosen is None:
        raise IntakeError(f"{path} : ni un dossier de copies ni une archive .zip "
                          f"(types reconnus : {', '.join(KINDS)})")
    found = chosen.load(path, course, limits or intake.IntakeLimits(), results=results, assignments=assignments)
    if not found.submissions:  # the same words whatever the kind, with the entries that are not copies
        found.close()
        raise IntakeError(f"{found.source} : aucune copie d'étudiant (attendu : {chosen.description})"
                          + "".join(f"\n  {i.path} : {i.reason}" for i in found.ignored[:10]))
    return found
