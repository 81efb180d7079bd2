"""Turning what the teacher has into `Submission`s: a folder with one sub-folder (or .zip) per
student, or the `.zip` Moodle's « Télécharger tous les travaux remis » gives (kinds.py).

Every entry of the input is a copy or is listed with why not (`Intake.ignored`). A copy is walked in
full, but only what can be an exercise (filenames.py) and the student's own archives are kept; every
other file is named with why (`Submission.ignored`, bounded). Of two files for one exercise, the
newest wins. Inputs are hostile, so nothing is extracted to disk and every name and size is checked
before use: escaping archive paths (`..`, absolute, a drive) and links are refused, never read;
sizes, nesting and compression ratios are bounded (`IntakeLimits`); in a folder no symbolic link is
followed (each component opened with O_NOFOLLOW relative to its parent's descriptor) and only regular
files are read. Names shown go through `safetext.printable`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import io
import json
import os
import re
import stat
import time
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trous

from ..core.course import Course
from ..core.analysis import MAX_BYTES
from . import filenames, moodle as moodlefolders
from .filenames import Match, Matcher, is_other_archive, is_zip
from ..core.safetext import printable
from ..core.submission import Again, IgnoredFile, Stored, Submission
from ..core.wording import count, plural

MiB = 1 << 20
ZIP_KIND = ("le .zip « Télécharger tous les travaux remis » de Moodle, « <Nom>_<id>_assignsubmission_file_/… » "
            "(ou un .zip de dossiers)")
FOLDER_KIND = "un dossier, un sous-dossier (ou un .zip) par étudiant : <identifiant>/exercises/01_….py"


class IntakeError(Exception):
    """The whole input is refused (not found, not an archive, a zip bomb…); the message is French."""


def of_kind(path: Path, detect: Callable[[Path], object], description: str) -> None:
    """A loader's check of its input (kinds.py: `detect`, `description`), the same words for every kind."""
    if not detect(path):
        raise IntakeError(f"{path} : ce n'est pas {description}")


@dataclass(frozen=True)
class IntakeLimits:
    file_bytes: int = MAX_BYTES  # an exercise file: read at most this (+1, so the engine says « trop gros »)
    notebook_bytes: int = 32 * MiB  # a .ipynb (outputs, images) read before conversion to its .py
    archive_bytes: int = 64 * MiB  # a student's own archive, read into memory
    total_bytes: int = 512 * MiB  # decompressed from one input, nested archives included
    # Safety ceilings far above any real copy, against hostile trees; reaching one is said, loudly:
    scan: int = 200_000  # entries walked in one copy, or listed in one archive's directory
    directory_bytes: int = 16 * MiB  # an archive's central directory (zipfile holds it whole in memory)
    folder_depth: int = 40  # folders inside folders
    depth: int = 2  # archives opened one inside the other: Moodle's (1), then the student's own (2)
    ratio: int = 100  # an entry expanding more than this many times its compressed size is a bomb…
    ratio_floor: int = 4 * MiB  # …once it is bigger than this (small files of zeros are legitimate)
    warnings: int = 20  # notes kept per student
    listed: int = 12  # files not graded named per reason and per student; the others are counted


@dataclass
class Intake:
    """What an input gave: its submissions, its entries that are not copies (with why), notes about it."""

    kind: str
    source: Path
    submissions: list[Submission] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ignored: list[IgnoredFile] = field(default_factory=list)
    # Which copies are which Moodle participants: what the worksheet and the feedback zip are written from.
    moodle: moodlefolders.Copies | None = None
    opened: list = field(default_factory=list)  # what its copies are read from again when graded (an archive)

    def close(self) -> None:
        for handle in self.opened:
            handle.close()


# -- what is not graded, and why ------------------------------------------------------------------
# Ranks: the order reasons are listed in, the ones a teacher must see first.
CANDIDATE, REFUSED, ARCHIVE, PYTHON, OTHER, COURSE, FOLDER = range(7)
MAX_REASONS = 40

NOT_REGULAR = "pas un fichier ordinaire (tube, périphérique…) : non lu"
NOT_EXERCISE = "pas un exercice du cours"
PYTHON_EXTRA = "fichier Python qui n'est pas un exercice du cours"
PUBLIC_CHECK = "vérifications publiques du cours (non corrigées)"
COURSE_FILE = "fichier fourni avec le cours (non corrigé)"
OTHER_ARCHIVE = ("format d'archive non pris en charge (seul le .zip est ouvert) : dépose un .zip ou directement "
                 "tes fichiers .py")
TOO_DEEP = "archive dans une archive dans une archive : non ouverte"
NOT_A_COPY = "ni un dossier ni un .zip : pas une copie (attendu : un dossier ou un .zip par étudiant)"
OUTSIDE = "hors des dossiers d'étudiants : pas une copie"
LINK_NEVER_FOLLOWED = "lien symbolique : jamais suivi"
OUR_RESULTS = "dossier des résultats de cette correction"
MARKED_RESULTS = "dossier de résultats de trous (il porte la marque que trous y a écrite) : pas une copie"
RESULTS_FILES = ("gradebook.db", "grades.csv", "results.schema.json", "moodle.csv", "rapport.html")

