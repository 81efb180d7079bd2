"""French text: numbers with a decimal comma and bounded, words that agree, glosses for usual mistakes."""

from __future__ import annotations

import numpy as np
import pytest

from trous.core.compare import describe_type, format_number, format_value
from trous.core.wording import count, plural
from trous.core import glosses


# -- numbers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, decimals, shown", [
    (0.5, None, "0,5"),
    (-2.25, None, "−2,25"),
    (1 / 3, 3, "0,333"),
    (0.2, 2, "0,2"),
    (-0.0001, 2, "0"),
    (12, None, "12"),
    (-7, None, "−7"),
    (123456.789, None, "123456,789"),
    (float("inf"), None, "+∞"),
    (float("-inf"), 2, "−∞"),
    (True, None, "True"),
])
def test_numbers_are_written_the_french_way(value, decimals, shown):
    assert format_number(value, decimals) == shown


@pytest.mark.parametrize("value, shown", [
    (-1e308, "−1 × 10³⁰⁸"),
    (2.5e12, "2,5 × 10¹²"),
    (1.23456e-7, "1,23 × 10⁻⁷"),
    (10 ** 400, "1 × 10⁴⁰⁰"),
    (-(2 ** 70), "≈ −1,18 × 10²¹"),
    (123_000 * 10 ** 20, "1,23 × 10²⁵"),
])
def test_huge_and_tiny_numbers_are_powers_of_ten(value, shown):
    assert format_number(value) == shown
    assert len(format_value(value)) < 20


def test_a_huge_value_with_course_decimals_is_still_short():
    assert format_number(-1e308, 3) == "−1 × 10³⁰⁸"


def test_lists_and_small_tables_are_written_whole():
    assert format_value([0.21, 0.21, 0.58]) == "[0,21 ; 0,21 ; 0,58]"
    mask = np.tri(5, dtype=bool).tolist()
    shown = format_value(mask)
    assert shown.count("True") == 15 and shown.count("False") == 10 and "…" not in shown


def test_big_arrays_are_cut_and_their_size_said():
    rng = np.random.default_rng(0)
    per_axis = rng.standard_normal((40, 5, 5)).std(axis=0).tolist()  # a 5 × 5 of numbers, fine
    assert "…" not in format_value(per_axis)
    cube = rng.standard_normal((4, 5, 5)).tolist()
    shown = format_value(cube)
    assert shown.endswith("(4 × 5 × 5 valeurs)") and shown.count(",") <= 8 + 8
    long = list(range(100))
    assert format_value(long) == "[0 ; 1 ; 2 ; 3 ; 4 ; 5 ; 6 ; 7 ; …] (100 éléments)"
    assert len(format_value(rng.standard_normal((40, 5)).tolist())) < 200


def test_types_are_described_with_agreement():
    assert describe_type([1]) == "une liste de 1 élément"
    assert describe_type([1, 2]) == "une liste de 2 éléments"
    assert describe_type([[1, 2, 3], [4, 5, 6]]) == "une liste de 2 listes (2 × 3 valeurs)"
    assert describe_type([]) == "une liste vide"
    assert describe_type(None) == "None" and describe_type(3.0) == "un nombre"


def test_words_agree_with_their_number():
    assert count(1, "trou") == "1 trou" and count(0, "copie") == "0 copie"
    assert count(3, "trou rempli") == "3 trous remplis"
    assert count(2, "copie corrigée") == "2 copies corrigées"
    assert count(2, "journal") == "2 journaux" and count(2, "exercice réussi") == "2 exercices réussis"
    assert count(2.5, "point") == "2,5 points" and count(1.0, "point") == "1 point"
    assert plural(2, "œil", "yeux") == "yeux"


# -- glosses ---------------------------------------------------------------------------------------
def python_error(code: str, **names) -> tuple[str, str]:
    try:
        exec(code, {"np": np, **names})  # noqa: S102 - the test's own snippets
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__, str(exc)
    raise AssertionError(f"{code!r} did not fail")


def test_list_times_list_is_explained():
    name, message = python_error("[1, 2] * [3, 4]")
    assert "deux listes" in glosses.error_gloss(name, message)
    name, message = python_error("[1, 2] * 0.5")
    assert "répète" in glosses.error_gloss(name, message)
    name, message = python_error("[1, 2] - [3, 4]")
    assert "élément par élément" in glosses.error_gloss(name, message)


