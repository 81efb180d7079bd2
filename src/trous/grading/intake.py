"""Turning what the teacher has into `Submission`s: a folder with one sub-folder per student, or the
`.zip` Moodle's « Télécharger tous les travaux remis » gives.

Nothing is ever extracted to disk: archives are read in memory, entry by entry, and only the files
that can be an exercise (`<exercise id>.py`) and the students' own archives are decompressed. Every
untrusted name and size is checked first:
- an entry whose path escapes (`..`, an absolute path, a drive letter) or that is a symbolic link is
  refused and reported, never read;
- sizes are bounded (per file, decompressed bytes per archive, entries, archives inside archives),
  and an entry that expands far beyond its compressed size is refused as a zip bomb;
- in a folder, symbolic links are never followed (each path component is opened with O_NOFOLLOW
  relative to its parent's descriptor), and only regular files are read, read-only: a student's file
  is never modified, not even its access time when the system allows it.

Inputs are pluggable: `register(Kind(...))` adds a kind (nbgrader's `submitted/` notebooks, say), and
`load(path, course)` picks the first kind whose `detect` accepts the path.
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..course.definition import Course
from ..course.submission import MAX_BYTES
from .submissions import Submission

MiB = 1 << 20


class IntakeError(Exception):
    """The whole input is refused (not found, not an archive, a zip bomb…); the message is French."""


@dataclass(frozen=True)
class IntakeLimits:
    file_bytes: int = MAX_BYTES  # an exercise file: read at most this (+1, so the engine says « trop gros »)
    archive_bytes: int = 64 * MiB  # a student's own archive, read into memory
    total_bytes: int = 512 * MiB  # decompressed from one input, nested archives included
    entries: int = 20_000  # entries of one archive, or files seen in one student's folder
    depth: int = 2  # archives opened one inside the other: Moodle's (1), then the student's own (2)
    ratio: int = 100  # an entry expanding more than this many times its compressed size is a bomb…
    ratio_floor: int = 4 * MiB  # …once it is bigger than this (small files of zeros are legitimate)
    warnings: int = 20  # notes kept per student (a folder of 10 000 stray files gives one summary)


@dataclass
class Intake:
    """What an input gave: submissions (sorted by student), and notes about the input as a whole."""

    kind: str
    source: Path
    submissions: list[Submission] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Called with (course, grades) once the reports are written; returns more reports to list
    # (the nbgrader kind writes nbgrader's own gradebook there).
    after: Callable[[Course, list], dict[str, Path]] | None = None


@dataclass(frozen=True)
class Kind:
    name: str
    description: str  # French, for `trous grade --help`
    detect: Callable[[Path], bool]
    load: Callable[[Path, Course, IntakeLimits], Intake]


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    """Add an input kind; later registrations are tried first by `load(..., kind="auto")`."""
    KINDS[kind.name] = kind


def load(path: str | Path, course: Course, kind: str = "auto", limits: IntakeLimits | None = None) -> Intake:
    path = Path(path)
    limits = limits or IntakeLimits()
    if not path.exists() and not path.is_symlink():
        raise IntakeError(f"{path} : introuvable (attendu : un dossier avec un sous-dossier par étudiant, "
                          "ou le .zip de Moodle)")
    if kind != "auto":
        if kind not in KINDS:
            raise IntakeError(f"type d'entrée inconnu « {kind} » (possibles : {', '.join(KINDS)})")
        return KINDS[kind].load(path, course, limits)
    for candidate in reversed(list(KINDS.values())):
        if candidate.detect(path):
            return candidate.load(path, course, limits)
    raise IntakeError(f"{path} : ni un dossier de copies ni une archive .zip "
                      f"(types reconnus : {', '.join(KINDS)})")


# -- a student's files, whatever holds them -------------------------------------------------------
FILE, LINK, OTHER, REFUSED = "file", "link", "other", "refused"
SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", "__MACOSX", ".venv", "venv",
                "node_modules", ".pytest_cache", ".mypy_cache", ".trous", ".idea", ".vscode"}
OTHER_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".rar", ".7z", ".gz", ".bz2", ".xz")


@dataclass
class Entry:
    parts: tuple[str, ...]  # path relative to the student's root (or to the archive, before grouping)
    kind: str  # FILE, LINK, OTHER (directory, device, fifo…) or REFUSED (see note)
    size: int = 0
    read: Callable[[int], bytes] | None = None  # at most n bytes; FILE only
    note: str = ""  # why it was refused, or where a link points

    @property
    def path(self) -> str:
        return "/".join(self.parts)

    def under(self, prefix: tuple[str, ...]) -> "Entry":
        return Entry(prefix + self.parts, self.kind, self.size, self.read, self.note)


def size_text(n: int) -> str:
    return f"{n / MiB:.0f} Mio" if n >= MiB else f"{max(1, round(n / 1024))} Kio"


class _Budget:
    """Bytes one student's archives may still decompress (archives inside archives add up)."""

    def __init__(self, limits: IntakeLimits):
        self.limits = limits
        self.left = limits.total_bytes

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise IntakeError(f"plus de {size_text(self.limits.total_bytes)} décompressés : copie refusée "
                              "(bombe de décompression ?)")


