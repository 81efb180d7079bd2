"""`trous nbgrader build DIR`: an nbgrader course directory, with trous-cours.json (what `trous grade .`
needs anywhere). Twice gives the same bytes. A file the last build wrote and someone edited since
(formgrader's « Create Assignment »…) makes it refuse, listing what differs, unless `--force`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ...core.blanks import defines
from ...core.course import Course, Exercise
from ...inputs import bundle as bundle_mod
from ...inputs import standalone
from ...inputs.answers import nbgrader_meta
from ...inputs.bundle import cell_source
from ..edition import ShippedError, explorer_files
from . import DEFAULT_EXCHANGE
from .notebooks import BuildError, answer_cells, explorer_notebook, notebook_bytes, source_notebook

STUDENTS_CONFIG = "/etc/jupyter/nbgrader_config.py"  # read by every account's nbgrader (jupyter's config path)

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
# L'échange : {exchange_note}
c.Exchange.root = os.environ.get("TROUS_NBGRADER_ECHANGE", {exchange!r})

# Distribution : les élèves voient les trous ___ de exercises/, pas « YOUR CODE HERE ».
c.GenerateAssignment.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "trous.publish.nbgrader.preprocessors.ClearBlanks",
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
# autres copies) ; les cellules notées n'y sont pas exécutées : chaque trou est corrigé hors du noyau
# par le moteur de trous (VerifyGrades), que le code de l'élève ne peut pas falsifier.
# (nbgrader's sanitizing, except that a grade cell received without its hidden tests, as released, is
# restored without a warning: nbgrader prints one per hidden-test cell and per student; and a notebook
# whose nbgrader metadata a student damaged is still graded, never dropped.)
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "trous.publish.nbgrader.preprocessors.RepairCells",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "trous.publish.nbgrader.preprocessors.RestoreCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "trous.publish.nbgrader.kernel.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "trous.publish.nbgrader.preprocessors.VerifyGrades",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = 120

# Retours aux élèves : sans le code des tests cachés ; une note changée dans formgrader y est dite à côté de
# celle de la correction automatique.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "trous.publish.nbgrader.preprocessors.TeacherGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "trous.publish.nbgrader.preprocessors.HideHiddenTests",
]

# release_feedback : chaque élève passé par l'échange reçoit son retour ; ceux venus par zip_collect
# (Moodle) sont nommés, avec le chemin de leur page, au lieu d'arrêter la publication pour tous.
c.ExchangeFactory.release_feedback = "trous.publish.nbgrader.exchange.ReleaseFeedback"

# zip_collect : l'archive « Télécharger tous les travaux remis » de Moodle (un dossier par élève,
# « Prénom Nom_<identifiant>_assignsubmission_file_ »), placée dans downloaded/<devoir>/archive/ ;
# le nom de chaque élève va dans le carnet de notes (formgrader l'affiche).
c.ZipCollectApp.collector_plugin = "trous.publish.nbgrader.zipcollect.MoodleCollector"

_local = os.path.join(ICI, "nbgrader_config_local.py")
if os.path.exists(_local):
    load_subconfig(_local)  # noqa: F821
'''


GITIGNORE = """\
# Écrit par trous nbgrader build : les copies, les notes et les retours des élèves restent hors de git.
gradebook.db
downloaded/
submitted/
autograded/
feedback/
release/
trous-resultats/
.ipynb_checkpoints/
"""


class BuildRefused(Exception):
    """French: what differs."""


@dataclass
class BuildReport:
    root: Path
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (exercise id, why)
    replaced: list[str] = field(default_factory=list)  # edited files overwritten (--force)
    notes: list[str] = field(default_factory=list)


def buildable(exercise: Exercise) -> str | None:
    for path in (exercise.template_path, exercise.checks_path, exercise.solution_path, exercise.grader_path):
        if not path.is_file():
            return f"{path.relative_to(exercise.course.root)} manquant"
    return None


def students_setting(exchange: str) -> str | None:
    """What students must set when the exchange is not nbgrader's default."""
    if exchange == DEFAULT_EXCHANGE:
        return None
    return (f"les élèves doivent avoir « c.Exchange.root = {exchange!r} » dans {STUDENTS_CONFIG} (pour tous les "
            "comptes) ou dans leur ~/.jupyter/nbgrader_config.py, sinon nbgrader fetch_assignment cherche "
            f"{DEFAULT_EXCHANGE}")


