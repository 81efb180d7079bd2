"""Grades and feedback back into Moodle, the way Moodle takes them: one assignment at a time.

The folders of Moodle's « Télécharger tous les travaux remis » archive are named
`<Nom complet>_<N>_assignsubmission_<plugin>`, N being the participant's number *inside that
assignment* (read by inputs/moodle.py). Two Moodle files come back with that same N (checked
against Moodle's source):

- the **offline grading worksheet**: Moodle finds its columns by their header text in the
  interface's language, strips « Participant » before N, reads the grade with the language's decimal
  separator (`unformat_float`), and skips a row, grade and comment, whose grade record was modified
  more than a minute after the row's date as PHP's strtotime reads it, unless the box that ignores
  dates is ticked (feedback/offline/locallib.php, process_import_grades; phpdate.py). `fill()` edits
  the teacher's own file field by field: only the grade and feedback-comment fields of the rows
  trous graded change, every other byte stays. Mismatches between archive and worksheet are listed,
  never guessed; a worksheet whose names disagree with the archive's is refused. Without one,
  `default_worksheets()` writes one per language, with an empty « last modified (grade) » (a lone
  « - » is a formula to spreadsheets).
- the **feedback files zip**: Moodle reads N as the second `_`-separated field of a path part
  (feedback/file/importziplib.php). Uploading it creates a grade record for each participant who had
  none, which makes their worksheet rows stale: the worksheet goes first.

The gradebook import (exports.py) needs a real account: `read_participants()` reads it from a CSV.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path

from . import phpdate
from .exports import EMAIL, USERNAME, moodle_feedback, templates as texts
from ..inputs.moodle import Copies, feedback_folder
from ..core.safetext import csv_cell, printable
from ..core.submission import Submission


class MoodleError(Exception):
    """A Moodle file cannot be used as it is (the French message says what to do)."""


# -- the texts of Moodle's worksheet and upload pages, per interface language ---------------------
# From Moodle's language packs (English: the strings in Moodle's own source; French: Moodle's French
# pack, whose wording may shift a little between versions), by component and string name.
@dataclass(frozen=True)
class Language:
    code: str
    name: str  # French, for messages
    identifier: str  # mod_assign 'recordid'
    hidden_user: str  # mod_assign 'hiddenuser': what precedes N in the identifier cell (gradingtable.php col_recordid)
    full_name: str
    grade: str  # core 'grade' / 'gradenoun'
    max_grade: str  # mod_assign 'maxgrade'
    scale: str  # mod_assign 'scale' (an assignment graded on a scale has it instead of max_grade)
    modified_grade: str  # mod_assign 'lastmodifiedgrade'
    comments: tuple[str, ...]  # assignfeedback_comments 'pluginname', as several Moodle versions said it
    can_change: str  # mod_assign 'gradecanbechanged'
    no: str  # core 'no'
    decimal: str  # langconfig 'decsep'
    thousands: tuple[str, ...]  # langconfig 'thousandssep' (removed by unformat_float)
    team: str  # mod_assign 'submissionteam': the worksheet's column when students hand in as groups
    ignore_modified: str  # assignfeedback_offline 'ignoremodified': the box of the upload form
    download_sheet: str  # assignfeedback_offline 'downloadgrades'
    upload_sheet: str  # assignfeedback_offline 'uploadgrades'
    upload_zip: str  # assignfeedback_file 'uploadzip'


LANGUAGES = (
    Language("fr", "français", "Identifiant", "Participant", "Nom complet", "Note", "Note maximale", "Barème",
             "Dernière modification (note)", ("Feedback par commentaires", "Commentaires de feedback",
                                              "Commentaires feedback"),
             "La note peut être modifiée", "Non", ",", ("\u00a0", "\u202f", " "), "Groupe",
             "Autorise la modification de données modifiées plus récemment dans Moodle que dans le formulaire "
             "d'évaluation.", "Télécharger le formulaire d'évaluation", "Déposer un formulaire d'évaluation",
             "Déposer plusieurs fichiers de feedback dans un ZIP"),
    Language("en", "anglais", "Identifier", "Participant ", "Full name", "Grade", "Maximum grade", "Scale",
             "Last modified (grade)", ("Feedback comments",), "Grade can be changed", "No", ".", (",",), "Group",
             "Allow updating records that have been modified more recently in Moodle than in the spreadsheet.",
             "Download grading worksheet", "Upload grading worksheet", "Upload multiple feedback files in a zip"),
)
DELIMITERS = (",", ";", "\t", ":")  # what Moodle's upload form offers: comma, semicolon, tab, colon
DELIMITER_NAMES = {",": "virgule", ";": "point-virgule", "\t": "tabulation", ":": "deux-points"}


def unformat_float(text: str, language: Language) -> float | None:
    """Moodle's `unformat_float`: the number a grade cell gives in `language` (None when empty)."""
    text = text.replace(" ", "")
    for separator in language.thousands:
        text = text.replace(separator, "")
    try:
        return float(text.replace(language.decimal, "."))
    except ValueError:  # empty too
        return None


