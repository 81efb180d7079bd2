"""The Moodle round trip: the teacher's offline grading worksheet filled and read back the way Moodle
reads it, trous's own worksheets, the feedback files zip, the gradebook import only with accounts.

Worksheets and archives are built the way Moodle builds them (moodle_support.py, from Moodle's
source); the files trous writes are read back with Moodle's rules, not with trous's parser.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from moodle_support import LANG, Participant, feedback_targets, import_worksheet, unformat_float, worksheet
from trous.grading import moodle
from trous.grading.model import FAILED, PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
from trous.grading.submissions import Submission

CLASS = [
    Participant(12, "Élodie Dupont-Lefèvre", "elodie@exemple.fr"),
    Participant(15, "Bob Martin", "bob@exemple.fr", grade=7.0),  # graded before in Moodle
    Participant(17, "Chloé N'Guyen", "chloe@exemple.fr", submitted=False),  # sent nothing
    Participant(21, "Zoé « Zaza » Roux", "zoe@exemple.fr", can_change=False),
]


def copies(*numbers: int, names: dict[int, str] | None = None) -> list[Submission]:
    by_number = {p.number: p.name for p in CLASS}
    by_number.update(names or {})
    return [Submission(str(n), {}, name=by_number.get(n, f"Inconnu {n}")) for n in numbers]


def write(tmp_path, data: bytes, name: str = "feuille.csv"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- reading the worksheet -----------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_worksheet_is_understood_in_both_languages(tmp_path, lang):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, lang)))
    assert sheet.language.code == lang
    assert set(sheet.participants) == {"12", "15", "17", "21"}
    assert sheet.max_grade == 20.0
    assert sheet.decimal == LANG[lang]["decsep"] and sheet.decimals == 2
    assert sheet.participants["12"].name == "Élodie Dupont-Lefèvre"
    assert sheet.participants["21"].locked and not sheet.participants["12"].locked


def test_a_worksheet_moodle_would_refuse_is_refused_with_what_to_do(tmp_path):
    no_date = worksheet(CLASS, "fr").replace("Dernière modification (note)".encode(), b"Date")
    with pytest.raises(moodle.MoodleError, match="Dernière modification \\(note\\)"):
        moodle.read_worksheet(write(tmp_path, no_date))
    german = worksheet(CLASS, "en").replace(b"Identifier", b"ID").replace(b"Grade,", b"Bewertung,")
    with pytest.raises(moodle.MoodleError, match="français ou en anglais"):
        moodle.read_worksheet(write(tmp_path, german, "de.csv"))
    scale = worksheet(CLASS, "fr").replace("Note maximale".encode(), "Barème".encode())
    with pytest.raises(moodle.MoodleError, match="barème"):
        moodle.read_worksheet(write(tmp_path, scale, "bareme.csv"))
    with pytest.raises(moodle.MoodleError, match="illisible"):
        moodle.read_worksheet(tmp_path / "absente.csv")


# -- filling it: only the grade and the comment change ---------------------------------------------
def fill(tmp_path, data: bytes, numbers=(12, 15, 21), **kw):
    sheet = moodle.read_worksheet(write(tmp_path, data))
    matching = moodle.match(sheet, copies(*numbers), "moodle")
    values = {n: (10.0 + int(n) / 4, f"Total pour {n} : 01_toux à revoir, « bien »") for n in matching.copies}
    return sheet, matching, moodle.fill(sheet, values)


def cells(data: bytes, encoding: str, delimiter: str) -> list[list[str]]:
    text = data.decode(encoding).lstrip("\ufeff")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


@pytest.mark.parametrize("lang, encoding, delimiter, line_end, bom", [
    ("fr", "utf-8", ",", "\n", True),  # as Moodle downloads it
    ("en", "utf-8", ",", "\n", True),
    ("fr", "cp1252", ";", "\r\n", False),  # opened and saved again by a French spreadsheet
    ("en", "utf-8", "\t", "\r\n", False),
])
def test_only_the_grade_and_the_comment_change(tmp_path, lang, encoding, delimiter, line_end, bom):
    original = worksheet(CLASS, lang, online_text=True, delimiter=delimiter, line_end=line_end, encoding=encoding,
                         bom=bom)
    sheet, _, filled = fill(tmp_path, original)
    assert sheet.encoding == encoding and bool(sheet.bom) == bom and sheet.delimiter == delimiter
    data = filled.data
    assert data.startswith(b"\xef\xbb\xbf") == bom
    before, after = cells(original, encoding, delimiter), cells(data, encoding, delimiter)
    header = before[0]
    grade, comment = header.index(LANG[lang]["grade"]), header.index(LANG[lang]["comments"])
    assert after[0] == header and len(after) == len(before)
    for old, new in zip(before[1:], after[1:]):
        number = int(old[0].split()[-1])
        changed = {i for i, (a, b) in enumerate(zip(old, new)) if a != b}
        if number == 17:  # sent nothing: the row is untouched, its grade stays empty
            assert new == old and new[grade] == ""
        else:
            assert changed <= {grade, comment} and grade in changed, (number, changed)
    # Untouched rows are the very bytes Moodle wrote, line ends and quotes included.
    untouched = [line for line in original.decode(encoding).lstrip("\ufeff").split(line_end) if "17" in line]
    assert untouched and all(line in data.decode(encoding) for line in untouched)
    assert data.count(line_end.encode()) == original.count(line_end.encode())


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_moodle_reads_back_the_grades_with_its_own_decimal_separator(tmp_path, lang):
    original = worksheet(CLASS, lang)
    _, matching, filled = fill(tmp_path, original)
    imported = import_worksheet(filled.data, lang)
    assert imported[12].grade == 13.0 and imported[15].grade == 13.75 and imported[21].grade == 15.25
    assert imported[17].grade is None  # kept empty: Moodle skips it
    assert imported[12].feedback == "Total pour 12 : 01_toux à revoir, « bien »"
    # The dates Moodle compares with its own grades are the downloaded ones.
    assert imported[15].modified == LANG[lang]["date"] and imported[12].modified == "-"
    assert filled.locked == ["21"]
    # The test's reader can tell a wrong separator: in English, « 13,75 » is 1375.
    if lang == "en":
        assert unformat_float("13,75", "en") == 1375.0


def test_blind_marking_worksheet_is_matched_by_number_only(tmp_path):
    original = worksheet(CLASS, "en", blind=True)
    sheet = moodle.read_worksheet(write(tmp_path, original))
    assert sheet.columns.full_name is None
    blind = [Submission(str(n), {}, name="Participant") for n in (12, 15)]
    matching = moodle.match(sheet, blind, "moodle")
    assert matching.copies == {"12": "12", "15": "15"}
    filled = moodle.fill(sheet, {"12": (4.5, "ok"), "15": (0.0, "ko")})
    imported = import_worksheet(filled.data, "en")
    assert (imported[12].grade, imported[15].grade, imported[17].grade) == (4.5, 0.0, None)


def test_who_is_missing_on_either_side_is_listed_not_guessed(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    matching = moodle.match(sheet, copies(12, 15, 99, names={99: "Dan Lenoir"}), "moodle")
    assert sorted(matching.copies) == ["12", "15"]
    assert [r.participant for r in matching.no_copy] == ["17", "21"]
    assert [s.student for s in matching.not_in_sheet] == ["99"]
    # Same number, another name: that row is not written.
    other = moodle.match(sheet, copies(12, 15, names={15: "Robert Durand"}), "moodle")
    assert sorted(other.copies) == ["12"] and [(r.participant, s.name) for r, s in other.other_name] == [
        ("15", "Robert Durand")]


def test_a_worksheet_of_another_assignment_is_refused(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    strangers = copies(12, 15, names={12: "Anna Karenine", 15: "Ivan Ilitch"})
    with pytest.raises(moodle.MoodleError, match="même devoir"):
        moodle.match(sheet, strangers, "moodle")
    with pytest.raises(moodle.MoodleError, match="numéro de participant"):
        moodle.match(sheet, [Submission("alice", {})], "dossier")


def test_moodle_names_are_compared_as_moodle_writes_folder_names(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    # The archive's folder name went through clean_filename: accents and punctuation may differ.
    matching = moodle.match(sheet, copies(12, 21, names={12: "Elodie Dupont Lefevre", 21: "Zoé Zaza Roux"}), "moodle")
    assert sorted(matching.copies) == ["12", "21"] and not matching.other_name


def test_grades_are_brought_to_moodle_s_maximum():
    assert moodle.scaled(3, 5, 20.0) == 12.0
    assert moodle.scaled(3.5, 12, 100.0) == 29.17
    assert moodle.scaled(3.5, 12, 12.0) == 3.5 and moodle.scaled(3.5, 12, None) == 3.5


# -- trous's own worksheets ----------------------------------------------------------------------
def test_default_worksheets_have_moodle_s_headers_in_each_language():
    rows = [("12", "Élodie Dupont", 3.5, 5.0, "Total 3,5/5. 01_toux : 3/3"), ("15", "Bob", 0.0, 5.0, "Total 0/5")]
    files = moodle.default_worksheets(rows)
    assert set(files) == {"fr", "en"}
    for lang, data in files.items():
        imported = import_worksheet(data, lang)
        assert imported[12].grade == 3.5 and imported[15].grade == 0.0
        assert imported[12].feedback == "Total 3,5/5. 01_toux : 3/3"
        assert imported[12].modified == "-"  # as Moodle writes a grade never given
        header = cells(data, "utf-8", ",")[0]
        assert header[0] == LANG[lang]["identifier"] and LANG[lang]["fullname"] in header


# -- the feedback zip ----------------------------------------------------------------------------
def test_feedback_zip_reaches_each_participant_through_the_archive_s_own_folders(tmp_path):
    archive = tmp_path / "devoir.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Élodie Dupont_12_assignsubmission_file_/exercises/01_toux.py", b"x")
        z.writestr("Élodie Dupont_12_assignsubmission_onlinetext_/onlinetext.html", b"<p>")
        z.writestr("Bob Martin_15_assignsubmission_file/01_toux.py", b"x")  # Moodle >= 4.1: no last « _ »
        z.writestr("Participant_21_assignsubmission_file_/a.py", b"x")  # blind marking
        z.writestr("Dan_30_assignsubmission_onlinetext_/onlinetext.html", b"<p>")  # online text only
        z.writestr("Flat Student_33_assignsubmission_file_01_toux.py", b"x")  # not downloaded in folders
        z.writestr("__MACOSX/._x", b"")
    folders = moodle.archive_folders(archive)
    assert folders == {"12": "Élodie Dupont_12_assignsubmission_file_", "15": "Bob Martin_15_assignsubmission_file",
                       "21": "Participant_21_assignsubmission_file_", "30": "Dan_30_assignsubmission_onlinetext_",
                       "33": "Flat Student_33_assignsubmission_file_"}
    data = moodle.feedback_zip({folder: f"<p>{n}</p>".encode() for n, folder in folders.items()})
    targets = feedback_targets(data, {12, 15, 21, 30, 33})
    assert sorted((p, name) for p, _, name in targets.values()) == [(n, "retour.html") for n in (12, 15, 21, 30, 33)]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.read("Élodie Dupont_12_assignsubmission_file_/retour.html") == b"<p>12</p>"
        assert all(not n.split("/")[-1].startswith((".", "~")) for n in z.namelist())


# -- accounts for the gradebook import -----------------------------------------------------------
def test_participants_come_from_a_class_list_or_from_moodle_s_worksheet(tmp_path):
    class_list = write(tmp_path, "etudiant;Nom d'utilisateur\nalice;amartin\nbob;bdurand\nnadia;nkaci\n".encode(),
                       "classe.csv")
    found = moodle.read_participants(class_list, ["alice", "bob", "chloe"])
    assert found.field == moodle.USERNAME and found.identities == {"alice": "amartin", "bob": "bdurand"}
    assert found.unmatched == ["nadia"]
    sheet = write(tmp_path, worksheet(CLASS, "fr"), "feuille.csv")
    from_sheet = moodle.read_participants(sheet, ["12", "15"])
    assert from_sheet.field == moodle.EMAIL
    assert from_sheet.identities == {"12": "elodie@exemple.fr", "15": "bob@exemple.fr"}
    with pytest.raises(moodle.MoodleError, match="username"):
        moodle.read_participants(write(tmp_path, b"a,b\n1,2\n", "x.csv"), ["1"])


def _grade(student: str, score: float) -> SubmissionGrade:
    blanks = [BlankGrade("b", 1, score, 2.0, PASSED if score == 2 else FAILED)]
    return SubmissionGrade(student, "c", "v", [ExerciseGrade("01_toux", "t", score, 2.0, "blanks", blanks)])


def test_gradebook_import_only_with_accounts_and_only_their_rows(tmp_path):
    from trous.course import Course
    from trous.grading import exports

    from grading_support import mini_course

    course = Course.load(mini_course(tmp_path / "cours", ("01_toux",)))
    grades = [_grade("12", 2.0), _grade("15", 1.0)]
    assert exports.moodle_csv(course, grades, {}) is None
    participants = moodle.read_participants(write(tmp_path, b"etudiant,email\n12,e@x.fr\n40,z@x.fr\n", "p.csv"),
                                            ["12", "15"])
    data, help_text = exports.moodle_csv(course, grades, {}, participants)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert rows[0][0] == "Adresse de courriel" and [r[0] for r in rows[1:]] == ["e@x.fr"]  # 15 has no account
    assert float(rows[1][2]) == 2.0
    assert "useremail" in help_text and "  15" in help_text and "  40" in help_text

