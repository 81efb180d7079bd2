"""What a student reads is French, exact and bounded (issue 9, part 6): glosses under the usual
mistakes, huge values shortened, a shown variant's inputs, and no English from argparse or from
pytest around our items. Real subprocesses on a student's copy.
"""

from __future__ import annotations

import re

from conftest import complete_exercises, run_pytest, run_trous
from student_support import copy_solution, internal_traceback, solution_with

ENGLISH = ["Captured", "FAILURES", "short test summary", " failed", " passed", "FAILED", "PASSED", "usage:",
           "options:", "error:", "positional arguments", "show this help", "optional arguments", "invalid choice",
           "the following arguments", "1 trous", "1 copies", "Traceback"]


def english_in(text: str) -> list[str]:
    return [word for word in ENGLISH if word in text]


def test_usual_mistakes_get_a_french_gloss(course, student_copy):
    solution_with(student_copy, course.exercise("01_toux"),
                  ("sum(a * b for a, b in zip(t, toux))", "sum(t * toux)"), ("total = sum(e)", "total = e.sum()"))
    solution_with(student_copy, course.exercise("04_distance"), ("return w ** distance", "return print(w ** distance)"))
    solution_with(student_copy, course.exercise("08_masque_causal"), ("np.ones((T, T)", "np.ones((T - 1, T - 1)"))
    solution_with(student_copy, course.exercise("13_a_la_main"),
                  ("[w / sum(weights) for w in weights]", "[w // sum(weights) for w in weights]"))
    out = run_pytest(student_copy, "exercises/", "--tout").stdout
    assert "piste : deux listes ne se multiplient pas avec *" in out  # list × list
    assert "piste : une liste Python n'a pas « .sum »" in out and "sum(liste)" in out  # .sum() on a list
    assert "piste : None : une fonction sans « return » renvoie None" in out  # printed instead of returned
    assert "piste : formes incompatibles (4 × 4 et 5 × 5)" in out  # shapes that do not broadcast
    assert "piste : des nombres entiers, là où des nombres à virgule sont attendus : une division entière « // »" in out
    assert not internal_traceback(out)


def test_huge_values_are_short(course, student_copy):
    solution_with(student_copy, course.exercise("12_autotest"), ('score_futur = float("-inf")', "score_futur = -1e308"))
    solution_with(student_copy, course.exercise("09_racine_d"),
                  ("ecarts_types.append(scores.std())", "ecarts_types.append(scores.std(axis=0))"))
    out = run_pytest(student_copy, "exercises/", "--tout").stdout
    assert "score_futur : attendu −∞, obtenu −1 × 10³⁰⁸" in out
    assert not re.search(r"\d{20}", out)  # no number written with 309 digits
    line = next(ln for ln in out.splitlines() if "écart type divisé par √d" in ln and "obtenu" in ln)
    assert "(4 × 5 × 5 valeurs)" in line and len(line) < 400
    assert not internal_traceback(out)


SHOWN_VARIANT = '''

# -- added by the test: one check on other inputs shown to the student, one on hidden ones --
from trous.spec import variant as _variant

scores_ailleurs = blank(
    "scores",
    expect("scores", [17, 39, 61], variant=_variant("une autre phrase", shown=True, x="[[1, 2], [3, 4], [5, 6]]")),
    expect("scores", [2, 3, 13], variant=_variant("une phrase cachée", x="[[1, 0], [0, 1], [2, 3]]")),
)
'''


def test_a_shown_variant_shows_its_inputs_a_hidden_one_does_not(course, student_copy):
    exercise = course.exercise("01_toux")
    checks = student_copy / "exercises" / exercise.checks_path.name
    checks.write_text(checks.read_text(encoding="utf-8") + SHOWN_VARIANT, encoding="utf-8")
    solution_with(student_copy, exercise, ("sum(a * b for a, b in zip(t, toux))", "sum(a + b for a, b in zip(t, toux))"))
    out = run_pytest(student_copy, "exercises/01_toux.py").stdout
    assert "sur d'autres entrées (une autre phrase : x = [[1, 2], [3, 4], [5, 6]]) : scores : attendu [17 ; 39 ; 61]" in out
    assert "sur d'autres entrées (une phrase cachée) : scores" in out
    assert "[[1, 0], [0, 1], [2, 3]]" not in out and "[2 ; 3 ; 13]" not in out
    # The right fill passes both: the expected values above are the dot products with x[2], by hand.
    copy_solution(student_copy, exercise)
    assert run_pytest(student_copy, "exercises/01_toux.py").returncode == 0


def test_no_english_in_what_the_student_reads(course, student_copy):
    exercises = complete_exercises(course)
    for exercise in exercises[:3]:
        copy_solution(student_copy, exercise)
    solution_with(student_copy, exercises[3], *[])  # solved, then broken below
    path = student_copy / "exercises" / exercises[3].path.name
    path.write_text(path.read_text(encoding="utf-8").replace("return", "retrun", 1), encoding="utf-8")
    solution_with(student_copy, course.exercise("05_qkv"), ("print(nb_poids", "print('bonjour') or print(nb_poids"),
                  ("/ math.sqrt(d) for k in K]", "/ 3 for k in K]"))
    texts = [run_pytest(student_copy, "exercises/").stdout, run_pytest(student_copy, "exercises/", "-v").stdout,
             run_pytest(student_copy, "exercises/", "--tout").stdout]
    for args in (["--help"], ["hint", "--help"], ["grade", "--help"], ["lsit"], ["hint"], ["watch", "--interval", "x"],
                 ["check", "05"], ["list"], ["hint", "5"]):
        done = run_trous(student_copy, *args)
        texts.append(done.stdout + done.stderr)
    for text in texts:
        header_free = re.sub(r" in \d+[.,]\d+s", "", text)  # pytest's last line keeps its « in 0.5s »
        assert english_in(header_free) == [], (english_in(header_free), header_free[-3000:])
    assert "ce que ton programme a affiché" in texts[2] and "bonjour" in texts[2]
    assert "vouliez-vous dire « list » ?" in "".join(texts)
