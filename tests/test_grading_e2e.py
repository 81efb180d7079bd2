"""`trous grade examples/classe`, as the README runs it: a real subprocess, the real sandbox, the bundled
class from the perfect student to the hostile ones."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import zipfile
from pathlib import Path

import pytest

from trous.core import Course
from trous.sandbox.backend import bwrap_available

from grading_support import ROOT, make_classe, run_trous, snapshot

CLASSE = ROOT / "examples" / "classe"
PERFECT = ("alice_parfaite", "rose")
ZERO = ("lea_vide", "nina_faux_pytest", "oscar_menteur")


def results_of(results: Path) -> dict[str, dict]:
    return {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (results / "results").glob("*.json"))}


def test_sample_class_is_up_to_date(tmp_path):
    # The committed class is what the generator writes from the current course: after a course change,
    # run `python examples/make_classe.py` and commit examples/classe.
    # Hard-coded copies hold values the generator computed on this machine: their last digit follows the
    # machine's BLAS, so numbers are compared to a relative 1e-9, everything else byte for byte.
    generated = tmp_path / "classe"
    make_classe().write_class(Course.load(ROOT), generated)
    mine, committed = snapshot_content(generated), snapshot_content(CLASSE)
    assert sorted(mine) == sorted(committed), "examples/classe n'est plus à jour : lance « .venv/bin/python examples/make_classe.py »"
    stale = [path for path in mine if not same_content(mine[path], committed[path])]
    assert not stale, f"examples/classe n'est plus à jour ({', '.join(stale)}) : lance « .venv/bin/python examples/make_classe.py »"


def snapshot_content(folder: Path) -> dict:
    return {path: (kind, content) for path, (kind, content, _, _) in snapshot(folder).items()}


NUMBER = re.compile(rb"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])")


def same_content(a: tuple, b: tuple) -> bool:
    """Same kind, and same bytes except that decimal numbers may differ in their last digits."""
    (kind_a, a), (kind_b, b) = a, b
    if kind_a != kind_b or type(a) is not type(b):
        return False
    if a == b or not isinstance(a, bytes):
        return a == b
    parts_a, parts_b = NUMBER.split(a), NUMBER.split(b)
    return len(parts_a) == len(parts_b) and all(
        x == y if k % 2 == 0 else math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-300)
        for k, (x, y) in enumerate(zip(parts_a, parts_b)))


def test_same_content_tolerates_only_last_digits():
    text = b"x = [0.17081325227763328, 1e-05]\n"
    assert same_content((1, text), (1, text.replace(b"328", b"336")))
    assert not same_content((1, text), (1, text.replace(b"0.170", b"0.171")))
    assert not same_content((1, text), (1, text.replace(b"x =", b"y =")))
    assert not same_content((1, text), (1, text + b"#"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    before = snapshot(CLASSE)
    results = tmp_path_factory.mktemp("e2e") / "resultats"
    done = run_trous("grade", str(CLASSE.relative_to(ROOT)), "--resultats", str(results))
    return done, results, before


def test_grades_the_sample_class(graded):
    done, results, before = graded
    assert done.returncode == 0, done.stdout + done.stderr
    course = Course.load(ROOT)
    students = sorted(p.name.removesuffix(".zip") for p in CLASSE.iterdir() if not p.name.startswith("."))
    assert len(students) >= 12
    grades = results_of(results)
    assert sorted(grades) == students
    total = sum(e.points for e in course.exercises)
    for student in PERFECT:
        assert grades[student]["score"] == grades[student]["max_score"] == total, student
    for student in set(students) - set(PERFECT):
        assert grades[student]["score"] < total, student  # nobody gets credit for what they faked
    for student in ZERO:
        assert grades[student]["score"] == 0, student
    # The hostile ones hurt only themselves: what they did right elsewhere still counts.
    for student in ("fabien_boucle", "gaelle_memoire", "hugo_fourche", "jules_espion", "karim_bavard"):
        assert 0 < grades[student]["score"] < total, student
        first = grades[student]["exercises"][0]
        assert first["score"] < first["max_score"], student
    assert grades["david_faux"]["score"] < total / 4  # a wrong fill can equal the right one (−∞ × 2)
    hard_coded = grades["chloe_en_dur"]["exercises"][0]
    assert hard_coded["score"] == 0 and any("en dur" in b["message"] for b in hard_coded["blanks"])
    boucle = grades["fabien_boucle"]["exercises"][0]["blanks"]
    assert any("temps dépassé" in b["message"] for b in boucle)
    ines = grades["ines_sortie"]["exercises"]
    assert ines[0]["score"] == 0 and any("os._exit" in b["message"] for b in ines[0]["blanks"])
    # The link to /etc/passwd is reported, never read.
    paul = (results / "retours" / "paul_depot.html").read_text(encoding="utf-8")
    assert "/etc/passwd" in paul and "root:x:0:0" not in paul
    assert grades["paul_depot"]["exercises"][1]["mode"] == "missing"


GOLDEN = ROOT / "tests" / "golden" / "classe"
PERSONAS = sorted({p.name.removesuffix(".zip") for p in CLASSE.iterdir() if not p.name.startswith(".")}
                  | {p.stem for p in GOLDEN.glob("*.json")})


@pytest.mark.parametrize("persona", PERSONAS)
def test_each_persona_gets_its_expected_results(graded, persona):
    # As exercism's test runner: one expected file per copy of examples/classe (tests/golden/classe/),
    # written from what the persona does (make_classe.py), not from a run. Points compared with a
    # tolerance, the verdict of each blank exactly; an assignment not handed in has no exercise at all.
    _, results, _ = graded
    expected_file = GOLDEN / f"{persona}.json"
    assert expected_file.is_file(), f"{persona} : pas de résultat attendu dans {expected_file.relative_to(ROOT)}"
    assert (CLASSE / persona).exists() or (CLASSE / f"{persona}.zip").exists(), f"{persona} n'est plus dans la classe"
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    got = results_of(results)[persona]
    assert got["score"] == pytest.approx(expected["score"]) and got["max_score"] == pytest.approx(expected["max_score"])
    exercises = {e["id"]: e for e in got["exercises"]}
    assert sorted(exercises) == sorted(expected["exercices"])
    for exercise_id, want in expected["exercices"].items():
        mine = exercises[exercise_id]
        assert mine["mode"] == want["mode"], exercise_id
        blanks = {b["id"]: (b["score"], b["status"]) for b in mine["blanks"]}
        assert list(blanks) == list(want["trous"]), exercise_id
        for blank_id, (points, status) in want["trous"].items():
            assert blanks[blank_id][1] == status, f"{exercise_id}/{blank_id}"
            assert blanks[blank_id][0] == pytest.approx(points, abs=1e-9), f"{exercise_id}/{blank_id}"


def test_prints_the_table_and_the_reports(graded):
    done, results, _ = graded
    out = done.stdout
    assert "bac à sable" in out
    for student in ("alice_parfaite", "oscar_menteur", "rose"):
        assert student in out
    for name in ("grades.csv", "rapport.html"):
        assert str(results / name) in out
        assert (results / name).is_file()
    # Folders named by the students: no Moodle account, no Moodle participant number, so nothing for
    # Moodle (its gradebook import needs accounts: --participants).
    assert not list(results.glob("moodle*"))
    rows = list(csv.reader(io.StringIO((results / "grades.csv").read_text(encoding="utf-8-sig"))))
    assert len(rows) == 1 + len(results_of(results))
    # Every assignment the class handed in has its own total; a copy that did not hand one in has none.
    course = Course.load(ROOT)
    header = rows[0]
    for assignment in course.spec.assignments:
        assert assignment.id in header and f"{assignment.id}_max" in header
    lea = next(r for r in rows if r[0] == "lea_vide")
    assert lea[header.index("partie5")] == "0" and lea[header.index("a-la-main")] == ""
    assert "non rendu" in out


def test_nothing_of_the_graders_reaches_the_outputs(graded):
    _, results, _ = graded
    code_lines = set()
    for grader in (ROOT / "graders").glob("test_*.py"):
        for line in grader.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) > 30 and not line.startswith(("#", '"', "'")) and re.search(r"[=(]", line):
                code_lines.add(line)
    assert code_lines
    for path in list((results / "results").glob("*.json")) + list((results / "retours").glob("*.html")):
        text = path.read_text(encoding="utf-8")
        leaked = [line for line in code_lines if line in text]
        assert not leaked, (path.name, leaked[:2])


def test_copies_are_untouched_and_rerun_skips_everything(graded):
    done, results, before = graded
    assert snapshot(CLASSE) == before
    first = (results / "grades.csv").read_bytes()
    again = run_trous("grade", str(CLASSE), "--resultats", str(results))
    assert again.returncode == 0, again.stdout + again.stderr
    assert re.search(r"\b0 à corriger", again.stdout)
    assert (results / "grades.csv").read_bytes() == first
    assert snapshot(CLASSE) == before


def test_moodle_archive_end_to_end(tmp_path):
    # A one-exercise course, and Moodle's « Télécharger tous les travaux remis » archive: a student's
    # folder, a student's own zip, and a hostile entry that would escape. Results land next to the zip.
    from grading_support import mini_course, zip_of

    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    generator = make_classe()
    [material] = generator.load_materials(Course.load(course_dir))
    perfect = material.perfect().encode("utf-8")
    half = material.fill({0: material.answers[0]}).encode("utf-8")
    archive = tmp_path / "depot" / "TP1-devoir.zip"
    archive.parent.mkdir()
    archive.write_bytes(zip_of({
        "Alice Martin_101_assignsubmission_file_/exercises/01_toux.py": perfect,
        "Bob Durand_102_assignsubmission_file_/mon-tp.zip": zip_of({"tp/exercises/01_toux.py": half}),
        "Bob Durand_102_assignsubmission_file_/../../../01_toux.py": perfect,
    }))
    done = run_trous("-C", str(course_dir), "grade", str(archive), cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    results = tmp_path / "depot" / "TP1-devoir-resultats"
    grades = results_of(results)
    assert grades["101"]["score"] == grades["101"]["max_score"] > 0
    assert 0 < grades["102"]["score"] < grades["102"]["max_score"]
    assert "Alice Martin" in done.stdout and "Bob Durand" in done.stdout
    assert "Alice Martin" in (results / "grades.csv").read_text(encoding="utf-8-sig")
    bob = (results / "retours" / "102.html").read_text(encoding="utf-8")
    assert "chemin dangereux refusé" in bob
    # Moodle's participants: its worksheets (French and English headers) and the feedback zip.
    assert (results / "moodle-feuille-fr.csv").is_file() and (results / "moodle-feuille-en.csv").is_file()
    with zipfile.ZipFile(results / "moodle-retours.zip") as feedback:
        assert sorted(feedback.namelist()) == ["Alice Martin_101_assignsubmission_file_/retour.html",
                                               "Bob Durand_102_assignsubmission_file_/retour.html"]
    assert not (tmp_path / "01_toux.py").exists() and not (tmp_path.parent / "01_toux.py").exists()


def test_a_hostile_blank_costs_only_itself(graded):
    # These students put their payload in the first blank of the first exercise and wrote the other
    # blanks right: per-blank grading must give them those (the payload must not spill over).
    _, results, _ = graded
    grades = results_of(results)
    for student in ("gaelle_memoire", "hugo_fourche", "jules_espion", "karim_bavard"):
        first = grades[student]["exercises"][0]
        assert first["mode"] == "blanks", student
        assert first["blanks"][0]["status"] != "passed", student
        spilled = [(b["id"], b["message"]) for b in first["blanks"][1:] if b["status"] != "passed"]
        assert not spilled, (student, spilled)


def test_student_text_is_never_read_as_terminal_markup(tmp_path):
    # Folder and file names are the students': « [/red] » would be a closing tag to rich (an error),
    # « [bold] » a style. They must print as written.
    from grading_support import mini_course

    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    copies = tmp_path / "copies"
    (copies / "[bold]eve" / "exercises").mkdir(parents=True)
    (copies / "[bold]eve" / "exercises" / "01_toux.py").write_bytes((course_dir / "solutions" / "01_toux.py").read_bytes())
    (copies / "[bold]eve" / "[" / "red]").mkdir(parents=True)
    (copies / "[bold]eve" / "[" / "red]" / "brouillon.py").write_text("x = 1\n", encoding="utf-8")
    done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(tmp_path / "res"), cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[bold]eve" in done.stdout
    assert "[/red]/brouillon.py" in done.stdout
