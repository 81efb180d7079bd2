"""Reports written from grades: CSV exports, results.json files, feedback pages, class report.

Grades are built by hand here (no sandbox), with hostile text where a student controls it: the
messages quote the student's own exceptions, the ids come from folder names.
"""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from reports_support import write_all

from trous.core import Course
from trous.outputs import reports
from trous.inputs.intake import IntakeLimits
from trous.core.grades import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade, SubmissionGrade

VERSION = "ab" * 32
SCRIPT = "<script>alert('x')</script>"
ATTRIBUTE = '"><img src=x onerror="alert(1)">'
COURSE_YAML = """\
course:
  id: essai
  title: "Cours d'essai « accentué »"
assignments:
  - id: partie1
    title: "Partie 1, les bases"
    source: essai
    exercises:
      - id: 01_somme
        title: "La somme, « à la main »"
        file: exercises/01_somme.py
        source: essai
        blanks:
          - {id: total, points: 1, hint: "Additionne les valeurs : sum(e)."}
          - {id: moyenne, points: 2, hint: "Divise le total par len(e)."}
  - id: partie2
    title: "Partie 2"
    source: essai
    exercises:
      - id: 02_poids
        title: "Des poids"
        file: exercises/02_poids.py
        source: essai
        blanks:
          - {id: exp, points: 1, hint: "math.exp de chaque score."}
          - {id: norme, points: 1, hint: "Divise par la somme."}
          - {id: max, points: 0.5, hint: "Le plus grand poids."}
"""


@pytest.fixture
def course(tmp_path) -> Course:
    root = tmp_path / "cours"
    root.mkdir()
    (root / "course.yaml").write_text(COURSE_YAML, encoding="utf-8")
    return Course.load(root)


def exercise(course: Course, exercise_id: str, statuses: list[str], messages: dict[int, str] | None = None,
             mode: str = "blanks", message: str | None = None) -> ExerciseGrade:
    spec = course.exercise(exercise_id)
    blanks = []
    for i, (blank, status) in enumerate(zip(spec.blanks, statuses)):
        score = blank.points if status == PASSED else 0.0
        text = (messages or {}).get(i, "juste" if status == PASSED else "faux")
        blanks.append(BlankGrade(blank.id, i + 1, score, blank.points, status, text, 10 + i,
                                 "" if status == PASSED else blank.hints[0]))
    return ExerciseGrade(spec.id, spec.title, sum(b.score for b in blanks), spec.points, mode, blanks, message)


def submission(course: Course, student: str, first: list[str], second: list[str], **kw) -> SubmissionGrade:
    return SubmissionGrade(student, course.id, VERSION,
                           [exercise(course, "01_somme", first, kw.get("messages1")),
                            exercise(course, "02_poids", second, kw.get("messages2"), kw.get("mode2", "blanks"),
                                     kw.get("message2"))])


@pytest.fixture
def grades(course) -> list[SubmissionGrade]:
    # Blank success by construction: total 4/4, moyenne 1/4, exp 3/4, norme 2/4, max 0/4.
    return [
        submission(course, "alice", [PASSED, PASSED], [PASSED, PASSED, FAILED]),
        submission(course, "bob", [PASSED, FAILED], [PASSED, PASSED, FAILED],
                   messages1={1: f"moyenne : ZeroDivisionError: {SCRIPT}"}),
        submission(course, "../../etc/passwd", [PASSED, UNFILLED], [PASSED, FAILED, UNFILLED],
                   messages2={1: ATTRIBUTE}),
        submission(course, "zoé, \"la\" =1+1", [PASSED, ERROR], [MISSING, MISSING, MISSING],
                   mode2="missing", message2="fichier absent de la copie"),
    ]


class Named:
    def __init__(self, student, name, warnings=()):
        self.student, self.name, self.warnings = student, name, warnings


@pytest.fixture
def written(tmp_path, course, grades):
    subs = [Named("alice", "Alice Martin, dite « Al »"),
            Named("bob", "=HYPERLINK(\"http://x\")", (f"archive : {SCRIPT}",)),
            Named("../../etc/passwd", f"Mallory {SCRIPT}")]
    paths = write_all(tmp_path / "out", course, grades, submissions=subs)
    return paths