def _short(path: str, n: int = 80) -> str:
    path = path.replace("\n", "\\n").replace("\r", "\\r")
    return path if len(path) <= n else path[: n - 1] + "…"


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _bounded(notes: list[str], limits: IntakeLimits) -> tuple[str, ...]:
    unique = list(dict.fromkeys(notes))
    if len(unique) > limits.warnings:
        unique = unique[: limits.warnings - 1] + [f"… et {len(unique) - limits.warnings + 1} autre(s) remarque(s)"]
    return tuple(unique)


def expand(entries: list[Entry], limits: IntakeLimits, budget: _Budget, notes: list[str],
           depth: int) -> list[Entry]:
    """Open the student's own archives (down to `limits.depth`), turn refusals into notes."""
    out: list[Entry] = []
    for entry in entries:
        if entry.kind == REFUSED:
            notes.append(entry.note)
        elif entry.kind == FILE and entry.parts and entry.parts[-1].lower().endswith(".zip"):
            if depth >= limits.depth:
                notes.append(f"{_short(entry.path)} : archive dans une archive dans une archive : ignorée")
                continue
            inner = _open_nested(entry, limits, budget, notes)
            out += expand([e.under(entry.parts) for e in inner], limits, budget, notes, depth + 1)
        else:
            if entry.kind == FILE and entry.path.lower().endswith(OTHER_ARCHIVES):
                notes.append(f"{_short(entry.path)} : format d'archive non pris en charge (seul le .zip est "
                             "ouvert) : dépose un .zip ou directement tes fichiers .py")
            out.append(entry)
    return out


def _open_nested(entry: Entry, limits: IntakeLimits, budget: _Budget, notes: list[str]) -> list[Entry]:
    if entry.size > limits.archive_bytes:
        notes.append(f"{_short(entry.path)} : archive trop grosse ({size_text(entry.size)}, au plus "
                     f"{size_text(limits.archive_bytes)}) : ignorée")
        return []
    try:
        assert entry.read is not None
        data = entry.read(limits.archive_bytes + 1)
        if len(data) > limits.archive_bytes:
            notes.append(f"{_short(entry.path)} : archive trop grosse : ignorée")
            return []
        budget.take(len(data))
        archive = zipfile.ZipFile(io.BytesIO(data))
        return members(archive, limits, budget)
    except IntakeError as exc:
        notes.append(f"{_short(entry.path)} : {exc}")
        return []
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError, ValueError) as exc:
        notes.append(f"{_short(entry.path)} : archive illisible ({_reason(exc)})")
        return []