SKIPPED_DIRS = {
    ".git": "dossier de gestion de versions (git) : non exploré",
    ".hg": "dossier de gestion de versions (Mercurial) : non exploré",
    ".svn": "dossier de gestion de versions (Subversion) : non exploré",
    "__pycache__": "cache de Python : non exploré",
    ".pytest_cache": "cache de pytest : non exploré",
    ".mypy_cache": "cache de mypy : non exploré",
    ".ipynb_checkpoints": "sauvegardes automatiques de Jupyter : non explorées",
    "__MACOSX": "métadonnées de macOS : non explorées",
    ".venv": "environnement Python (bibliothèques installées) : non exploré",
    "venv": "environnement Python (bibliothèques installées) : non exploré",
    "node_modules": "bibliothèques JavaScript installées : non explorées",
    ".trous": "dossier interne de trous (modèles, état) : non exploré",
    ".idea": "réglages de l'éditeur : non explorés",
    ".vscode": "réglages de l'éditeur : non explorés",
}
RESOURCE_FORK = "métadonnées de macOS (« ._ ») : ignorées"
# What the student edition ships besides the exercises (edition.py); course_files adds the explorer's.
COURSE_FILES = {"course.yaml", "lisezmoi.md", "requirements.txt", "requirements-lab.txt", "pytest.ini",
                ".gitignore"}


def course_files(course: Course) -> set[str]:
    """Names (case-folded) of the files a student got with the course (the edition's, the explorer's)."""
    names = set(COURSE_FILES)
    if course.explorer is not None:
        names.add(course.explorer.file.casefold())
        for name in course.explorer.files:
            path = course.root / name
            shipped = [path] if path.is_file() else []
            if path.is_dir() and not path.is_symlink():
                shipped = list(itertools.islice(path.rglob("*"), 2000))
            names |= {p.name.casefold() for p in shipped if p.is_file()}
    return names


def _short(path: str, n: int = 120) -> str:
    path = printable(path)
    return path if len(path) <= n else path[: n - 1] + "…"


def _reason(exc: BaseException) -> str:
    return printable(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)


def size_text(n: int) -> str:
    return f"{n / MiB:.0f} Mio" if n >= MiB else f"{max(1, round(n / 1024))} Kio"


class Ledger:
    """One copy's notes and files not graded (with why, bounded per reason), and the bytes its archives
    may still decompress (archives inside archives add up)."""

    def __init__(self, limits: IntakeLimits):
        self.limits = limits
        self.left = limits.total_bytes
        self.notes: list[str] = []
        self._named: dict[str, list[IgnoredFile]] = {}
        self._counts: dict[str, int] = {}
        self._ranks: dict[str, int] = {}

    def note(self, text: str) -> None:
        self.notes.append(printable(text))

    def ignore(self, path: str, reason: str, rank: int = OTHER, exercise: str = "") -> None:
        reason = printable(reason)
        if reason not in self._counts and len(self._counts) >= MAX_REASONS:
            reason, rank = "autre raison", OTHER
        self._counts[reason] = self._counts.get(reason, 0) + 1
        self._ranks[reason] = min(rank, self._ranks.get(reason, rank))
        named = self._named.setdefault(reason, [])
        if len(named) < self.limits.listed:
            named.append(IgnoredFile(_short(path), reason, exercise, notable=self._ranks[reason] <= PYTHON))

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise IntakeError(f"plus de {size_text(self.limits.total_bytes)} décompressés : copie refusée "
                              "(bombe de décompression ?)")

    def submission(self, student: str, files: Mapping[str, bytes | None], **fields) -> Submission:
        order = sorted(self._named, key=lambda r: self._ranks[r])  # stable: first seen first within a rank
        ignored = tuple(i for r in order for i in self._named[r])
        unlisted = tuple((r, self._counts[r] - len(self._named[r])) for r in order
                         if self._counts[r] > len(self._named[r]))
        return Submission(student, files, warnings=_bounded(self.notes, self.limits), ignored=ignored,
                          unlisted=unlisted, **fields)


def _bounded(notes: list[str], limits: IntakeLimits) -> tuple[str, ...]:
    unique = list(dict.fromkeys(notes))
    if len(unique) > limits.warnings:
        rest = len(unique) - limits.warnings + 1
        unique = unique[: limits.warnings - 1] + [f"… et {count(rest, 'autre remarque')}"]
    return tuple(unique)


class Sorter:
    """From a name alone: is an entry of a copy kept (an exercise, an archive to open), or why not."""

    def __init__(self, course: Course):
        self.matcher = Matcher(e.id for e in course.exercises)
        self.course_files = course_files(course)

    def keep(self, name: str) -> bool:
        return is_zip(name) or self.matcher.match(name) is not None

    def reason(self, name: str) -> tuple[str, int] | None:
        """(why, rank) for a file not kept; None only for a file that is no one's work (a grading
        tool's own bookkeeping), which is not named at all."""
        folded = name.casefold()
        if name.startswith("._"):
            return RESOURCE_FORK, FOLDER
        if is_other_archive(name):
            return OTHER_ARCHIVE, ARCHIVE
        if self.matcher.is_public_check(name):
            return PUBLIC_CHECK, COURSE
        if folded in self.course_files:
            return COURSE_FILE, COURSE
        near = self.matcher.near(name)
        if near is not None:
            return (f"nom proche de {near}.py mais pas un renommage reconnu : non corrigé (renomme-le {near}.py "
                    "si c'est ton exercice)"), PYTHON
        if folded.endswith(".py"):
            return PYTHON_EXTRA, PYTHON
        return NOT_EXERCISE, OTHER


