"""`trous nbgrader build DIR`: a complete nbgrader course directory, written from the trous course.

    DIR/nbgrader_config.py                    course id, SQLite gradebook, exchange, trous's preprocessors
    DIR/source/<assignment>/<exercise>.ipynb  one notebook per exercise (see notebooks.py)

Running it twice writes the same bytes. Exercises whose files do not all exist yet are skipped and
reported. Other files in DIR (the gradebook, release/, submitted/…) are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..course.definition import Course, Exercise
from .notebooks import notebook_bytes, source_notebook

DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"

CONFIG = '''\
"""Configuration nbgrader du cours « {title} » ({course_id}).

Écrite par `trous nbgrader build` : pour la changer, relancez la commande (ou ajoutez vos réglages
dans nbgrader_config_local.py, lu à la fin de ce fichier s'il existe).
"""

import os

c = get_config()  # noqa: F821 (fourni par nbgrader)
ICI = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = ICI
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ICI, "gradebook.db")
c.Exchange.root = os.environ.get("TROUS_NBGRADER_ECHANGE", {exchange!r})

# Distribution : les élèves voient les trous ___ de exercises/, pas « YOUR CODE HERE ».
c.GenerateAssignment.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "trous.nbgrader_course.preprocessors.ClearBlanks",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.CheckCellMetadata",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.SaveCells",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbgrader.preprocessors.ClearMarkScheme",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Correction : le noyau tourne dans bubblewrap (il ne voit ni source/, ni le carnet de notes, ni les
# autres copies), puis chaque trou est recorrigé hors du noyau par le moteur de trous, que le code
# de l'élève ne peut pas falsifier.
c.Autograde.autograde_preprocessors = [
    "trous.nbgrader_course.kernel.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "trous.nbgrader_course.preprocessors.VerifyGrades",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = 120

# Retours aux élèves : sans le code des tests cachés.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "trous.nbgrader_course.preprocessors.HideHiddenTests",
]

# zip_collect : l'archive « Télécharger tous les travaux remis » de Moodle (un dossier par élève,
# « Prénom Nom_<identifiant>_assignsubmission_file_ »), placée dans downloaded/<devoir>/archive/.
c.FileNameCollectorPlugin.named_regexp = (
    r".*/[^/]*?_(?P<student_id>[0-9]+)_assignsubmission_file_/(?:[^/]*/)*(?P<file_id>[^/]+[.]ipynb)$"
)

_local = os.path.join(ICI, "nbgrader_config_local.py")
if os.path.exists(_local):
    load_subconfig(_local)  # noqa: F821
'''


@dataclass
class BuildReport:
    root: Path
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (exercise id, why)


def buildable(exercise: Exercise) -> str | None:
    """Why the exercise cannot be built yet, or None."""
    for path in (exercise.template_path, exercise.checks_path, exercise.solution_path, exercise.grader_path):
        if not path.is_file():
            return f"{path.relative_to(exercise.course.root)} manquant"
    return None


def config_text(course: Course, exchange: str = DEFAULT_EXCHANGE) -> str:
    return CONFIG.format(title=course.title, course_id=course.id, exchange=exchange)


def _write(path: Path, data: bytes, report: BuildReport) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    report.written.append(path)


def build(course: Course, root: str | Path, exchange: str = DEFAULT_EXCHANGE,
          only: list[str] | None = None) -> BuildReport:
    root = Path(root).resolve()
    report = BuildReport(root)
    _write(root / "nbgrader_config.py", config_text(course, exchange).encode("utf-8"), report)
    for exercise in course.exercises:
        if only and exercise.id not in only and exercise.assignment.id not in only:
            continue
        why = buildable(exercise)
        if why:
            report.skipped.append((exercise.id, why))
            continue
        nb = source_notebook(exercise)
        _write(root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb", notebook_bytes(nb), report)
    return report