def pick(course: Course, entries: list[Entry], limits: IntakeLimits, notes: list[str]) -> dict[str, bytes | None]:
    """Choose each exercise's file among a student's entries; note duplicates, links and extras."""
    wanted = {f"{e.id}.py": e.id for e in course.exercises}
    folded = {name.casefold(): ex for name, ex in wanted.items()}
    candidates: dict[str, list[tuple[tuple, Entry]]] = {}
    extras: list[str] = []
    for entry in entries:
        name = entry.parts[-1] if entry.parts else ""
        if entry.kind == LINK:
            notes.append(f"lien symbolique ignoré (jamais suivi) : {_short(entry.path)} → {_short(entry.note, 60)}")
            continue
        exercise = wanted.get(name)
        exact = exercise is not None
        if exercise is None:
            exercise = folded.get(name.casefold())
        if exercise is None:
            if name.endswith(".py") and not name.startswith("test_") and name != "__init__.py":
                extras.append(entry.path)
            continue
        if entry.kind != FILE:
            notes.append(f"{_short(entry.path)} n'est pas un fichier ordinaire : ignoré")
            continue
        # Prefer the exercises/ folder, then the exact name, then the shallowest, then the first in order.
        in_exercises = len(entry.parts) >= 2 and entry.parts[-2] == "exercises"
        rank = (not in_exercises, not exact, len(entry.parts), entry.path)
        candidates.setdefault(exercise, []).append((rank, entry))
    files: dict[str, bytes | None] = {}
    for exercise in course.exercises:
        found = [e for _, e in sorted(candidates.get(exercise.id, []), key=lambda c: c[0])]
        files[exercise.id] = None
        if not found:
            continue
        chosen = found[0]
        if len(found) > 1:
            others = ", ".join(_short(e.path, 50) for e in found[1:4]) + (" …" if len(found) > 4 else "")
            notes.append(f"plusieurs fichiers {exercise.id}.py : {_short(chosen.path)} retenu, ignoré(s) : {others}")
        if chosen.parts[-1] != f"{exercise.id}.py":
            notes.append(f"{_short(chosen.path)} retenu pour {exercise.id}.py (majuscules différentes)")
        try:
            assert chosen.read is not None
            files[exercise.id] = chosen.read(limits.file_bytes + 1)
        except IntakeError as exc:
            notes.append(f"{_short(chosen.path)} : {exc}")
        except (OSError, zipfile.BadZipFile, EOFError, RuntimeError, ValueError, NotImplementedError) as exc:
            notes.append(f"{_short(chosen.path)} : lecture impossible ({_reason(exc)})")
    if extras:
        shown = ", ".join(_short(p, 50) for p in extras[:5]) + (f" … ({len(extras)} en tout)" if len(extras) > 5 else "")
        notes.append(f"fichier(s) Python en trop, non corrigé(s) : {shown}")
    return files


def _submission(course: Course, student: str, entries: list[Entry], limits: IntakeLimits, notes: list[str],
                depth: int, source: str, name: str = "", budget: _Budget | None = None) -> Submission:
    budget = budget or _Budget(limits)
    try:
        files = pick(course, expand(entries, limits, budget, notes, depth), limits, notes)
    except IntakeError as exc:  # this student's archives are a bomb: nothing of theirs is kept
        notes.append(str(exc))
        files = {e.id: None for e in course.exercises}
    return Submission(student, files, source=source, name=name, warnings=_bounded(notes, limits))


# -- folders --------------------------------------------------------------------------------------
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOATIME = getattr(os, "O_NOATIME", 0)
_AT = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd and _O_NOFOLLOW != 0


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


def _reader(root: Path, parts: tuple[str, ...]) -> Callable[[int], bytes]:
    def read(n: int) -> bytes:
        if _AT:
            parent = _open_dir(root, parts[:-1])
            try:
                fd = _open_at(parent, parts[-1], _O_NONBLOCK)
            finally:
                os.close(parent)
        else:  # no openat (Windows): check each component, then open
            path = root
            for part in parts:
                path = path / part
                if path.is_symlink():
                    raise OSError(0, "lien symbolique refusé")
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(0, "pas un fichier ordinaire")
            chunks, left = [], n
            while left > 0:
                chunk = os.read(fd, min(left, MiB))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    return read


def _listing(root: Path, rel: tuple[str, ...]) -> list[tuple[str, os.stat_result]]:
    if not _AT:
        return [(d.name, d.stat(follow_symlinks=False)) for d in os.scandir(root.joinpath(*rel))]
    fd = _open_dir(root, rel)
    try:
        return [(name, os.stat(name, dir_fd=fd, follow_symlinks=False)) for name in os.listdir(fd)]
    finally:
        os.close(fd)


def walk(root: Path, limits: IntakeLimits, notes: list[str]) -> list[Entry]:
    """Every entry under `root`, never following a symbolic link; nothing is opened but directories."""
    entries: list[Entry] = []
    pending: list[tuple[str, ...]] = [()]
    seen = 0
    while pending:
        rel = pending.pop()
        try:
            listing = sorted(_listing(root, rel))
        except OSError as exc:
            notes.append(f"{'/'.join(rel) or '.'} : dossier illisible ({_reason(exc)})")
            continue
        for name, st in listing:
            seen += 1
            if seen > limits.entries:
                notes.append(f"plus de {limits.entries} fichiers : la suite du dossier est ignorée")
                return entries
            parts = rel + (name,)
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(root.joinpath(*parts))
                except OSError:
                    target = "?"
                entries.append(Entry(parts, LINK, note=target))
            elif stat.S_ISDIR(st.st_mode):
                if name not in SKIPPED_DIRS:
                    pending.append(parts)
            elif stat.S_ISREG(st.st_mode):
                entries.append(Entry(parts, FILE, st.st_size, _reader(root, parts)))
            else:
                entries.append(Entry(parts, OTHER))
    return entries