def student_id(name: str) -> str:
    """`name` when it is printable, else its cleaned form and a short hash (unique, and safe in a
    terminal, a CSV, a file name)."""
    clean = printable(name).strip()
    if clean == name and clean:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{clean[:80] or 'copie'}-{digest}"


# -- a student's files, whatever holds them -------------------------------------------------------
# LINK only in scan's listings: a link becomes a REFUSED_KIND entry.
FILE, LINK, OTHER_KIND, REFUSED_KIND, SKIPPED = "file", "link", "other", "refused", "skipped"


@dataclass(slots=True)
class Entry:
    parts: tuple[str, ...]  # path relative to the student's root (or to the archive, before grouping)
    kind: str  # FILE, OTHER_KIND (device, fifo…), REFUSED_KIND or SKIPPED (note says why)
    size: int = 0
    read: Callable[[int], bytes] | None = None  # at most n bytes; FILE only
    note: str = ""  # why it was refused or skipped
    mtime: float | None = None  # last modification (seconds since the epoch), when known
    label: str = ""  # how to show it when `parts` cannot (an unsafe archive name)
    folder: bool = False  # SKIPPED: a whole folder
    # `read` may be called again when the copy is graded: it holds nothing of the copy in memory (a
    # file of a folder, a member of Moodle's archive; not one of the student's own archive, held whole).
    lasting: bool = False

    @property
    def path(self) -> str:
        return self.label or "/".join(self.parts)

    def under(self, prefix: tuple[str, ...]) -> "Entry":
        label = self.label and "/".join(prefix + (self.label,))
        return dataclasses.replace(self, parts=prefix + self.parts, label=label)


def _sorted(entries: Iterable[Entry], ledger: Ledger, sorter: Sorter) -> Iterator[Entry]:
    """The kept entries; every other one is recorded in the ledger (a folder's and an archive's alike)."""
    for entry in entries:
        if entry.kind == REFUSED_KIND:
            # The exercise a refused entry (a link, a fifo…) would have been, if its name says so.
            match = sorter.matcher.match(entry.parts[-1]) if entry.parts and not entry.label else None
            ledger.ignore(entry.path or "?", entry.note, REFUSED, match.exercise if match else "")
        elif entry.kind == SKIPPED:
            ledger.ignore(entry.path + ("/" if entry.folder else ""), entry.note, FOLDER)
        elif sorter.keep(entry.parts[-1]):
            yield entry
        else:
            said = sorter.reason(entry.parts[-1]) if entry.kind == FILE else (NOT_REGULAR, OTHER)
            if said is not None:
                ledger.ignore(entry.path, *said)


def expand(entries: Iterable[Entry], ledger: Ledger, depth: int, sorter: Sorter) -> list[Entry]:
    """The kept entries, the student's own archives opened (down to `limits.depth`)."""
    out: list[Entry] = []
    for entry in _sorted(entries, ledger, sorter):
        if entry.kind != FILE or not is_zip(entry.parts[-1]):
            out.append(entry)
        elif depth >= ledger.limits.depth:
            ledger.ignore(entry.path, TOO_DEEP, ARCHIVE)
        else:
            inner = _open_nested(entry, ledger)
            out += expand([e.under(entry.parts) for e in inner], ledger, depth + 1, sorter)
    return out


def _open_nested(entry: Entry, ledger: Ledger) -> list[Entry]:
    limits = ledger.limits
    if entry.size > limits.archive_bytes:
        ledger.ignore(entry.path, f"archive trop grosse ({size_text(entry.size)}, au plus "
                                  f"{size_text(limits.archive_bytes)}) : non ouverte", ARCHIVE)
        return []
    try:
        data = entry.read(limits.archive_bytes + 1)
        if len(data) > limits.archive_bytes:
            ledger.ignore(entry.path, f"archive trop grosse (plus de {size_text(limits.archive_bytes)}) : "
                                      "non ouverte", ARCHIVE)
            return []
        ledger.take(len(data))
        handle = io.BytesIO(data)
        _check_directory(handle, limits)
        return members(zipfile.ZipFile(handle), limits, ledger)
    except IntakeError as exc:
        ledger.ignore(entry.path, str(exc), ARCHIVE)
        return []
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError, ValueError,
            zlib.error) as exc:
        ledger.ignore(entry.path, f"archive illisible ({_reason(exc)})", ARCHIVE)
        return []


# -- choosing each exercise's file ----------------------------------------------------------------
TIE_SECONDS = 2.0  # zip dates have a 2-second resolution: closer than this, two files are « as recent »


# Why a file as recent as the one graded was not chosen: the first rule of _tie_break it loses on.
_TIE_REASONS = ("nom exact", "un .py plutôt qu'un carnet", "dans exercises/", "moins profond dans la copie",
                "premier par ordre alphabétique")


def _tie_break(entry: Entry, match: Match) -> tuple:
    in_exercises = len(entry.parts) >= 2 and entry.parts[-2] == "exercises"
    return not match.exact, match.notebook, not in_exercises, len(entry.parts), entry.path


def _ranked(candidates: list[tuple[Entry, Match]]) -> list[tuple[Entry, Match]]:
    """Newest first; among files as recent, by _tie_break."""
    if not candidates:
        return []
    newest = max(e.mtime or 0.0 for e, _ in candidates)

    def key(candidate: tuple[Entry, Match]) -> tuple:
        when = candidate[0].mtime or 0.0
        recent = when >= newest - TIE_SECONDS
        return (not recent, 0.0 if recent else -when) + _tie_break(*candidate)

    return sorted(candidates, key=key)


