"""Reports written from grades: CSV exports, results.json files, feedback pages, class report.

Grades are built by hand here (no sandbox), with hostile text where a student controls it: the
messages quote the student's own exceptions, the ids come from folder names.
"""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser

import jsonschema
import pytest

from trous.course import Course
from trous.grading import reports
from trous.grading.model import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade, SubmissionGrade

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
    paths = reports.write_all(tmp_path / "out", course, grades, submissions=subs)
    return paths


# -- CSV ----------------------------------------------------------------------------------------
def test_grades_csv_one_row_per_student_one_column_per_exercise(written, grades):
    text = written["grades_csv"].read_bytes().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["etudiant"] for r in rows] == sorted(g.student for g in grades)
    assert list(rows[0]) == ["etudiant", "nom", "01_somme", "02_poids", "total", "total_max"]
    by_student = {r["etudiant"].lstrip("'"): r for r in rows}
    for grade in grades:
        row = by_student[grade.student]
        assert float(row["01_somme"]) + float(row["02_poids"]) == pytest.approx(float(row["total"]))
        assert float(row["total"]) == pytest.approx(sum(b.score for e in grade.exercises for b in e.blanks))
        assert float(row["total_max"]) == 5.5
    assert by_student["alice"]["nom"] == "Alice Martin, dite « Al »"  # comma and accents survive quoting
    assert by_student["alice"]["total"] == "5"
    # A cell a spreadsheet would run as a formula is defused; the id with quotes and comma survives.
    assert by_student["bob"]["nom"] == "'=HYPERLINK(\"http://x\")"
    assert "zoé, \"la\" =1+1" in by_student


def test_moodle_csv_follows_the_grade_import_conventions(written, grades):
    raw = written["moodle_csv"].read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    assert rows[0] == ["Identifiant", "Nom complet", "Partie 1, les bases", "Partie 2", "Total", "Commentaires"]
    body = {r[0]: r for r in rows[1:]}
    assert set(body) == {g.student for g in grades}  # identifiers untouched, even odd ones
    for grade in grades:
        row = body[grade.student]
        first, second = (float(v) for v in row[2:4])  # a dot as decimal separator, no unit
        assert first == pytest.approx(grade.exercise("01_somme").score)
        assert second == pytest.approx(grade.exercise("02_poids").score)
        assert float(row[4]) == pytest.approx(grade.score)
    # The feedback Moodle shows holds only what trous writes: no student-controlled message.
    assert all(SCRIPT not in r[5] and "onerror" not in r[5] and "ZeroDivision" not in r[5] for r in rows[1:])
    assert "moyenne" in body["bob"][5]  # the blank to work on is named
    help_text = written["moodle_help"].read_text(encoding="utf-8")
    assert "« Identifiant »" in help_text and "useridnumber" in help_text
    assert "note maximale : 3 points" in help_text and "note maximale : 2.5 points" in help_text


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
    paths = reports.write_all(out, course, grades)
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
        reports.write_all(tmp_path / "out", course, [g, g])


def test_rewriting_is_deterministic_and_drops_students_no_longer_graded(tmp_path, course, grades):
    out = tmp_path / "out"
    reports.write_all(out, course, grades)
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    reports.write_all(out, course, grades)
    second = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert first == second
    paths = reports.write_all(out, course, grades[:2])
    assert sorted(p.stem for p in paths["results"].glob("*.json")) == ["alice", "bob"]
    assert sorted(p.stem for p in paths["feedback"].glob("*.html")) == ["alice", "bob"]
    assert not list(out.rglob(".*tmp*"))


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
    for status in ("réussi", "faux"):
        assert status in text
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
    bars = [int(a["data-count"]) for t, a in page.tags if t == "rect" and "data-count" in a]
    assert sum(bars) == len(grades)
    # Totals 5, 3, 2 and 1 on a 5.5 scale (not whole): ten bins of 0.55.
    assert bars == [0, 1, 0, 1, 0, 1, 0, 0, 0, 1]
    text = page.content
    assert f"Mallory {SCRIPT}" in text  # a hostile display name is text
    assert "Moyenne 2,75" in text  # (5 + 3 + 2 + 1) / 4
    links = [a["href"] for t, a in page.tags if t == "a"]
    assert sorted(links) == sorted(f"retours/{reports.file_stem(g.student)}.html" for g in grades)
    for link in links:
        assert (written["class_report"].parent / link).is_file()


def test_histogram_uses_one_bar_per_point_on_small_whole_scales():
    from trous.grading.pages import histogram

    chart = histogram([0, 3, 3, 1, 3], 3)
    assert [b.count for b in chart.bars] == [1, 1, 0, 3]
    assert [b.label for b in chart.bars] == ["0", "1", "2", "3"]
    tallest = max(chart.bars, key=lambda b: b.count)
    assert tallest.y == chart.top and all(b.y + b.height == pytest.approx(chart.base) for b in chart.bars)


def test_empty_class_still_writes_reports(tmp_path, course):
    paths = reports.write_all(tmp_path / "out", course, [])
    assert paths["class_report"].read_text(encoding="utf-8").count("0 copie") == 1
    assert list(csv.reader(io.StringIO(paths["grades_csv"].read_text(encoding="utf-8-sig")))) == [
        ["etudiant", "nom", "total", "total_max"]]


def test_results_json_has_every_field_of_the_model():
    """to_json is written out by hand for speed: it must still carry every dataclass field."""
    from dataclasses import asdict

    from trous.grading.model import BlankGrade, ExerciseGrade, SubmissionGrade

    grade = SubmissionGrade("a", "c", "v", [ExerciseGrade("01_x", "t", 1.0, 2.0, "blanks",
                                                          [BlankGrade("b", 1, 1.0, 1.0, "passed", "m", 3, "h")],
                                                          None, ["n"])])
    assert grade.to_json()["exercises"] == [asdict(e) for e in grade.exercises]
    assert SubmissionGrade.from_json(grade.to_json()) == grade
