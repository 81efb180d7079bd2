"""The Moodle round trip: the teacher's offline grading worksheet filled and read back the way Moodle
reads it, trous's own worksheets, the feedback files zip, the gradebook import only with accounts.

Worksheets and archives are built the way Moodle builds them (moodle_support.py, from Moodle's
source); the files trous writes are read back with Moodle's rules, not with trous's parser.
"""

from __future__ import annotations

import csv
import html
import io
import json
import zipfile

import pytest

from moodle_support import (LANG, GradeRecord, Participant, feedback_targets, import_worksheet, unformat_float, upload,
                            worksheet, zip_upload)
from trous.outputs import moodle
from trous.core.grades import FAILED, PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
from trous.inputs.moodle import Copies
from trous.inputs.moodle import Participant as Participant_
from trous.core.submission import Submission

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


def of_archive(submissions: list[Submission]) -> Copies:
    """The participants of those copies, as the intake of a Moodle archive records them."""
    return Copies({s.student: Participant_(s.student, s.name, f"{s.name}_{s.student}_assignsubmission_file")
                   for s in submissions if s.student.isdigit()})


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
    matching = moodle.match(sheet, copies(*numbers), of_archive(copies(*numbers)))
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
        number = int(old[0][len(LANG[lang]["hiddenuser"]):])  # as Moodle strips its « Participant »
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
    # 15 had a grade in Moodle (its row is dated): said with both values as the worksheet writes them,
    # and with what Moodle will do, which depends on whether PHP reads that date.
    sep = "," if lang == "fr" else "."
    assert [(e.participant, e.before, e.after) for e in filled.existing] == [("15", f"7{sep}00", f"13{sep}75")]
    assert [e.participant for e in filled.kept_by_moodle()] == (["15"] if lang == "fr" else [])
    assert [e.participant for e in filled.replaced()] == (["15"] if lang == "en" else [])
    # The test's reader can tell a wrong separator: in English, « 13,75 » is 1375.
    if lang == "en":
        assert unformat_float("13,75", "en") == 1375.0


# -- what Moodle's upload really does with it (a port of process_import_grades, PHP's strtotime) ---
DOWNLOADED = 1772445600  # 2 March 2026, 10:00 UTC: the date the worksheets of moodle_support carry for 15
NOW = DOWNLOADED + 7 * 86400


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_what_trous_says_of_existing_grades_is_what_moodle_does(tmp_path, lang):
    _, _, filled = fill(tmp_path, worksheet(CLASS, lang))
    before = {15: GradeRecord(7.0, DOWNLOADED + 25, "Bien vu")}  # graded in Moodle, within the downloaded minute
    after = upload(filled.data, lang, before, now=NOW, locked={21})
    skipped = {str(n) for n, r in before.items() if after[n].grade == r.grade and after[n].comment == r.comment}
    # Moodle keeps exactly the rows trous says it will keep (a French date: strtotime cannot read it).
    assert skipped == {e.participant for e in filled.kept_by_moodle()}
    assert skipped == ({"15"} if lang == "fr" else set())
    assert after[12].grade == 13.0 and after[12].comment.startswith("Total pour 12")  # no record: taken
    assert after[21].grade == -1 and after[21].comment.startswith("Total pour 21")  # locked: comment only
    # With the box trous names ticked, Moodle takes every row, in both languages.
    ticked = upload(filled.data, lang, before, now=NOW, locked={21}, ignoremodified=True)
    assert ticked[15].grade == 13.75 and ticked[15].comment.startswith("Total pour 15")
    # A grade changed in Moodle after the download is kept even when Moodle reads the date.
    changed = upload(filled.data, lang, {15: GradeRecord(9.0, DOWNLOADED + 3600)}, now=NOW)
    assert changed[15].grade == 9.0


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_feedback_zip_before_the_worksheet_makes_its_rows_stale(tmp_path, lang):
    _, _, filled = fill(tmp_path, worksheet(CLASS, lang), numbers=(12,))
    pages = moodle.feedback_zip({"Élodie Dupont-Lefèvre_12_assignsubmission_file": b"<p>12</p>"})
    submitted = {12: DOWNLOADED - 86400}
    zip_first = upload(filled.data, lang, zip_upload(pages, {}, {12, 15, 17, 21}, submitted), now=NOW)
    assert zip_first[12].grade == -1 and zip_first[12].comment == ""  # the row was skipped whole
    sheet_first = zip_upload(pages, upload(filled.data, lang, {}, now=NOW), {12, 15, 17, 21}, submitted)
    assert sheet_first[12].grade == 13.0 and sheet_first[12].comment.startswith("Total pour 12")
    lines = " ".join(moodle.existing_lines(filled, moodle.LANGUAGES[0 if lang == "fr" else 1], zip_too=True))
    assert f"dépose la feuille avant {moodle.FEEDBACK_ZIP}" in lines


