"""Who each folder of Moodle's « Download all submissions » archive belongs to.

Moodle (mod/assign/classes/downloader.php) names a folder `clean_filename(<full name, « _ » turned
into spaces>_<participant number>)` (« Participant » under blind marking; in a team assignment the
group's name and id, or « Default group » without a number), then `_assignsubmission_<plugin>`
(Moodle < 4.1: one more `_`); with « download as folders » off, each file is
`<prefix>_assignsubmission_<plugin>_<file name>`. An edited archive can break that, so a flat file
readable as two participants' is nobody's, and two folders giving one number are never merged nor
sent back to Moodle. Numbers are read as Moodle's importer does (`$participantid += 0`: « 0012 » is 12).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..core.safetext import printable

_PLUGIN = r"assignsubmission_(?P<plugin>[a-z][a-z0-9]*)"
BLIND = "Participant"  # mod_assign 'participant' (English and French): the full name under blind marking
FOLDER = re.compile(rf"(?P<name>.*)_(?P<id>\d+)_{_PLUGIN}_?", re.DOTALL)
TEAM_DEFAULT = re.compile(rf"(?P<name>[^_]*)_{_PLUGIN}_?", re.DOTALL)
_FLAT = re.compile(rf"_(?P<id>\d+)_{_PLUGIN}_")
_INSIDE = re.compile(r"_(\d+)_assignsubmission_[a-z]")


def number(digits: str) -> str:
    """N as Moodle reads it (leading zeros dropped; no int(): a hostile name may hold 5000 digits)."""
    return digits.lstrip("0") or "0"


@dataclass(frozen=True)
class Name:
    """What one top-level entry of the archive says about its owner."""

    number: str | None  # the participant number; None for a team's « Default group »
    name: str  # the full name part, as written (printable)
    plugin: str
    prefix: str  # the folder's name, or the flat file's name up to the plugin part and its « _ »
    rest: str = ""  # a flat file: its own name
    others: tuple[str, ...] = ()  # other numbers the name also carries (not Moodle's writing)


@dataclass(frozen=True)
class Ambiguous:
    top: str
    numbers: tuple[str, ...]

    @property
    def reason(self) -> str:
        return (f"nom de fichier lisible comme celui de plusieurs participants ({', '.join(self.numbers)}) : "
                "corrigé pour personne (renomme-le, ou télécharge l'archive « dans des dossiers »)")


def read(top: str, folder: bool) -> Name | Ambiguous | None:
    """The owner of the archive's top-level entry `top` (a folder when `folder`), or None when it is
    not named as Moodle names them. A folder's number is its last `_<digits>_assignsubmission_<plugin>`
    (the other numbers it carries are flagged)."""
    if folder:
        match = FOLDER.fullmatch(top)
        if match:
            others = tuple(dict.fromkeys(number(n) for n in _INSIDE.findall(match["name"] + "_")))
            return Name(number(match["id"]), printable(match["name"]).strip(), match["plugin"], top,
                        others=tuple(n for n in others if n != number(match["id"])))
        team = TEAM_DEFAULT.fullmatch(top)
        if team:
            return Name(None, printable(team["name"]).strip(), team["plugin"], top)
        return None
    found = list(_FLAT.finditer(top))
    found = [m for m in found if m.end() < len(top)]  # a file name follows the prefix
    if not found:
        return None
    numbers = tuple(dict.fromkeys(number(m["id"]) for m in found))
    if len(numbers) > 1:
        return Ambiguous(top, numbers)
    first = found[0]
    return Name(numbers[0], printable(top[: first.start()]).strip(), first["plugin"], top[: first.end()],
                rest=top[first.end():])


MAX_EXTRACTED = 50_000  # entries walked under zip_collect's extracted/ folders (a class is far below)


def extracted(roots) -> list[tuple[os.DirEntry, Name]]:
    """The folders of zip_collect's `extracted/` trees named as Moodle names them, with their owners;
    nothing below one is read as another owner's (a student may upload a folder named like Bob's)."""
    found: list[tuple[os.DirEntry, Name]] = []
    pending, seen = list(reversed(roots)), 0
    while pending and seen < MAX_EXTRACTED:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if not entry.is_dir(follow_symlinks=False):
                continue
            owner = read(entry.name, True)  # a folder: a Name or None
            if owner is None:
                pending.append(entry.path)
            else:
                found.append((entry, owner))
    return found


@dataclass(frozen=True)
class Participant:
    """A Moodle participant of this run: what the worksheet and the feedback zip need."""

    number: str
    name: str
    folder: str  # the archive's folder for that participant (its file plugin's when it has one)


@dataclass
class Copies:
    """Which copy is which Moodle participant, and the numbers that cannot be written back."""

    participants: dict[str, Participant] = field(default_factory=dict)  # student id → participant
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # N → the folders that all claim it
    team: bool = False  # a team assignment's archive: its numbers are groups', not participants'

    def number(self, student: str) -> str | None:
        found = self.participants.get(student)
        return found.number if found else None


@dataclass
class Grouping:
    """The archive's top-level entries grouped into copies, keyed by student id."""

    key: dict[str, str] = field(default_factory=dict)  # top-level entry → the copy it belongs to
    names: dict[str, str] = field(default_factory=dict)  # the copy's full name
    notes: dict[str, list[str]] = field(default_factory=dict)  # what the teacher must know about the copy
    ambiguous: list[Ambiguous] = field(default_factory=list)  # entries nobody's
    copies: Copies = field(default_factory=Copies)
    warnings: list[str] = field(default_factory=list)  # about the whole archive


