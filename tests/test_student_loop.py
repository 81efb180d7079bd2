"""End to end: `pytest exercises/` in a student's copy, run as a real subprocess, read as a student would."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import complete_exercises, run_pytest, run_trous


def internal_traceback(output: str) -> bool:
    return "Traceback" in output or "src/trous" in output or "site-packages/trous" in output


def copy_solution(folder, exercise):
    shutil.copyfile(exercise.solution_path, folder / "exercises" / exercise.path.name)


def test_shipped_exercises_report_every_blank_unfilled(course, student_copy):
    exercises = complete_exercises(course)
    result = run_pytest(student_copy, "exercises/")
    out = result.stdout
    assert result.returncode == 1
    total = sum(len(e.blanks) for e in exercises)
    assert out.count("pas encore rempli (___)") >= total
    assert f"0/{total} trous remplis" in out
    for exercise in exercises:
        for blank in exercise.blanks:
            assert f"« {blank.id} » : pas encore rempli" in out
            assert f"indice : {blank.hints[0]}" in out
    assert not internal_traceback(out)


def test_solutions_pass_every_check(course, student_copy):
    exercises = complete_exercises(course)
    for exercise in exercises:
        copy_solution(student_copy, exercise)
    result = run_pytest(student_copy, "exercises/")
    assert result.returncode == 0, result.stdout[-3000:]
    n = len(exercises)
    assert f"Progression : {n}/{n} exercices réussis" in result.stdout
    assert not internal_traceback(result.stdout)


def test_each_solution_alone_makes_its_exercise_pass(course, student_copy):
    for exercise in complete_exercises(course):
        copy_solution(student_copy, exercise)
        result = run_pytest(student_copy, f"exercises/{exercise.path.name}")
        assert result.returncode == 0, (exercise.id, result.stdout[-2000:])
        assert f"{exercise.id}" in result.stdout and "réussi" in result.stdout


def test_partly_filled_exercise(course, student_copy):
    exercise = course.exercise("01_toux")
    path = student_copy / "exercises" / exercise.path.name
    path.write_text(path.read_text(encoding="utf-8").replace("total = ___", "total = sum(e)"), encoding="utf-8")
    out = run_pytest(student_copy, "exercises/", "-k", "toux").stdout
    assert "1/3 trous remplis" in out
    assert "« scores » : pas encore rempli" in out and "« nouveau » : pas encore rempli" in out
    assert "somme_exp" not in re.findall(r"FAILED \S+::(\w+)", out)


def test_wrong_value_shows_expected_obtained_and_hint(course, student_copy):
    exercise = course.exercise("01_toux")
    path = student_copy / "exercises" / exercise.path.name
    text = exercise.solution_path.read_text(encoding="utf-8").replace(
        "scores = [sum(a * b for a, b in zip(t, toux)) for t in x]", "scores = [sum(a + b for a, b in zip(t, toux)) for t in x]")
    path.write_text(text, encoding="utf-8")
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("scores ="))
    assert f"exercises/01_toux.py:{line} — trou 2/3 « scores » : faux" in out
    assert "attendu [1 ; 1 ; 2], obtenu [3 ; 3 ; 4]" in out
    assert f"indice : {exercise.blank('scores').hints[0]}" in out
    assert not internal_traceback(out)


def test_syntax_error_shows_file_line_and_the_line(course, student_copy):
    exercise = course.exercise("01_toux")
    text = exercise.solution_path.read_text(encoding="utf-8").replace("poids = softmax(scores)", "poids = softmax(scores")
    (student_copy / "exercises" / exercise.path.name).write_text(text, encoding="utf-8")
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("poids = softmax(scores"))
    assert "erreur de syntaxe" in out
    assert re.search(rf"exercises/01_toux.py:{line}\b", out)
    assert "poids = softmax(scores" in out
    assert not internal_traceback(out)


def test_exception_points_at_the_students_own_line(course, student_copy):
    exercise = course.exercise("01_toux")
    text = exercise.solution_path.read_text(encoding="utf-8").replace("total = sum(e)", "total = sum(e) + 'x'")
    (student_copy / "exercises" / exercise.path.name).write_text(text, encoding="utf-8")
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "total = sum(e) + 'x'" in ln)
    assert f"erreur ligne {line}" in out and "TypeError" in out
    assert "total = sum(e) + 'x'" in out
    assert not internal_traceback(out)


def test_endless_loop_is_stopped_and_other_exercises_still_run(course, student_copy):
    exercises = complete_exercises(course)
    for exercise in exercises:
        copy_solution(student_copy, exercise)
    looping = course.exercise("01_toux")
    text = looping.solution_path.read_text(encoding="utf-8").replace("total = sum(e)", "total = sum(e)\n    while True:\n        pass")
    (student_copy / "exercises" / looping.path.name).write_text(text, encoding="utf-8")
    # Keep the test short: the course may lower every exercise's time limit.
    yaml_path = student_copy / "course.yaml"
    yaml_path.write_text(yaml_path.read_text(encoding="utf-8").replace("assignments:", "limits:\n  wall: 2\n\nassignments:", 1),
                         encoding="utf-8")
    result = run_pytest(student_copy, "exercises/", timeout=120)
    out = result.stdout
    assert "temps dépassé" in out and "boucle sans fin" in out
    assert f"{len(exercises) - 1}/{len(exercises)} exercices réussis" in out
    loop_line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == "while True:")
    assert f"arrêté à la ligne {loop_line}" in out or f"arrêté à la ligne {loop_line + 1}" in out
    assert not internal_traceback(out)


def test_keyword_selects_one_exercise(course, student_copy):
    exercise = complete_exercises(course)[-1]
    slug = exercise.id.split("_", 1)[1]
    out = run_pytest(student_copy, "exercises/", "-k", slug).stdout
    # Only that exercise's blanks ran (each unfilled), and the progress counts that exercise alone.
    assert re.search(rf"\b{len(exercise.blanks)} failed\b", out), out[-1500:]
    assert "deselected" in out
    assert "0/1 exercices réussis" in out


def test_trous_check_and_list_and_hint(course, student_copy):
    exercise = course.exercise("01_toux")
    copy_solution(student_copy, exercise)
    listing = run_trous(student_copy, "list")
    assert listing.returncode == 0 and "01_toux" in listing.stdout and "réussi" in listing.stdout
    check = run_trous(student_copy, "check", "toux")
    assert check.returncode == 0 and "juste" in check.stdout
    hint = exercise.blanks[0].hints
    first = run_trous(student_copy, "hint", "toux", "--blank", "1")
    second = run_trous(student_copy, "hint", "toux", "--blank", "1")
    assert hint[0] in first.stdout
    assert hint[min(1, len(hint) - 1)] in second.stdout


def test_outside_a_course_the_command_says_so(tmp_path):
    result = run_trous(tmp_path, "list")
    assert result.returncode == 2 and "course.yaml" in result.stderr


@pytest.mark.parametrize("polling", [True, False])
def test_watch_rechecks_on_save_and_moves_on(course, student_copy, polling):
    import subprocess
    import time

    from conftest import BIN

    exercise = course.exercise("01_toux")
    args = [str(BIN / "trous"), "watch", "01_toux", "--interval", "0.2"] + (["--polling"] if polling else [])
    proc = subprocess.Popen(args, cwd=student_copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        import os
        import select

        deadline = time.time() + 60
        seen = ""

        def read_until(marker):
            nonlocal seen
            while time.time() < deadline and marker not in seen:
                ready, _, _ = select.select([proc.stdout], [], [], 0.2)
                if ready:
                    seen += os.read(proc.stdout.fileno(), 65536).decode("utf-8", "replace")
            return marker in seen

        assert read_until("j'attends que tu enregistres"), seen
        copy_solution(student_copy, exercise)
        assert read_until("01_toux réussi"), seen
    finally:
        proc.kill()
        proc.wait()