# -- CSV ----------------------------------------------------------------------------------------
def test_grades_csv_one_row_per_student_one_column_per_exercise(written, grades):
    text = written["grades_csv"].read_bytes().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["etudiant"] for r in rows] == sorted(g.student for g in grades)
    # Two assignments graded: one total per assignment, then one total on one scale for everyone.
    assert list(rows[0]) == ["etudiant", "nom", "01_somme", "02_poids", "partie1", "partie1_max", "partie2",
                             "partie2_max", "total_sur_5.5", "devoirs_rendus_sur_2"]
    by_student = {r["etudiant"].lstrip("'"): r for r in rows}
    for grade in grades:
        row = by_student[grade.student]
        assert float(row["01_somme"]) + float(row["02_poids"]) == pytest.approx(float(row["total_sur_5.5"]))
        assert float(row["partie1"]) == float(row["01_somme"]) and float(row["partie2"]) == float(row["02_poids"])
        assert (float(row["partie1_max"]), float(row["partie2_max"])) == (3, 2.5)
        assert float(row["total_sur_5.5"]) == pytest.approx(sum(b.score for e in grade.exercises for b in e.blanks))
        assert row["devoirs_rendus_sur_2"] == "2"
    assert by_student["alice"]["nom"] == "Alice Martin, dite « Al »"  # comma and accents survive quoting
    assert by_student["alice"]["total_sur_5.5"] == "5"
    # A cell a spreadsheet would run as a formula is defused; the id with quotes and comma survives.
    assert by_student["bob"]["nom"] == "'=HYPERLINK(\"http://x\")"
    assert "zoé, \"la\" =1+1" in by_student


def accounts(tmp_path, students, field="username"):
    from trous.outputs.moodle import Participants

    return Participants(tmp_path / "classe.csv", field, {s: f"compte-{i}" for i, s in enumerate(students)})


def test_moodle_csv_needs_the_students_accounts(written, grades, tmp_path, course):
    # Without accounts no gradebook import: its rows could not be mapped to anyone.
    assert "moodle_csv" not in written and not (written["grades_csv"].parent / "moodle.csv").exists()
    out = tmp_path / "avec-comptes"
    paths = write_all(out, course, grades, participants=accounts(tmp_path, [g.student for g in grades[:3]]))
    raw = paths["moodle_csv"].read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert rows[0] == ["Nom d'utilisateur", "Nom complet", "Partie 1, les bases", "Partie 1, les bases — commentaire",
                       "Partie 2", "Partie 2 — commentaire"]
    body = {r[0]: r for r in rows[1:]}
    assert set(body) == {"compte-0", "compte-1", "compte-2"}  # the fourth copy has no account: left out
    for i, grade in enumerate(grades[:3]):
        row = body[f"compte-{i}"]
        first, second = float(row[2]), float(row[4])  # a dot as decimal separator, no unit
        assert first == pytest.approx(grade.exercise("01_somme").score)
        assert second == pytest.approx(grade.exercise("02_poids").score)
        # The feedback Moodle shows holds only what trous writes: no student-controlled message.
        for comment in (row[3], row[5]):
            assert SCRIPT not in comment and "onerror" not in comment and "ZeroDivision" not in comment
    assert "moyenne" in body["compte-1"][3] and "02_poids" not in body["compte-1"][3]  # each assignment its own
    help_text = paths["moodle_help"].read_text(encoding="utf-8")
    assert "« Nom d'utilisateur »" in help_text and "username" in help_text
    assert "note maximale : 3 points" in help_text and "note maximale : 2.5 points" in help_text
    assert "1 copie sans compte Moodle" in help_text and grades[3].student.split(",")[0] in help_text
    # A later run without accounts removes the import file it can no longer vouch for.
    write_all(out, course, grades)
    assert not (out / "moodle.csv").exists() and not (out / "moodle-import.txt").exists()


# -- results.json -------------------------------------------------------------------------------
def test_every_results_file_validates_and_round_trips(written, grades):
    schema = json.loads(written["schema"].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    files = sorted(written["results"].glob("*.json"))
    assert len(files) == len(grades)
    by_student = {}
    for path in files:
        assert path.parent == written["results"]
        data = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validate(data, schema)
        by_student[data["student"]] = data
    for grade in grades:
        assert by_student[grade.student] == grade.to_json()
        assert SubmissionGrade.from_json(by_student[grade.student]) == grade
        assert by_student[grade.student]["version"] == 2


def test_schema_rejects_what_the_format_forbids(written, grades):
    schema = json.loads(written["schema"].read_text(encoding="utf-8"))
    good = grades[0].to_json()
    bad_status = json.loads(json.dumps(good))
    bad_status["exercises"][0]["blanks"][0]["status"] = "ok"
    extra = {**good, "secret": "x"}
    for data in (bad_status, extra):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, schema)


def test_hostile_ids_get_safe_distinct_file_names(tmp_path, course):
    ids = ["../../etc/passwd", "a/b", "a_b", "con", ".", "..", "é", "e", "x" * 300, "/abs"]
    grades = [submission(course, s, [PASSED, PASSED], [PASSED, PASSED, PASSED]) for s in ids]
    out = tmp_path / "out"
    paths = write_all(out, course, grades)
    names = {p.name for p in paths["results"].iterdir()}
    assert len(names) == len(ids)
    for path in out.rglob("*"):
        assert out in path.resolve().parents
    assert "a_b.json" in names and "e.json" in names  # plain ids keep their name
    assert all(len(n) < 120 for n in names)
    assert {json.loads(p.read_text())["student"] for p in paths["results"].iterdir()} == set(ids)


