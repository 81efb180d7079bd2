"""End to end: `pytest exercises/` in a student's copy, run as a real subprocess, read as a student would."""

from __future__ import annotations

import pytest

from conftest import complete_exercises, run_pytest, run_trous
from student_support import copy_solution, internal_traceback, line_with, progress_marks, statuses


def test_shipped_exercises_first_run_is_calm(course, student_copy):
    exercises = complete_exercises(course)
    total = sum(len(e.blanks) for e in exercises)
    result = run_pytest(student_copy, "exercises/")
    out = result.stdout
    assert result.returncode == 1
    # French from its first line: the course's title, not pytest's header (platform, rootdir, plugins).
    assert out.splitlines()[0].strip("= ") == "trous : vérification de tes exercices", out[:500]
    assert "test session starts" not in out and "platform " not in out and "rootdir" not in out
    # As many items as blanks (10's PyTorch checks included), each one to fill.
    assert f"{len(exercises)} exercices, {total} trous à vérifier" in out and f"{total} à remplir" in out
    # One line per exercise, under the student's own file, one mark per blank.
    for exercise in exercises:
        assert progress_marks(out, exercise) == "…" * len(exercise.blanks)
        assert f"exercises/test_{exercise.id}.py" not in out
    # Then the first exercise in detail, and only it.
    first, others = exercises[0], exercises[1:]
    for blank in first.blanks:
        assert f"« {blank.id} » : pas encore rempli" in out and f"indice : {blank.hints[0]}" in out
    assert not any(f"{e.path.name}:" in out for e in others)
    assert out.count("pas encore rempli (___)") == len(first.blanks)
    assert f"0/{total} trous remplis" in out and f"trous hint {first.id}" in out
    assert not internal_traceback(out)


def test_every_exercise_in_detail_with_tout_or_v(course, student_copy):
    exercises = complete_exercises(course)
    total = sum(len(e.blanks) for e in exercises)
    for option in ("--tout", "-v"):
        out = run_pytest(student_copy, "exercises/", option).stdout
        assert out.count("pas encore rempli (___)") == total, option
        for exercise in exercises:
            for blank in exercise.blanks:
                assert f"« {blank.id} » : pas encore rempli" in out and f"indice : {blank.hints[0]}" in out
    for exercise in exercises:  # -v: one line per blank, in French
        assert set(statuses(out, exercise).values()) == {"unfilled"}
        assert list(statuses(out, exercise)) == [b.id for b in exercise.blanks]


def test_solutions_pass_every_check(course, student_copy):
    exercises = complete_exercises(course)
    for exercise in exercises:
        copy_solution(student_copy, exercise)
    result = run_pytest(student_copy, "exercises/")
    assert result.returncode == 0, result.stdout[-3000:]
    n = len(exercises)
    assert f"Progression : {n}/{n} exercices réussis" in result.stdout
    assert f"{sum(len(e.blanks) for e in exercises)} ✔" in result.stdout and "Bravo" in result.stdout
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
    out = run_pytest(student_copy, "exercises/", "-k", "toux", "-v").stdout
    assert "1/3 trous remplis" in out
    assert "« scores » : pas encore rempli" in out and "« nouveau » : pas encore rempli" in out
    assert statuses(out, exercise) == {"somme_exp": "passed", "scores": "unfilled", "nouveau": "unfilled"}


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


def test_syntax_error_shows_file_line_and_the_line_once(course, student_copy):
    exercise = course.exercise("01_toux")
    text = exercise.solution_path.read_text(encoding="utf-8").replace("poids = softmax(scores)", "poids = softmax(scores")
    (student_copy / "exercises" / exercise.path.name).write_text(text, encoding="utf-8")
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    line = line_with(text, "poids = softmax(scores")
    assert out.count("erreur de syntaxe") == 1  # for the exercise, not for each of its blanks
    assert f"exercises/01_toux.py:{line} — erreur de syntaxe : « ( » ouvert ici n'est jamais refermé" in out
    assert out.count("poids = softmax(scores") == 1
    assert f"{len(exercise.blanks)} en erreur" in out and f"corrige la ligne {line}" in out
    hint = run_trous(student_copy, "hint", "01_toux")
    assert hint.returncode == 1 and f"corrige la ligne {line}" in hint.stdout and "indice" not in hint.stdout
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
    assert f"{len(exercise.blanks)} à remplir" in out, out[-1500:]
    assert progress_marks(out, exercise) == "…" * len(exercise.blanks)
    assert "0/1 exercice réussi" in out


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
