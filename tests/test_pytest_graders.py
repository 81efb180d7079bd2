"""Issue 12: `pytest graders/` runs the hidden graders, on the solutions or on one student's copy.

Every run here is a real `pytest` process (the plugin is the `pytest11` entry point), on the real
course or on a small course cut from it; `--copie` is compared with a real `trous grade`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT, run_pytest
from grading_support import mini_course, run_trous
from trous.author.copie import Native
from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.grade.pytest_graders import BACKEND

UNMARKED = '''

import pytest


@pytest.mark.trou("scores")
def test_marque(eleve):
    assert len(eleve("scores")) == 3


def test_sans_trou(eleve):
    assert eleve("scores") == [1, 1, 2]
'''


def test_the_course_graders_pass_on_the_reference_solutions():
    result = run_pytest(ROOT, "graders/")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "trous — correcteurs, trou par trou" in result.stdout
    assert "sur les solutions de référence :" in result.stdout
    # The test functions ran with the declarations, and are counted with their blank.
    assert "✔ 01_toux · « somme_exp » : 4 vérifications, toutes passent" in result.stdout
    assert re.search(r"✔ 04_distance · « poids » : 2 vérifications", result.stdout)
    assert re.search(r"✔ 10_tete · « normalisation » : 2 vérifications", result.stdout)
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_the_runner_is_given_through_the_config_stash_not_a_hook(pytestconfig):
    """This very session loads both entry points: author/copie.py puts its runner in the stash the
    graders' plugin reads; no hook of trous's own is declared for it."""
    assert isinstance(pytestconfig.stash.get(BACKEND, None), Native)
    assert not hasattr(pytestconfig.hook, "pytest_trous_backend")


def test_a_broken_solution_fails_the_graders_in_french_blank_by_blank(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    solution = root / "solutions" / "01_toux.py"
    text = solution.read_text(encoding="utf-8")
    # softmax divides by the largest exponential, not their sum: declarations compare the solution
    # with itself and cannot see it; the test function's property can.
    solution.write_text(text.replace("total = sum(e)", "total = max(e)"), encoding="utf-8")
    result = run_pytest(root, "graders/")
    assert result.returncode == 1, result.stdout[-3000:]
    out = result.stdout
    assert ("trou « somme_exp » (01_toux), vérification cachée « les poids font 1 et gardent l'ordre des scores » :"
            in out)
    assert "l'assertion du test échoue" in out
    assert "assert sum(poids) == pytest.approx(1)" in out  # pytest's own report, for the author
    assert "✘ 01_toux · « somme_exp » : 3 sur 4 échouent" in out
    assert "✔ 01_toux · « scores »" in out

    # A solution that no longer defines what a declaration asks: that declaration fails, in French.
    solution.write_text(text.replace("def softmax(s):", "def softmax2(s):").replace("softmax(scores)",
                                                                                     "softmax2(scores)"),
                        encoding="utf-8")
    result = run_pytest(root, "graders/")
    assert result.returncode == 1
    assert "trou « somme_exp » (01_toux), déclaration « somme_exp » :" in result.stdout
    assert "ne donne pas de valeur (NameError: name 'softmax' is not defined)" in result.stdout


def test_a_test_without_trou_marker_is_refused_everywhere(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    grader = root / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + UNMARKED, encoding="utf-8")
    said = "ce test ne dit pas quel trou il note : ajoutez @pytest.mark.trou"

    result = run_pytest(root, "graders/")
    assert result.returncode == 1
    assert f"graders/test_01_toux.py::test_sans_trou refusé : {said}" in result.stdout
    assert "trous de 01_toux : somme_exp, scores, nouveau" in result.stdout

    classe = tmp_path / "classe"
    (classe / "alice" / "exercises").mkdir(parents=True)
    shutil.copy(root / "solutions" / "01_toux.py", classe / "alice" / "exercises" / "01_toux.py")
    graded = run_trous("grade", str(classe), "--resultats", str(tmp_path / "resultats"), cwd=root)
    assert graded.returncode != 0
    assert "le correcteur ne peut pas tourner" in graded.stdout and said in graded.stdout
    assert not (tmp_path / "resultats" / "grades.csv").exists()  # refused before grading anyone

    doctor = run_trous("doctor", cwd=root)
    assert doctor.returncode != 0
    assert said in doctor.stdout and "[erreur]" in doctor.stdout


def test_a_grader_file_of_no_exercise_is_refused(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    (root / "graders" / "test_aide.py").write_text('''import pytest


@pytest.mark.trou("scores")
def test_perdu(eleve):
    assert eleve("scores") == [1, 1, 2]
''', encoding="utf-8")
    result = run_pytest(root, "graders/")
    assert result.returncode == 1
    assert "graders/test_aide.py n'est le correcteur d'aucun exercice de course.yaml" in result.stdout
    doctor = run_trous("doctor", cwd=root)
    assert "test_aide.py a des fonctions de test mais n'est le correcteur d'aucun exercice" in doctor.stdout


def _table(out: str) -> dict[str, dict[str, str]]:
    """The per-blank points `--copie` prints: exercise → blank → « 1/1 »."""
    table: dict[str, dict[str, str]] = {}
    exercise = None
    started = False
    for line in out.splitlines():
        if line.startswith("Points que trous grade donne à la copie"):
            started = True
            continue
        if not started:
            continue
        found = re.match(r"^  (\d\d_\w+) : ", line)
        if found:
            exercise = found.group(1)
            table[exercise] = {}
            continue
        found = re.match(r"^    [✔✘] « (\w+) » ([\d,]+)/([\d,]+)", line)
        if found and exercise:
            table[exercise][found.group(1)] = f"{found.group(2)}/{found.group(3)}".replace(",", ".")
    return table


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Three of the sample students, graded by `trous grade`."""
    base = tmp_path_factory.mktemp("copie")
    classe = base / "classe"
    for name in ("alice_parfaite", "chloe_en_dur", "david_faux"):
        shutil.copytree(ROOT / "examples" / "classe" / name, classe / name)
    result = run_trous("grade", str(classe), "--resultats", str(base / "resultats"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return classe, base / "resultats"


@pytest.mark.parametrize("student", ["alice_parfaite", "chloe_en_dur", "david_faux"])
def test_copie_gives_the_points_trous_grade_gives(graded_class, student):
    classe, results = graded_class
    result = run_pytest(ROOT, "graders/", "--copie", str(classe / student), timeout=600)
    assert "Points que trous grade donne à la copie « " + student + " »" in result.stdout, result.stdout[-3000:]
    shown = _table(result.stdout)
    graded = json.loads((results / "results" / f"{student}.json").read_text(encoding="utf-8"))
    expected = {e["id"]: {b["id"]: f"{b['score']:g}/{b['max_score']:g}" for b in e["blanks"]}
                for e in graded["exercises"]}
    assert shown == expected
    total = re.search(r"^  total : ([\d,]+)/([\d,]+)$", result.stdout, re.M)
    assert total and float(total.group(1).replace(",", ".")) == graded["score"]
    if student == "alice_parfaite":
        assert result.returncode == 0
    else:
        assert result.returncode == 1  # the items that fail on this copy fail the pytest run


def test_a_hostile_value_cannot_fool_a_graders_assert(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    grader = root / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + '''

import pytest


@pytest.mark.trou("scores")
def test_les_scores_du_cours(eleve):
    """les scores du cours"""
    assert eleve("scores") == [1, 1, 2]


@pytest.mark.trou("nouveau")
def test_le_nouveau_vecteur_du_cours(eleve):
    """le nouveau vecteur du cours"""
    assert eleve("nouveau") == pytest.approx([0.79, 0.79], abs=0.01)
''', encoding="utf-8")
    solution = (root / "solutions" / "01_toux.py").read_text(encoding="utf-8")
    liar = ("type('Menteur', (), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False, "
            "'__repr__': lambda s: '1'})()")
    fake_float = ("type('Flottant', (float,), {'__eq__': lambda a, b: True, '__ne__': lambda a, b: False, "
                  "'__repr__': lambda a: '0.79', '__float__': lambda a: 0.79, '__hash__': float.__hash__})(5.0)")
    copy = (solution.replace("sum(a * b for a, b in zip(t, toux))", liar)
            .replace("sum(poids[i] * x[i][j] for i in range(len(x)))", fake_float))
    assert copy.count("Menteur") == 1 and copy.count("Flottant") == 1
    (tmp_path / "classe" / "mallory" / "exercises").mkdir(parents=True)
    (tmp_path / "classe" / "mallory" / "exercises" / "01_toux.py").write_text(copy, encoding="utf-8")
    result = run_pytest(root, "graders/", "--copie", str(tmp_path / "classe" / "mallory"),
                        "-k", "du_cours")
    out = result.stdout
    assert result.returncode == 1, out[-3000:]
    assert "2 failed" in out and "passed" not in out.split("short test summary")[-1]
    assert "<objet Menteur : seul son type est revenu du bac à sable>" in out  # what the assert compared
    assert "assert [5.0, 5.0] == approx(" in out.replace("\n", " ") or "5.0" in out
    table = _table(out)
    assert table["01_toux"]["scores"] == "0/1" and table["01_toux"]["nouveau"] == "0/1"


PUBLIC_TEST = '''

import pytest


@pytest.mark.trou("nouveau")
def test_le_nouveau_vecteur_du_cours(eleve):
    """le nouveau vecteur vaut [0,79 ; 0,79]"""
    assert eleve("nouveau") == pytest.approx([0.79, 0.79], abs=0.005)
'''


def test_a_public_test_function_runs_in_pytest_exercises_on_the_students_own_file(tmp_path):
    """Run on the student's own file, and part of its blank's verdict (never an item of its own
    beside a blank already marked ✔)."""
    root = mini_course(tmp_path / "cours", ("01_toux",))
    checks = root / "exercises" / "test_01_toux.py"
    checks.write_text(checks.read_text(encoding="utf-8") + PUBLIC_TEST, encoding="utf-8")
    own = root / "exercises" / "01_toux.py"
    solution = (root / "solutions" / "01_toux.py").read_text(encoding="utf-8")

    # The template as distributed: the blank is « à remplir », as its declarations are.
    result = run_pytest(root, "exercises/", "-v")
    assert "FAILURES" not in result.stdout, result.stdout[-3000:]  # (pytest exercises/ exits 1: blanks to fill)
    assert "exercises/01_toux.py::nouveau À REMPLIR" in result.stdout
    assert "test_le_nouveau_vecteur_du_cours" not in result.stdout

    own.write_text(solution, encoding="utf-8")
    result = run_pytest(root, "exercises/")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Bravo : tout est juste." in result.stdout

    own.write_text(solution.replace("for j in range(2)]", "for j in range(2)][::-1] + [0]"), encoding="utf-8")
    result = run_pytest(root, "exercises/", "-v")
    assert result.returncode == 1
    assert "exercises/01_toux.py::nouveau FAUX" in result.stdout
    assert "vérification « le nouveau vecteur vaut [0,79 ; 0,79] » : ne passe pas" in result.stdout


def test_copie_reads_a_forged_answer_under_bounds_and_bounds_its_own_tests(tmp_path):
    # Issue 20: the shape bomb of a forged answer, and a test that loops on a copy's value, in the
    # teacher's own pytest process: each fails its item, the run ends, the process stays small.
    root = mini_course(tmp_path / "cours", ("01_toux",))
    grader = root / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + '''

import pytest


@pytest.mark.trou("scores")
def test_qui_calcule_sans_fin(eleve):
    """les scores"""
    scores = eleve("scores")
    total = 0
    while scores[0] > 100:
        total += 1
    assert len(scores) == 3
''', encoding="utf-8")
    exercise = Course.load(root).exercise("01_toux")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    fills = blanks_mod.align(exercise.template_path.read_text(encoding="utf-8"), solution)
    child = "__import__('sys').modules['trous.sandbox.child'].__dict__"
    bomb = (f"({child}.__setitem__('_probe', lambda setup, expr, ns, limit: "
            "{'value': [{'$nd': {'k': 'O', 's': [10_000_000], 'v': []}}] * 150}), sum(e))[1]")
    copies = {"bombe": {0: bomb}, "grands_scores": {1: "1000 + sum(a * b for a, b in zip(t, toux))"}}
    measure = ("import resource, subprocess, sys\n"
               "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "sys.stdout.write(done.stdout)\n"
               "print('\\nMAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    for name, replaced in copies.items():
        (tmp_path / "classe" / name / "exercises").mkdir(parents=True)
        (tmp_path / "classe" / name / "exercises" / "01_toux.py").write_text(
            blanks_mod.splice(solution, fills, replaced), encoding="utf-8")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTEST_ADDOPTS", None)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", measure, str(BIN / "pytest"), "-p", "no:cacheprovider", "graders/",
                               "--copie", str(tmp_path / "classe" / name)], cwd=root, env=env, capture_output=True,
                              text=True, timeout=600)
        out = done.stdout
        assert time.monotonic() - started < 240, name
        assert "Points que trous grade donne à la copie" in out, out[-3000:]
        assert int(out.rsplit("MAXRSS", 1)[1].split()[0]) / 1024 < 500, (name, out[-300:])
        if name == "bombe":
            assert "tableau annoncé de plus de 400 000 éléments" in out, out[-3000:]
            assert _table(out)["01_toux"]["somme_exp"] == "0/1"
        else:
            assert "le test a dépassé ses propres bornes" in out, out[-3000:]
            assert _table(out)["01_toux"]["scores"] == "0/1"
