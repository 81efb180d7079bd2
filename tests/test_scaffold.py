"""`trous nouveau-cours` and `trous nouvel-exercice`, through the CLI: what they write passes the
doctor, grades the solution to full points and the untouched exercise to 0, and course.yaml keeps
the author's comments."""

from __future__ import annotations

import csv
import difflib
import shutil

from conftest import ROOT, run_trous
from trous.core import Course


def grades(course, tmp_path, copies: dict[str, str]) -> dict[str, dict[str, str]]:
    """`trous grade` of one copy per student: {student: "solutions" or "exercises"} (whose files they hand in)."""
    folder = tmp_path / "copies"
    for student, source in copies.items():
        (folder / student / "exercises").mkdir(parents=True)
        for exercise in Course.load(course).exercises:
            name = f"{exercise.id}.py"
            shutil.copyfile(course / source / name, folder / student / "exercises" / name)
    result = run_trous(course, "grade", str(folder), "--resultats", str(tmp_path / "res"), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    with open(tmp_path / "res" / "grades.csv", encoding="utf-8-sig", newline="") as handle:
        return {row["etudiant"]: row for row in csv.DictReader(handle)}


def test_a_new_course_passes_the_doctor_and_grades(tmp_path):
    made = run_trous(tmp_path, "nouveau-cours", "stats", "--titre", "Statistiques pour débuter")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "étape suivante : cd stats && trous doctor" in made.stdout
    course = tmp_path / "stats"
    for name in ("course.yaml", "README.md", "solutions/01_ecart_type.py", "exercises/01_ecart_type.py",
                 "exercises/test_01_ecart_type.py", "graders/test_01_ecart_type.py"):
        assert (course / name).is_file(), name
    loaded = Course.load(course)
    assert loaded.title == "Statistiques pour débuter"
    assert [b.id for b in loaded.exercises[0].blanks] == ["moyenne", "variance", "ecart_type"]
    student = (course / "exercises" / "01_ecart_type.py").read_text(encoding="utf-8")
    assert "moyenne = ___\n" in student and "variance = ___\n" in student and "ecart_type = ___\n" in student
    # Nothing of the attention course in what it writes.
    for path in course.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8").lower()
            assert not any(w in text for w in ("attention", "toux", "softmax", "transformer")), path
    doctor = run_trous(course, "doctor", timeout=600)
    assert doctor.returncode == 0 and "1 exercices vérifiés, 0 erreur(s), 0 avertissement(s)" in doctor.stdout, \
        doctor.stdout[-3000:]
    # 3 blanks of 1 point: the solution gets 3, the exercise as given 0.
    got = grades(course, tmp_path, {"alice": "solutions", "bruno": "exercises"})
    assert (got["alice"]["01_ecart_type"], got["alice"]["total"], got["alice"]["total_max"]) == ("3", "3", "3")
    assert (got["bruno"]["01_ecart_type"], got["bruno"]["total"]) == ("0", "0")


def test_exercises_added_pass_the_doctor_and_grade(tmp_path):
    assert run_trous(tmp_path, "nouveau-cours", "cours").returncode == 0
    course = tmp_path / "cours"
    text_before = (course / "course.yaml").read_text(encoding="utf-8")
    added = run_trous(course, "nouvel-exercice", "Médiane")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "exercice 02_mediane ajouté au devoir devoir1" in added.stdout
    assert "étape suivante : écris l'énoncé et la solution dans solutions/02_mediane.py" in added.stdout
    assert run_trous(course, "new-exercise", "03_tri", "--title", "Trier").returncode == 0
    after = (course / "course.yaml").read_text(encoding="utf-8")
    assert after.startswith(text_before)  # appended: the author's comments and layout unchanged
    loaded = Course.load(course)
    assert [(e.id, e.title, e.assignment.id) for e in loaded.exercises] == [
        ("01_ecart_type", "Moyenne, variance, écart-type", "devoir1"), ("02_mediane", "Médiane", "devoir1"),
        ("03_tri", "Trier", "devoir1")]
    doctor = run_trous(course, "doctor", timeout=600)
    assert doctor.returncode == 0 and "3 exercices vérifiés, 0 erreur(s)" in doctor.stdout, doctor.stdout[-3000:]
    got = grades(course, tmp_path, {"alice": "solutions", "bruno": "exercises"})
    assert [got["alice"][k] for k in ("01_ecart_type", "02_mediane", "03_tri", "total")] == ["3", "1", "1", "5"]
    assert got["bruno"]["total"] == "0"


def test_an_exercise_added_to_an_assignment_in_the_middle_keeps_every_comment(tmp_path):
    course = tmp_path / "cours"
    course.mkdir()
    for name in ("exercises", "solutions", "graders"):
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    original = (ROOT / "course.yaml").read_text(encoding="utf-8")
    (course / "course.yaml").write_text(original, encoding="utf-8")
    first = Course.load(course).spec.assignments[0]
    result = run_trous(course, "nouvel-exercice", "essai", "--devoir", first.id)
    assert result.returncode == 0, result.stdout + result.stderr
    after = (course / "course.yaml").read_text(encoding="utf-8")
    # Every line of the original is still there, unchanged and in order; the new ones are one block,
    # before the next assignment.
    opcodes = difflib.SequenceMatcher(None, original.splitlines(), after.splitlines(), autojunk=False).get_opcodes()
    changes = [op for op in opcodes if op[0] != "equal"]
    assert [op[0] for op in changes] == ["insert"], changes
    _, at, _, j1, j2 = changes[0]
    block = after.splitlines()[j1:j2]
    assert any("essai" in line for line in block) and not any("- id: lecon" in line for line in block)
    assert original.splitlines()[at].strip() == "" or original.splitlines()[at].lstrip().startswith("- id:")
    loaded = Course.load(course)
    ids = [e.id for e in loaded.spec.assignments[0].exercises]
    assert ids[-1] == f"{len(loaded.exercises):02d}_essai" and ids[:-1] == [e.id for e in first.exercises]
    doctor = run_trous(course, "doctor", ids[-1], timeout=600)
    assert doctor.returncode == 0 and "0 erreur(s)" in doctor.stdout, doctor.stdout[-3000:]


def test_refusals_change_nothing(tmp_path):
    (tmp_path / "plein").mkdir()
    (tmp_path / "plein" / "notes.txt").write_text("à moi", encoding="utf-8")
    refused = run_trous(tmp_path, "nouveau-cours", "plein")
    assert refused.returncode == 2 and "n'est pas vide" in refused.stderr
    assert sorted(p.name for p in (tmp_path / "plein").iterdir()) == ["notes.txt"]
    assert run_trous(tmp_path, "nouveau-cours", "cours").returncode == 0
    course = tmp_path / "cours"
    before = (course / "course.yaml").read_text(encoding="utf-8")
    again = run_trous(course, "nouvel-exercice", "ecart_type")
    assert again.returncode == 2 and "« 01_ecart_type » existe déjà" in again.stderr
    unknown = run_trous(course, "nouvel-exercice", "mediane", "--devoir", "devoir9")
    assert unknown.returncode == 2 and "devoir « devoir9 » inconnu ; devoirs : devoir1" in unknown.stderr
    assert (course / "course.yaml").read_text(encoding="utf-8") == before
    assert not (course / "solutions" / "02_mediane.py").exists()