def participant_number(value: str, language: Language) -> str | None:
    """N from the identifier cell, as Moodle's importer reads it."""
    rest = value.strip().removeprefix(language.hidden_user.strip()).strip()
    return rest if rest.isdigit() else None


# -- CSV, field by field -------------------------------------------------------------------------
@dataclass
class Cell:
    start: int  # offsets in the decoded text: the field as written (quotes included)
    end: int
    value: str
    quoted: bool


@dataclass
class Record:
    cells: list[Cell]
    line: int  # 1-based line of its start, for messages


def parse_records(text: str, delimiter: str) -> list[Record]:
    """RFC 4180 as spreadsheets and PHP write it (quotes doubled inside quoted fields, line breaks
    allowed there), keeping where each field lies. Lenient: text after a closing quote belongs to
    the field, an unclosed quote runs to the end."""
    other = f"[^{re.escape(delimiter)}\r\n]*"
    quoted = re.compile(f'"((?:[^"]|"")*)"?({other})')
    plain = re.compile(other)
    records: list[Record] = []
    i, line = 0, 1
    while i < len(text):
        cells: list[Cell] = []
        start_line = line
        while True:
            found = quoted.match(text, i)
            if found:
                line += found[1].count("\n")
                cells.append(Cell(i, found.end(), found[1].replace('""', '"') + found[2], True))
            else:
                found = plain.match(text, i)
                cells.append(Cell(i, found.end(), found[0], False))
            i = found.end()
            if not text.startswith(delimiter, i):
                break
            i += 1
        i += text.startswith("\r", i)
        i += text.startswith("\n", i)
        line += 1
        records.append(Record(cells, start_line))
    return records