def load_folder(root: Path, course: Course, limits: IntakeLimits) -> Intake:
    """SUBMISSIONS/<student>/… (a git clone, an unpacked archive), or SUBMISSIONS/<student>.zip."""
    root = root.resolve()  # the teacher's own path may go through links; below it, none is followed
    if not root.is_dir():
        raise IntakeError(f"{root} : ce n'est pas un dossier")
    intake = Intake("dossier", root)
    try:
        children = sorted(_listing(root, ()))
    except OSError as exc:
        raise IntakeError(f"{root} : dossier illisible ({_reason(exc)})") from None
    seen: set[str] = set()
    for name, st in children:
        if name.startswith(".") or name in SKIPPED_DIRS or _is_results_dir(root / name, st):
            continue
        notes: list[str] = []
        budget = _Budget(limits)
        if stat.S_ISLNK(st.st_mode):
            intake.warnings.append(f"{name} : lien symbolique ignoré (jamais suivi)")
            continue
        if stat.S_ISDIR(st.st_mode):
            student, entries = name, walk(root / name, limits, notes)
        elif stat.S_ISREG(st.st_mode) and name.lower().endswith(".zip"):
            # The student's archive is opened as if unpacked in their folder.
            student = name[:-4]
            archive = Entry((name,), FILE, st.st_size, _reader(root, (name,)))
            entries = _open_nested(archive, limits, budget, notes)
        else:
            intake.warnings.append(f"{name} : ignoré (attendu : un dossier ou un .zip par étudiant)")
            continue
        if student in seen:
            intake.warnings.append(f"{name} : un autre dossier ou .zip s'appelle déjà « {student} » : ignoré")
            continue
        seen.add(student)
        depth = 0 if stat.S_ISDIR(st.st_mode) else 1
        intake.submissions.append(_submission(course, student, entries, limits, notes, depth, str(root / name),
                                              budget=budget))
    if not intake.submissions:
        raise IntakeError(f"{root} : aucun sous-dossier d'étudiant (attendu : {root.name}/<identifiant>/"
                          "exercises/01_….py)")
    return intake


RESULTS_MARKERS = ("gradebook.db", "grades.csv", "results.schema.json")


def _is_results_dir(path: Path, st: os.stat_result) -> bool:
    # A results folder kept inside the submissions must not be taken for a student.
    return stat.S_ISDIR(st.st_mode) and any((path / name).is_file() for name in RESULTS_MARKERS)


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
    if any(p == ".." for p in parts):
        return None
    return parts


def _decode_name(info: zipfile.ZipInfo) -> str:
    # Archives made on Windows without the UTF-8 flag store names in cp437 (zipfile's reading) while
    # the bytes are often UTF-8: try that first, so « Élodie » stays « Élodie ».
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def _zip_reader(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget | None) -> Callable[[int], bytes]:
    def read(n: int) -> bytes:
        chunks, left = [], n
        with archive.open(info) as handle:  # stops at the declared size; the CRC is checked at its end
            while left > 0:
                chunk = handle.read(min(left, MiB))
                if not chunk:
                    break
                if budget is not None:
                    budget.take(len(chunk))
                chunks.append(chunk)
                left -= len(chunk)
        return b"".join(chunks)

    return read