def test_same_student_twice_is_refused(tmp_path, course):
    g = submission(course, "alice", [PASSED, PASSED], [PASSED, PASSED, PASSED])
    with pytest.raises(ValueError, match="alice"):
        write_all(tmp_path / "out", course, [g, g])


def test_rewriting_is_deterministic_and_drops_students_no_longer_graded(tmp_path, course, grades):
    out = tmp_path / "out"
    write_all(out, course, grades)
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    write_all(out, course, grades)
    second = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert first == second
    paths = write_all(out, course, grades[:2])
    assert sorted(p.stem for p in paths["results"].glob("*.json")) == ["alice", "bob"]
    assert sorted(p.stem for p in paths["feedback"].glob("*.html")) == ["alice", "bob"]
    assert not list(out.rglob(".*tmp*"))


def test_the_class_files_are_written_from_summaries_and_stems_alone(tmp_path, course, grades):
    """The class's files need each student's grade summary and file stem, no per-student sink: the
    class report links each page by the stem it is given, and results/ is left to ResultFiles."""
    stems = {g.student: f"page-{i}" for i, g in enumerate(grades)}
    shared: dict = {}
    paths = reports.write_class(tmp_path, course, [reports.summary(g, shared) for g in grades], stems)
    report = paths["class_report"].read_text(encoding="utf-8")
    assert [f'href="retours/page-{i}.html"' in report for i in range(4)] == [True] * 4
    assert not (tmp_path / "results").exists() and "results" not in paths


def test_files_written_early_are_the_files_a_full_write_gives(tmp_path, course, grades):
    """`trous grade` writes each student's JSON and page while the last copies are graded; a student
    whose grade changed afterwards (recorded again, nbgrader's gradebook) is written again."""
    subs = [Named("alice", "Alice Martin"), Named("bob", "Bob", ("archive : note",))]
    full = tmp_path / "full"
    write_all(full, course, grades, submissions=subs)
    expected = {p.relative_to(full): p.read_bytes() for p in full.rglob("*") if p.is_file()}

    out = tmp_path / "out"
    early = reports.ResultFiles(out, course, subs)
    changed = submission(course, "alice", [FAILED, FAILED], [FAILED, FAILED, FAILED])
    for grade in [changed, *grades[1:3]]:  # alice's grade is not her final one; zoé is not written early
        early.consume(grade)
    stale = (out / "retours" / "alice.html").read_bytes()
    writes = []
    real_write = reports._write
    reports._write = lambda path, data: writes.append(path.relative_to(out)) or real_write(path, data)
    try:
        write_all(out, course, grades, submissions=subs, early=early)
    finally:
        reports._write = real_write
    got = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert got == expected
    assert got[Path("retours/alice.html")] != stale
    per_student = sorted(str(p) for p in writes if p.parts[0] in ("results", "retours"))
    zoe = reports.file_stem(grades[3].student)
    assert per_student == sorted(["results/alice.json", "retours/alice.html",
                                  f"results/{zoe}.json", f"retours/{zoe}.html"])


# -- HTML ---------------------------------------------------------------------------------------
class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    @property
    def content(self) -> str:
        return "".join(self.text)


def assert_inert(page: Page) -> None:
    assert not [t for t, _ in page.tags if t in ("script", "img", "iframe", "object", "embed")]
    assert not [a for _, attrs in page.tags for a in attrs if a.startswith("on")]


def test_feedback_page_shows_each_blank_escaped(written, grades):
    pages = {p.stem: p.read_text(encoding="utf-8") for p in written["feedback"].glob("*.html")}
    bob = Page(pages["bob"])
    assert_inert(bob)
    text = bob.content
    assert SCRIPT in text  # shown as text, never run
    assert f"archive : {SCRIPT}" in text  # intake warnings too
    assert "Note : 3 / 5,5 points" in text
    # A blank's status says « juste » as pytest exercises/ and the grade cell do.
    for status, said in (("passed", "juste"), ("failed", "faux")):
        assert f'<td class="status {status}">{said}</td>' in pages["bob"]
    assert "Divise le total par len(e)." in text  # the hint of the failed blank
    assert "Additionne les valeurs" not in text  # no hint where the blank passed
    mallory = Page(pages[reports.file_stem("../../etc/passwd")])
    assert_inert(mallory)
    assert ATTRIBUTE in mallory.content and "pas rempli" in mallory.content
    zoe = Page(pages[reports.file_stem("zoé, \"la\" =1+1")])
    assert "absent" in zoe.content and "fichier absent de la copie" in zoe.content
    assert "zoé" in zoe.content
    csp = [a for t, a in bob.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]


