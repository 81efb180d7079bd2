"""`trous doctor` on the real course, and on copies broken in the ways authors break courses."""

from __future__ import annotations

import shutil

import pytest

from conftest import ROOT, run_trous
from trous import doctor
from trous.course import Course


def test_the_real_course_is_healthy():
    result = run_trous(ROOT, "doctor", timeout=900)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 erreur(s)" in result.stdout
    n = len(Course.load(ROOT).exercises)
    assert f"{n} exercices vérifiés" in result.stdout


@pytest.fixture
def broken(tmp_path):
    """A writable copy of the course, limited to exercise 1 (fast to check)."""
    dest = tmp_path / "cours"
    dest.mkdir()
    for name in ("course.yaml", "exercises", "solutions", "graders"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(source, dest / name)
    return dest


def findings(folder, *only, graders=True):
    report = doctor.run(Course.load(folder), only=list(only) or ["01_toux"], graders=graders)
    return [str(f) for f in report.findings]


def test_solution_changed_outside_the_blanks_is_located(broken):
    path = broken / "solutions" / "01_toux.py"
    lines = path.read_text(encoding="utf-8").split("\n")
    where = next(i for i, line in enumerate(lines) if line.startswith("poids = "))
    lines[where] = lines[where].replace("softmax(scores)", "softmax(list(scores))")
    path.write_text("\n".join(lines), encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("ne correspond pas à l'exercice" in f and f"solutions/01_toux.py:{where + 1}" in f for f in found), found


def test_blank_count_must_match_course_yaml(broken):
    path = broken / "exercises" / "01_toux.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nbonus = ___\n", encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("4 trous « ___ » dans le fichier" in f and "3 déclarés" in f for f in found), found


def test_a_public_check_that_ignores_its_blank_is_caught(broken):
    checks = broken / "exercises" / "test_01_toux.py"
    text = checks.read_text(encoding="utf-8")
    # The `scores` check now looks at something the blank does not compute.
    text = text.replace('expect("scores", [1, 1, 2])', 'expect("x[2]", [1, 1])')
    checks.write_text(text, encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("passe même quand ce trou vaut ___" in f and "scores" in f for f in found), found


def test_a_solution_failing_its_public_check_is_caught(broken):
    checks = broken / "exercises" / "test_01_toux.py"
    checks.write_text(checks.read_text(encoding="utf-8").replace("[0.79, 0.79]", "[0.8, 0.7]"), encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("la solution échoue à la vérification du trou « nouveau »" in f for f in found), found


def test_a_weak_grader_lets_mutants_survive(broken):
    grader = broken / "graders" / "test_01_toux.py"
    # Without hidden variants, hard-coding `scores` is not caught: the doctor must say so.
    grader.write_text(
        "from trous.spec import SOLUTION, blank, expect\n"
        "somme_exp = blank('somme_exp', expect('softmax([0.5, 2.0, -1.0])', SOLUTION))\n"
        "scores = blank('scores', expect('scores', SOLUTION))\n"
        "nouveau = blank('nouveau', expect('nouveau', SOLUTION))\n", encoding="utf-8")
    found = findings(broken)
    assert any("mutant survivant au trou « scores »" in f and "écrit en dur" in f for f in found), found
    assert not any("somme_exp" in f and "mutant survivant" in f and "valeur écrite en dur" in f for f in found)


def test_a_grader_checking_an_unknown_blank_is_refused(broken):
    grader = broken / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + "\nautre = blank('inconnu', expect('x', SOLUTION))\n",
                      encoding="utf-8")
    found = findings(broken)
    assert any("inconnu" in f for f in found), found