def test_trous_s_own_worksheets_write_the_identifier_as_moodle_does():
    files = moodle.default_worksheets([("1001", "Alice Martin", 4.0, 5.0, "Total 4/5")])
    assert cells(files["fr"], "utf-8", ",")[1][0] == "Participant1001"  # hiddenuser « Participant » + N
    assert cells(files["en"], "utf-8", ",")[1][0] == "Participant 1001"  # hiddenuser « Participant  » + N
    # An empty date: PHP's strtotime gives false, so a participant with a grade record keeps it.
    kept = upload(files["fr"], "fr", {1001: GradeRecord(2.0, DOWNLOADED)}, now=NOW)
    assert kept[1001].grade == 2.0
    assert upload(files["fr"], "fr", {1001: GradeRecord(2.0, DOWNLOADED)}, now=NOW, ignoremodified=True)[1001].grade == 4.0


def test_blind_marking_worksheet_is_matched_by_number_only(tmp_path):
    original = worksheet(CLASS, "en", blind=True)
    sheet = moodle.read_worksheet(write(tmp_path, original))
    assert sheet.columns.full_name is None
    blind = [Submission(str(n), {}, name="Participant") for n in (12, 15)]
    matching = moodle.match(sheet, blind, of_archive(blind))
    assert matching.copies == {"12": "12", "15": "15"}
    filled = moodle.fill(sheet, {"12": (4.5, "ok"), "15": (0.0, "ko")})
    imported = import_worksheet(filled.data, "en")
    assert (imported[12].grade, imported[15].grade, imported[17].grade) == (4.5, 0.0, None)


