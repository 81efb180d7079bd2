"""The gradebook: skipping what is graded, history, one transaction per student, and a real `trous grade`
killed with SIGKILL then started again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from trous.core import Course
from gradebook_support import Gradebook
from trous.outputs.gradebook import default_url
from trous.core.grades import FAILED, PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
from trous.core.submission import Submission

from grading_support import TROUS, gradebook_counts, make_classe, mini_course, run_trous, snapshot
from postgres_support import postgres_server, postgres_url, row_counts  # noqa: F401  (fixtures)


def grade_for(student: str, version: str, score: float) -> SubmissionGrade:
    blanks = [BlankGrade("a", 1, score, 1.0, PASSED if score else FAILED, "juste" if score else "faux"),
              BlankGrade("b", 2, 0.0, 2.0, FAILED, "faux")]
    return SubmissionGrade(student, "cours", version, [ExerciseGrade("01_x", "X", score, 3.0, "blanks", blanks)])


@pytest.fixture(params=["sqlite", "postgresql"])
def book(request, tmp_path):
    """The same tests against the default SQLite file and a real PostgreSQL server (shared gradebook)."""
    url = default_url(tmp_path / "res") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    gradebook = Gradebook(url)
    yield gradebook
    gradebook.close()


def test_default_is_an_sqlite_file_in_wal_mode(tmp_path):
    db = tmp_path / "res" / "gradebook.db"
    with Gradebook(default_url(tmp_path / "res")) as book:
        assert db.is_file() and book.path == str(db)
    connection = sqlite3.connect(db)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


def test_skips_exactly_what_this_grader_already_graded(book):
    alice = Submission("alice", {"01_x": b"v1"})
    bob = Submission("bob", {"01_x": b"v1"})
    run = book.start_run("cours", "g1")
    book.record(run, alice, grade_for("alice", "g1", 1.0))
    assert set(book.graded([alice, bob], "g1")) == {"alice"}
    assert book.graded([alice], "g2") == {}  # another grader version
    changed = Submission("alice", {"01_x": b"v2"})
    assert book.graded([changed], "g1") == {}  # another content
    assert book.current()["alice"].score == 1.0


def test_regrading_keeps_history_and_moves_current(book):
    alice = Submission("alice", {"01_x": b"v1"}, name="Alice M.")
    first = book.record(book.start_run("cours", "g1"), alice, grade_for("alice", "g1", 0.0))
    second = book.record(book.start_run("cours", "g2"), alice, grade_for("alice", "g2", 1.0))
    assert first != second
    history = book.history("alice")
    assert [(h.grader_version, h.score, h.current) for h in history] == [("g1", 0.0, False), ("g2", 1.0, True)]
    assert book.current()["alice"].grader_version == "g2"
    assert book.names() == {"alice": "Alice M."}
    counts = row_counts(book)
    assert counts["gradings"] == 2 and counts["blank_grades"] == 4 and counts["current_grades"] == 1
    assert counts["submissions"] == 1  # same content, graded twice


def test_back_to_an_older_version_reuses_its_grading(book):
    v1 = Submission("alice", {"01_x": b"v1"})
    v2 = Submission("alice", {"01_x": b"v2"})
    run = book.start_run("cours", "g1")
    old = book.record(run, v1, grade_for("alice", "g1", 1.0))
    book.record(run, v2, grade_for("alice", "g1", 0.0))
    assert book.current()["alice"].score == 0.0
    found = book.graded([v1], "g1")
    assert found == {"alice": old}
    book.reuse([Submission("alice", {"01_x": b"v1"}, warnings=("remarque",))], found)
    assert book.current()["alice"].score == 1.0
    assert book.warnings() == {"alice": ("remarque",)}


def test_a_student_is_recorded_all_or_nothing(book, monkeypatch):
    alice = Submission("alice", {"01_x": b"v1"})
    run = book.start_run("cours", "g1")

    def broken(*args, **kwargs):
        raise RuntimeError("panne au milieu de l'écriture")

    monkeypatch.setattr(Gradebook, "_make_current", broken)
    with pytest.raises(RuntimeError):
        book.record(run, alice, grade_for("alice", "g1", 1.0))
    counts = row_counts(book)
    assert counts["students"] == counts["submissions"] == counts["gradings"] == counts["blank_grades"] == 0
    monkeypatch.undo()
    book.record(run, alice, grade_for("alice", "g1", 1.0))
    assert row_counts(book)["blank_grades"] == 2


def test_grade_must_match_submission(book):
    with pytest.raises(ValueError):
        book.record(book.start_run("cours", "g1"), Submission("alice", {}), grade_for("bob", "g1", 1.0))


# -- real runs ------------------------------------------------------------------------------------
N_STUDENTS = 60  # enough for a kill in the middle of a run
N_FEW = 8


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    """A one-exercise course and a class of N_STUDENTS made from it (right, partial, wrong, unfilled)."""
    base = tmp_path_factory.mktemp("classe")
    course_dir = mini_course(base / "cours", ("01_toux",))
    generator = make_classe()
    [material] = generator.load_materials(Course.load(course_dir))
    kinds = [material.perfect(), material.fill({0: material.answers[0]}),
             material.fill({i: generator.wrong(a, i) for i, a in enumerate(material.answers)}), material.template]
    for folder, n in (("copies", N_STUDENTS), ("quelques-copies", N_FEW)):
        for i in range(n):
            path = base / folder / f"eleve{i:03d}" / "exercises" / "01_toux.py"
            path.parent.mkdir(parents=True)
            path.write_text(kinds[i % len(kinds)] + f"\n# copie {i}\n", encoding="utf-8")
    return course_dir, base / "copies"


@pytest.fixture(scope="module")
def few(small_class):
    course_dir, copies = small_class
    return course_dir, copies.parent / "quelques-copies"


def results_of(results: Path) -> dict[str, dict]:
    out = {}
    for path in sorted((results / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[data["student"]] = data
    return out


def grade(course_dir: Path, copies: Path, results: Path, *extra: str) -> subprocess.CompletedProcess:
    done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(results), *extra, cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_kill_9_then_rerun_gives_the_uninterrupted_results(small_class, tmp_path):
    course_dir, copies = small_class
    before = snapshot(copies)
    reference = tmp_path / "sans-interruption"
    grade(course_dir, copies, reference, "--workers", "2")

    interrupted = tmp_path / "interrompu"
    db = interrupted / "gradebook.db"
    env = {**os.environ, "COLUMNS": "200"}
    process = subprocess.Popen([*TROUS, "-C", str(course_dir), "grade", str(copies), "--resultats",
                                str(interrupted), "--workers", "1"], cwd=course_dir, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed_at = None
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if db.exists():
                try:
                    graded = gradebook_counts(db)["current_grades"]
                except sqlite3.OperationalError:  # tables not created yet
                    graded = 0
                if graded >= 5:
                    process.send_signal(signal.SIGKILL)
                    killed_at = graded
                    break
            time.sleep(0.01)
    finally:
        if process.poll() is None and killed_at is None:
            process.kill()
        process.wait(timeout=30)
    assert killed_at is not None, "la correction a fini avant d'être interrompue : classe trop petite pour ce test"
    assert process.returncode == -signal.SIGKILL
    counts = gradebook_counts(db)
    assert 5 <= counts["current_grades"] < N_STUDENTS
    # Whatever was committed is complete: each grading has all its blanks, each student one current grade.
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT g.id, g.result, COUNT(b.id) FROM gradings g "
                                  "LEFT JOIN blank_grades b ON b.grading_id = g.id GROUP BY g.id").fetchall()
        unfinished = connection.execute("SELECT COUNT(*) FROM runs WHERE finished_at IS NULL").fetchone()[0]
    finally:
        connection.close()
    assert rows and all(len([b for e in json.loads(r)["exercises"] for b in e["blanks"]]) == n for _, r, n in rows)
    assert unfinished == 1

    again = grade(course_dir, copies, interrupted, "--workers", "2")
    assert f"{counts['current_grades']} inchangées" in again.stdout  # at least 5: plural
    assert results_of(interrupted) == results_of(reference)
    assert (interrupted / "grades.csv").read_bytes() == (reference / "grades.csv").read_bytes()
    final = gradebook_counts(db)
    assert final["current_grades"] == final["gradings"] == N_STUDENTS  # nobody graded twice
    assert snapshot(copies) == before  # the copies were only read


def test_rerun_skips_and_grader_change_regrades_with_history(few, tmp_path):
    course_dir, copies = few
    results = tmp_path / "res"
    first = grade(course_dir, copies, results)
    assert f"{N_FEW} à corriger" in first.stdout
    second = grade(course_dir, copies, results)
    assert f"0 à corriger, {N_FEW} inchangées" in second.stdout
    before = results_of(results)

    # A grader change: one more point for the first blank in course.yaml (a new fingerprint).
    changed = tmp_path / "cours-modifie"
    mini_course(changed, ("01_toux",))
    text = (changed / "course.yaml").read_text(encoding="utf-8")
    (changed / "course.yaml").write_text(text.replace("points: 1", "points: 2", 1), encoding="utf-8")
    third = grade(changed, copies, results)
    assert f"{N_FEW} à corriger" in third.stdout
    after = results_of(results)
    assert {s: r["max_score"] for s, r in after.items()} == {s: r["max_score"] + 1 for s, r in before.items()}
    perfect = [s for s, r in before.items() if r["score"] == r["max_score"]]
    assert perfect and all(after[s]["score"] == before[s]["score"] + 1 for s in perfect)
    with Gradebook(default_url(results)) as book:
        history = book.history("eleve000")
        assert len(history) == 2 and [h.current for h in history] == [False, True]
        assert history[0].grader_version == before["eleve000"]["grader_version"]
        assert history[1].grader_version == after["eleve000"]["grader_version"] != history[0].grader_version
        assert len(book.runs()) == 3

    forced = grade(changed, copies, results, "--force")
    assert f"{N_FEW} à corriger" in forced.stdout
    assert results_of(results) == after
    assert gradebook_counts(results / "gradebook.db")["gradings"] == 3 * N_FEW


def test_sqlite_url_can_be_given(few, tmp_path):
    course_dir, copies = few
    url = f"sqlite:///{tmp_path / 'ailleurs' / 'notes.db'}"
    done = grade(course_dir, copies, tmp_path / "res", "--gradebook", url, "--workers", "2")
    assert (tmp_path / "ailleurs" / "notes.db").is_file()
    assert not (tmp_path / "res" / "gradebook.db").exists()
    assert str(tmp_path / "ailleurs" / "notes.db") in done.stdout


def test_schema_is_portable_to_postgresql():
    # No server here: compile the DDL with PostgreSQL's dialect (SQLite-only SQL would fail or show).
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateIndex, CreateTable

    from trous.outputs.gradebook import Base

    dialect = postgresql.dialect()
    ddl = []
    for table in Base.metadata.sorted_tables:
        ddl.append(str(CreateTable(table).compile(dialect=dialect)))
        ddl += [str(CreateIndex(index).compile(dialect=dialect)) for index in table.indexes]
    text = "\n".join(ddl)
    assert "TIMESTAMP WITH TIME ZONE" in text and "JSON" in text
    assert "AUTOINCREMENT" not in text.upper() and "PRAGMA" not in text.upper()
    assert {t.name for t in Base.metadata.sorted_tables} >= {"students", "runs", "submissions", "gradings",
                                                             "blank_grades", "current_grades"}