def _not_chosen(entry: Entry, match: Match, chosen: tuple[Entry, Match]) -> str:
    kept = chosen[0]
    shown = _short(kept.path, 80)
    if (entry.mtime or 0.0) < (kept.mtime or 0.0) - TIE_SECONDS:  # so kept.mtime is known
        try:
            when = time.strftime("%d/%m/%Y %H:%M", time.localtime(kept.mtime))
        except (OverflowError, OSError, ValueError):
            when = "date inconnue"
        return f"version plus ancienne : {shown} (modifié le {when}) est corrigé à sa place"
    why = next((why for why, mine, theirs in zip(_TIE_REASONS, _tie_break(*chosen), _tie_break(entry, match))
                if mine < theirs), _TIE_REASONS[-1])
    return f"même date que {shown}, corrigé à sa place ({why})"


def _read_candidate(entry: Entry, notebook: bool, limits: IntakeLimits) -> tuple[bytes | None, str]:
    """The bytes to grade for this file (a notebook: its .py), or None and why not."""
    try:
        if not notebook:
            return entry.read(limits.file_bytes + 1), ""
        problem = filenames.unavailable()
        if problem:
            return None, problem
        too_big = (f"carnet trop gros ({size_text(entry.size)}, au plus {size_text(limits.notebook_bytes)}) : "
                   "non corrigé")
        if entry.size > limits.notebook_bytes:
            return None, too_big
        data = entry.read(limits.notebook_bytes + 1)
        if len(data) > limits.notebook_bytes:
            return None, too_big
        return filenames.to_python(data)[: limits.file_bytes + 1], ""
    except filenames.NotebookError as exc:
        return None, f"carnet illisible : {exc}"
    except IntakeError as exc:  # the student's decompression budget is spent
        return None, str(exc)
    except (OSError, zipfile.BadZipFile, EOFError, RuntimeError, ValueError, NotImplementedError, zlib.error) as exc:
        return None, f"lecture impossible ({_reason(exc)})"


def _again(read: Callable[[int], bytes], notebook: bool, limits: IntakeLimits) -> bytes | None:
    """A chosen file read again, when its copy is graded: the same bounds, None if it cannot be any more."""
    return _read_candidate(Entry((), FILE, 0, read), notebook, limits)[0]


def _stored(data: bytes, entry: Entry, notebook: bool, limits: IntakeLimits) -> tuple[bytes, Again]:
    """What a copy keeps of a file it has read: its digest and how to read it again (its bytes only when
    it cannot be read again but through the student's whole archive)."""
    again = functools.partial(_again, entry.read, notebook, limits) if entry.lasting else data
    return hashlib.sha256(data).digest(), again


def pick(course: Course, entries: list[Entry], ledger: Ledger, matcher: Matcher) -> tuple[Stored, dict[str, str]]:
    """(files, origins: exercise → path) of each exercise's newest readable candidate, the others recorded."""
    groups: dict[str, list[tuple[Entry, Match]]] = {}
    for entry in entries:
        match = matcher.match(entry.parts[-1])
        if match is None:
            continue
        if entry.kind != FILE:
            ledger.ignore(entry.path, NOT_REGULAR, CANDIDATE, match.exercise)
            continue
        groups.setdefault(match.exercise, []).append((entry, match))
    files: dict[str, tuple[bytes, Again] | None] = {e.id: None for e in course.exercises}
    origins: dict[str, str] = {}
    for exercise in course.exercises:
        chosen: tuple[Entry, Match] | None = None
        for entry, match in _ranked(groups.get(exercise.id, [])):
            if chosen is not None:
                ledger.ignore(entry.path, _not_chosen(entry, match, chosen), CANDIDATE, exercise.id)
                continue
            data, problem = _read_candidate(entry, match.notebook, ledger.limits)
            if data is None:
                ledger.ignore(entry.path, problem, CANDIDATE, exercise.id)
                continue
            chosen = (entry, match)
            files[exercise.id] = _stored(data, entry, match.notebook, ledger.limits)
            origins[exercise.id] = _short(entry.path)
            what = "carnet Jupyter converti en .py par jupytext" if match.notebook else ""
            if not match.exact or match.notebook:
                details = " ; ".join(x for x in (what, match.how) if x)
                ledger.note(f"{_short(entry.path)} corrigé comme {exercise.id}.py ({details})")
    return Stored(files), origins


@dataclass
class _Copy:
    """One student's entries, from one or more top-level entries of the input."""

    ledger: Ledger
    source: str  # where it comes from, as shown
    top: str = ""  # its first top-level entry, as shown
    depth: int = 0  # archives opened around it (the student's own .zip, Moodle's)
    key: str = ""  # its key in the Moodle grouping, if it is Moodle's
    entries: list[Entry] = field(default_factory=list)
    # The student's own .zip, opened only when the copy is submitted: one archive in memory at a time.
    archive: Entry | None = None


