"""The shared gradebook on a real PostgreSQL server: several graders writing at once, and `trous grade`
end to end with a `postgresql+psycopg://` URL. (The gradebook's own tests, test_grading_gradebook.py,
also run against both SQLite and PostgreSQL.)"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from trous.core import Course
from gradebook_support import Gradebook
from trous.core.grades import PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
from trous.core.submission import Submission

from grading_support import make_classe, mini_course, run_trous
from postgres_support import postgres_server, postgres_url, row_counts  # noqa: F401  (fixtures)


def grade_for(student: str, version: str = "g1") -> SubmissionGrade:
    blanks = [BlankGrade("a", 1, 1.0, 1.0, PASSED, "juste")]
    return SubmissionGrade(student, "cours", version, [ExerciseGrade("01_x", "X", 1.0, 1.0, "blanks", blanks)])


@pytest.mark.parametrize("known", [False, True], ids=["nouvel-etudiant", "etudiant-connu"])
def test_two_graders_recording_the_same_copy_at_once_keep_one_grading(postgres_url, monkeypatch, known):
    """Two teaching assistants grade the same class into one gradebook: the second to record a copy that
    the first is recording right now waits for it, then keeps its grading (no error, no duplicate)."""
    first, second = Gradebook(postgres_url), Gradebook(postgres_url)
    alice = Submission("alice", {"01_x": b"v1"})
    if known:  # this very copy is in the gradebook already, graded by an older grader: no new row to collide on
        first.record(first.start_run("cours", "g0"), alice, grade_for("alice", "g0"))
    runs = first.start_run("cours", "g1"), second.start_run("cours", "g1")
    inside, go = threading.Event(), threading.Event()
    original = Gradebook._make_current

    def slow_make_current(self, session, student, grading_id):
        # The first grader stops inside its transaction, its rows written but not committed.
        if threading.current_thread().name == "premier":
            inside.set()
            assert go.wait(30)
        return original(self, session, student, grading_id)

    monkeypatch.setattr(Gradebook, "_make_current", slow_make_current)
    ids: dict[str, int] = {}
    errors: list[BaseException] = []

    def record(name: str, book: Gradebook, run: int) -> None:
        try:
            ids[name] = book.record(run, alice, grade_for("alice"), once=True)
        except BaseException as exc:  # noqa: BLE001 - the assertion below reports it
            errors.append(exc)

    a = threading.Thread(target=record, args=("premier", first, runs[0]), name="premier")
    b = threading.Thread(target=record, args=("second", second, runs[1]), name="second")
    a.start()
    assert inside.wait(30)
    b.start()
    time.sleep(0.5)  # the second grader reaches the database and waits for the first
    assert "second" not in ids, "le second correcteur n'a pas attendu le premier"
    go.set()
    a.join(30)
    b.join(30)
    try:
        assert not errors, errors
        assert ids["premier"] == ids["second"]
        counts = row_counts(first)
        assert counts["students"] == counts["current_grades"] == 1
        assert counts["gradings"] == (2 if known else 1)
        assert [h.grader_version for h in first.history("alice") if h.current] == ["g1"]
    finally:
        first.close()
        second.close()


def test_force_still_adds_a_new_grading(postgres_url):
    with Gradebook(postgres_url) as book:
        alice = Submission("alice", {"01_x": b"v1"})
        run = book.start_run("cours", "g1")
        one = book.record(run, alice, grade_for("alice"), once=True)
        assert book.record(run, alice, grade_for("alice"), once=True) == one  # idempotent
        assert book.record(run, alice, grade_for("alice")) != one  # --force: a new grading, in the history
        assert row_counts(book)["gradings"] == 2


def results_of(results: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((results / "results").glob("*.json"))}


def test_trous_grade_with_a_postgresql_gradebook(postgres_url, tmp_path):
    """The same class graded into SQLite and into PostgreSQL gives the same results; a second run against
    PostgreSQL finds every copy already graded there."""
    course_dir = mini_course(tmp_path / "cours", ("01_toux",))
    generator = make_classe()
    [material] = generator.load_materials(Course.load(course_dir))
    kinds = [material.perfect(), material.fill({0: material.answers[0]}), material.template]
    copies = tmp_path / "copies"
    for i in range(6):
        path = copies / f"eleve{i}" / "exercises" / "01_toux.py"
        path.parent.mkdir(parents=True)
        path.write_text(kinds[i % len(kinds)] + f"\n# {i}\n", encoding="utf-8")

    def grade(results: Path, *extra: str):
        done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(results), "--workers", "2",
                         *extra, cwd=course_dir)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    grade(tmp_path / "sqlite")
    first = grade(tmp_path / "pg", "--gradebook", postgres_url)
    assert "6 à corriger" in first.stdout
    assert "127.0.0.1" in first.stdout  # the gradebook shown is the server, not a file
    assert not (tmp_path / "pg" / "gradebook.db").exists()
    assert results_of(tmp_path / "pg") == results_of(tmp_path / "sqlite")
    assert (tmp_path / "pg" / "grades.csv").read_bytes() == (tmp_path / "sqlite" / "grades.csv").read_bytes()
    again = grade(tmp_path / "pg-2", "--gradebook", postgres_url)  # another results folder, same gradebook
    assert "0 à corriger, 6 inchangées" in again.stdout
    with Gradebook(postgres_url) as book:
        counts = row_counts(book)
    assert counts["gradings"] == counts["current_grades"] == 6 and counts["runs"] == 2