def _shown(top: str) -> str:
    text = printable(top)
    return text if len(text) <= 90 else text[:89] + "…"


def group(tops: dict[str, Name | Ambiguous], student_id) -> Grouping:
    """One copy per participant number; `student_id(text)` makes an identifier of a folder name."""
    out = Grouping()
    by_number: dict[str, list[tuple[str, Name]]] = {}
    for top, found in tops.items():
        if isinstance(found, Ambiguous):
            out.ambiguous.append(found)
            continue
        if found.number is None:  # a team assignment's « Default group »: no number to write back to
            key = student_id(found.name or found.prefix)
            out.key[top], out.names[key] = key, found.name
            out.copies.team = True
            out.notes.setdefault(key, []).append(
                f"dossier « {_shown(top)} » : sans numéro, c'est celui des élèves sans groupe d'un devoir en groupe ; "
                "note à reporter à la main dans Moodle")
            continue
        by_number.setdefault(found.number, []).append((top, found))
    for n, entries in by_number.items():
        # One participant: one name, and one folder (prefix) per plugin.
        plugins = {f.plugin for _, f in entries}
        if len({f.name for _, f in entries}) == 1 and len({(f.plugin, f.prefix) for _, f in entries}) == len(plugins):
            first = entries[0][1]
            for top, _ in entries:
                out.key[top] = n
            folder = next((f.prefix for _, f in entries if f.plugin == "file"), first.prefix)
            # Under blind marking every name is the word « Participant »: no name, rather than one repeated.
            name = "" if first.name == BLIND else first.name
            out.names[n] = name
            out.copies.participants[n] = Participant(n, name, folder)
            for f in {f.prefix: f for _, f in entries if f.others}.values():
                out.notes.setdefault(n, []).append(
                    f"le nom du dossier « {_shown(f.prefix)} » porte aussi le numéro {', '.join(f.others)} (Moodle "
                    f"n'écrit jamais « _ » dans un nom : archive modifiée ?) ; lu comme le participant {n}, le "
                    "dernier numéro avant « _assignsubmission_ »")
            continue
        # Several folders claim N: none is graded in another's place, none goes back to Moodle as N.
        folders = sorted({f.prefix for _, f in entries})
        out.copies.conflicts[n] = folders
        listed = ", ".join(f"« {_shown(p)} »" for p in folders)
        out.warnings.append(f"participant {n} : {len(folders)} dossiers de l'archive portent ce numéro ({listed}) : "
                            "chacun corrigé à part, sous le nom de son dossier ; aucune note ni aucun retour renvoyé "
                            f"à Moodle pour le participant {n} (vérifie l'archive et reporte la note à la main)")
        for top, f in entries:
            key = student_id(f.prefix)
            out.key[top], out.names[key] = key, "" if f.name == BLIND else f.name
            # On the student's own page: no other student's name.
            note = (f"le numéro de participant {n} de ce dossier est aussi celui d'un autre dossier de l'archive : "
                    f"copie corrigée à part, sous le nom de son dossier « {_shown(f.prefix)} » ; sa note n'est pas "
                    "renvoyée à Moodle (l'enseignant la reporte à la main)")
            if note not in out.notes.get(key, []):
                out.notes.setdefault(key, []).append(note)
    if out.copies.team:
        out.warnings.append("archive d'un devoir en groupe (un dossier « groupe par défaut » sans numéro) : les "
                            "numéros des dossiers sont ceux des groupes, pas des participants ; aucune feuille "
                            "d'évaluation ni archive de retours n'est écrite pour Moodle (notes à reporter à la main)")
    return out


def feedback_folder(participant: Participant) -> str:
    """The folder of a participant's page in trous's feedback zip: the archive's own folder when
    Moodle's importer reads this participant's number and a submission plugin in it (importziplib.php,
    is_valid_filename_for_import: explode('_', $part, 5)), else the form Moodle ≥ 4.1 writes (a name
    with « _ » or another number in front would send the page to someone else)."""
    info = participant.folder.split("_", 4)
    if len(info) >= 4 and re.fullmatch(r"\d+", info[1]) and number(info[1]) == participant.number \
            and info[2] == "assignsubmission":
        return participant.folder
    name = re.sub(r"[_/\\:*?\"<>|]+", " ", participant.name).strip() or "Participant"
    return f"{name}_{participant.number}_assignsubmission_file"