def test_class_report_sorts_blanks_by_share_and_counts_every_student(written, grades):
    page = Page(written["class_report"].read_text(encoding="utf-8"))
    assert_inert(page)
    rows = [(a["data-blank"], float(a["data-share"])) for t, a in page.tags if "data-blank" in a]
    assert rows == [("02_poids/max", 0.0), ("01_somme/moyenne", 0.25), ("02_poids/norme", 0.5),
                    ("02_poids/exp", 0.75), ("01_somme/total", 1.0)]
    # Two assignments: one histogram each. Partie 1 totals 3, 1, 1, 1 on 3 (whole points: one bar per
    # point); Partie 2 totals 2, 2, 1, 0 on 2.5 (not whole: ten bins of 0.25).
    bars: dict[str, list[int]] = {}
    for t, a in page.tags:
        if t == "rect" and "data-count" in a:
            bars.setdefault(a["data-chart"], []).append(int(a["data-count"]))
    assert bars == {"partie1": [0, 3, 0, 1], "partie2": [1, 0, 0, 0, 1, 0, 0, 0, 2, 0]}
    text = page.content
    assert f"Mallory {SCRIPT}" in text  # a hostile display name is text
    assert "moyenne 1,5 sur 3 points" in " ".join(text.split())  # (3 + 1 + 1 + 1) / 4
    assert "moyenne 1,25 sur 2,5 points" in " ".join(text.split())  # (2 + 2 + 1 + 0) / 4
    links = [a["href"] for t, a in page.tags if t == "a" and not a["href"].startswith("#")]
    assert sorted(links) == sorted(f"retours/{reports.file_stem(g.student)}.html" for g in grades)
    for link in links:
        assert (written["class_report"].parent / link).is_file()


def test_histogram_uses_one_bar_per_point_on_small_whole_scales():
    from trous.outputs.reports import histogram

    chart = histogram([0, 3, 3, 1, 3], 3)
    assert [b.count for b in chart.bars] == [1, 1, 0, 3]
    assert [b.label for b in chart.bars] == ["0", "1", "2", "3"]
    tallest = max(chart.bars, key=lambda b: b.count)
    assert tallest.y == chart.top and all(b.y + b.height == pytest.approx(chart.base) for b in chart.bars)


def test_empty_class_still_writes_reports(tmp_path, course):
    paths = write_all(tmp_path / "out", course, [])
    text = paths["class_report"].read_text(encoding="utf-8")
    assert text.count("0 copie corrigée") == 1 and "0 copies" not in text  # French: 0 takes the singular
    assert list(csv.reader(io.StringIO(paths["grades_csv"].read_text(encoding="utf-8-sig")))) == [
        ["etudiant", "nom", "total", "total_max"]]


def test_results_json_has_every_field_of_the_model():
    """to_json is written out by hand for speed: it must still carry every dataclass field."""
    from dataclasses import asdict

    from trous.core.grades import BlankGrade, ExerciseGrade, SubmissionGrade

    grade = SubmissionGrade("a", "c", "v", [ExerciseGrade("01_x", "t", 1.0, 2.0, "blanks",
                                                          [BlankGrade("b", 1, 1.0, 1.0, "passed", "m", 3, "h")],
                                                          None, ["n"])])
    assert grade.to_json()["exercises"] == [asdict(e) for e in grade.exercises]
    assert SubmissionGrade.from_json(grade.to_json()) == grade


# -- CSV and terminal safety ---------------------------------------------------------------------
HOSTILE_IDS = ["=cmd|' -C calc'!A0", "+1+1", "-2+3", "@SUM(1)", "\t=1", "\r=1", " =1+1", "＝1+1",
               "alice;=HYPERLINK(\"http://x\")", "ligne\nsuivante", "\x1b[31mrouge\x1b[0m", "-3", "2.5"]


def all_cells(raw: str, delimiter: str = ",") -> list[str]:
    return [c for row in csv.reader(io.StringIO(raw, newline=""), delimiter=delimiter) for c in row]


