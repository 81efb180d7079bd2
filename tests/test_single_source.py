"""One source per exercise: a solution with `# ___` markers; `trous exercices` derives the student's
file, `trous doctor` checks it is up to date and that course.yaml names the blanks as the markers do."""

from __future__ import annotations


import pytest

from conftest import ROOT, copy_course, run_trous
from trous.author.derive import DeriveError, derive


def marked_toux() -> str:
    """solutions/01_toux.py of the course, its three fills marked by hand."""
    text = (ROOT / "solutions" / "01_toux.py").read_text(encoding="utf-8")
    for old, new in [
        ("    total = sum(e)\n", "    total = sum(e)  # ___ somme_exp\n"),
        ("   # produit scalaire de t avec toux\n", "   # produit scalaire de t avec toux  # ___ : [___ for t in x]\n"),
        ("   # somme des poids[i] * x[i][j]\n", "   # somme des poids[i] * x[i][j]  # ___ : [___ for j in range(2)]\n"),
    ]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def course_copy(tmp_path):
    return copy_course(tmp_path / "cours")


def test_the_student_file_is_derived_from_the_marked_solution(course_copy):
    (course_copy / "solutions" / "01_toux.py").write_text(marked_toux(), encoding="utf-8")
    (course_copy / "exercises" / "01_toux.py").unlink()
    result = run_trous(course_copy, "exercices", "01_toux")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "exercises/01_toux.py écrit (3 trou(s) : somme_exp, scores, nouveau)" in result.stdout
    assert "étape suivante : trous doctor" in result.stdout
    # The oracle: the exercise file the author used to write by hand, byte for byte.
    assert (course_copy / "exercises" / "01_toux.py").read_bytes() == (ROOT / "exercises" / "01_toux.py").read_bytes()
    again = run_trous(course_copy, "exercices", "01_toux", "--verifier")
    assert again.returncode == 0 and "exercises/01_toux.py à jour" in again.stdout, again.stdout
    doctor = run_trous(course_copy, "doctor", "01_toux", timeout=600)
    assert doctor.returncode == 0 and "0 erreur(s)" in doctor.stdout, doctor.stdout[-3000:]


def test_a_solution_changed_after_derivation_is_said_stale(course_copy):
    path = course_copy / "solutions" / "01_toux.py"
    path.write_text(marked_toux().replace("poids = softmax(scores)", "poids = softmax(list(scores))"), encoding="utf-8")
    line = next(i for i, l in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if l.startswith("poids ="))
    check = run_trous(course_copy, "exercices", "--verifier")
    assert check.returncode == 1
    assert (f"erreur : exercises/01_toux.py:{line} : 01_toux.py n'est plus celui que donne solutions/01_toux.py "
            f"(ligne {line}) : lance « trous exercices »") in check.stdout, check.stdout
    doctor = run_trous(course_copy, "doctor", "01_toux", timeout=600)
    assert doctor.returncode == 1 and f"exercises/01_toux.py:{line} : 01_toux.py n'est plus celui" in doctor.stdout
    assert "1 erreur(s)" in doctor.stdout, doctor.stdout  # not a cascade
    written = run_trous(course_copy, "exercices")
    assert written.returncode == 0, written.stdout
    assert "poids = softmax(list(scores))" in (course_copy / "exercises" / "01_toux.py").read_text(encoding="utf-8")
    # Today's format elsewhere: the other exercises' files are not touched.
    for other in ("02_places.py", "13_a_la_main.py"):
        assert (course_copy / "exercises" / other).read_bytes() == (ROOT / "exercises" / other).read_bytes()


def test_course_yaml_naming_the_blanks_otherwise_is_named(course_copy):
    solution = marked_toux().replace("# ___ somme_exp", "# ___")  # now the id is the name assigned: total
    (course_copy / "solutions" / "01_toux.py").write_text(solution, encoding="utf-8")
    line = next(i for i, l in enumerate(solution.splitlines(), 1) if "total = sum(e)" in l)
    doctor = run_trous(course_copy, "doctor", "01_toux", timeout=600)
    assert doctor.returncode == 1
    assert (f"solutions/01_toux.py:{line} : le trou 1 de la ligne {line} s'appelle `total` dans la solution, "
            "course.yaml l'appelle `somme_exp` : renomme-le « total » dans course.yaml, ou écris « # ___ somme_exp » "
            f"à la ligne {line} de la solution") in doctor.stdout, doctor.stdout


def test_todays_format_has_nothing_to_derive(course_copy):
    result = run_trous(course_copy, "exercices")
    assert result.returncode == 0 and "aucune solution avec des marqueurs" in result.stdout
    for path in (ROOT / "exercises").glob("[0-9]*.py"):
        assert (course_copy / "exercises" / path.name).read_bytes() == path.read_bytes()