def _submit(intake: Intake, course: Course, copies: dict[str, _Copy], grouping: moodlefolders.Grouping | None,
            sorter: Sorter, limits: IntakeLimits) -> Intake:
    if grouping is not None:
        intake.moodle = grouping.copies
        intake.warnings = grouping.warnings + intake.warnings
    grouping = grouping or moodlefolders.Grouping()
    for student in sorted(copies, key=_order) if intake.moodle is not None or intake.kind == "zip" else copies:
        copy = copies[student]
        for note in grouping.notes.get(copy.key, ()):
            copy.ledger.note(note)
        try:
            entries = copy.entries if copy.archive is None else _open_nested(copy.archive, copy.ledger)
            files, origins = pick(course, expand(entries, copy.ledger, copy.depth, sorter), copy.ledger,
                                  sorter.matcher)
        except IntakeError as exc:  # this student's archives are a bomb: nothing of theirs is kept
            copy.ledger.note(str(exc))
            files, origins = {e.id: None for e in course.exercises}, {}
        intake.submissions.append(copy.ledger.submission(student, files, source=copy.source, origins=origins,
                                                         name=grouping.names.get(copy.key, "")))
    # A teacher must hear once that notebooks went ungraded.
    problem = filenames.unavailable()
    if problem:
        missed = sum(1 for s in intake.submissions for i in s.ignored if i.reason == problem)
        missed += sum(n for s in intake.submissions for r, n in s.unlisted if r == problem)
        if missed:
            what = plural(missed, "carnet Jupyter (.ipynb) non corrigé", "carnets Jupyter (.ipynb) non corrigés")
            intake.warnings.append(f"{missed} {what} : jupytext n'est pas installé sur cette machine "
                                   f"({filenames.INSTALL}, puis relance la correction)")
    intake.warnings = list(_bounded([printable(w) for w in intake.warnings], limits))
    return intake


# -- folders --------------------------------------------------------------------------------------
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOATIME = getattr(os, "O_NOATIME", 0)
_AT = (os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and os.scandir in os.supports_fd
       and _O_NOFOLLOW != 0)


def _open_at(dir_fd: int | None, name: str, flags: int) -> int:
    flags |= os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC
    if _O_NOATIME:
        try:
            return os.open(name, flags | _O_NOATIME, dir_fd=dir_fd)
        except PermissionError:
            pass  # O_NOATIME needs to own the file (or CAP_FOWNER)
    return os.open(name, flags, dir_fd=dir_fd)


def _open_dir(root: Path, rel: tuple[str, ...]) -> int:
    """A descriptor for root/rel…, refusing a symbolic link at every step below root."""
    fd = _open_at(None, str(root), _O_DIRECTORY)
    try:
        for part in rel:
            child = _open_at(fd, part, _O_DIRECTORY)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_upto(read: Callable[[int], bytes], n: int, budget: Ledger | None = None) -> bytes:
    chunks, left = [], n
    while left > 0:
        chunk = read(min(left, MiB))
        if not chunk:
            break
        if budget is not None:
            budget.take(len(chunk))
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reader(root: Path, parts: tuple[str, ...]) -> Callable[[int], bytes]:
    def read(n: int) -> bytes:
        if _AT:
            parent = _open_dir(root, parts[:-1])
            try:
                fd = _open_at(parent, parts[-1], _O_NONBLOCK)
            finally:
                os.close(parent)
        else:  # no openat (Windows): check each component, then open
            for depth in range(1, len(parts) + 1):
                if root.joinpath(*parts[:depth]).is_symlink():
                    raise OSError(0, "lien symbolique refusé")
            fd = os.open(root.joinpath(*parts), os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "pas un fichier ordinaire")
            return _read_upto(lambda k: os.read(fd, k), n)
        finally:
            os.close(fd)

    return read


def scan(root: Path, rel: tuple[str, ...], keep: Callable[[str], bool]) -> list[tuple[str, str, os.stat_result | None]]:
    """(name, kind, stat) of each entry of root/rel…, sorted; only the kept ones are stat'ed (the kind
    comes from the directory itself: a copy of 21 000 files is listed, not stat'ed)."""
    def one(d: os.DirEntry) -> tuple[str, str, os.stat_result | None]:
        if d.is_symlink():
            return d.name, LINK, None
        kind = ("dir" if d.is_dir(follow_symlinks=False) else FILE if d.is_file(follow_symlinks=False)
                else OTHER_KIND)
        return d.name, kind, d.stat(follow_symlinks=False) if kind != OTHER_KIND and keep(d.name) else None

    fd = _open_dir(root, rel) if _AT else None
    try:
        with os.scandir(root.joinpath(*rel) if fd is None else fd) as it:  # DirEntry.stat() uses fd
            return sorted((one(d) for d in it), key=lambda x: x[0])
    finally:
        if fd is not None:
            os.close(fd)


def walk(root: Path, limits: IntakeLimits, ledger: Ledger, sorter: Sorter, under: tuple[str, ...] = ()
         ) -> list[Entry]:
    """The kept entries under `root` (their paths under `under/`); nothing is opened but directories."""
    entries = _listed(root, limits, ledger, sorter.keep)
    return list(_sorted((e.under(under) for e in entries) if under else entries, ledger, sorter))