def test_no_cell_of_any_csv_is_a_formula_or_a_control(tmp_path, course):
    from trous.core.safetext import is_formula

    grades = [submission(course, s, [PASSED, PASSED], [PASSED, FAILED, PASSED]) for s in HOSTILE_IDS]
    names = [Named(s, f"Nom {s}") for s in HOSTILE_IDS]
    from trous.outputs.moodle import Participants

    # The accounts file could hold hostile text too: each copy's account is its hostile id.
    own = Participants(tmp_path / "classe.csv", "username", {s: s for s in HOSTILE_IDS})
    paths = write_all(tmp_path / "out", course, grades, submissions=names, participants=own)
    for key in ("grades_csv", "moodle_csv"):
        raw = paths[key].read_bytes().decode("utf-8-sig")
        assert "\x1b" not in raw and "\x9b" not in raw, key
        for value in all_cells(raw):
            assert not is_formula(value), (key, value)
            assert value.isprintable() or value == "", (key, value)
        # French Excel opening the .csv by double-click splits on « ; »: quoting keeps every « ; » of a
        # name inside its cell, so no cell can start with the attacker's text. (A row whose first cell
        # is a plain number stays one cell starting with that number: no formula can follow it there.)
        for value in all_cells(raw, ";"):
            assert not is_formula(value) or re.match(r"[+-]?\d+(\.\d+)?,", value), (key, value)
        rows = list(csv.reader(io.StringIO(raw, newline="")))
        assert len(rows) == 1 + len(HOSTILE_IDS)  # a line break in a name does not make a row
        first = [r[0] for r in rows[1:]]
        assert "-3" in first and "2.5" in first  # real numbers are not damaged
        assert "'=cmd|' -C calc'!A0" in first and "ligne suivante" in first and "rouge" in first
    help_text = paths["moodle_help"].read_text(encoding="utf-8")
    assert "identifiants ont été protégés" in help_text and "'=cmd|' -C calc'!A0" in help_text
    assert "  -3\n" not in help_text  # a number is not a protected identifier


@pytest.mark.parametrize("text, shown", [
    ("\x1b[2J\x1b[Hnom", "nom"),  # clear screen, cursor home
    ("\x1b]8;;http://evil\x07lien\x1b]8;;\x07", "lien"),  # OSC 8 hyperlink
    ("\x1b]0;titre\x1b\\x", "x"),  # window title, ended by ST
    ("a\x9b31mb", "ab"),  # 8-bit CSI
    ("ligne\nsuivante\r\n", "ligne suivante "),
    ("\u202egnp.py", "gnp.py"),  # right-to-left override (« Trojan Source »)
    ("cloche\x07\x00\x7f", "cloche"),
    ("tab\tulation", "tab ulation"),
    ("\udcff", "\ufffd"),  # an undecodable byte of a file name
    ("Élodie Dupont-Lefèvre", "Élodie Dupont-Lefèvre"),
])
def test_printable(text, shown):
    from trous.core.safetext import printable

    assert printable(text) == shown
    shown.encode("utf-8")  # always writable


def test_formula_rule():
    from trous.core.safetext import csv_cell

    for formula in ["=1+1", "-1+1", "@A1", "\t=1", " =1", "＝1", "＋1", "-", "=", "+33 6 12 34 56 78"]:
        assert csv_cell(formula).startswith("'"), formula
    for plain in ["-3", "+3", "2.5", "-0,5", "1e-3", "alice", "", "zoé =1", "3-2", "Martin, Jean", "a;-3"]:
        assert csv_cell(plain) == plain, plain
    # What a spreadsheet splitting on « ; » or « , » would make a cell of is guarded too.
    assert csv_cell("alice;=HYPERLINK(1)") == "alice;'=HYPERLINK(1)"
    assert csv_cell("=a, @b;+c") == "'=a,' @b;'+c"


# -- what a copy held besides its graded files ----------------------------------------------------
def real_submission(student: str, name: str = ""):
    from trous.core.submission import IgnoredFile, Submission

    return Submission(student, {"01_somme": b"", "02_poids": None}, name=name,
                      warnings=("exercises/01_Somme.py corrigé comme 01_somme.py (majuscules différentes)",),
                      ignored=(IgnoredFile("exercises/01_somme.py", "version plus ancienne : …", "01_somme"),
                               IgnoredFile(f"exercises/{SCRIPT}.py", "fichier Python qui n'est pas un exercice du cours"),
                               IgnoredFile("README.md", "pas un exercice du cours", notable=False)),
                      unlisted=(("pas un exercice du cours", 240),),
                      origins={"01_somme": "exercises/01_Somme.py"})