def test_who_is_missing_on_either_side_is_listed_not_guessed(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    class_ = copies(12, 15, 99, names={99: "Dan Lenoir"})
    matching = moodle.match(sheet, class_, of_archive(class_))
    assert sorted(matching.copies) == ["12", "15"]
    assert [r.participant for r in matching.no_copy] == ["17", "21"]
    assert [s.student for s in matching.not_in_sheet] == ["99"]
    # Same number, another name: that row is not written.
    renamed = copies(12, 15, names={15: "Robert Durand"})
    other = moodle.match(sheet, renamed, of_archive(renamed))
    assert sorted(other.copies) == ["12"] and [(r.participant, s.name) for r, s in other.other_name] == [
        ("15", "Robert Durand")]


def test_a_worksheet_of_another_assignment_is_refused(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    strangers = copies(12, 15, names={12: "Anna Karenine", 15: "Ivan Ilitch"})
    with pytest.raises(moodle.MoodleError, match="même devoir"):
        moodle.match(sheet, strangers, of_archive(strangers))
    with pytest.raises(moodle.MoodleError, match="numéro de participant"):
        moodle.match(sheet, [Submission("alice", {})], None)


def test_moodle_names_are_compared_as_moodle_writes_folder_names(tmp_path):
    sheet = moodle.read_worksheet(write(tmp_path, worksheet(CLASS, "fr")))
    # The archive's folder name went through clean_filename: accents and punctuation may differ.
    cleaned = copies(12, 21, names={12: "Elodie Dupont Lefevre", 21: "Zoé Zaza Roux"})
    matching = moodle.match(sheet, cleaned, of_archive(cleaned))
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
        assert imported[12].modified == ""  # no date: as Moodle's « - » for a grade never given
        header = cells(data, "utf-8", ",")[0]
        assert header[0] == LANG[lang]["identifier"] and LANG[lang]["fullname"] in header


# -- the feedback zip ----------------------------------------------------------------------------
def test_feedback_zip_reaches_each_participant_through_the_archive_s_own_folders(tmp_path):
    from grading_support import mini_course

    from trous.core import Course
    from trous.inputs import kinds

    archive = tmp_path / "devoir.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Élodie Dupont_12_assignsubmission_file_/exercises/01_toux.py", b"x")
        z.writestr("Élodie Dupont_12_assignsubmission_onlinetext_/onlinetext.html", b"<p>")
        z.writestr("Bob Martin_15_assignsubmission_file/01_toux.py", b"x")  # Moodle >= 4.1: no last « _ »
        z.writestr("Participant_21_assignsubmission_file_/a.py", b"x")  # blind marking
        z.writestr("Dan_30_assignsubmission_onlinetext_/onlinetext.html", b"<p>")  # online text only
        z.writestr("Flat Student_33_assignsubmission_file_01_toux.py", b"x")  # not downloaded in folders
        # an edited name: Moodle's importer would read 40 in it (the second « _ » field), not 41
        z.writestr("Eve_40_assignsubmission_file_x_41_assignsubmission_file_/01_toux.py", b"x")
        z.writestr("__MACOSX/._x", b"")
    course = Course.load(mini_course(tmp_path / "cours", ("01_toux",)))
    copies = kinds.load(archive, course).moodle
    folders = {n: moodle.feedback_folder(p) for n, p in copies.participants.items()}
    assert folders == {"12": "Élodie Dupont_12_assignsubmission_file_", "15": "Bob Martin_15_assignsubmission_file",
                       "21": "Participant_21_assignsubmission_file_", "30": "Dan_30_assignsubmission_onlinetext_",
                       "33": "Flat Student_33_assignsubmission_file_",
                       "41": "Eve 40 assignsubmission file x_41_assignsubmission_file"}
    data = moodle.feedback_zip({folder: f"<p>{n}</p>".encode() for n, folder in folders.items()})
    targets = feedback_targets(data, {12, 15, 21, 30, 33, 40, 41})
    assert sorted((p, name) for p, _, name in targets.values()) == [(n, "retour.html") for n in (12, 15, 21, 30, 33, 41)]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.read("Élodie Dupont_12_assignsubmission_file_/retour.html") == b"<p>12</p>"
        assert all(not n.split("/")[-1].startswith((".", "~")) for n in z.namelist())
        # each page reaches the participant it is for, as Moodle's importer reads the folder
        for entry, (number, _, _) in targets.items():
            assert z.read(entry) == f"<p>{number}</p>".encode()


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
    from trous.core import Course
    from trous.outputs import exports

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



# -- end to end: a Moodle archive and its worksheet, through `trous grade` ------------------------
def _materials(course_dir):
    from grading_support import make_classe

    from trous.core import Course

    return {m.exercise.id: m for m in make_classe().load_materials(Course.load(course_dir))}


@pytest.fixture(scope="module")
def moodle_class(tmp_path_factory):
    """A course of two assignments (partie5: 01_toux and 02_places; lecon-attention: 06_moyenne), the
    archive Moodle gives for partie5, and the worksheet of the same assignment, in French."""
    from grading_support import mini_course, zip_of

    base = tmp_path_factory.mktemp("moodle-e2e")
    course_dir = mini_course(base / "cours", ("01_toux", "02_places", "06_moyenne"))
    m = _materials(course_dir)
    toux, places, moyenne = m["01_toux"], m["02_places"], m["06_moyenne"]
    archive = base / "depot" / "Partie5.zip"
    archive.parent.mkdir()
    archive.write_bytes(zip_of({
        # everything right, and exercise 6 of the next assignment worked on already
        "Élodie Dupont-Lefèvre_12_assignsubmission_file_/exercises/01_toux.py": toux.perfect().encode(),
        "Élodie Dupont-Lefèvre_12_assignsubmission_file_/exercises/02_places.py": places.perfect().encode(),
        "Élodie Dupont-Lefèvre_12_assignsubmission_file_/exercises/06_moyenne.py": moyenne.perfect().encode(),
        # one blank of 01_toux, under the name a browser gave a second download; no 02_places
        "Bob Martin_15_assignsubmission_file_/01_toux (1).py": toux.fill({0: toux.answers[0]}).encode(),
        # typed the work as online text: nothing graded
        "Zoé « Zaza » Roux_21_assignsubmission_onlinetext_/onlinetext.html": b"<p>total = sum(e)</p>",
        # not in the worksheet (enrolled after it was downloaded)
        "Dan Lenoir_30_assignsubmission_file_/01_toux.py": toux.perfect().encode(),
        "Dan Lenoir_30_assignsubmission_file_/02_places.py": places.perfect().encode(),
    }))
    sheet = base / "depot" / "Notes-Partie5.csv"
    sheet.write_bytes(worksheet(CLASS, "fr"))
    return base, course_dir, archive, sheet


def _run_grade(course_dir, *args):
    from grading_support import run_trous

    return run_trous("-C", str(course_dir), "grade", *map(str, args), cwd=course_dir)


def _results(folder) -> dict[str, dict]:
    return {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (folder / "results").glob("*.json"))}


