"""A course of another subject, written for the purpose (tests/courses/meteo: two assignments, three
exercises, six blanks, hidden graders as checks and as pytest test functions), through the whole chain:
`trous doctor`, `trous edition`, the students' `pytest exercises/`, `trous notebooks`, `trous grade` on
synthetic copies, `trous nbgrader build` then nbgrader's own `generate_assignment` and `autograde`.

Each copy's points are worked out by hand from its fills (below, with why). And nothing the chain
writes or prints may speak of the repository's own course: the platform carries no trace of it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, run_pytest, run_trous

from trous.core.blanks import align, splice

pytestmark = pytest.mark.slow

METEO = ROOT / "tests" / "courses" / "meteo"
# Words of the repository's course (the attention mechanism) that no other course has any reason to say.
# « Attention : » alone is French for « careful: » (a warning), not the course.
FOREIGN = re.compile(r"(?i)toux|softmax|explorateur|partie ?5|fi[èe]vre|transformer|places|masque|"
                     r"attention(?! :)|exercises/0[1-9]_(?!moyenne|amplitude|pluie)")

S = object()  # the solution's fill
# Each student's fills, blank by blank in course order (None: left `___`), and the points each deserves.
FILLS = {
    # Every fill the solution's: 1 + 2 + 1 + 1 + 2 + 1.
    "alice": [S, S, S, S, S, S],
    # total right (1); moyenne divides by 4 written out: right on the course's 4 readings only, the hidden
    # grader's 5, 1 and 3 readings refuse it (0); plus_haute right (1); plus_basse the course's value 9.0
    # written out (0); compte counts v >= seuil: the hidden case [5, 5] above 5 wants 0, gets 2 (0);
    # cumul right (1).
    "bruno": [S, "total / 4", S, "9.0", "sum(1 for v in mm if v >= seuil)", S],
    # total right (1), moyenne left blank (0); exercise 2 not handed in (0, 0); compte in other words but
    # right (2); cumul the course's 16.7 written out: the hidden test's other rain wants 6.5 (0).
    "chloe": [S, None, None, None, "len([v for v in mm if v > seuil])", "16.7"],
}
POINTS = {  # student → exercise → blank → points
    "alice": {"01_moyenne": {"total": 1, "moyenne": 2}, "02_amplitude": {"plus_haute": 1, "plus_basse": 1},
              "03_pluie": {"compte": 2, "cumul": 1}},
    "bruno": {"01_moyenne": {"total": 1, "moyenne": 0}, "02_amplitude": {"plus_haute": 1, "plus_basse": 0},
              "03_pluie": {"compte": 0, "cumul": 1}},
    "chloe": {"01_moyenne": {"total": 1, "moyenne": 0}, "02_amplitude": {"plus_haute": 0, "plus_basse": 0},
              "03_pluie": {"compte": 2, "cumul": 0}},
}
HANDED = {"chloe": {"01_moyenne", "03_pluie"}}  # the others hand in every exercise
EXERCISES = {"01_moyenne": ("semaine1", 2), "02_amplitude": ("semaine1", 2), "03_pluie": ("semaine2", 2)}


def _fills_of(student: str, exercise: str) -> list:
    start = sum(n for e, (_, n) in EXERCISES.items() if e < exercise)
    return FILLS[student][start:start + EXERCISES[exercise][1]]


def _filled(template: str, solution: str, fills: list) -> str:
    """The template with its blanks, in order, replaced by the fills (S: the solution's fill)."""
    solved = align(template, solution)
    assert solved is not None and len(solved) == len(fills)
    replacements = {f.index: (f.text if fill is S else fill) for f, fill in zip(solved, fills) if fill is not None}
    return splice(template, align(template, template), replacements)


def _copy(course: Path, student: str, exercise: str) -> str:
    return _filled((course / "exercises" / f"{exercise}.py").read_text(encoding="utf-8"),
                   (course / "solutions" / f"{exercise}.py").read_text(encoding="utf-8"), _fills_of(student, exercise))


def _text_files(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".whl":
            yield path, path.read_bytes().decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    base = tmp_path_factory.mktemp("meteo")
    course = base / "meteo"
    shutil.copytree(METEO, course, ignore=shutil.ignore_patterns("__pycache__", ".trous"))
    out: dict = {"course": course, "base": base}
    out["doctor"] = run_trous(course, "doctor", timeout=600)
    edition = base / "eleves"
    out["edition"] = run_trous(course, "edition", str(edition))
    out["edition_dir"] = edition
    out["selfcheck_empty"] = run_pytest(edition, "exercises/")
    solved = base / "eleves-resolu"
    shutil.copytree(edition, solved)
    for exercise in EXERCISES:
        (solved / "exercises" / f"{exercise}.py").write_text(_copy(course, "alice", exercise), encoding="utf-8")
    out["selfcheck_solved"] = run_pytest(solved, "exercises/")
    out["notebooks"] = run_trous(edition, "notebooks")

    copies = base / "copies"
    for student in FILLS:
        for exercise in HANDED.get(student, EXERCISES):
            target = copies / student / "exercises" / f"{exercise}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_copy(course, student, exercise), encoding="utf-8")
    out["results"] = base / "resultats"
    out["grade"] = run_trous(course, "grade", str(copies), "--resultats", str(out["results"]), timeout=900)

    nbcourse, exchange = base / "nbgrader", base / "echange"
    exchange.mkdir()
    out["nbcourse"] = nbcourse
    out["build"] = run_trous(course, "nbgrader", "build", str(nbcourse), "--echange", str(exchange))
    if out["build"].returncode == 0:
        _nbgrader_side(nbcourse, out)
    return out


def _nbgrader_side(nbcourse: Path, out: dict) -> None:
    from nbgrader_support import SOLUTION, Author, nbgrader

    (nbcourse / "nbgrader_config_local.py").write_text("c = get_config()\nc.Execute.timeout = 60\n")
    for assignment in ("semaine1", "semaine2"):
        out[f"generate_{assignment}"] = nbgrader(nbcourse, "generate_assignment", assignment, "--force")
    for student in FILLS:
        for exercise in HANDED.get(student, EXERCISES):
            assignment = EXERCISES[exercise][0]
            source = nbformat.read(nbcourse / "source" / assignment / f"{exercise}.ipynb", 4)
            release = nbformat.read(nbcourse / "release" / assignment / f"{exercise}.ipynb", 4)
            choices = {i: SOLUTION if f is S else f for i, f in enumerate(_fills_of(student, exercise))}
            target = nbcourse / "submitted" / student / assignment / f"{exercise}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(Author(source, release).notebook(choices), target)
    for assignment in ("semaine1", "semaine2"):
        out[f"autograde_{assignment}"] = nbgrader(nbcourse, "autograde", assignment, "--create")


def _ok(result) -> str:
    return result.stdout + result.stderr


def test_the_doctor_passes_the_course(chain):
    done = chain["doctor"]
    assert done.returncode == 0, _ok(done)
    assert "3 exercices vérifiés, 0 erreur(s)" in done.stdout, done.stdout


def test_the_edition_and_its_self_check(chain):
    assert chain["edition"].returncode == 0, _ok(chain["edition"])
    edition = chain["edition_dir"]
    readme = (edition / "LISEZMOI.md").read_text(encoding="utf-8")
    assert "# Relevés météo en Python" in readme
    assert "`exercises/01_moyenne.py`" in readme and "-k 01_moyenne" in readme and "trous hint 02_amplitude" in readme
    assert ".ipynb` contient" not in readme  # the course declares no notebook of its own
    empty = chain["selfcheck_empty"]
    assert empty.returncode == 1, _ok(empty)  # nothing filled yet
    assert all(e in empty.stdout for e in EXERCISES), empty.stdout
    solved = chain["selfcheck_solved"]
    assert solved.returncode == 0, _ok(solved)


def test_notebooks_are_the_exercises_and_nothing_else(chain):
    done = chain["notebooks"]
    assert done.returncode == 0, _ok(done)
    notebooks = sorted(p.relative_to(chain["edition_dir"]).as_posix() for p in chain["edition_dir"].rglob("*.ipynb"))
    assert notebooks == [f"exercises/{e}.ipynb" for e in EXERCISES]


def _results(results: Path) -> dict:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (results / "results").glob("*.json")}


def test_trous_grade_gives_each_blank_its_points(chain):
    done = chain["grade"]
    assert done.returncode == 0, _ok(done)
    grades = _results(chain["results"])
    assert sorted(grades) == sorted(FILLS)
    for student, expected in POINTS.items():
        got = {e["id"]: {b["id"]: b["score"] for b in e["blanks"]} for e in grades[student]["exercises"]}
        assert got == expected, (student, got)
        assert grades[student]["score"] == sum(sum(b.values()) for b in expected.values())
        assert grades[student]["max_score"] == 8


def test_nbgrader_autograde_gives_each_blank_its_points(chain):
    from nbgrader_support import blank_scores

    assert chain["build"].returncode == 0, _ok(chain["build"])
    for key in ("generate_semaine1", "generate_semaine2", "autograde_semaine1", "autograde_semaine2"):
        assert chain[key].returncode == 0, (key, _ok(chain[key]))
    scores = blank_scores(chain["nbcourse"], "meteo")
    for student, expected in POINTS.items():
        # A notebook not handed in is in nbgrader's gradebook too, with 0 for each of its cells.
        wanted = {f"{e}-trou-{b}": float(p) for e, blanks in expected.items() for b, p in blanks.items()}
        got = {k: v for k, v in scores[student].items() if "-trou-" in k}
        assert got == wanted, (student, got)


def test_nothing_of_the_other_course_is_written_or_said(chain):
    said = [(name, _ok(chain[name])) for name in
            ("doctor", "edition", "selfcheck_empty", "selfcheck_solved", "notebooks", "grade", "build",
             "generate_semaine1", "autograde_semaine1", "autograde_semaine2")]
    found = [(name, m.group(0)) for name, text in said for m in [FOREIGN.search(text)] if m]
    for folder in ("edition_dir", "results", "nbcourse"):
        for path, text in _text_files(chain[folder]):
            match = FOREIGN.search(text)
            if match:
                found.append((str(path.relative_to(chain["base"])), text[max(0, match.start() - 60):match.end() + 60]))
    assert not found, found


# -- a notebook of the course's own: declared in its course.yaml, handed out as declared ---------------
OWN_NOTEBOOK = """\
explorer:
  file: graphique.ipynb
  title: "le graphique de la pluie"
  needs: [jours_de_pluie]
  text: |
    # Le graphique de la pluie

    Change le seuil et regarde le nombre de jours.
  code: |-
    print("seuil")
"""


def _with_notebook(base: Path, needs: str) -> Path:
    course = base / "meteo"
    shutil.copytree(METEO, course, ignore=shutil.ignore_patterns("__pycache__", ".trous"))
    text = (course / "course.yaml").read_text(encoding="utf-8")
    own = OWN_NOTEBOOK.replace("[jours_de_pluie]", needs)
    (course / "course.yaml").write_text(text.replace("\nassignments:\n", "\n" + own + "\nassignments:\n"),
                                        encoding="utf-8")
    return course


def test_a_notebook_the_course_declares_is_handed_out_as_declared(tmp_path):
    course = _with_notebook(tmp_path, "[jours_de_pluie]")
    edition = tmp_path / "eleves"
    done = run_trous(course, "notebooks", str(edition))
    assert done.returncode == 0, _ok(done)
    notebook = nbformat.read(edition / "graphique.ipynb", 4)
    assert [c.cell_type for c in notebook.cells] == ["markdown", "code"]
    assert notebook.cells[0].source.startswith("# Le graphique de la pluie\n\nChange le seuil")
    assert notebook.cells[1].source == 'print("seuil")'
    readme = (edition / "LISEZMOI.md").read_text(encoding="utf-8")
    assert "`graphique.ipynb` contient le graphique de la pluie." in readme
    built = run_trous(course, "nbgrader", "build", str(tmp_path / "nb"), "--echange", str(tmp_path / "echange"))
    assert built.returncode == 0, _ok(built)
    # jours_de_pluie's body is a blank in every exercise that defines it: no assignment gives it.
    found = sorted(p.relative_to(tmp_path / "nb").as_posix() for p in (tmp_path / "nb").rglob("graphique.ipynb"))
    assert found == [] and "graphique.ipynb (le graphique de la pluie) non ajouté" in built.stdout, built.stdout
    doctor = run_trous(course, "doctor", timeout=600)
    assert doctor.returncode != 0 and "aucun exercice ne définit jours_de_pluie sans trou" in doctor.stdout


def test_a_declared_notebook_is_released_with_the_first_assignment_that_gives_its_needs(tmp_path):
    course = _with_notebook(tmp_path, "[pluie]")  # 03_pluie gives `pluie = [...]` ready-made, in semaine2
    built = run_trous(course, "nbgrader", "build", str(tmp_path / "nb"), "--echange", str(tmp_path / "echange"))
    assert built.returncode == 0, _ok(built)
    found = sorted(p.relative_to(tmp_path / "nb").as_posix() for p in (tmp_path / "nb").rglob("graphique.ipynb"))
    assert found == ["source/semaine2/graphique.ipynb"], found
    doctor = run_trous(course, "doctor", timeout=600)
    assert doctor.returncode == 0 and "explorer" not in doctor.stdout, doctor.stdout