def _listed(root: Path, limits: IntakeLimits, ledger: Ledger, keep: Callable[[str], bool]) -> Iterator[Entry]:
    """Every entry under `root` as an archive's would be (links refused, tool folders skipped); only
    the `keep` ones can be read."""
    pending: deque[tuple[str, ...]] = deque([()])
    seen = 0
    while pending:
        rel = pending.popleft()
        try:
            listing = scan(root, rel, keep)
        except OSError as exc:
            yield Entry(rel, REFUSED_KIND, note=f"dossier illisible ({_reason(exc)})", label="/".join(rel) + "/")
            continue
        for name, kind, st in listing:
            seen += 1
            if seen > limits.scan:
                ledger.note(f"plus de {limits.scan} entrées dans la copie : exploration arrêtée, la suite n'est ni "
                            "lue ni listée")
                return
            parts = rel + (name,)
            if kind == "dir":
                if name in SKIPPED_DIRS:
                    yield Entry(parts, SKIPPED, note=SKIPPED_DIRS[name], folder=True)
                elif len(parts) >= limits.folder_depth:
                    yield Entry(parts, REFUSED_KIND, note=f"dossier à plus de {limits.folder_depth} niveaux : non "
                                "exploré", label="/".join(parts) + "/")
                elif name.casefold() == "exercises":  # where exercises live: walked first
                    pending.appendleft(parts)
                else:
                    pending.append(parts)
            elif kind == LINK:
                try:
                    target = os.readlink(root.joinpath(*parts))
                except OSError:
                    target = "?"
                yield Entry(parts, REFUSED_KIND, note=f"lien symbolique vers {_short(target, 60)} : jamais suivi")
            elif kind == FILE and st is not None:
                yield Entry(parts, FILE, st.st_size, _reader(root, parts), mtime=st.st_mtime, lasting=True)
            else:  # a device, a fifo… (named by pick() when it has an exercise's name), or a file not kept
                yield Entry(parts, kind)


# -- trous's own results folder, recognised by a mark only trous can make true --------------------
# A student's folder must never be dropped for looking like results, and a file name proves nothing:
# MARK holds the results folder's device and inode numbers, which a student cannot predict for their
# folder once unpacked on the teacher's disk; a copied mark names another folder and does not count.
MARK = ".trous-resultats"
MARK_KIND = "trous/resultats"
OURS, FOREIGN, NONE = "ours", "foreign", "none"
MARK_BYTES = 4096


def stamp(folder: Path) -> Path:
    """Mark `folder` as trous's results folder (idempotent: an unchanged mark is not rewritten)."""
    folder = Path(folder)
    path = folder / MARK
    st = os.stat(folder)
    content = json.dumps({"marque": MARK_KIND, "version": 1, "dossier": [st.st_dev, st.st_ino],
                          "ecrit_par": f"trous {trous.__version__}",
                          "explication": "dossier de résultats de trous : jamais corrigé comme une copie"},
                         ensure_ascii=False) + "\n"
    try:
        if path.read_text(encoding="utf-8") == content:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    temporary = folder / f".{MARK}.tmp{os.getpid()}"
    temporary.write_text(content, encoding="utf-8")
    os.replace(temporary, path)
    return path


def mark_of(folder: Path) -> str:
    """OURS when `folder` holds a mark naming itself, FOREIGN when one naming another folder (copied)."""
    try:
        fd = _open_at(None, str(folder), _O_DIRECTORY)
    except OSError:
        return NONE
    try:
        here = os.fstat(fd)
        mark = _open_at(fd, MARK, _O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(mark).st_mode):
                return NONE
            data = os.read(mark, MARK_BYTES)
        finally:
            os.close(mark)
    except (OSError, NotImplementedError):
        return NONE
    finally:
        os.close(fd)
    try:
        content = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return FOREIGN
    if not isinstance(content, dict) or content.get("marque") != MARK_KIND:
        return FOREIGN
    return OURS if content.get("dossier") == [here.st_dev, here.st_ino] else FOREIGN


def _not_a_copy(folder: Path, st: os.stat_result, ours: tuple[int, int] | None) -> str | None:
    if (st.st_dev, st.st_ino) == ours:
        return OUR_RESULTS
    if folder.name in SKIPPED_DIRS:
        return SKIPPED_DIRS[folder.name]
    return MARKED_RESULTS if mark_of(folder) == OURS else None


def _results_notes(folder: Path, ledger: Ledger) -> None:
    """A copy that looks like trous's results is graded all the same, and says so."""
    if mark_of(folder) == FOREIGN:
        ledger.note("ce dossier porte une marque de dossier de résultats de trous qui désigne un autre "
                    "dossier (copiée ?) : corrigé comme une copie")
    elif found := [n for n in RESULTS_FILES if (folder / n).is_file() and not (folder / n).is_symlink()]:
        ledger.note(f"ce dossier ressemble à des résultats de trous ({', '.join(found)}) mais n'en porte "
                    "pas la marque : corrigé comme une copie (si ce sont des résultats, sors-le du dossier "
                    "des copies)")


MOODLE_PLUGINS = {"onlinetext": "texte en ligne", "comments": "commentaires"}


def _moodle_plugin(ledger: Ledger, shown: str, plugin: str) -> None:
    plugin = MOODLE_PLUGINS.get(plugin, plugin)
    # Ranked with the files a teacher must see: a student who typed the work there has 0.
    ledger.ignore(shown, f"remise « {plugin} » de Moodle : seuls les fichiers déposés sont corrigés",
                  ARCHIVE)


def _order(student: str) -> tuple:
    """Participant numbers first, in numeric order, then the other identifiers."""
    return not student.isdigit(), len(student) if student.isdigit() else 0, student