def test_files_not_graded_reach_the_page_the_results_and_the_class_report(tmp_path, course, grades):
    from trous.core.submission import IgnoredFile

    copies = [real_submission(g.student) for g in grades]
    entries = [IgnoredFile("resultats/", "dossier de résultats de trous : pas une copie"),
               IgnoredFile(".DS_Store", "ni un dossier ni un .zip : pas une copie")]
    paths = write_all(tmp_path / "out", course, grades, submissions=copies, ignored=entries,
                              notes=["1 carnet Jupyter (.ipynb) non corrigé : jupytext n'est pas installé"])
    schema = json.loads(paths["schema"].read_text(encoding="utf-8"))
    for grade in grades:
        data = json.loads((paths["results"] / f"{reports.file_stem(grade.student)}.json").read_text(encoding="utf-8"))
        jsonschema.validate(data, schema)
        assert data["intake"]["files"] == {"01_somme": "exercises/01_Somme.py"}
        assert {"path": "exercises/01_somme.py", "reason": "version plus ancienne : …",
                "exercise": "01_somme"} in data["intake"]["ignored"]
        assert data["intake"]["unlisted"] == [{"reason": "pas un exercice du cours", "count": 240}]
        assert SubmissionGrade.from_json(data) == grade  # the grade is unchanged by what the copy held
        page = Page((paths["feedback"] / f"{reports.file_stem(grade.student)}.html").read_text(encoding="utf-8"))
        assert_inert(page)
        text = page.content
        assert "Fichiers de ta copie qui ne sont pas corrigés" in text
        assert "exercises/01_somme.py" in text and "version plus ancienne" in text
        assert f"exercises/{SCRIPT}.py" in text  # a hostile file name is text
        assert "README.md" in text and "… et 240 autres" in text
        assert "Fichier corrigé : exercises/01_Somme.py" in text
        assert "Fichier attendu : exercises/02_poids.py" in text
    report = Page(paths["class_report"].read_text(encoding="utf-8"))
    assert_inert(report)
    text = report.content
    assert "2 entrées de l'envoi ne sont pas des copies" in text
    assert "resultats/" in text and ".DS_Store" in text and "jupytext n'est pas installé" in text
    assert text.count("exercises/01_somme.py") == len(grades)  # each copy's files, named
    counts = [int(a["data-ignored"]) for t, a in report.tags if "data-ignored" in a]
    assert counts == [243] * len(grades)


