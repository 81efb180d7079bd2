"""course.yaml's blank ids against what the exercise's lines assign: a swap is named, with its fix,
by `trous doctor` and by `trous grade` (which refuses to give one blank's points to another)."""

from __future__ import annotations

import shutil

import pytest

from conftest import ROOT, copy_course, run_trous
from trous.core import blanknames


@pytest.fixture
def course_copy(tmp_path):
    return copy_course(tmp_path / "cours")


def swap_ids(folder, first: str, second: str) -> None:
    """Swap two blank ids of exercise 01_toux in course.yaml (its entry only)."""
    path = folder / "course.yaml"
    text = path.read_text(encoding="utf-8")
    start, end = text.index("- id: 01_toux\n"), text.index("- id: 02_places\n")
    part = text[start:end]
    a, b = f"- id: {first}\n", f"- id: {second}\n"
    assert part.count(a) == 1 and part.count(b) == 1
    part = part.replace(a, "@@").replace(b, a).replace("@@", b)
    path.write_text(text[:start] + part + text[end:], encoding="utf-8")


def line_of(path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(start))


def test_swapped_ids_are_named_by_the_doctor_with_their_fix(course_copy):
    swap_ids(course_copy, "scores", "nouveau")
    scores = line_of(course_copy / "exercises" / "01_toux.py", "scores = [___")
    nouveau = line_of(course_copy / "exercises" / "01_toux.py", "nouveau = [___")
    result = run_trous(course_copy, "doctor", "01_toux", timeout=600)
    assert result.returncode == 1, result.stdout
    out = result.stdout
    assert (f"exercises/01_toux.py:{scores} : le trou 2 de la ligne {scores} affecte `scores`, "
            f"course.yaml l'appelle `nouveau`") in out, out
    assert f"le trou 3 de la ligne {nouveau} affecte `nouveau`, course.yaml l'appelle `scores`" in out, out
    assert "écris-les dans cet ordre : somme_exp, scores, nouveau" in out, out
    # The line of course.yaml where the misnamed blank is declared.
    yaml_line = line_of(course_copy / "course.yaml", "          - id: nouveau")  # the first: 01_toux's
    assert f"(course.yaml:{yaml_line})" in out, out
    # Nothing else: the swapped ids are the one mistake, not a cascade of failing checks.
    assert "2 erreur(s)" in out, out


def test_swapped_ids_stop_grading(course_copy, tmp_path):
    swap_ids(course_copy, "scores", "nouveau")
    copies = tmp_path / "copies" / "alice"
    (copies / "exercises").mkdir(parents=True)
    shutil.copyfile(course_copy / "solutions" / "01_toux.py", copies / "exercises" / "01_toux.py")
    result = run_trous(course_copy, "grade", str(tmp_path / "copies"), timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    line = line_of(course_copy / "exercises" / "01_toux.py", "scores = [___")
    out = "".join(result.stdout.split())  # rich wraps long lines
    said = f"exercises/01_toux.py:{line} : le trou 2 de la ligne {line} affecte `scores`, course.yaml l'appelle `nouveau`"
    assert "".join(said.split()) in out, result.stdout
    assert not (course_copy / "resultats").exists() or not any((course_copy / "resultats").rglob("*.csv"))


def test_another_word_for_a_name_is_fine():
    template = "import math\ne = [1]\ntotal = ___\nmoyenne = ___ / len(e)\n"
    assert blanknames.contradictions(template, ["somme_exp", "moyenne"]) == []
    assert blanknames.contradictions(template, ["somme", "calcul"]) == []


@pytest.mark.parametrize("template, ids, expected", [
    # Permutation of the assigned names: both named, the order given.
    ("mu = ___\nsigma = ___\n", ["sigma", "mu"],
     ["le trou 1 de la ligne 1 affecte `mu`, course.yaml l'appelle `sigma`",
      "le trou 2 de la ligne 2 affecte `sigma`, course.yaml l'appelle `mu`"]),
    # An id naming another blank's variable, the other blank having a free word.
    ("mu = ___\nsigma = ___\n", ["ecart", "mu"],
     ["le trou 2 de la ligne 2 affecte `sigma`, course.yaml l'appelle `mu`"]),
    # A blank that assigns nothing, called by the name another blank assigns.
    ("def f(x):\n    return ___\n\ntotal = f(___)\n", ["total", "appel"],
     ["le trou 1 de la ligne 2 n'affecte aucune variable, course.yaml l'appelle `total`"]),
    # Augmented, annotated, unpacking and attribute targets.
    ("a, b = ___\nc: int = ___\nc += ___\n", ["c", "a", "x"],
     ["le trou 1 de la ligne 1 affecte `a, b`, course.yaml l'appelle `c`",
      "le trou 2 de la ligne 2 affecte `c`, course.yaml l'appelle `a`"]),
])
def test_contradictions(template, ids, expected):
    found = [c.message.split(" — ")[0] for c in blanknames.contradictions(template, ids)]
    assert found == expected


def test_a_blank_given_to_a_call_may_be_named_after_what_it_holds():
    # The student writes `scores` in softmax(___): an id « scores » there says what it holds, not a swap.
    template = "scores = ___\npoids = softmax(___)\nsortie = f(x=___)\n"
    assert blanknames.contradictions(template, ["produits", "scores", "poids"]) == []
    # Whole values still speak: `mu = ___` called « sigma » while `sigma = ___` exists.
    assert blanknames.contradictions("mu = ___\nsigma = ___\n", ["sigma", "ecart"]) != []


def test_two_blanks_assigning_one_name_are_no_contradiction():
    template = "x = ___\nx = x + ___\ny = [___ for t in range(3)]\n"
    assert blanknames.contradictions(template, ["depart", "x", "y"]) == []
    assert blanknames.contradictions(template, ["x", "pas", "y"]) == []


def test_the_fix_gives_the_order_when_there_is_one():
    (first, *_) = blanknames.contradictions("mu = ___\nsigma = ___\nn = ___\n", ["sigma", "mu", "effectif"])
    assert first.message.endswith("écris-les dans cet ordre : mu, sigma, effectif")


def test_a_blank_in_a_string_or_comment_is_not_counted():
    template = 'a = "___"\nb = ___  # ___\nc = ___\n'
    assert [t.names for t in blanknames.targets(template)] == [("b",), ("c",)]
    assert len(blanknames.contradictions(template, ["c", "b"])) == 2


def test_a_solution_changed_outside_the_blanks_shows_both_lines(course_copy):
    path = course_copy / "solutions" / "01_toux.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("poids = softmax(scores)", "poids = softmax(sorted(scores))"), encoding="utf-8")
    line = line_of(path, "poids = ")
    tline = line_of(course_copy / "exercises" / "01_toux.py", "poids = ")
    result = run_trous(course_copy, "doctor", "01_toux", "--sans-correcteurs", timeout=600)
    assert result.returncode == 1
    assert (f"solutions/01_toux.py:{line} : la solution ne correspond pas à l'exercice" in result.stdout
            and f"la solution écrit ligne {line} « poids = softmax(sorted(scores)) », l'exercice ligne {tline} "
                f"« poids = softmax(scores) »" in result.stdout), result.stdout
