"""Issue 20 §1, §2, §4 through `trous grade`, as a teacher runs it on a class.

Copies that forge what the sandbox sends back sit among honest ones: the fill of 01's `somme_exp`
replaces the function of the child process that answers the checks and the graders' test
functions (the issue's attack), so that what reaches the grader bypasses every check of the
child's. The class must be graded to the end (grades.csv, the report), every honest copy must keep
exactly its points, each forger must have a result whose remark names why, and no process of the
teacher's may grow past 500 MiB while they are graded.

Then copies that are right but keep a large value at top level (§2) keep every point, one past the
bound is told what it used and the bound, and a copy that sleeps through its time is told it waited (§4).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grading_support import mini_course
from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.sandbox.backend import bwrap_available

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="trous grade needs bubblewrap")

BIN = Path(sys.executable).parent
CHILD = "__import__('sys').modules['trous.sandbox.child'].__dict__"


def _forged(answer: str) -> str:
    """A somme_exp fill that sums right, after making the child answer every later probe with `answer`."""
    return f"({CHILD}.__setitem__('_probe', lambda setup, expr, ns, limit: {answer}), sum(e))[1]"


FORGERS = {
    # name: (fill of somme_exp, what its remark must say)
    "bombe_de_forme": (_forged("{'value': [{'$nd': {'k': 'O', 's': [10_000_000], 'v': []}}] * 150}"),
                       "tableau annoncé de plus de"),
    "forme_menteuse": (_forged("{'value': {'$nd': {'k': 'f', 's': [30, 30], 'v': [0.5, 0.2, 0.3]}}}"),
                       "forme ne correspond pas"),
    "imbrication": (_forged("{'value': __import__('functools').reduce(lambda a, _: [a], range(400), [])}"),
                    "imbriquée"),
    "texte_geant": (_forged("{'value': 'x' * 3_000_000}"), "texte de plus de"),
    "etiquette_fausse": (_forged("{'value': [{'$float': 'nan'}, {'$float': '1e5'}, 0.5]}"), "nombre étiqueté"),
    "fausse_erreur": (_forged("{'error': {'kind': 'timeout', 'message': 'SECRET ' + repr(ns.get('x'))}}"), ""),
    "etat_force": (f"({CHILD}.__setitem__('state', lambda ns, names, budget=None: "
                   "{'x': {'$nd': {'k': 'O', 's': [10_000_000], 'v': []}}}), sum(e))[1]",
                   "les variables que laisse le programme n'ont pas pu être comparées"),
}


def trous(*args: str, cwd: Path, timeout: float = 900) -> tuple[subprocess.CompletedProcess, float]:
    """Run trous in a process of its own that reports the largest RSS of the whole tree below it
    (the kernel's count over every process reaped under it: grader, test workers, sandboxes)."""
    measure = ("import resource, subprocess, sys\n"
               "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)\n"
               "print('\\nMAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
               "sys.exit(done.returncode)")
    done = subprocess.run([sys.executable, "-c", measure, str(BIN / "trous"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin",
                                                           "PYTHONDONTWRITEBYTECODE": "1"})
    maxrss = int(done.stdout.rsplit("MAXRSS", 1)[1].split()[0]) / 1024
    return done, maxrss


def spliced(course: Course, exercise_id: str, fills: dict[int, str]) -> str:
    exercise = course.exercise(exercise_id)
    template, solution = exercise.template_path.read_text(), exercise.solution_path.read_text()
    return blanks_mod.splice(solution, blanks_mod.align(template, solution), fills)


def grades_of(results: Path) -> dict[str, dict]:
    return {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (results / "results").glob("*.json"))}


@pytest.fixture(scope="module")
def forged_class(tmp_path_factory):
    root = mini_course(tmp_path_factory.mktemp("cours") / "cours", ("01_toux", "03_masque"))
    course = Course.load(root)
    copies = root / "classe"
    honest = {
        "honnete_parfait": {e: course.exercise(e).solution_path.read_text() for e in ("01_toux", "03_masque")},
        "honnete_partiel": {"01_toux": spliced(course, "01_toux", {1: "[0 for t in x]"}),
                            "03_masque": course.exercise("03_masque").solution_path.read_text()},
        "honnete_debutant": {e: course.exercise(e).template_path.read_text() for e in ("01_toux", "03_masque")},
    }
    for name, files in honest.items():
        for exercise_id, text in files.items():
            (copies / name / "exercises").mkdir(parents=True, exist_ok=True)
            (copies / name / "exercises" / f"{exercise_id}.py").write_text(text, encoding="utf-8")
    # Alone first: what each honest copy gets with no forger in the class.
    alone = root / "seuls-resultats"
    done, _ = trous("grade", str(copies), "--resultats", str(alone), cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    baseline = grades_of(alone)
    for name, (fill, _) in FORGERS.items():
        (copies / name / "exercises").mkdir(parents=True)
        (copies / name / "exercises" / "01_toux.py").write_text(spliced(course, "01_toux", {0: fill}), encoding="utf-8")
        (copies / name / "exercises" / "03_masque.py").write_text(
            course.exercise("03_masque").solution_path.read_text(), encoding="utf-8")
    results = root / "classe-resultats"
    started = time.monotonic()
    done, maxrss = trous("grade", str(copies), "--resultats", str(results), cwd=root)
    return done, maxrss, time.monotonic() - started, results, baseline


def test_the_class_is_graded_to_the_end(forged_class):
    done, _, seconds, results, _ = forged_class
    assert done.returncode == 0, done.stdout + done.stderr
    with open(results / "grades.csv", encoding="utf-8") as f:
        students = {row[0] for row in csv.reader(f)}
    assert {*FORGERS, "honnete_parfait", "honnete_partiel", "honnete_debutant"} <= students
    assert (results / "rapport.html").exists()
    assert seconds < 300, seconds


def test_every_honest_copy_keeps_exactly_its_grade(forged_class):
    _, _, _, results, baseline = forged_class
    grades = grades_of(results)
    assert baseline["honnete_parfait"]["score"] == baseline["honnete_parfait"]["max_score"]
    assert baseline["honnete_debutant"]["score"] == 0
    for name in ("honnete_parfait", "honnete_partiel", "honnete_debutant"):
        assert grades[name]["exercises"] == baseline[name]["exercises"], name


def test_each_forger_has_a_result_that_says_why(forged_class):
    _, _, _, results, _ = forged_class
    grades = grades_of(results)
    for name, (_, said) in FORGERS.items():
        exercise = next(e for e in grades[name]["exercises"] if e["id"] == "01_toux")
        somme = next(b for b in exercise["blanks"] if b["id"] == "somme_exp")
        assert somme["status"] == "failed" and somme["score"] == 0, (name, somme)
        assert said in somme["message"], (name, somme["message"])
        # What it forged never reaches its page: no hidden value, no text of its own.
        assert "SECRET" not in json.dumps(grades[name]), name
        # The other blanks ran in other processes, which it did not touch.
        assert all(b["status"] == "passed" for b in exercise["blanks"] if b["id"] != "somme_exp"), (name, exercise)


def test_no_process_of_the_teacher_grew_past_500_mib(forged_class):
    _, maxrss, _, _, _ = forged_class
    print(f"largest RSS of a process of the run: {maxrss:.0f} MiB")
    assert maxrss < 500, maxrss


# -- §2 and §4: memory a right copy keeps, and a copy that waits ----------------------------------------
def test_a_right_copy_that_keeps_a_large_value_keeps_every_point(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    course = Course.load(root)
    solution = course.exercise("01_toux").solution_path.read_text()
    fills = blanks_mod.align(course.exercise("01_toux").template_path.read_text(), solution)
    keeps = {
        # 300 MiB kept at top level by a right fill, with the module's functions around (a cycle).
        "garde_octets": "(globals().__setitem__('reserve', bytearray(300 * 2**20)), sum(e))[1]",
        "garde_tableau": "(globals().__setitem__('reserve', __import__('numpy').ones(300 * 2**17)), sum(e))[1]",
        # More than the bound (1024 MiB by default) in one run: told what it held, and the bound.
        "garde_trop": "(globals().__setitem__('reserve', [bytearray(400 * 2**20) for _ in range(3)]), sum(e))[1]",
        "dort": "(__import__('time').sleep(60), sum(e))[1]",
    }
    for name, fill in keeps.items():
        (root / "classe" / name / "exercises").mkdir(parents=True)
        (root / "classe" / name / "exercises" / "01_toux.py").write_text(
            blanks_mod.splice(solution, fills, {0: fill}), encoding="utf-8")
    done, _ = trous("grade", "classe", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    grades = grades_of(root / "classe-resultats")
    for name in ("garde_octets", "garde_tableau"):
        assert grades[name]["score"] == grades[name]["max_score"], (name, grades[name]["exercises"])
    somme = grades["garde_trop"]["exercises"][0]["blanks"][0]
    assert somme["status"] == "failed" and "limite de 1024 Mio par exécution" in somme["message"], somme["message"]
    assert "il en occupait déjà" in somme["message"], somme["message"]
    somme = grades["dort"]["exercises"][0]["blanks"][0]
    assert somme["status"] == "failed" and "attendait" in somme["message"], somme["message"]
    assert "boucle sans fin" not in somme["message"], somme["message"]


def test_the_teacher_is_told_which_copies_tampered_with_the_grader(forged_class):
    done, _, _, results, _ = forged_class
    report = (results / "rapport.html").read_text(encoding="utf-8")
    listed = report.split('id="a-verifier"', 1)[1].split("</div>", 1)[0] if 'id="a-verifier"' in report else ""
    for name in FORGERS:
        assert f"« {name} »" in listed, name
    assert "honnete" not in listed
    assert "à vérifier" in done.stdout and "réponse du bac à sable refusée" in done.stdout, done.stdout[-3000:]