def load_folder(root: Path, course: Course, limits: IntakeLimits, results: Path | None = None, **_) -> Intake:
    """SUBMISSIONS/<student>/… (a git clone, an unpacked archive), or SUBMISSIONS/<student>.zip."""
    of_kind(root, Path.is_dir, FOLDER_KIND)
    root = root.resolve()  # the teacher's own path may go through links; below it, none is followed
    intake = Intake("dossier", root)
    try:
        children = scan(root, (), lambda name: True)
    except OSError as exc:
        raise IntakeError(f"{root} : dossier illisible ({_reason(exc)})") from None
    ours = None
    if results is not None:
        try:
            st = os.stat(results)
            ours = (st.st_dev, st.st_ino)
        except OSError:
            pass  # not created yet: it cannot be among the copies
    sorter = Sorter(course)
    # Moodle's archive unpacked by hand: its folders are grouped by participant as in the archive.
    tops = {name: found for name, kind, _ in children if kind == "dir"
            and (found := moodlefolders.read(name, True)) is not None}
    grouping = moodlefolders.group(tops, student_id)
    copies: dict[str, _Copy] = {}
    moodle: dict[str, _Copy] = {}
    for name, kind, st in children:
        shown = _short(name)
        why = _not_a_copy(root / name, st, ours) if kind == "dir" else None
        if why is not None:
            intake.ignored.append(IgnoredFile(shown + "/", why))
        elif kind == "dir" and name in grouping.key:
            key = grouping.key[name]
            copy = moodle.setdefault(key, _Copy(Ledger(limits), str(root / shown), shown, key=key))
            if tops[name].plugin != "file":
                _moodle_plugin(copy.ledger, shown + "/", tops[name].plugin)
            else:
                copy.entries += walk(root / name, limits, copy.ledger, sorter)
        elif kind == LINK:
            intake.ignored.append(IgnoredFile(shown, LINK_NEVER_FOLLOWED))
        elif kind != "dir" and name.startswith("._"):  # AppleDouble, as in a copy (Sorter.reason)
            intake.ignored.append(IgnoredFile(shown, RESOURCE_FORK))
        elif kind == "dir" or (kind == FILE and is_zip(name) and len(name) > 4):
            stem = name if kind == "dir" else name[:-4]
            student, ledger = student_id(stem), Ledger(limits)
            if student in copies:
                intake.ignored.append(IgnoredFile(shown, f"un autre dossier ou .zip donne déjà "
                                                         f"l'identifiant « {student} » : non corrigé "
                                                         "(renomme l'un des deux)"))
                continue
            copy = copies[student] = _Copy(ledger, str(root / shown), depth=int(kind != "dir"))
            if kind == "dir":
                _results_notes(root / name, ledger)
                copy.entries = walk(root / name, limits, ledger, sorter)
            else:  # the student's archive is opened as if unpacked in their folder
                copy.archive = Entry((name,), FILE, st.st_size, _reader(root, (name,)), mtime=st.st_mtime)
            if student != stem:
                ledger.note(f"nom avec des caractères de contrôle : copie identifiée par « {student} »")
        else:
            intake.ignored.append(IgnoredFile(shown, NOT_A_COPY))
    for key, copy in moodle.items():
        if key in copies:  # a plain folder already has that name: both kept apart, neither sent back to Moodle
            grouping.copies.participants.pop(key, None)
            intake.warnings.append(f"un dossier « {_short(key)} » et un dossier Moodle du même numéro : corrigés à "
                                   "part, aucun renvoyé à Moodle sous ce numéro")
            key = student_id(f"{copy.top} (Moodle)")
        copies[key] = copy
    return _submit(intake, course, copies, grouping if tops else None, sorter, limits)


# -- zip archives ---------------------------------------------------------------------------------
_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_parts(name: str) -> tuple[str, ...] | None:
    """The components of an archive member's name, or None when it could land outside the archive."""
    if "\x00" in name:
        return None
    unified = name.replace("\\", "/")
    if unified.startswith("/") or _DRIVE.match(unified):
        return None
    parts = tuple(p for p in unified.split("/") if p not in ("", "."))
    return None if ".." in parts else parts


def _decode_name(info: zipfile.ZipInfo) -> str:
    # Archives made on Windows without the UTF-8 flag store names in cp437 (zipfile's reading) while
    # the bytes are often UTF-8: try that first, so « Élodie » stays « Élodie ».
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def _zip_reader(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Ledger | None) -> Callable[[int], bytes]:
    def read(n: int) -> bytes:
        with archive.open(info) as handle:  # stops at the declared size; the CRC is checked at its end
            return _read_upto(handle.read, n, budget)

    return read


def _zip_time(info: zipfile.ZipInfo) -> float | None:
    try:
        return time.mktime(tuple(info.date_time) + (0, 0, -1))
    except (OverflowError, ValueError, TypeError):
        return None


def _check_directory(handle, limits: IntakeLimits) -> None:
    """Refuse an archive whose central directory zipfile would hold whole in memory before anything
    else can be checked: its size and entry count come from the end record, read first."""
    end_record = getattr(zipfile, "_EndRecData", None)  # the reader zipfile itself uses
    if end_record is None:
        return
    try:
        record = end_record(handle)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return  # zipfile's own opening says what is wrong
    finally:
        handle.seek(0)
    if not record:
        return
    size, count = record[zipfile._ECD_SIZE], record[zipfile._ECD_ENTRIES_TOTAL]
    if size > limits.directory_bytes or count > limits.scan:
        raise IntakeError(f"archive refusée : {count} entrées ({size_text(size)} de répertoire), plus que les "
                          f"{limits.scan} entrées permises")