@pytest.mark.parametrize("method, instead", [("sum", "sum(liste)"), ("max", "max(liste)"), ("shape", "len(liste)")])
def test_numpy_methods_on_a_list_are_explained(method, instead):
    name, message = python_error(f"[1, 2].{method}" + ("()" if method != "shape" else ""))
    text = glosses.error_gloss(name, message)
    assert f"« .{method} »" in text and "np.array" in text and instead in text


def test_shapes_that_do_not_broadcast_are_explained():
    name, message = python_error("np.ones((5, 8)) + np.ones((8, 5))")
    text = glosses.error_gloss(name, message)
    assert "5 × 8" in text and "8 × 5" in text and "formes incompatibles" in text
    name, message = python_error("np.ones((5, 8)) @ np.ones((5, 8))")
    assert "produit matriciel" in glosses.error_gloss(name, message)


def test_none_from_a_function_that_prints_is_explained():
    def prints(x):
        print(x)

    name, message = python_error("f(1) * 2.0", f=prints)
    assert "return" in glosses.error_gloss(name, message)
    assert "return" in glosses.value_gloss([0.5, 0.5], None)
    assert "return" in glosses.value_gloss([0.5, 0.5], [None, None])


def test_integer_division_is_suspected_only_when_it_fits():
    assert "//" in glosses.value_gloss([3.5, 0.25], [3, 0])  # 7 // 2, 1 // 4
    assert "//" in glosses.value_gloss(-3.5, -4)
    assert glosses.value_gloss([0.21, 0.21, 0.58], [1, 1, 2]) is None  # scores instead of weights
    assert glosses.value_gloss([3.0, 4.0], [3, 4]) is None  # nothing to round
    assert glosses.value_gloss([3.5], [3, 1]) is None


def test_an_unknown_error_has_no_gloss():
    assert glosses.error_gloss("KeyError", "'x'") is None
    assert glosses.error_gloss("TypeError", "f() missing 1 required positional argument: 'x'") is None


def test_syntax_errors_are_said_in_french():
    for code, words in [("x = (1", "jamais refermé"), ("x = 1)", "n'a pas été ouvert"), ("for i in x\n    pass", "« : »"),
                        ("x = 1\n  y = 2", "décalée"), ('x = "abc', "guillemets"), ("x = [1 2]", "virgule")]:
        try:
            compile(code, "<test>", "exec")
        except SyntaxError as exc:
            assert words in glosses.syntax_message(exc.msg), (code, exc.msg)
        else:
            raise AssertionError(code)
    assert glosses.syntax_message("something new in Python 3.20") is None


def test_moodle_comments_write_points_with_a_decimal_comma_and_cells_keep_a_dot():
    from trous.core import Course
    from trous.outputs.exports import grades_csv, moodle_feedback
    from trous.core.grades import BlankGrade, ExerciseGrade, SubmissionGrade

    from conftest import ROOT

    blanks = [BlankGrade("somme_exp", 1, 0.5, 1.0, "failed"), BlankGrade("scores", 2, 1.0, 1.0, "passed"),
              BlankGrade("nouveau", 3, 1.0, 1.5, "failed")]
    grade = SubmissionGrade("alice", "attention", "v", [ExerciseGrade("01_toux", "t", 2.5, 3.5, "blanks", blanks)])
    comment = moodle_feedback(grade)
    assert comment.startswith("Total 2,5/3,5.") and "01_toux : 2,5/3,5" in comment
    import csv  # noqa: PLC0415

    rows = list(csv.reader(grades_csv(Course.load(ROOT), [grade], {}).decode("utf-8-sig").splitlines()))
    assert rows[1][-3:] == ["2.5", "2.5", "3.5"]  # numbers a spreadsheet reads: a dot


def test_one_way_to_write_a_number_for_people():
    """Points are written one way wherever a teacher or a student reads them (the grade cell, the
    teacher's changes, counts, the CSV): two decimals at most, a decimal comma in French text."""
    from trous.core.wording import count, french_number
    from trous.outputs import exports, outcome, overrides

    third = 1 / 3
    assert french_number(third) == "0,33" and exports.number(third) == "0.33"
    assert outcome._points(third) == overrides._points(third) == count(third, "point") == "0,33 point"
    assert count(2.5, "point") == "2,5 points" and count(3, "copie") == "3 copies" and count(0, "trou") == "0 trou"
    assert french_number(-0.001) == "0" and french_number(1_000_000) == "1000000"
