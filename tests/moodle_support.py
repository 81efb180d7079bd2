"""Moodle's side of the round trip, written from Moodle's source (mod/assign/gradingtable.php,
mod/assign/feedback/offline/importgradeslib.php and locallib.php, feedback/file/importziplib.php,
lib/moodlelib.php's unformat_float) and its language packs, independently of trous's code:

- `worksheet()` writes an offline grading worksheet as Moodle's download does (columns in
  gradingtable.php's order, « Participant N », grades through format_float with the language's
  decimal separator, PHP fputcsv quoting, UTF-8 with a byte-order mark);
- `import_worksheet()` reads a worksheet back as Moodle's importer does (columns found by their exact
  header text in the interface's language, the hidden-user word stripped by its length, grades
  through unformat_float);
- `feedback_targets()` tells which participant and file name Moodle gives each entry of a feedback zip.
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass

# The strings of Moodle's language packs the worksheet uses (mod_assign, core, assignfeedback_comments).
LANG = {
    "fr": {"identifier": "Identifiant", "hiddenuser": "Participant", "fullname": "Nom complet",
           "email": "Adresse de courriel", "status": "Statut", "grade": "Note", "maxgrade": "Note maximale",
           "canchange": "La note peut être modifiée", "modsub": "Dernière modification (travail remis)",
           "onlinetext": "Texte en ligne", "modgrade": "Dernière modification (note)",
           "comments": "Feedback par commentaires", "yes": "Oui", "no": "Non", "submitted": "Remis pour évaluation",
           "nosubmission": "Aucun devoir", "decsep": ",", "thousandssep": "\u00a0",
           "date": "lundi 2 mars 2026, 10:00"},
    "en": {"identifier": "Identifier", "hiddenuser": "Participant ", "fullname": "Full name",
           "email": "Email address", "status": "Status", "grade": "Grade", "maxgrade": "Maximum grade",
           "canchange": "Grade can be changed", "modsub": "Last modified (submission)",
           "onlinetext": "Online text", "modgrade": "Last modified (grade)", "comments": "Feedback comments",
           "yes": "Yes", "no": "No", "submitted": "Submitted for grading", "nosubmission": "No submission",
           "decsep": ".", "thousandssep": ",", "date": "Monday, 2 March 2026, 10:00 AM"},
}


@dataclass
class Participant:
    number: int
    name: str
    email: str
    submitted: bool = True
    grade: float | None = None
    online_text: str = ""
    can_change: bool = True


def format_float(value: float, decimals: int, lang: str) -> str:
    return f"{value:.{decimals}f}".replace(".", LANG[lang]["decsep"])


def fputcsv_field(value: str, delimiter: str) -> str:
    # PHP's fputcsv: enclose a field holding the delimiter, the enclosure, the escape, a space or a line break.
    if any(c in value for c in (delimiter, '"', "\\", " ", "\t", "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


def worksheet(participants: list[Participant], lang: str, *, maximum: float = 20.0, blind: bool = False,
              online_text: bool = False, comments: bool = True, delimiter: str = ",", line_end: str = "\n",
              encoding: str = "utf-8", bom: bool = True) -> bytes:
    s = LANG[lang]
    header = [s["identifier"]] + ([] if blind else [s["fullname"], s["email"]]) + [
        s["status"], s["grade"], s["maxgrade"], s["canchange"], s["modsub"]]
    header += [s["onlinetext"]] if online_text else []
    header += [s["modgrade"]] + ([s["comments"]] if comments else [])
    rows = [header]
    for p in participants:
        row = [f"{s['hiddenuser']}{p.number}"]  # gradingtable.php col_recordid: hiddenuser . uniqueid
        row += [] if blind else [p.name, p.email]
        row += [s["submitted"] if p.submitted else s["nosubmission"],
                "" if p.grade is None else format_float(p.grade, 2, lang), format_float(maximum, 2, lang),
                s["yes"] if p.can_change else s["no"], s["date"] if p.submitted else "-"]
        row += [p.online_text] if online_text else []
        row += [s["date"] if p.grade is not None else "-"] + ([""] if comments else [])
        rows.append(row)
    text = line_end.join(delimiter.join(fputcsv_field(v, delimiter) for v in row) for row in rows) + line_end
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding)


def unformat_float(text: str, lang: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    text = text.replace(" ", "").replace(LANG[lang]["thousandssep"], "").replace(LANG[lang]["decsep"], ".")
    return float(text)


@dataclass
class Imported:
    grade: float | None
    modified: str
    feedback: str | None


def import_worksheet(data: bytes, lang: str, encoding: str = "utf-8", delimiter: str = ",") -> dict[int, Imported]:
    """What Moodle's offline-worksheet importer reads: participant number → grade, date, comment.
    KeyError when a column Moodle needs is not found by its exact header text."""
    s = LANG[lang]
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]  # csv_import_reader trims the UTF-8 byte-order mark
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header = rows[0]
    if s["grade"] not in header or s["identifier"] not in header or s["modgrade"] not in header:
        raise KeyError("invalidgradeimport")
    grade, ident, modified = header.index(s["grade"]), header.index(s["identifier"]), header.index(s["modgrade"])
    comments = header.index(s["comments"]) if s["comments"] in header else None
    out = {}
    for row in rows[1:]:
        if not any(row):
            continue
        number = int(row[ident][len(s["hiddenuser"]):])  # substr($idstr, strlen(get_string('hiddenuser')))
        out[number] = Imported(unformat_float(row[grade], lang), row[modified],
                               row[comments] if comments is not None else None)
    return out


def feedback_targets(data: bytes, participants: set[int]) -> dict[str, tuple[int, str, str]]:
    """Moodle's is_valid_filename_for_import on each file of a feedback zip: entry → (participant,
    plugin, file name as stored); entries Moodle skips are left out."""
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for entry in archive.namelist():
            if entry.endswith("/"):
                continue
            name = entry.rsplit("/", 1)[-1]
            if name.startswith((".", "~")):
                continue
            parts = entry.split("/")
            while parts:
                part = parts.pop(0)
                info = part.split("_", 4)  # PHP explode('_', $part, 5)
                if len(info) < 4 or not info[1].isdigit() or int(info[1]) not in participants:
                    continue
                if info[2] not in ("assignsubmission", "assignfeedback"):
                    continue
                rest = info[4] if len(info) == 5 else ""
                out[entry] = (int(info[1]), f"{info[2]}_{info[3]}", "/".join([rest, *parts]).strip("/"))
                break
    return out


# -- the upload, as Moodle's process_import_grades does it ----------------------------------------
PHP_STRTOTIME = r"""
date_default_timezone_set('UTC');
$out = [];
foreach (json_decode(stream_get_contents(STDIN)) as $s) {
    $t = strtotime($s);
    $out[] = $t === false ? null : $t;
}
echo json_encode($out);
"""


def strtotime(texts: list[str]) -> list[int | None]:
    """The real PHP's strtotime (server time zone UTC); None for false. php-cli comes from
    scripts/install-system-deps.sh."""
    import json
    import shutil
    import subprocess

    import pytest

    php = shutil.which("php")
    if php is None:
        pytest.fail("php introuvable : scripts/install-system-deps.sh installe php-cli (Debian), l'oracle de ces tests")
    done = subprocess.run([php, "-r", PHP_STRTOTIME], input=json.dumps(texts), capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


@dataclass
class GradeRecord:
    """A row of Moodle's assign_grades for one participant, with its feedback comment."""

    grade: float  # -1: a record without a grade (created by a feedback-file upload, say)
    timemodified: int
    comment: str = ""