def test_a_marked_solution_course_yaml_does_not_know_is_named(course_copy):
    (course_copy / "solutions" / "14_bonus.py").write_text("x = 2 * 3  # ___\n", encoding="utf-8")
    result = run_trous(course_copy, "exercices")
    assert result.returncode == 1
    assert ("erreur : solutions/14_bonus.py a des marqueurs « # ___ » mais course.yaml n'a pas d'exercice « 14_bonus » : "
            "ajoute son entrée (id: 14_bonus, file: exercises/14_bonus.py, title, source, et un hint pour chacun de ses trous, "
            "dans cet ordre : x)") in result.stdout, result.stdout
    assert not (course_copy / "exercises" / "14_bonus.py").exists()
    for path in (ROOT / "exercises").glob("[0-9]*.py"):
        assert (course_copy / "exercises" / path.name).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("solution, student, ids", [
    ("total = sum(e)  # ___\n", "total = ___\n", ["total"]),
    ("def f(x):\n    return x * 2  # ___ double\n", "def f(x):\n    return ___\n", ["double"]),
    ("y = (1,\n     2)  # ___ a, b : (___, ___)\n", "y = (___, ___)\n", ["a", "b"]),
    ("z = max(1, 2)  # le plus grand  # ___\n", "z = ___  # le plus grand\n", ["z"]),
    ("n = 0\nn += len('abc')  # ___ longueur\n", "n = 0\nn += ___\n", ["longueur"]),
    ("Q = 3  # ___\n", "Q = ___\n", ["q"]),
])
def test_derive(solution, student, ids):
    derived = derive(solution)
    assert derived.student == student
    assert derived.ids == ids


@pytest.mark.parametrize("solution, line, words", [
    ("x = 1  # ___\nx = 2  # ___\n", 2, "deux trous s'appelleraient « x »"),
    ("a, b = 1, 2  # ___\n", 1, "quel id pour ce trou"),
    ("for i in range(3):  # ___\n    pass\n", 1, "rien à mettre en trou"),
    ("y = f(1)  # ___ : g(___)\n", 1, "la valeur est « f(1) »"),
    ("y = (1, 2)  # ___ a : (___, ___)\n", 1, "1 id(s) pour 2 trou(s)"),
    ("y = ___ + 1  # ___\n", 1, "la solution contient un ___"),
    ("y = 1  # ___ : 1\n", 1, "n'a pas de ___"),
])
def test_bad_markers_are_named(solution, line, words):
    with pytest.raises(DeriveError) as caught:
        derive(solution)
    assert caught.value.line == line and words in caught.value.message, caught.value.message


def test_todays_format_is_converted_giving_back_its_files(course_copy):
    result = run_trous(course_copy, "exercices", "--marquer", "01_toux", "04_distance", "06_moyenne")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "solutions/01_toux.py : 3 marqueur(s) « # ___ » ajouté(s)" in result.stdout
    assert "exercises/06_moyenne.py se déduit désormais de la solution (trous exercices), réécrit : seuls les " \
           "espaces avant ses commentaires changent" in result.stdout
    marked = (course_copy / "solutions" / "01_toux.py").read_text(encoding="utf-8")
    assert "    total = sum(e)  # ___ somme_exp\n" in marked  # the id is not the name: written
    assert "# ___ : [___ for t in x]\n" in marked  # the id is the name: derived
    for name in ("01_toux.py", "04_distance.py"):  # the hand-kept files, given back byte for byte
        assert (course_copy / "exercises" / name).read_bytes() == (ROOT / "exercises" / name).read_bytes()
    old = (ROOT / "exercises" / "06_moyenne.py").read_text(encoding="utf-8").splitlines()
    new = (course_copy / "exercises" / "06_moyenne.py").read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(old) == len(new) and changed and all(a.split() == b.split() for a, b in changed), changed
    check = run_trous(course_copy, "exercices", "--verifier")
    assert check.returncode == 0 and "exercises/06_moyenne.py à jour" in check.stdout, check.stdout
    doctor = run_trous(course_copy, "doctor", "01_toux", "04_distance", "06_moyenne", timeout=900)
    assert doctor.returncode == 0 and "3 exercices vérifiés, 0 erreur(s)" in doctor.stdout, doctor.stdout[-3000:]


def test_a_blank_no_marker_can_say_is_left_in_todays_format():
    from trous.author.derive import mark

    with pytest.raises(DeriveError) as caught:
        mark("for i in ___:\n    print(i)\n", "for i in range(3):\n    print(i)\n", ["bornes"])
    assert caught.value.line == 1 and "n'est pas dans la valeur d'une ligne" in caught.value.message