def members(archive: zipfile.ZipFile, limits: IntakeLimits, budget: _Budget | None) -> list[Entry]:
    """An archive's entries, checked: unsafe names, links, bombs and encrypted files come back REFUSED
    (with the best guess of where they were, so the note reaches the right student).

    Reading an entry never goes past its declared size (zipfile stops there and checks the CRC), the
    declared size is checked against the compressed one, and readers charge `budget` (the student's,
    for their own archives; None for Moodle's archive, whose every read is already bounded per file)."""
    infos = archive.infolist()
    if len(infos) > limits.entries:
        raise IntakeError(f"archive refusée : {len(infos)} entrées, plus que les {limits.entries} permises")
    out: list[Entry] = []
    for info in infos:
        name = _decode_name(info)
        parts = safe_parts(name)
        if parts is None:
            guess = tuple(p for p in name.replace("\\", "/").split("/")[:1] if p not in ("", ".", ".."))
            guess = guess if guess and not _DRIVE.match(guess[0]) else ()
            out.append(Entry(guess, REFUSED, note=f"chemin dangereux refusé dans l'archive : "
                                                   f"{_short(repr(name), 70)} (il sortirait du dossier)"))
            continue
        if not parts or info.is_dir():
            continue
        shown = "/".join(parts)
        if stat.S_ISLNK(info.external_attr >> 16):
            out.append(Entry(parts, REFUSED, note=f"lien symbolique refusé dans l'archive : {_short(shown)}"))
        elif any(p in SKIPPED_DIRS for p in parts[:-1]) or parts[-1].startswith("._"):
            continue  # macOS resource forks, caches, version control
        elif info.flag_bits & 0x1:
            out.append(Entry(parts, REFUSED, note=f"{_short(shown)} : fichier chiffré (mot de passe) : ignoré"))
        elif info.file_size > limits.ratio_floor and info.file_size > limits.ratio * max(1, info.compress_size):
            out.append(Entry(parts, REFUSED, note=(
                f"{_short(shown)} refusé : {size_text(info.compress_size)} qui se décompresseraient en "
                f"{size_text(info.file_size)} (bombe de décompression ?)")))
        else:
            out.append(Entry(parts, FILE, info.file_size, _zip_reader(archive, info, budget)))
    return out


# Moodle: "<Full Name>_<participant id>_assignsubmission_<plugin>_" (one folder per student), or the same
# prefix glued to each file name when « Télécharger les travaux dans des dossiers » is off.
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<rest>.*)$", re.DOTALL)


def load_zip(path: Path, course: Course, limits: IntakeLimits) -> Intake:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IntakeError(f"{path} : archive .zip illisible ({_reason(exc)})") from None
    with archive:
        entries = members(archive, limits, None)
        moodle = any(e.parts and MOODLE.match(e.parts[0]) for e in entries)
        intake = Intake("moodle" if moodle else "zip", path)
        grouped: dict[str, tuple[str, list[Entry], list[str], str]] = {}
        for entry in entries:
            top = entry.parts[0] if entry.parts else ""
            match = MOODLE.match(top) if moodle else None
            if not top or (moodle and not match) or (not moodle and len(entry.parts) < 2 and entry.kind != REFUSED):
                intake.warnings.append(entry.note if entry.kind == REFUSED else
                                       f"{_short(entry.path)} : hors des dossiers d'étudiants : ignoré")
                continue
            if match:
                key, name = match["id"], match["name"]
                inner = entry.parts[1:] if len(entry.parts) > 1 else ((match["rest"],) if match["rest"] else ())
            else:
                key, name, inner = top, "", entry.parts[1:]
            _, found, notes, _ = grouped.setdefault(key, (name, [], [], top))
            if match and match["plugin"] != "file":
                notes.append(f"remise « {match['plugin']} » de Moodle ignorée (seuls les fichiers sont corrigés)")
                continue
            if entry.kind == REFUSED:
                notes.append(entry.note)
            elif inner:
                found.append(Entry(inner, entry.kind, entry.size, entry.read, entry.note))
        if not grouped:
            raise IntakeError(f"{path} : aucune copie d'étudiant dans l'archive (attendu : le .zip de Moodle, "
                              "« <Nom>_<id>_assignsubmission_file_/… », ou un dossier par étudiant)")
        for key in sorted(grouped, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k)):
            name, found, notes, top = grouped[key]
            intake.submissions.append(_submission(course, key, found, limits, notes, 1, f"{path.name}:{top}", name))
        intake.warnings = list(_bounded(intake.warnings, limits))
        # Reading happened in _submission: every byte kept is in memory, the archive can close.
    return intake


def _looks_like_zip(path: Path) -> bool:
    return path.is_file() and (path.suffix.lower() == ".zip" or zipfile.is_zipfile(path))


register(Kind("dossier", "un dossier, un sous-dossier (ou un .zip) par étudiant", lambda p: p.is_dir(), load_folder))
register(Kind("moodle", "le .zip « Télécharger tous les travaux remis » de Moodle (ou un .zip de dossiers)",
              _looks_like_zip, load_zip))