def upload(data: bytes, lang: str, records: dict[int, GradeRecord], *, now: int, ignoremodified: bool = False,
           locked: set[int] = frozenset(), maximum: float = 20.0, encoding: str = "utf-8",
           delimiter: str = ",") -> dict[int, GradeRecord]:
    """What Moodle's worksheet upload leaves in assign_grades: a port of process_import_grades
    (mod/assign/feedback/offline/locallib.php), with the row's date read by the real PHP strtotime
    as importgradeslib.php's next() does. `records`: the participants who have a grade record."""
    rows = import_worksheet(data, lang, encoding=encoding, delimiter=delimiter)
    numbers = sorted(rows)
    times = dict(zip(numbers, strtotime([rows[n].modified for n in numbers])))
    out = {n: GradeRecord(r.grade, r.timemodified, r.comment) for n, r in records.items()}
    for number in numbers:
        row = rows[number]
        usergrade = records.get(number)
        modified = times[number] or 0  # strtotime's false, counted as 0 by `$modified + 60`
        stale = usergrade is not None and usergrade.timemodified > modified + 60
        grade = row.grade
        if usergrade is not None and grade is not None and usergrade.grade == grade:
            skip = True  # grade not modified
        elif grade is None or grade < 0:
            skip = True  # no value
        elif not ignoremodified and stale:
            skip = True  # modified in Moodle more recently than the worksheet says
        elif number in locked:
            skip = True  # grading_disabled
        else:
            skip = grade > maximum  # out of range
        if not skip:
            record = out.setdefault(number, GradeRecord(-1, now))
            record.grade, record.timemodified = grade, now
        if (ignoremodified or not stale) and row.feedback is not None:
            old = usergrade.comment if usergrade is not None else ""
            if row.feedback != old:
                out.setdefault(number, GradeRecord(-1, now)).comment = row.feedback
    return out


def zip_upload(data: bytes, records: dict[int, GradeRecord], participants: set[int],
               submitted: dict[int, int]) -> dict[int, GradeRecord]:
    """What Moodle's feedback-zip upload does to assign_grades (feedback/file/importziplib.php,
    import_zip_files): `get_user_grade($userid, true)` for each participant a file goes to, which
    creates a record without a grade, dated like the submission (locallib.php get_user_grade), where
    there was none. `submitted`: participant → the submission's timemodified."""
    out = {n: GradeRecord(r.grade, r.timemodified, r.comment) for n, r in records.items()}
    for number, _, _ in feedback_targets(data, participants).values():
        out.setdefault(number, GradeRecord(-1, submitted[number]))
    return out