def test_e2e_worksheet_needs_one_assignment_and_is_refused_before_grading(moodle_class):
    base, course_dir, archive, sheet = moodle_class
    done = _run_grade(course_dir, archive, "--feuille", sheet)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--devoir" in done.stdout and "partie5" in done.stdout and "lecon-attention" in done.stdout
    assert not (base / "depot" / "Partie5-resultats").exists()  # refused before anything was written
    typo = _run_grade(course_dir, archive, "--devoir", "partie6", "--feuille", sheet)
    assert typo.returncode == 2 and "« partie5 »" in typo.stdout  # did you mean


@pytest.fixture(scope="module")
def graded_partie5(moodle_class):
    base, course_dir, archive, sheet = moodle_class
    before = sheet.read_bytes()
    done = _run_grade(course_dir, archive, "--devoir", "partie5", "--feuille", sheet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sheet.read_bytes() == before  # the teacher's file is only read
    return done, base / "depot" / "Partie5-resultats-partie5"


def test_e2e_one_assignment_only_its_exercises_and_totals(graded_partie5):
    done, results = graded_partie5
    grades = _results(results)
    assert sorted(grades) == ["12", "15", "21", "30"]
    for data in grades.values():
        assert [e["id"] for e in data["exercises"]] == ["01_toux", "02_places"]  # never 06_moyenne
        assert data["max_score"] == 5
    assert grades["12"]["score"] == grades["30"]["score"] == 5
    assert grades["15"]["score"] == 1 and grades["21"]["score"] == 0
    header = next(csv.reader(io.StringIO((results / "grades.csv").read_text(encoding="utf-8-sig"))))
    assert header == ["etudiant", "nom", "01_toux", "02_places", "total", "total_max"]
    elodie = (results / "retours" / "12.html").read_text(encoding="utf-8")
    assert "06_moyenne" in elodie and "pas corrigé avec Partie 5" in elodie  # named, not graded
    assert "La méthode la plus simple" not in elodie  # no section, no « fichier absent » for it
    assert "/5" in done.stdout and "/8" not in done.stdout and "devoir corrigé : partie5" in done.stdout
    report = (results / "rapport.html").read_text(encoding="utf-8")
    assert "devoir corrigé : Partie 5" in report and "06_moyenne" not in report.split("Élèves")[0]


def test_e2e_filled_worksheet_is_what_moodle_imports(graded_partie5, moodle_class):
    done, results = graded_partie5
    _, _, _, sheet = moodle_class
    grades = _results(results)
    filled = (results / "moodle-feuille-remplie.csv").read_bytes()
    imported = import_worksheet(filled, "fr")
    original = import_worksheet(sheet.read_bytes(), "fr")
    for number in (12, 15, 21):  # Moodle's maximum is 20, trous's total 5
        assert imported[number].grade == pytest.approx(grades[str(number)]["score"] * 4)
        assert imported[number].modified == original[number].modified  # the dates Moodle compares: as downloaded
        assert imported[number].feedback.startswith("Total ")
        assert "06_moyenne" not in imported[number].feedback  # never the other assignment's exercise
    assert "fichier absent" not in imported[12].feedback
    assert "02_places : 0/2 (fichier absent)" in imported[15].feedback and "soit 4/20" in imported[15].feedback
    assert imported[17].grade is None and imported[17].feedback == ""  # sent nothing: untouched
    # Said in the terminal: who is in one file and not the other.
    out = " ".join(done.stdout.split())
    assert "Participant 17 (Chloé N'Guyen)" in out and "Participant 30 (Dan Lenoir)" in out
    assert "notes ramenées sur 20" in out and "Participant 21" in out  # locked in Moodle: said
    # The grade Moodle had: a French date PHP cannot read, so Moodle keeps it unless the box is ticked.
    box = "« Autorise la modification de données modifiées plus récemment dans Moodle que dans le formulaire d'évaluation. »"
    said = next(line for line in out.split("Moodle : ") if "Participant 15 (7,00 → 4,00)" in line)
    assert "ignorera ces lignes, note ET commentaire" in said and box in said and "remplacée" not in said
    readme = (results / "moodle-lisezmoi.txt").read_text(encoding="utf-8")
    assert "Participant 15 (7,00 → 4,00)" in readme and "« Déposer un formulaire d'évaluation »" in readme
    assert readme.index("moodle-feuille-remplie.csv") < readme.index("moodle-retours.zip, APRÈS la feuille")
    assert not (results / "moodle.csv").exists()


def test_e2e_feedback_zip_gives_each_participant_their_page(graded_partie5):
    _, results = graded_partie5
    data = (results / "moodle-retours.zip").read_bytes()
    targets = feedback_targets(data, {12, 15, 21, 30})
    assert sorted(p for p, _, _ in targets.values()) == [12, 15, 21, 30]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for entry, (number, _, name) in targets.items():
            assert name == "retour.html"
            assert z.read(entry) == (results / "retours" / f"{number}.html").read_bytes()
    assert "Zoé « Zaza » Roux_21_assignsubmission_onlinetext_/retour.html" in targets
    readme = (results / "moodle-lisezmoi.txt").read_text(encoding="utf-8")
    assert "moodle-feuille-remplie.csv" in readme and "moodle-retours.zip" in readme


def test_e2e_accounts_give_the_gradebook_import_and_scopes_stay_apart(graded_partie5, moodle_class):
    done, results = graded_partie5
    base, course_dir, archive, sheet = moodle_class
    again = _run_grade(course_dir, archive, "--devoir", "partie5", "--feuille", sheet, "--participants", sheet)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 à corriger, 4 inchangées" in again.stdout
    rows = list(csv.reader(io.StringIO((results / "moodle.csv").read_text(encoding="utf-8"), newline="")))
    assert rows[0][:3] == ["Adresse de courriel", "Nom complet", "Partie 5 — Lire tout d'un coup (attention)"]
    assert sorted(r[0] for r in rows[1:]) == ["bob@exemple.fr", "elodie@exemple.fr", "zoe@exemple.fr"]  # not Dan
    assert "30" in (results / "moodle-import.txt").read_text(encoding="utf-8")
    # The whole course into the same folder would mix two assignments' participant numbers: refused.
    mixed = _run_grade(course_dir, archive, "--resultats", results)
    assert mixed.returncode == 2 and "partie5" in mixed.stdout and "--resultats" in mixed.stdout


def test_e2e_whole_course_run_one_total_per_assignment(moodle_class, tmp_path):
    _, course_dir, archive, _ = moodle_class
    results = tmp_path / "tout"
    done = _run_grade(course_dir, archive, "--resultats", results)
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(results)
    assert [e["id"] for e in grades["12"]["exercises"]] == ["01_toux", "02_places", "06_moyenne"]
    assert [e["id"] for e in grades["15"]["exercises"]] == ["01_toux", "02_places"]  # 06 not handed in: no zero
    rows = list(csv.DictReader(io.StringIO((results / "grades.csv").read_text(encoding="utf-8-sig"), newline="")))
    by = {r["etudiant"]: r for r in rows}
    assert by["12"]["partie5"] == "5" and by["12"]["lecon-attention"] == by["12"]["lecon-attention_max"] == "3"
    assert by["15"]["lecon-attention"] == "" and by["15"]["06_moyenne"] == ""
    # One overall column, on one scale for everyone (8 = 5 + 3): sorting by it compares like with like.
    assert list(rows[0])[-2:] == ["total_sur_8", "devoirs_rendus_sur_2"] and "total" not in rows[0]
    assert (by["12"]["total_sur_8"], by["12"]["devoirs_rendus_sur_2"]) == ("8", "2")
    assert (by["15"]["total_sur_8"], by["15"]["devoirs_rendus_sur_2"]) == ("1", "1")
    assert sorted(by, key=lambda s: -float(by[s]["total_sur_8"]))[0] == "12"
    out = " ".join(done.stdout.split())
    assert "devoirs corrigés : partie5" in out and "lecon-attention" in out and "non rendu" in out
    # One grade per worksheet: several assignments give none, and say why.
    assert not list(results.glob("moodle-feuille-*.csv")) and "--devoir partie5" in out


def test_e2e_blind_marking_english_moodle_41(tmp_path):
    from grading_support import mini_course, zip_of

    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    toux = _materials(course_dir)["01_toux"]
    archive = tmp_path / "blind.zip"
    archive.write_bytes(zip_of({  # Moodle >= 4.1: no « _ » after the plugin's name
        "Participant_3_assignsubmission_file/01_toux.py": toux.perfect().encode(),
        "Participant_4_assignsubmission_file/01_toux.py": toux.fill({1: toux.answers[1]}).encode(),
    }))
    people = [Participant(3, "", ""), Participant(4, "", ""), Participant(5, "", "", submitted=False)]
    sheet = tmp_path / "worksheet.csv"
    sheet.write_bytes(worksheet(people, "en", blind=True, maximum=3, delimiter=";", line_end="\r\n", bom=False))
    done = _run_grade(course_dir, archive, "--devoir", "partie5", "--feuille", sheet, "--resultats", tmp_path / "res")
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(tmp_path / "res")
    imported = import_worksheet((tmp_path / "res" / "moodle-feuille-remplie.csv").read_bytes(), "en", delimiter=";")
    assert imported[3].grade == grades["3"]["score"] == 3 and imported[4].grade == grades["4"]["score"] == 1
    assert imported[5].grade is None
    targets = feedback_targets((tmp_path / "res" / "moodle-retours.zip").read_bytes(), {3, 4})
    assert sorted(p for p, _, _ in targets.values()) == [3, 4]
    # Blind marking: no name anywhere rather than « Participant » repeated on every row.
    rows = list(csv.DictReader(io.StringIO((tmp_path / "res" / "grades.csv").read_text(encoding="utf-8-sig"))))
    assert [(r["etudiant"], r["nom"]) for r in rows] == [("3", ""), ("4", "")]
    header = next(line for line in done.stdout.splitlines() if "étudiant" in line)
    assert "nom" not in header.split()  # the terminal's table has no name column to fill with it


# -- whose folder is whose: issue 20's archives, through `trous grade` ------------------------------
@pytest.fixture(scope="module")
def one_exercise(tmp_path_factory):
    from grading_support import mini_course

    base = tmp_path_factory.mktemp("moodle-identites")
    course_dir = mini_course(base / "cours", ("01_toux",))
    return base, course_dir, _materials(course_dir)["01_toux"]


def _archive(path, files: dict[str, str]):
    from grading_support import zip_of

    path.write_bytes(zip_of({name: text.encode() for name, text in files.items()}))
    return path


def _sheet(path, people, lang="fr"):
    path.write_bytes(worksheet(people, lang, maximum=3))
    return path


def test_e2e_a_folder_carrying_another_number_is_read_at_moodle_s_place(one_exercise):
    base, course_dir, toux = one_exercise
    archive = _archive(base / "mallory.zip", {
        "Alice Martin_1001_assignsubmission_file_/01_toux.py": toux.perfect(),
        "Mallory_1001_assignsubmission_file_x_1005_assignsubmission_file_/01_toux.py": toux.fill({0: toux.answers[0]}),
    })
    sheet = _sheet(base / "mallory.csv", [Participant(1001, "Alice Martin", "a@x.fr"),
                                          Participant(1005, "Mallory", "m@x.fr")])
    done = _run_grade(course_dir, archive, "--feuille", sheet, "--resultats", base / "res-mallory")
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(base / "res-mallory")
    assert sorted(grades) == ["1001", "1005"]
    assert grades["1001"]["score"] == grades["1001"]["max_score"] == 3  # Alice keeps every point
    assert grades["1005"]["score"] == 1
    out = " ".join(done.stdout.split())
    assert "porte aussi le numéro 1001" in out
    imported = import_worksheet((base / "res-mallory" / "moodle-feuille-remplie.csv").read_bytes(), "fr")
    assert imported[1001].grade == 3
    # The sheet's name for 1005 is not the edited folder's: not written, and said (never guessed).
    assert imported[1005].grade is None and "Participant 1005 : « Mallory » / « Mallory_1001_" in out
    # Moodle's importer reads the second « _ » field: the original folder would give Mallory's page to
    # Alice; trous's zip names a folder Moodle reads as 1005.
    targets = feedback_targets((base / "res-mallory" / "moodle-retours.zip").read_bytes(), {1001, 1005})
    pages = {number: entry for entry, (number, _, _) in targets.items()}
    assert sorted(pages) == [1001, 1005]
    with zipfile.ZipFile(base / "res-mallory" / "moodle-retours.zip") as z:
        assert z.read(pages[1005]) == (base / "res-mallory" / "retours" / "1005.html").read_bytes()
        assert z.read(pages[1001]) == (base / "res-mallory" / "retours" / "1001.html").read_bytes()


def test_e2e_two_folders_for_one_number_are_never_merged(one_exercise):
    base, course_dir, toux = one_exercise
    alice, mallory = "Alice Martin_1001_assignsubmission_file_", "Mallory_1001_assignsubmission_file"
    archive = _archive(base / "doublon.zip", {
        f"{alice}/01_toux.py": toux.perfect(),
        f"{mallory}/01_toux.py": toux.fill({}),
        "Bob_1002_assignsubmission_file_/01_toux.py": toux.perfect(),
    })
    sheet = _sheet(base / "doublon.csv", [Participant(1001, "Alice Martin", "a@x.fr"), Participant(1002, "Bob", "b@x.fr")])
    done = _run_grade(course_dir, archive, "--feuille", sheet, "--resultats", base / "res-doublon")
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(base / "res-doublon")
    assert sorted(grades) == sorted([alice, mallory, "1002"])  # each folder graded on its own, none as 1001
    assert grades[alice]["score"] == 3 and grades[mallory]["score"] == 0
    out = " ".join(done.stdout.split())
    assert f"participant 1001 : 2 dossiers de l'archive portent ce numéro (« {alice} », « {mallory} »)" in out
    report = (base / "res-doublon" / "rapport.html").read_text(encoding="utf-8")
    assert "participant 1001 : 2 dossiers" in " ".join(report.split())
    imported = import_worksheet((base / "res-doublon" / "moodle-feuille-remplie.csv").read_bytes(), "fr")
    assert imported[1001].grade is None and imported[1001].feedback == ""  # neither written in the other's place
    assert imported[1002].grade == 3
    readme = " ".join((base / "res-doublon" / "moodle-lisezmoi.txt").read_text(encoding="utf-8").split())
    assert "Participant 1001 (Alice Martin) : « " in readme and mallory in readme
    targets = feedback_targets((base / "res-doublon" / "moodle-retours.zip").read_bytes(), {1001, 1002})
    assert sorted(p for p, _, _ in targets.values()) == [1002]  # no page goes to 1001
    # Alice's own page does not name Mallory.
    page = html.unescape(next((base / "res-doublon" / "retours").glob("Alice*.html")).read_text(encoding="utf-8"))
    assert "Mallory" not in page and "aussi celui d'un autre dossier" in page


def test_e2e_every_entry_is_graded_or_listed_and_lookalikes_are_flagged(one_exercise):
    base, course_dir, toux = one_exercise
    archive = _archive(base / "sosies.zip", {
        "Alice Martin_1001_assignsubmission_file_/01_toux.py": toux.perfect(),
        "\u0410lice Martin_1002_assignsubmission_file_/01_toux.py": toux.fill({}),  # Cyrillic А
        "Alice\u200b Martin_1003_assignsubmission_file_/01_toux.py": toux.fill({}),  # zero-width space
        # « download as folders » off, a name readable as 7's or as 8's file: nobody's
        "Eve_7_assignsubmission_file_Fred_8_assignsubmission_file_01_toux.py": toux.perfect(),
        "Groupe par défaut_assignsubmission_file_/01_toux.py": toux.perfect(),  # a team's default group
    })
    done = _run_grade(course_dir, archive, "--resultats", base / "res-sosies")
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(base / "res-sosies")
    assert {"1001", "1002", "1003", "Groupe par défaut"} == set(grades)
    out = " ".join(done.stdout.split())
    assert "Eve_7_assignsubmission_file_Fred_8_assignsubmission_file_01_toux.py : nom de fichier lisible comme " \
           "celui de plusieurs participants (7, 8)" in out
    assert "noms qui se ressemblent" in out and "U+0410" in out and "U+200B" in out and "cyrillique" in out
    report = " ".join((base / "res-sosies" / "rapport.html").read_text(encoding="utf-8").split())
    assert "noms qui se ressemblent" in report and "plusieurs participants (7, 8)" in report
    # A team archive: its numbers are groups', nothing is written for Moodle under them.
    assert "devoir en groupe" in out and not (base / "res-sosies" / "moodle-retours.zip").exists()
    assert not list((base / "res-sosies").glob("moodle-feuille-*.csv"))


def test_e2e_ids_that_differ_by_case_never_share_a_file(one_exercise):
    base, course_dir, toux = one_exercise
    classe = base / "casse"
    for student, text in (("alice", toux.perfect()), ("Alice", toux.fill({})), ("ALICE", toux.fill({0: toux.answers[0]}))):
        (classe / student / "exercises").mkdir(parents=True)
        (classe / student / "exercises" / "01_toux.py").write_text(text, encoding="utf-8")
    done = _run_grade(course_dir, classe, "--resultats", base / "res-casse")
    assert done.returncode == 0, done.stdout + done.stderr
    for folder, suffix in (("results", ".json"), ("retours", ".html")):
        names = [p.name for p in (base / "res-casse" / folder).glob(f"*{suffix}")]
        assert len(names) == 3 and len({n.casefold() for n in names}) == 3, names
    grades = _results(base / "res-casse")
    assert (grades["alice"]["score"], grades["Alice"]["score"], grades["ALICE"]["score"]) == (3, 0, 1)
    assert "noms qui se ressemblent (majuscules et minuscules)" in " ".join(done.stdout.split())


def test_e2e_an_archive_unpacked_by_hand_is_read_as_the_archive(one_exercise, tmp_path):
    base, course_dir, toux = one_exercise
    folder = tmp_path / "Partie5"
    files = {
        "Élodie Dupont_12_assignsubmission_file/exercises/01_toux.py": toux.perfect(),
        "Élodie Dupont_12_assignsubmission_onlinetext/onlinetext.html": "<p>voir le fichier</p>",
        "Bob_15_assignsubmission_file_/01_toux.py": toux.fill({}),
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    done = _run_grade(course_dir, folder, "--resultats", tmp_path / "res")
    assert done.returncode == 0, done.stdout + done.stderr
    grades = _results(tmp_path / "res")
    assert sorted(grades) == ["12", "15"] and grades["12"]["score"] == 3  # one copy per participant
    notes = " ".join(i["reason"] for i in grades["12"]["intake"]["ignored"])
    assert "remise « texte en ligne » de Moodle" in notes
    targets = feedback_targets((tmp_path / "res" / "moodle-retours.zip").read_bytes(), {12, 15})
    assert sorted(p for p, _, _ in targets.values()) == [12, 15]
    assert cells((tmp_path / "res" / "moodle-feuille-fr.csv").read_bytes(), "utf-8", ",")[1][0] == "Participant12"