def members(archive: zipfile.ZipFile, limits: IntakeLimits, budget: Ledger | None) -> list[Entry]:
    """An archive's entries, checked; a refused one keeps the best guess of its place, so that its note
    reaches the right student. Readers charge `budget` (the student's; None for Moodle's archive, whose
    every read is already bounded per file)."""
    infos = archive.infolist()
    if len(infos) > limits.scan:
        raise IntakeError(f"archive refusée : {len(infos)} entrées, plus que les {limits.scan} permises")
    out: list[Entry] = []
    skipped_folders: set[tuple[str, ...]] = set()  # each named once, not once per file in it
    for info in infos:
        name = _decode_name(info)
        parts = safe_parts(name)
        if parts is None:
            guess = tuple(p for p in name.replace("\\", "/").split("/")[:1] if p not in ("", ".", ".."))
            guess = guess if guess and not _DRIVE.match(guess[0]) else ()
            out.append(Entry(guess, REFUSED_KIND, label=_short(repr(name), 70),
                             note="chemin dangereux refusé dans l'archive (il sortirait du dossier)"))
            continue
        if not parts or info.is_dir():
            continue
        skipped = next((i for i, p in enumerate(parts[:-1]) if p in SKIPPED_DIRS), None)
        if skipped is not None:
            if parts[: skipped + 1] not in skipped_folders:
                skipped_folders.add(parts[: skipped + 1])
                out.append(Entry(parts[: skipped + 1], SKIPPED, note=SKIPPED_DIRS[parts[skipped]], folder=True))
        elif parts[-1].startswith("._"):
            out.append(Entry(parts, SKIPPED, note=RESOURCE_FORK))
        elif stat.S_ISLNK(info.external_attr >> 16):
            out.append(Entry(parts, REFUSED_KIND, note="lien symbolique refusé dans l'archive"))
        elif info.flag_bits & 0x1:
            out.append(Entry(parts, REFUSED_KIND, note="fichier chiffré (mot de passe) : non lu"))
        elif info.file_size > limits.ratio_floor and info.file_size > limits.ratio * max(1, info.compress_size):
            out.append(Entry(parts, REFUSED_KIND, note=(
                f"refusé : {size_text(info.compress_size)} qui se décompresseraient en "
                f"{size_text(info.file_size)} (bombe de décompression ?)")))
        else:
            out.append(Entry(parts, FILE, info.file_size, _zip_reader(archive, info, budget), mtime=_zip_time(info),
                             lasting=budget is None))
    return out


def load_zip(path: Path, course: Course, limits: IntakeLimits, **_) -> Intake:
    of_kind(path, looks_like_zip, ZIP_KIND)
    try:
        with open(path, "rb") as handle:
            _check_directory(handle, limits)
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IntakeError(f"{path} : archive .zip illisible ({_reason(exc)})") from None
    try:  # it stays open until the intake is closed: the copies are read from it again when graded
        return _zip_copies(members(archive, limits, None), path, archive, course, limits)
    except BaseException:
        archive.close()
        raise


def _zip_copies(entries: list[Entry], path: Path, archive: zipfile.ZipFile, course: Course, limits: IntakeLimits
                ) -> Intake:
    # Each top-level entry named as Moodle names them: a folder (it holds files) or, with « download
    # as folders » off, a file.
    folders = {e.parts[0] for e in entries if len(e.parts) > 1}
    tops = {top: found for top in dict.fromkeys(e.parts[0] for e in entries if e.parts)
            if (found := moodlefolders.read(top, top in folders)) is not None}
    intake = Intake("moodle" if tops else "zip", path, opened=[archive])
    grouping = moodlefolders.group(tops, student_id)
    copies: dict[str, _Copy] = {}
    ambiguous = {a.top: a for a in grouping.ambiguous}
    for entry in entries:
        top = entry.parts[0] if entry.parts else ""
        found = tops.get(top)
        if top in ambiguous:
            intake.ignored.append(IgnoredFile(_short(top), printable(ambiguous[top].reason)))
            continue
        if not top or (tops and found is None) or (entry.kind == SKIPPED and len(entry.parts) == 1) or (
                not tops and len(entry.parts) < 2 and entry.kind != REFUSED_KIND):
            why = entry.note if entry.kind in (REFUSED_KIND, SKIPPED) else OUTSIDE
            intake.ignored.append(IgnoredFile(_short(entry.path) + ("/" if entry.folder else ""),
                                              printable(why)))
            continue
        if found is not None:
            key = grouping.key[top]
            inner = entry.parts[1:] if len(entry.parts) > 1 else (found.rest,) if found.rest else ()
        else:
            key, inner = student_id(top), entry.parts[1:]
        copy = copies.get(key)
        if copy is None:
            copy = copies[key] = _Copy(Ledger(limits), f"{path.name}:{_short(top)}", depth=1, key=key)
            if not tops and key != top:
                copy.ledger.note(f"nom avec des caractères de contrôle : copie identifiée par « {key} »")
        shown = entry.label or "/".join(inner)
        if found is not None and found.plugin != "file":
            _moodle_plugin(copy.ledger, shown or top, found.plugin)
        elif inner or entry.kind == REFUSED_KIND:  # refused ones are named by expand, as a folder's are
            copy.entries.append(dataclasses.replace(entry, parts=inner))
    return _submit(intake, course, copies, grouping if tops else None, Sorter(course), limits)


def looks_like_zip(path: Path) -> bool:
    return path.is_file() and (path.suffix.lower() == ".zip" or zipfile.is_zipfile(path))