def test_results_schema_v2_rejects_a_malformed_intake(written, grades):
    schema = json.loads(written["schema"].read_text(encoding="utf-8"))
    good = grades[0].to_json(intake=real_submission(grades[0].student).report())
    jsonschema.validate(good, schema)
    for broken in ({"files": {}, "notes": [], "ignored": [{"path": "x"}], "unlisted": []},
                   {"files": {"pas-un-id": "x"}, "notes": [], "ignored": [], "unlisted": []},
                   {"files": {}, "notes": [], "ignored": [], "unlisted": [{"reason": "x", "count": 0}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "intake": broken}, schema)


# -- end to end: `trous grade` on files as students upload them -----------------------------------
def _materials(course_dir):
    from grading_support import make_classe

    from trous.core import Course

    [material] = make_classe().load_materials(Course.load(course_dir))
    return material


def _lab_notebook(course_dir, tmp_path, text: str) -> bytes:
    """The notebook `trous lab` writes for 01_toux, filled with `text`."""
    import shutil

    import nbformat

    from trous.core import Course
    from trous.publish.notebooks.build import exercise_notebook

    filled = tmp_path / "rempli"
    shutil.copytree(course_dir, filled)
    (filled / "exercises" / "01_toux.py").write_text(text, encoding="utf-8")
    return nbformat.writes(exercise_notebook(Course.load(filled).exercise("01_toux"))).encode("utf-8")


def _moodle_zip(files: dict[str, tuple[bytes, tuple]]) -> bytes:
    """A zip built the way Moodle's « Télécharger tous les travaux remis » builds it: one folder per
    participant « <Nom complet>_<id>_assignsubmission_<plugin>_ », each file with its own date."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (data, date) in files.items():
            info = zipfile.ZipInfo(name, date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def moodle_run(tmp_path_factory):
    pytest.importorskip("jupytext")
    from grading_support import mini_course, run_trous

    base = tmp_path_factory.mktemp("moodle")
    course_dir = mini_course(base / "cours", ("01_toux",))
    material = _materials(course_dir)
    perfect, empty = material.perfect().encode(), material.fill({}).encode()
    half = material.fill({0: material.answers[0]}).encode()
    early, late = (2026, 3, 1, 9, 0, 0), (2026, 3, 2, 18, 30, 0)
    files = {
        # JupyterLab user: only the notebook
        "Alice Martin_101_assignsubmission_file_/exercises/01_toux.ipynb":
            (_lab_notebook(course_dir, base, perfect.decode()), early),
        # uploaded twice: Moodle renamed the second one, which is the right one
        "Bob Durand_102_assignsubmission_file_/01_toux.py": (empty, early),
        "Bob Durand_102_assignsubmission_file_/01_toux (1).py": (perfect, late),
        # a hostile full name, and a case variant
        "=cmd|' -C calc'!A0 \x1b[31mX\x1b[0m_103_assignsubmission_file_/01_Toux.py": (half, early),
        # 21 000 stray files around the exercise
        "Dan Lenoir_104_assignsubmission_file_/tp/exercises/01_toux.py": (perfect, early),
        **{f"Dan Lenoir_104_assignsubmission_file_/tp/data/f{i:05d}.csv": (b"", early) for i in range(21_000)},
        # only stray files
        "Ève Roux_105_assignsubmission_file_/notes.py": (b"x = 1\n", early),
        "Ève Roux_105_assignsubmission_file_/rendu.tar.gz": (b"\x1f\x8b", early),
        # an online text, no file
        "Fred Petit_106_assignsubmission_onlinetext_/onlinetext.html": (b"<p>fini</p>", early),
        "__MACOSX/Bob Durand_102_assignsubmission_file_/._01_toux.py": (b"\x00", early),
    }
    archive = base / "depot" / "TP1.zip"
    archive.parent.mkdir()
    archive.write_bytes(_moodle_zip(files))
    results = base / "resultats"
    done = run_trous("-C", str(course_dir), "grade", str(archive), "--resultats", str(results), cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    return done, results, course_dir


def _results(results) -> dict[str, dict]:
    return {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (results / "results").glob("*.json"))}


def _page(results, student: str) -> str:
    return Page((results / "retours" / f"{reports.file_stem(student)}.html").read_text(encoding="utf-8")).content


def test_e2e_moodle_uploads_are_graded_as_students_sent_them(moodle_run):
    done, results, _ = moodle_run
    grades = _results(results)
    assert sorted(grades) == ["101", "102", "103", "104", "105", "106"]  # every participant, even without a file
    full = grades["101"]["max_score"]
    assert full > 0
    assert grades["101"]["score"] == full  # the notebook, graded through its .py
    assert grades["101"]["intake"]["files"] == {"01_toux": "exercises/01_toux.ipynb"}
    assert grades["102"]["score"] == full  # the newer « 01_toux (1).py »
    assert grades["102"]["intake"]["files"] == {"01_toux": "01_toux (1).py"}
    assert 0 < grades["103"]["score"] < full  # « 01_Toux.py »
    assert grades["104"]["score"] == full  # found among 21 000 files
    assert sum(u["count"] for u in grades["104"]["intake"]["unlisted"]) + len(grades["104"]["intake"]["ignored"]) == 21_000
    assert grades["105"]["score"] == grades["106"]["score"] == 0
    schema = json.loads((results / "results.schema.json").read_text(encoding="utf-8"))
    for data in grades.values():
        jsonschema.validate(data, schema)


def test_e2e_every_file_not_graded_is_named_in_page_json_report_and_terminal(moodle_run):
    done, results, _ = moodle_run
    grades = _results(results)
    older = [i for i in grades["102"]["intake"]["ignored"] if i["path"] == "01_toux.py"]
    assert older and older[0]["reason"].startswith("version plus ancienne : 01_toux (1).py (modifié le 02/03/2026 18:30)")
    reasons = {i["path"]: i["reason"] for i in grades["105"]["intake"]["ignored"]}
    assert "notes.py" in reasons and "format d'archive non pris en charge" in reasons["rendu.tar.gz"]
    assert "texte en ligne" in grades["106"]["intake"]["ignored"][0]["reason"]
    bob = _page(results, "102")
    assert "Fichier corrigé : 01_toux (1).py" in bob and "Non corrigé : 01_toux.py" in bob
    assert "rendu.tar.gz" in _page(results, "105") and "notes.py" in _page(results, "105")
    listed = IntakeLimits().listed
    assert f"… et {21_000 - listed} autres" in _page(results, "104")  # named up to the bound, then counted
    report = Page((results / "rapport.html").read_text(encoding="utf-8")).content
    assert "__MACOSX/" in report and "01_toux (1).py" in report and "rendu.tar.gz" in report
    out = done.stdout
    assert "__MACOSX/" in out  # the archive's entries that are no copy
    for named in ("01_toux.py", "notes.py", "rendu.tar.gz", "onlinetext.html"):
        assert named in out, named


def test_e2e_hostile_names_reach_no_terminal_or_csv_as_controls_or_formulas(moodle_run):
    from trous.core.safetext import is_formula

    done, results, _ = moodle_run
    assert "\x1b" not in done.stdout and "\x1b" not in done.stderr
    assert "=cmd|' -C calc'!A0 X" in done.stdout  # shown, cleaned
    assert not (results / "moodle.csv").exists()  # no account known: no gradebook import
    # The hostile full name reaches the spreadsheet and Moodle's worksheets only as guarded text.
    for name in ("grades.csv", "moodle-feuille-fr.csv", "moodle-feuille-en.csv"):
        raw = (results / name).read_text(encoding="utf-8-sig")
        assert "\x1b" not in raw
        cells = all_cells(raw)
        assert "'=cmd|' -C calc'!A0 X" in cells, name
        assert not [c for c in cells if is_formula(c)], name


def test_e2e_counts_agree_in_french(moodle_run, tmp_path):
    from grading_support import run_trous

    done, results, course_dir = moodle_run
    assert "6 copies" in done.stdout and "copie(s)" not in done.stdout
    material = _materials(course_dir)
    copies = tmp_path / "copies"
    (copies / "seule").mkdir(parents=True)
    (copies / "seule" / "01_toux.py").write_text(material.perfect(), encoding="utf-8")
    one = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(tmp_path / "res"), cwd=course_dir)
    assert one.returncode == 0, one.stdout + one.stderr
    flat = " ".join(one.stdout.split())  # the table's title wraps on a narrow table
    assert "1 copie : 1 à corriger" in flat and "Transformers — 1 copie " in flat
    assert not re.search(r"\b1 copies\b|\(s\)", one.stdout), one.stdout
    assert "1 copie corrigée" in (tmp_path / "res" / "rapport.html").read_text(encoding="utf-8")
    again = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(tmp_path / "res"), cwd=course_dir)
    assert "1 inchangée depuis la dernière correction (déjà notée)" in again.stdout, again.stdout


def test_e2e_results_kept_among_the_copies_are_never_a_student(tmp_path):
    from grading_support import mini_course, run_trous

    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    material = _materials(course_dir)
    copies = tmp_path / "copies"
    for student in ("alice", ".bob"):
        (copies / student).mkdir(parents=True)
        (copies / student / "01_toux.py").write_text(material.perfect(), encoding="utf-8")
    (copies / "alice" / "grades.csv").write_text("etudiant,total\nalice,0\n", encoding="utf-8")  # her own file
    results = copies / "resultats"
    for run in range(2):  # the second run finds the first one's results among the copies
        done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(results), cwd=course_dir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 copies" in done.stdout, (run, done.stdout)
        assert sorted(_results(results)) == [".bob", "alice"]
    assert "resultats/ : dossier des résultats de cette correction" in done.stdout
    # Another results folder of trous, moved aside: known by its mark, listed, not graded.
    results.rename(copies / "anciens")
    done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(tmp_path / "neufs"), cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "anciens/ : dossier de résultats de trous" in done.stdout
    assert sorted(_results(tmp_path / "neufs")) == [".bob", "alice"]
    report = Page((tmp_path / "neufs" / "rapport.html").read_text(encoding="utf-8")).content
    assert "anciens/" in report


@pytest.mark.parametrize("where", ["copies", "copies/alice/res"])
def test_e2e_results_inside_a_copy_are_refused_before_anything_is_read(tmp_path, where):
    from grading_support import mini_course, run_trous, snapshot

    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    (tmp_path / "copies" / "alice").mkdir(parents=True)
    (tmp_path / "copies" / "alice" / "01_toux.py").write_text("x = 1\n", encoding="utf-8")
    before = snapshot(tmp_path / "copies")
    done = run_trous("-C", str(course_dir), "grade", str(tmp_path / "copies"), "--resultats", str(tmp_path / where),
                     cwd=course_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--resultats" in done.stdout and ("dossier des copies" in done.stdout or "copie « alice »" in done.stdout)
    assert snapshot(tmp_path / "copies") == before  # nothing written into the copies


def test_terminal_summary_names_what_matters_and_counts_the_rest(tmp_path):
    from pathlib import Path

    from rich.console import Console

    from trous.outputs import run as cli
    from trous.inputs import intake
    from trous.core.submission import IgnoredFile, Submission

    stray = tuple(IgnoredFile(f"brouillon{i}.py", intake.PYTHON_EXTRA) for i in range(12))
    routine = tuple(IgnoredFile(f"exercises/test_{i}.py", intake.PUBLIC_CHECK, notable=False) for i in range(3))
    copy = Submission("\x1b[2Jalice", {}, name="Alice\nMartin", ignored=stray + routine,
                      unlisted=((intake.PYTHON_EXTRA, 8), (intake.PUBLIC_CHECK, 10)))
    quiet = Submission("bob", {}, ignored=routine)
    few = Submission("chloe", {}, ignored=stray[:2], unlisted=((intake.PYTHON_EXTRA, 5),))  # named with listed=2
    result = intake.Intake("dossier", Path("copies"), [copy, quiet, few],
                           ignored=[IgnoredFile(".DS_Store", intake.NOT_A_COPY)])
    outcome = cli.Outcome(result, [], [], [], {}, "")
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)
    cli._print_intake(console, outcome)
    cli._print_copies(console, outcome)
    text = out.getvalue()
    assert "1 entrée de copies n'est pas une copie" in text and ".DS_Store : ni un dossier" in text
    assert "2 copies avec des remarques ou des fichiers non corrigés" in text  # bob only has routine files
    assert "alice (Alice Martin) :" in text and "\x1b" not in text
    # 20 stray .py files: 4 named, the 16 others counted; 3 + 10 + 3 public checks counted at the end.
    assert "non corrigé : brouillon0.py, brouillon1.py, brouillon2.py, brouillon3.py … (+16) — " in text
    assert "non corrigé : brouillon0.py, brouillon1.py … (+5) — " in text
    assert "16 autres fichiers non corrigés dans 2 copies" in text
