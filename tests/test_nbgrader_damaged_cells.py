"""Notebooks whose nbgrader cells a student damaged, graded by `nbgrader autograde` (the command line,
generated configuration) and by `trous grade .` on the same submitted/ folder.

Stock nbgrader stops on each of these notebooks (ValueError, KeyError, AttributeError, « Inconsistent
checksums ») and drops the student's whole submission. With the generated configuration every one is
graded, the same blank by blank as `trous grade`, and what nbgrader restored is named on both sides.
"""

from __future__ import annotations

import json
import re
import shutil

import nbformat
import pytest

pytest.importorskip("nbgrader")

from conftest import ROOT, run_trous  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, grade_id, nbgrader  # noqa: E402

pytestmark = pytest.mark.slow

ASSIGNMENT, COURSE_ID, EXERCISE = "partie5", "attention", "01_toux"
BLANKS = ("somme_exp", "scores", "nouveau")
ALL_RIGHT = {0: SOLUTION, 1: SOLUTION, 2: SOLUTION}


def _cell(nb, suffix):
    return next(c for c in nb.cells if grade_id(c) == EXERCISE + suffix)


def _points_text(nb):
    _cell(nb, "-trou-scores").metadata.nbgrader["points"] = "beaucoup"


def _not_graded(nb):
    _cell(nb, "-trou-scores").metadata.nbgrader["grade"] = False


def _id_of_another(nb):
    _cell(nb, "-trou-scores").metadata.nbgrader["grade_id"] = f"{EXERCISE}-trou-nouveau"


def _answer_as_markdown(nb):
    cell = _cell(nb, "-reponse-1")
    cell.cell_type = "markdown"
    del cell["outputs"], cell["execution_count"]


def _unlocked_and_edited(nb):
    cell = _cell(nb, "-trou-scores")
    cell.metadata.nbgrader["locked"] = False
    cell.source = "print('✔ juste')"


def _metadata_text(nb):
    _cell(nb, "-trou-scores").metadata["nbgrader"] = "rien"


def _numeric_id(nb):
    _cell(nb, "-trou-scores").metadata.nbgrader["grade_id"] = 12


def _flag_text(nb):
    _cell(nb, "-verification-publique").metadata.nbgrader["locked"] = "oui"


def _answer_graded(nb):
    meta = _cell(nb, "-reponse-1").metadata.nbgrader
    meta["grade"], meta["points"] = True, 50


# student → (notebook edit, points per blank worked out by hand, cells nbgrader's log names)
# Every locked cell comes back as released and the answer cell's text is what counts: a right copy
# stays right whatever was done to the cells around it.
STUDENTS = {
    "points_texte": (_points_text, (1, 1, 1), {"-trou-scores"}),
    "non_note": (_not_graded, (1, 1, 1), {"-trou-scores"}),
    "id_d_un_autre": (_id_of_another, (1, 1, 1), {"-trou-nouveau", "-trou-scores"}),
    "reponse_markdown": (_answer_as_markdown, (1, 1, 1), {"-reponse-1"}),
    "deverrouille": (_unlocked_and_edited, (1, 1, 1), {"-trou-scores"}),
    "metadonnees_texte": (_metadata_text, (1, 1, 1), {"-trou-scores"}),
    "id_nombre": (_numeric_id, (1, 1, 1), {"-trou-scores"}),
    "drapeau_texte": (_flag_text, (1, 1, 1), set()),  # « oui » reads as true: locked, as it was
    "reponse_notee": (_answer_graded, (1, 1, 1), {"-reponse-1"}),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("cellules-abimees")
    course = base / "cours"
    built = run_trous(ROOT, "nbgrader", "build", str(course), "--echange", str(base / "echange"),
                      "--exercice", EXERCISE)
    assert built.returncode == 0, built.stdout + built.stderr
    generated = nbgrader(course, "generate_assignment", ASSIGNMENT)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    author = Author(nbformat.read(course / "source" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4),
                    nbformat.read(course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4))
    for student, (edit, _, _) in STUDENTS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-11-02 10:00:00.000000 UTC")
        # json.dumps, not nbformat.write: nbformat would refuse to write some of these notebooks,
        # which a student's editor (or a script) writes anyway
        (folder / f"{EXERCISE}.ipynb").write_text(json.dumps(author.notebook(ALL_RIGHT, edit=edit)))
    copy = base / "copie"
    shutil.copytree(course, copy)
    return {"autograde": nbgrader(course, "autograde", ASSIGNMENT), "trous": run_trous(copy, "grade", ".", timeout=600),
            "nbgrader_grades": blank_scores(course, COURSE_ID), "trous_grades": blank_scores(copy, COURSE_ID),
            "results": copy / "trous-resultats" / "results"}


def test_nbgrader_grades_every_damaged_notebook(graded):
    said = graded["autograde"].stdout + graded["autograde"].stderr
    assert graded["autograde"].returncode == 0, said[-3000:]
    assert "Removing failed assignment" not in said and "There was an error processing" not in said, said[-3000:]


def test_each_blank_gets_the_points_worked_out_by_hand_on_both_sides(graded):
    assert graded["trous"].returncode == 0, graded["trous"].stdout[-3000:]
    assert "n'a pas pu le préparer" not in graded["trous"].stdout
    for grades in (graded["nbgrader_grades"], graded["trous_grades"]):
        for student, (_, expected, _) in STUDENTS.items():
            assert tuple(grades[student][f"{EXERCISE}-trou-{b}"] for b in BLANKS) == expected, student


def test_trous_names_the_cells_nbgrader_s_log_says_it_restored(graded):
    said = graded["autograde"].stdout + graded["autograde"].stderr
    flagged: dict[str, set[str]] = {}
    student = None
    for line in said.splitlines():
        found = re.search(r"Sanitizing .*/submitted/([^/]+)/", line)
        if found:
            student = found.group(1)
            continue
        cell = re.search(r"Attribute '\w+' for cell (\S+) has changed|Cell with id '([^']+)' exists multiple times"
                         r"|Missing grade cell (\S+) encountered", line)
        if cell and student:
            flagged.setdefault(student, set()).add(next(g for g in cell.groups() if g))
    for student, (_, _, cells) in STUDENTS.items():
        assert flagged.get(student, set()) == {EXERCISE + c for c in cells}, student
        notes = json.loads((graded["results"] / f"{student}.json").read_text())["intake"]["notes"]
        named = {m.group(1) for n in notes
                 for m in [re.search(r"cellule (?:verrouillée |de réponse )?(\S+) (?::|modifiée|supprimée|présente)", n)]
                 if m}
        assert named == {EXERCISE + c for c in cells}, (student, notes)