def gitignore_text(existing: str | None) -> str:
    """Ours, or the teacher's with our missing lines added at the end."""
    if existing is None:
        return GITIGNORE
    have = {line.strip() for line in existing.split("\n")}
    missing = [line for line in GITIGNORE.split("\n") if line and not line.startswith("#") and line not in have]
    if not missing:
        return existing
    separator = "" if existing.endswith("\n") or not existing else "\n"
    return existing + separator + "\n".join([GITIGNORE.split("\n")[0], *missing]) + "\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- what differs in an edited file --------------------------------------------------------------
def _cells(data: bytes) -> list[dict] | None:
    try:
        cells = json.loads(data.decode("utf-8")).get("cells")
    except (UnicodeDecodeError, ValueError, AttributeError):
        return None
    return [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else None


def _cell_id(cell: dict) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def differences(old: bytes, new: bytes) -> list[str]:
    """What `old` (as edited) has that `new` (what the build writes) has not."""
    before, after = _cells(old), _cells(new)
    if before is None or after is None:
        return ["contenu modifié"]
    found = []
    new_cells = {_cell_id(c): c for c in after if _cell_id(c)}
    for number, cell in enumerate(before, start=1):
        gid = _cell_id(cell)
        if gid is None or gid not in new_cells:
            found.append(f"cellule {number} ({gid or 'sans identifiant nbgrader'}) : ajoutée")
            continue
        other = new_cells[gid]
        meta, other_meta = nbgrader_meta(cell), nbgrader_meta(other)
        if meta.get("points") != other_meta.get("points"):
            found.append(f"cellule {gid} : {meta.get('points')} point(s) dans le carnet, {other_meta.get('points')} "
                         "dans course.yaml")
        if {k: v for k, v in meta.items() if k != "points"} != {k: v for k, v in other_meta.items() if k != "points"}:
            found.append(f"cellule {gid} : réglages nbgrader modifiés")
        if cell_source(cell) != cell_source(other):
            found.append(f"cellule {gid} : texte modifié")
        if cell.get("cell_type") != other.get("cell_type"):
            found.append(f"cellule {gid} : type changé ({cell.get('cell_type')})")
    old_ids = {_cell_id(c) for c in before}
    found += [f"cellule {gid} : supprimée" for gid in new_cells if gid not in old_ids]
    return found or ["mise en forme modifiée (métadonnées du carnet)"]


# -- the build -----------------------------------------------------------------------------------
def _plan(course: Course, exchange: str, only: list[str] | None,
          report: BuildReport) -> tuple[dict[str, bytes], list[standalone.Built]]:
    """Every file the build writes (relative path → bytes), and the exercises built."""
    note = students_setting(exchange) or ("celui de nbgrader par défaut : les élèves n'ont rien à régler (il doit "
                                          "exister, inscriptible par tous : mkdir -p ... && chmod ugo+rw ...)")
    config = CONFIG.format(title=course.title, course_id=course.id, exchange=exchange, exchange_note=note)
    files: dict[str, bytes] = {"nbgrader_config.py": config.encode("utf-8")}
    built: list[standalone.Built] = []
    for exercise in course.exercises:
        if only and exercise.id not in only and exercise.assignment.id not in only:
            continue
        why = buildable(exercise)
        if why:
            report.skipped.append((exercise.id, why))
            continue
        rel = f"source/{exercise.assignment.id}/{exercise.id}.ipynb"
        files[rel] = notebook_bytes(source_notebook(exercise))
        built.append(standalone.Built(exercise, rel, files[rel],
                                      bundle_mod.of(exercise, answer_cells(exercise), hidden=True)))
    # The course's own notebook goes with the first assignment whose exercises define, without a blank,
    # what it reads (`needs`).
    explorer = course.explorer
    home = next((b.exercise.assignment.id for b in built
                 if explorer is not None and defines(b.exercise.template_path, explorer.needs)), None)
    if home is not None:
        rel = f"source/{home}/{explorer.file}"
        files[rel] = notebook_bytes(explorer_notebook(explorer))
        folder = rel.rsplit("/", 1)[0]  # what its code imports, beside it in the release
        try:
            shipped = explorer_files(course)
        except ShippedError as exc:
            raise BuildError(str(exc)) from None
        files.update({f"{folder}/{rel}": data for rel, data in shipped.items()})
    elif built and not only and explorer is not None:
        report.notes.append(f"{explorer.file} ({explorer.title}) non ajouté : aucun exercice construit "
                            f"ne définit {', '.join(explorer.needs)} sans trou")
    return files, built


def _kept(course: Course, root: Path, previous: dict | None, built: list[standalone.Built]) -> list[standalone.Built]:
    """The exercises built now, and those an earlier build wrote and this one left (`--exercice`)."""
    now = {b.exercise.id: b for b in built}
    earlier = {v.get("exercice"): k for k, v in ((previous or {}).get("carnets") or {}).items() if isinstance(v, dict)}
    kept = []
    for exercise in course.exercises:
        if exercise.id in now:
            kept.append(now[exercise.id])
        elif exercise.id in earlier and (root / earlier[exercise.id]).is_file():
            path = root / earlier[exercise.id]
            try:
                source = standalone.read_source(path, earlier[exercise.id])
            except standalone.StandaloneError:
                continue
            kept.append(standalone.Built(exercise, earlier[exercise.id], path.read_bytes(), source.bundle))
    return kept


def build(course: Course, root: str | Path, exchange: str = DEFAULT_EXCHANGE,
          only: list[str] | None = None, force: bool = False) -> BuildReport:
    root = Path(root).resolve()
    report = BuildReport(root)
    files, built = _plan(course, exchange, only, report)
    try:
        previous = standalone.read_manifest(root)
    except standalone.StandaloneError:
        previous = None  # unreadable: every difference counts as an edit
    recorded = (previous or {}).get("fichiers") or {}
    edited: dict[str, list[str]] = {}
    for rel, data in files.items():
        path = root / rel
        try:
            old = path.read_bytes()
        except FileNotFoundError:
            continue
        if old == data or recorded.get(rel) == _sha(old):
            continue  # unchanged, or still as the last build wrote it
        edited[rel] = differences(old, data) if rel.endswith(".ipynb") else ["contenu modifié"]
    if edited and not force:
        lines = [f"{rel} : " + " ; ".join(what[:6]) + (" ; …" if len(what) > 6 else "") for rel, what in edited.items()]
        unknown = "" if previous is not None else (f" ({standalone.MANIFEST} absent : construit par une version de "
                                                   "trous qui ne notait pas ce qu'elle écrivait, ou pas par trous)")
        raise BuildRefused(f"{root} : {len(edited)} fichier(s) écrit(s) par trous nbgrader build ont été modifiés "
                           f"depuis{unknown} ; rien n'est écrit :\n  " + "\n  ".join(lines)
                           + "\nreportez ces changements dans le cours (course.yaml, exercises/…) puis relancez, ou "
                             "écrasez-les avec --force")
    report.replaced = sorted(edited)
    kept = _kept(course, root, previous, built)
    if kept:
        data = standalone.manifest(course, kept)
        # files of exercises not rebuilt this time (--exercice) stay recorded as the earlier build wrote them
        data["fichiers"] = {**{k: v for k, v in recorded.items() if (root / k).exists()},
                            **{rel: _sha(content) for rel, content in files.items()}}
        files[standalone.MANIFEST] = standalone.manifest_bytes(data)
    ignore = root / ".gitignore"
    files[".gitignore"] = gitignore_text(ignore.read_text(encoding="utf-8") if ignore.is_file() else None).encode()
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        report.written.append(path)
    return report
