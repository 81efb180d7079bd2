"""The student's commands (issue 22, §4): what the edition's `trous` offers, `trous hint` without an
exercise, French words for the usual errors, a copy of untouched templates « non rendu », one title
per exercise. Through the commands themselves, in a student edition."""

from __future__ import annotations

import json
import re
import shutil

from conftest import ROOT, run_pytest, run_trous
from student_support import copy_solution, solution_with

TEACHER = ("doctor", "edition", "grade", "nbgrader")
STUDENT = ("list", "check", "hint", "watch", "lab")


def commands(help_text: str) -> set[str]:
    return set(re.findall(r"^    (\w+)\s", help_text, re.MULTILINE))


def test_the_edition_lists_the_student_commands_only(student_copy):
    shown = run_trous(student_copy, "--help")
    assert shown.returncode == 0
    assert set(STUDENT) <= commands(shown.stdout) and not set(TEACHER) & commands(shown.stdout), shown.stdout
    refused = run_trous(student_copy, "grade", "copies")
    assert refused.returncode == 2 and "« grade » inconnu" in refused.stderr
    # The course's own folder (a teacher's) keeps every command.
    teacher = run_trous(ROOT, "--help")
    assert set(TEACHER) | set(STUDENT) <= commands(teacher.stdout)
    # -C names the course: the edition's commands, wherever the command is run from.
    pointed = run_trous(ROOT, "-C", str(student_copy), "--help")
    assert not set(TEACHER) & commands(pointed.stdout)


def test_hint_without_an_exercise_takes_the_current_one(course, student_copy):
    copy_solution(student_copy, course.exercise("01_toux"))
    first = course.exercise("02_places")
    done = run_trous(student_copy, "hint")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{first.id} — trou 1 « {first.blanks[0].id} » — indice 1/" in done.stdout
    assert first.blanks[0].hints[0] in done.stdout and "il manque" not in done.stderr
    again = run_trous(student_copy, "hint")
    assert "indice 2/" in again.stdout  # one more each time, as with the exercise named


def test_name_and_index_errors_are_glossed_in_french(course, student_copy):
    exercise = course.exercise("01_toux")
    solution_with(student_copy, exercise, ("total = sum(e)", "total = sum(E)"))
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    assert "NameError: name 'E' is not defined" in out
    assert "piste : « E » n'existe pas à cet endroit du programme" in out
    solution_with(student_copy, exercise, ("sum(a * b for a, b in zip(t, toux))", "[1, 1, 2][x.index(t)]"))
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    assert "IndexError: list index out of range" in out and "piste : un indice qui sort de la liste" in out
    # The error that stops the program is said once; the checks it stopped say so in plain words.
    assert "même problème que le programme" not in out


def test_a_copy_of_untouched_templates_is_not_handed_in(course, edition_template, tmp_path):
    copies = tmp_path / "copies"
    worked = copies / "alice"
    shutil.copytree(edition_template, worked)  # a whole edition, as a student sends it back
    copy_solution(worked, course.exercise("01_toux"))
    other = copies / "bruno" / "exercises"
    other.mkdir(parents=True)
    shutil.copyfile(course.exercise("06_moyenne").solution_path, other / "06_moyenne.py")
    results = tmp_path / "resultats"
    done = run_trous(ROOT, "grade", str(copies), "--resultats", str(results))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    alice = json.loads((results / "results" / "alice.json").read_text(encoding="utf-8"))
    graded = {course.exercise(e["id"]).assignment.id for e in alice["exercises"]}
    first = course.exercise("01_toux").assignment.id
    assert graded == {first}, graded  # the untouched assignments are not graded: no 0
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("alice"))
    assert "non rendu" in row, done.stdout


def test_each_exercise_has_one_title(course, edition_template):
    readme = (edition_template / "LISEZMOI.md").read_text(encoding="utf-8")
    for exercise in course.exercises:
        heading = exercise.template_path.read_text(encoding="utf-8").splitlines()[1]
        assert heading == f"# # Exercice {exercise.number} — {exercise.title}", (exercise.id, heading)
        assert heading == exercise.solution_path.read_text(encoding="utf-8").splitlines()[1]
        assert f"`{exercise.path.name}` — {exercise.title} (" in readme