def _field(value: str, delimiter: str, quote_all: bool) -> str:
    # Quoted as PHP's fputcsv (Moodle's download) does: a delimiter, a quote, an escape, a space or a line break.
    if quote_all or any(c in value for c in (delimiter, '"', "\\", " ", "\t", "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


# -- reading the teacher's worksheet -------------------------------------------------------------
BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
ENCODING_NAMES = {"utf-8": "UTF-8", "utf-16-le": "UTF-16", "utf-16-be": "UTF-16", "cp1252": "Windows-1252",
                  "latin-1": "ISO-8859-1"}


def _decode(data: bytes) -> tuple[str, str, bytes]:
    """(text, encoding, byte-order mark): a spreadsheet may have saved the file again."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding), encoding, bom
            except UnicodeDecodeError:
                raise MoodleError(f"le fichier commence comme de l'{ENCODING_NAMES[encoding]} mais n'en est pas : "
                                  "retélécharge la feuille depuis Moodle") from None
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding), encoding, b""
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1", b""  # every byte is a latin-1 character


@dataclass
class Columns:
    """Each column's index (None: absent), named as its header in `Language`."""

    identifier: int
    grade: int
    modified_grade: int | None
    full_name: int | None
    max_grade: int | None
    scale: int | None
    comments: int | None
    can_change: int | None
    team: int | None  # the « Group » column: an assignment handed in by groups


@dataclass
class Row:
    record: Record
    participant: str | None  # N, or None when the identifier cannot be read
    name: str
    max_grade: float | None
    locked: bool  # « La note peut être modifiée : Non »
    modified: str = ""  # the « last modified (grade) » cell as Moodle wrote it (« - »: no grade record)


@dataclass
class Worksheet:
    path: Path
    text: str
    encoding: str
    bom: bytes
    delimiter: str
    language: Language
    columns: Columns
    rows: list[Row]
    quote_all: bool
    decimals: int  # of the grade cells Moodle wrote (format_float with the grade item's decimals)
    decimal: str  # the decimal separator Moodle will read

    @property
    def participants(self) -> dict[str, Row]:
        return {r.participant: r for r in self.rows if r.participant is not None}

    @property
    def max_grade(self) -> float | None:
        values = {r.max_grade for r in self.rows if r.max_grade is not None}
        return values.pop() if len(values) == 1 else None

    def describe(self) -> str:
        return (f"en-têtes en {self.language.name}, {ENCODING_NAMES.get(self.encoding, self.encoding)}"
                f"{' avec BOM' if self.bom else ''}, séparateur {DELIMITER_NAMES[self.delimiter]}, "
                f"décimales avec « {self.decimal} »")


def _find(header: list[str], names: str | tuple[str, ...]) -> int | None:
    names = (names,) if isinstance(names, str) else names
    return next((header.index(name) for name in names if name in header), None)


def _locate(records: list[Record]) -> tuple[Language, Columns] | None:
    header = [c.value.strip() for c in records[0].cells] if records else []
    for language in LANGUAGES:
        columns = Columns(**{f.name: _find(header, getattr(language, f.name)) for f in fields(Columns)})
        if columns.identifier is not None and columns.grade is not None:
            return language, columns
    return None


def _decimals(text: str) -> int:
    match = re.search(r"[.,](\d+)\s*$", text.strip())
    return len(match.group(1)) if match else 0


def read_worksheet(path: str | Path, max_bytes: int = 32 << 20) -> Worksheet:
    """The teacher's worksheet as Moodle's importer will read it; MoodleError when Moodle would refuse
    it or trous cannot fill it safely."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise MoodleError(f"{path} : illisible ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise MoodleError(f"{path} : plus de {max_bytes >> 20} Mio, ce n'est pas une feuille d'évaluation de Moodle")
    try:
        text, encoding, bom = _decode(data)
    except MoodleError as exc:
        raise MoodleError(f"{path} : {exc}") from None
    for delimiter in DELIMITERS:
        records = parse_records(text, delimiter)
        located = _locate(records)
        if located:
            break
    else:
        first = printable(text.split("\n", 1)[0])[:200]
        known = " ; ".join(f"{lang.name} : « {lang.identifier} », « {lang.grade} », « {lang.modified_grade} »"
                           for lang in LANGUAGES)
        raise MoodleError(f"{path} : pas une feuille d'évaluation de Moodle que trous sait lire (première ligne : "
                          f"« {first} »). Attendu : la feuille « Download grading worksheet » du devoir, "
                          f"telle que Moodle la donne, avec ses en-têtes ({known}). Si ton Moodle parle une autre "
                          "langue, passe-le en français ou en anglais le temps de télécharger et de redéposer la feuille")
    language, columns = located
    if columns.modified_grade is None:
        raise MoodleError(f"{path} : la colonne « {language.modified_grade} » manque : Moodle refuserait la feuille "
                          "(il en a besoin pour ne pas écraser une note plus récente). Utilise la feuille telle que "
                          "Moodle la donne")
    if columns.scale is not None and columns.max_grade is None:
        raise MoodleError(f"{path} : ce devoir est noté avec un barème (colonne « {language.scale} ») : trous donne des "
                          "points ; règle le devoir Moodle sur « Point », puis retélécharge la feuille")
    rows: list[Row] = []
    decimals: list[int] = []
    separators: set[str] = set()
    needed = max(columns.identifier, columns.grade, columns.modified_grade, columns.comments or 0)
    for record in records[1:]:
        values = [c.value for c in record.cells]
        if len(values) == 1 and not values[0].strip():
            continue  # an empty line
        if len(values) <= needed:
            rows.append(Row(record, None, "", None, False))
            continue
        name, maximum, grade, can_change = (values[i].strip() if i is not None and i < len(values) else ""
                                            for i in (columns.full_name, columns.max_grade, columns.grade,
                                                      columns.can_change))
        for cell in (maximum, grade):
            if cell:
                decimals.append(_decimals(cell))
                separators.update(c for c in cell if c in ".,")
        rows.append(Row(record, participant_number(values[columns.identifier], language), name,
                        unformat_float(maximum, language), can_change == language.no,
                        values[columns.modified_grade]))
    # The separator Moodle writes is the one it reads: the file tells it (« 20,00 »); else the language's.
    decimal = separators.pop() if len(separators) == 1 else language.decimal
    quote_all = all(c.quoted for r in records for c in r.cells if c.value)
    return Worksheet(path, text, encoding, bom, delimiter, language, columns, rows, quote_all,
                     max(decimals, default=2), decimal)


# -- matching the archive's copies and the worksheet's rows --------------------------------------
def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _same_name(a: str, b: str) -> bool:
    def key(text: str) -> str:
        return "".join(ch for ch in _ascii(text).casefold() if ch.isalnum())
    return key(a) == key(b)


@dataclass
class Matching:
    copies: dict[str, str]  # participant N → student id of the copy
    no_copy: list[Row]  # rows of the worksheet without a copy in the archive (kept as they are)
    not_in_sheet: list[Submission]  # copies of the archive without a row
    other_name: list[tuple[Row, Submission]]  # same N, another name: not written
    unreadable: list[Row]  # rows whose identifier Moodle could not read either
    conflicts: list[tuple[Row, list[str]]] = field(default_factory=list)  # N claimed by several folders: not written


def match(sheet: Worksheet, submissions: list[Submission], copies: Copies | None) -> Matching:
    """The worksheet's rows and the run's copies, by participant number."""
    copies = copies or Copies()
    if copies.team or sheet.columns.team is not None:
        raise MoodleError(f"{sheet.path} : devoir remis en groupe (colonne « {sheet.language.team} » de la feuille, ou "
                          "dossier « groupe par défaut » dans l'archive) : les dossiers de l'archive portent les numéros "
                          "des groupes, la feuille ceux des participants, et trous ne sait pas les faire correspondre ; "
                          "reporte les notes de grades.csv à la main")
    by_number = {n: s for s in submissions if (n := copies.number(s.student)) is not None}
    if not by_number and not copies.conflicts:
        raise MoodleError("--feuille : aucune copie ne porte de numéro de participant Moodle. La feuille d'évaluation "
                          "va avec l'archive « Télécharger tous les travaux remis » du même devoir (dossiers "
                          "« Nom_N_assignsubmission_file_ »), ou avec un cours nbgrader collecté par zip_collect de "
                          "cette archive")
    rows = sheet.participants
    matched, other, checked = {}, [], 0
    for number, row in rows.items():
        if (s := by_number.get(number)) is None:
            continue
        if row.name and s.name and not s.name.startswith(sheet.language.hidden_user.strip()):
            checked += 1
            if not _same_name(row.name, s.name):
                other.append((row, s))
                continue
        matched[number] = s.student
    if checked and len(other) == checked:
        shown = "; ".join(f"Participant {r.participant} : « {printable(r.name)} » dans la feuille, "
                          f"« {printable(s.name)} » dans l'archive" for r, s in other[:3])
        raise MoodleError(f"{sheet.path} : aucun nom de la feuille ne correspond à celui de l'archive pour le même "
                          f"numéro ({shown}…). Les numéros de participant changent d'un devoir à l'autre : la feuille "
                          "et l'archive doivent venir du même devoir")
    conflicts = [(r, copies.conflicts[n]) for n, r in rows.items() if n in copies.conflicts]
    no_copy = [r for n, r in rows.items() if n not in by_number and n not in copies.conflicts]
    not_in_sheet = [s for n, s in sorted(by_number.items(), key=lambda x: (len(x[0]), x[0])) if n not in rows]
    unreadable = [r for r in sheet.rows if r.participant is None]
    return Matching(matched, no_copy, not_in_sheet, other, unreadable, conflicts)


# -- writing grades --------------------------------------------------------------------------------
def grade_text(value: float, decimals: int, separator: str) -> str:
    """A grade as Moodle writes it (format_float: the item's decimals, the language's separator)."""
    places = max(decimals, 0)
    if places == 0 and round(value, 2) != round(value):
        places = 2
    return f"{value:.{places}f}".replace(".", separator)


def _encodable(text: str, encoding: str) -> str:
    """A Windows-1252 file cannot hold every character."""
    out = []
    for ch in text:
        try:
            ch.encode(encoding)
        except UnicodeEncodeError:
            ch = _ascii(ch) or "?"
        out.append(ch)
    return "".join(out)


@dataclass(frozen=True)
class Existing:
    """A row trous wrote whose participant already has a grade record in Moodle (its « last modified
    (grade) » cell holds a date: Moodle writes one whenever the record exists, and « - » otherwise)."""

    participant: str
    before: str  # the grade cell as downloaded (empty: a record without a grade, e.g. feedback files only)
    after: str  # the grade written
    date: str  # the date cell
    readable: bool | None  # phpdate.reads: can Moodle's strtotime read that date?


@dataclass
class Filled:
    data: bytes
    written: list[str]  # participants whose grade (and comment) were written
    locked: list[str]  # written, but Moodle will keep its grade (« La note peut être modifiée : Non »)
    existing: list[Existing] = field(default_factory=list)

    def kept_by_moodle(self) -> list[Existing]:
        """Rows Moodle skips whole unless dates are ignored: their date reads as 0 (phpdate.py)."""
        return [e for e in self.existing if e.readable is False]

    def replaced(self) -> list[Existing]:
        """Rows whose date Moodle reads: taken unless Moodle's grade changed over a minute after it."""
        return [e for e in self.existing if e.readable]

    def unsure(self) -> list[Existing]:
        return [e for e in self.existing if e.readable is None]


def fill(sheet: Worksheet, values: dict[str, tuple[float, str]]) -> Filled:
    """`values`: participant N → (grade on Moodle's scale, feedback comment)."""
    edits: list[tuple[int, int, str]] = []
    written, locked, existing = [], [], []
    for row in sheet.rows:
        if row.participant is None or row.participant not in values:
            continue
        grade, comment = values[row.participant]
        cells = row.record.cells
        text = grade_text(grade, sheet.decimals, sheet.decimal)
        # A grade record already in Moodle: whether Moodle takes this row depends on its date (write_outputs says).
        date = row.modified.strip()
        if date and date != "-":
            existing.append(Existing(row.participant, cells[sheet.columns.grade].value.strip(), text, date,
                                     phpdate.reads(row.modified).readable))
        edits.append((cells[sheet.columns.grade].start, cells[sheet.columns.grade].end,
                      _field(text, sheet.delimiter, sheet.quote_all)))
        if sheet.columns.comments is not None and sheet.columns.comments < len(cells):
            cell = cells[sheet.columns.comments]
            edits.append((cell.start, cell.end, _field(_encodable(csv_cell(comment), sheet.encoding), sheet.delimiter,
                                                       sheet.quote_all)))
        written.append(row.participant)
        if row.locked:
            locked.append(row.participant)
    text = sheet.text
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return Filled(sheet.bom + text.encode(sheet.encoding), written, locked, existing)


def scaled(points: float, total: float, maximum: float | None) -> float:
    """Points on Moodle's scale: the assignment's maximum grade in Moodle may differ from trous's total."""
    if maximum is None or not total or abs(maximum - total) < 1e-9:
        return round(points, 2)
    return round(points * maximum / total, 2)


# -- a worksheet of trous's own, when the teacher gives none --------------------------------------
def default_worksheets(rows: list[tuple[str, str, float, float, str]]) -> dict[str, bytes]:
    """{language code: CSV as Moodle downloads it}; `rows`: (N, full name, points, maximum, comment)."""
    out = {}
    for language in LANGUAGES:
        header = [language.identifier, language.full_name, language.grade, language.max_grade,
                  language.modified_grade, language.comments[0]]
        lines = [",".join(_field(h, ",", False) for h in header)]
        for number, name, points, maximum, comment in rows:
            # The name comes from the archive's folder (the student's): never a formula in a spreadsheet.
            # The identifier exactly as Moodle writes it in that language: « Participant12 », « Participant 12 ».
            values = [f"{language.hidden_user}{number}", csv_cell(name), grade_text(points, 2, language.decimal),
                      grade_text(maximum, 2, language.decimal), "", csv_cell(comment)]
            lines.append(",".join(_field(v, ",", False) for v in values))
        out[language.code] = b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode("utf-8")
    return out


# -- the feedback files zip -----------------------------------------------------------------------
FIXED_DATE = (2026, 1, 1, 0, 0, 0)
FEEDBACK_FILE = "retour.html"


def feedback_zip(pages: dict[str, bytes]) -> bytes:
    """{archive folder name: that student's page} as the zip Moodle's « plusieurs fichiers de feedback »
    takes: `<folder>/retour.html` (never a name starting with « . » or « ~ », which Moodle skips)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder in sorted(pages):
            info = zipfile.ZipInfo(f"{folder}/{FEEDBACK_FILE}", FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.flag_bits |= 0x800  # UTF-8 names: « Élodie » stays « Élodie » in Moodle
            archive.writestr(info, pages[folder])
    return buffer.getvalue()


# -- identities for the gradebook import ---------------------------------------------------------
_COPY_HEADERS = {"identifiant", "identifier", "etudiant", "eleve", "student", "copie", "dossier", "participant"}
_IDENTITY_HEADERS = {
    USERNAME: {"nom d'utilisateur", "nom d’utilisateur", "username", "utilisateur", "login", "identifiant de connexion"},
    EMAIL: {"adresse de courriel", "courriel", "email", "e-mail", "adresse email", "adresse e-mail", "email address",
            "adresse electronique", "mail"},
}


def _header_key(text: str) -> str:
    return " ".join(_ascii(text.strip().lstrip("\ufeff")).casefold().replace("’", "'").split())


@dataclass
class Participants:
    path: Path
    field: str  # USERNAME or EMAIL: the Moodle user field the identities are
    identities: dict[str, str]  # value of the copy column (« 12 », « alice ») → username or email
    unmatched: list[str] = field(default_factory=list)  # rows naming no copy of this run


def read_participants(path: str | Path, students: Iterable[str]) -> Participants:
    """`--participants`: a CSV with a header, one column naming the copy (« etudiant », « copie »,
    « dossier », « Identifiant »…: the folder name, or Moodle's « Participant N ») and one holding the
    Moodle account (« username » / « Nom d'utilisateur », or « email » / « Adresse de courriel »).
    Moodle's own worksheet qualifies when it shows the email address."""
    path = Path(path)
    try:
        text, _, _ = _decode(path.read_bytes())
    except OSError as exc:
        raise MoodleError(f"--participants {path} : illisible ({exc.strerror or exc})") from None
    students = set(students)
    for delimiter in DELIMITERS:
        records = parse_records(text, delimiter)
        if not records:
            continue
        header = [_header_key(c.value) for c in records[0].cells]
        copy = next((i for i, h in enumerate(header) if h in _COPY_HEADERS), None)
        kind, index = next(((k, i) for k in (USERNAME, EMAIL) for i, h in enumerate(header)
                            if h in _IDENTITY_HEADERS[k]), (None, None))
        if copy is None or kind is None:
            continue
        identities: dict[str, str] = {}
        unmatched: list[str] = []
        for record in records[1:]:
            values = [c.value.strip() for c in record.cells]
            if len(values) <= max(copy, index) or not values[copy] or not values[index]:
                continue
            key = values[copy]
            if key not in students:
                number = re.fullmatch(r"\D*?\s*(\d+)", key)
                key = number.group(1) if number and number.group(1) in students else key
            if key in students:
                identities[key] = values[index]
            else:
                unmatched.append(values[copy])
        return Participants(path, kind, identities, unmatched)
    raise MoodleError(f"--participants {path} : il faut une ligne d'en-têtes avec une colonne qui nomme la copie "
                      "(« etudiant », « copie », « dossier » ou « Identifiant ») et une colonne avec le compte Moodle "
                      "(« username » / « Nom d'utilisateur », ou « email » / « Adresse de courriel »)")

# -- everything a run writes for Moodle ------------------------------------------------------------
SHEET_FILLED = "moodle-feuille-remplie.csv"
SHEET_DEFAULT = "moodle-feuille-{code}.csv"
FEEDBACK_ZIP = "moodle-retours.zip"
README = "moodle-lisezmoi.txt"
OWN_FILES = (SHEET_FILLED, *(SHEET_DEFAULT.format(code=lang.code) for lang in LANGUAGES), FEEDBACK_ZIP, README)
SHOWN = 20  # names listed per kind of problem


@dataclass
class RoundTrip:
    """What a run knows for Moodle; the worksheet is read and matched before any copy is graded."""

    assignments: tuple[str, ...]
    worksheet: Worksheet | None = None
    matching: Matching | None = None
    copies: Copies | None = None
    lines: list[str] = field(default_factory=list)  # what the terminal says about it, once written


def _who(number: str, name: str) -> str:
    return f"Participant {number}" + (f" ({printable(name)})" if name else "")


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown + (f" … et {len(items) - SHOWN} autres" if len(items) > SHOWN else "")


def _change(e: Existing) -> str:
    return f"Participant {e.participant} ({printable(e.before) or 'sans note'} → {e.after})"


def existing_lines(filled: Filled, language: Language, zip_too: bool) -> list[str]:
    """What Moodle's upload (feedback/offline/locallib.php, process_import_grades) will do with the
    rows of participants who already have a grade record, in the words of the teacher's Moodle."""
    text = texts().get_template("moodle-existing.txt").render(
        language=language, kept=filled.kept_by_moodle(), replaced=filled.replaced(), unsure=filled.unsure(),
        before_zip=zip_too and filled.written, zip=FEEDBACK_ZIP, printable=printable,
        changes=lambda found: _listed([_change(e) for e in found]))
    return text.split("\n")[:-1]  # one line each


def write_outputs(results_dir: Path, course, grades: list, names: dict[str, str], pages: dict[str, Path],
                  trip: RoundTrip | None, write) -> dict[str, Path]:
    """The worksheet (filled, or trous's own), the feedback zip of `pages` and the French instructions
    (nothing without `trip`), through `write` (atomic); files of an earlier run that no longer apply go."""
    results_dir = Path(results_dir)
    paths: dict[str, Path] = {}
    copies = (trip.copies if trip is not None else None) or Copies()
    numbers = {g.student: n for g in grades if (n := copies.number(g.student)) is not None}
    if trip is None or (trip.worksheet is None and not numbers and not copies.conflicts and not copies.team):
        for name in OWN_FILES:
            (results_dir / name).unlink(missing_ok=True)
        return paths
    exercises = [e for e in course.exercises if e.assignment.id in trip.assignments]
    total = sum(e.points for e in exercises)
    titles = {a.id: a.title for a in course.spec.assignments}
    single = len(trip.assignments) == 1
    sheet, own_sheets, filled, matching, maximum, rescaled, existing = None, False, None, None, None, False, []
    feedback = {} if copies.team else {feedback_folder(copies.participants[s]): pages[s].read_bytes()
                                       for s in numbers if s in pages}
    if copies.team:
        pass  # no worksheet nor feedback zip: the remarks say why
    elif trip.worksheet is not None and trip.matching is not None:
        sheet, matching = trip.worksheet, trip.matching
        maximum = sheet.max_grade
        rescaled = maximum is not None and abs(maximum - total) > 1e-9
        by_student = {g.student: g for g in grades}
        values = {}
        for number, student in matching.copies.items():
            if (grade := by_student.get(student)) is not None:
                moodle_grade = scaled(grade.score, total, maximum)
                scale = (moodle_grade, maximum) if rescaled else None
                values[number] = (moodle_grade, moodle_feedback(grade, moodle_scale=scale))
        filled = fill(sheet, values)
        paths["moodle_sheet"] = write(results_dir / SHEET_FILLED, filled.data)
        existing = existing_lines(filled, sheet.language, bool(feedback))
    elif numbers and single:
        rows = [(numbers[g.student], names.get(g.student, ""), g.score, total, moodle_feedback(g))
                for g in sorted(grades, key=lambda g: (len(numbers.get(g.student, "")), numbers.get(g.student, "")))
                if g.student in numbers]
        for code, data in default_worksheets(rows).items():
            paths[f"moodle_sheet_{code}"] = write(results_dir / SHEET_DEFAULT.format(code=code), data)
        own_sheets = True
    if feedback:
        paths["moodle_feedback"] = write(results_dir / FEEDBACK_ZIP, feedback_zip(feedback))
    said = trip.worksheet is not None and trip.matching and trip.matching.conflicts  # then in the worksheet's remarks
    lines = texts().get_template("moodle-remarques.txt").render(
        team=copies.team, sheet=sheet, filled=filled, matching=matching, maximum=maximum, rescaled=rescaled,
        total=total, existing=existing, own_sheets=own_sheets, several=bool(numbers) and not single,
        conflicts=[] if said else sorted(copies.conflicts.items()), pages=len(feedback), zip=FEEDBACK_ZIP,
        assignments=trip.assignments, languages=LANGUAGES, sheet_filled=SHEET_FILLED, own_sheet=SHEET_DEFAULT,
        shown=SHOWN, who=_who, printable=printable, number_of=copies.number).split("\n")[:-1]  # one remark a line
    readme = texts().get_template(README).render(
        course=course, assignment=titles.get(trip.assignments[0], trip.assignments[0]) if single else None, total=total,
        sheet=sheet, own_sheets=own_sheets, zip=FEEDBACK_ZIP if feedback else "", lines=lines, languages=LANGUAGES,
        zip_language=trip.worksheet.language if trip.worksheet is not None else None, filled=SHEET_FILLED,
        own_sheet=SHEET_DEFAULT, sheet_name=sheet and printable(sheet.path.name),
        encoding=sheet and ENCODING_NAMES.get(sheet.encoding, sheet.encoding),
        delimiter=sheet and DELIMITER_NAMES[sheet.delimiter])
    paths["moodle_readme"] = write(results_dir / README, readme.encode("utf-8"))
    written = {path.name for path in paths.values()}
    for name in OWN_FILES:
        if name not in written:
            (results_dir / name).unlink(missing_ok=True)
    trip.lines = lines
    return paths
