"""The nbgrader course on its own (standalone.py): what `trous nbgrader build` leaves for `trous grade`,
the course it carries and every refusal; rebuilding over files edited since the last build (build.py);
formgrader's grades taken back (overrides.py). The whole nbgrader workflow is in test_nbgrader_e2e.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")
pytest.importorskip("jupytext")

import trous  # noqa: E402
from conftest import ROOT, run_trous  # noqa: E402
from nbgrader_support import env  # noqa: E402

from trous.core import Course  # noqa: E402
from trous.core.grades import FAILED, PASSED, BlankGrade, ExerciseGrade, SubmissionGrade  # noqa: E402
from trous.inputs import standalone  # noqa: E402
from trous.publish.nbgrader.build import GITIGNORE, BuildRefused, build  # noqa: E402
from trous.outputs.overrides import Final, apply, describe  # noqa: E402
from trous.publish.nbgrader.zipcollect import split_name  # noqa: E402
from trous.publish.nbgrader.notebooks import BuildError  # noqa: E402

EXERCISES = ["01_toux", "02_places"]


@pytest.fixture(scope="module")
def pristine(course, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("autonome") / "cours"
    build(course, root, exchange="/srv/echange-test", only=EXERCISES)
    return root


@pytest.fixture
def built(pristine, tmp_path) -> Path:
    root = tmp_path / "ailleurs" / "cours-nbgrader"  # another place, far from any course.yaml
    shutil.copytree(pristine, root)
    return root


def _notebook(root: Path, exercise: str = "01_toux") -> Path:
    return root / "source" / "partie5" / f"{exercise}.ipynb"


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _cell(data: dict, grade_id: str) -> dict:
    return next(c for c in data["cells"] if c["metadata"]["nbgrader"]["grade_id"] == grade_id)


def _course_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "cours-trous"
    dest.mkdir()
    shutil.copy(ROOT / "course.yaml", dest / "course.yaml")
    for name in ("exercises", "solutions", "graders", "explorateur"):  # explorateur: course.yaml's explorer.files
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


# -- what the build leaves --------------------------------------------------------------------------
def test_the_manifest_names_the_version_the_exercises_and_the_fingerprint(built):
    data = json.loads((built / standalone.MANIFEST).read_text(encoding="utf-8"))
    assert data["trous"] == trous.__version__ and data["cours"] == "attention"
    assert data["devoirs"] == [{"id": "partie5", "exercices": EXERCISES}]
    bundles = [standalone.read_source(_notebook(built, e)).bundle for e in EXERCISES]
    assert data["empreinte"] == standalone.grader_fingerprint(bundles)
    assert data["empreinte"] != standalone.grader_fingerprint(bundles, version="0.0.0")  # the version counts
    assert set(data["fichiers"]) >= {"nbgrader_config.py", *(f"source/partie5/{e}.ipynb" for e in EXERCISES)}


def test_the_course_it_carries_is_the_course_it_was_built_from(built, course):
    carried = standalone.load(built)
    assert [e.id for e in carried.exercises] == EXERCISES
    assert carried.id == course.id and carried.root != course.root
    for exercise in carried.exercises:
        original = course.exercise(exercise.id)
        for mine, theirs in [(exercise.template_path, original.template_path),
                             (exercise.solution_path, original.solution_path),
                             (exercise.checks_path, original.checks_path),
                             (exercise.grader_path, original.grader_path)]:
            assert mine.read_text(encoding="utf-8") == theirs.read_text(encoding="utf-8")
        assert [(b.id, b.points) for b in exercise.blanks] == [(b.id, b.points) for b in original.blanks]
    assert standalone.load(built) is carried  # read once per fingerprint


def test_another_trous_version_is_refused_naming_both(built):
    _edit(built / standalone.MANIFEST, lambda d: d.update(trous="0.0.9"))
    with pytest.raises(standalone.StandaloneError) as refused:
        standalone.load(built)
    message = str(refused.value)
    assert "trous 0.0.9" in message and f"trous {trous.__version__}" in message
    assert 'pip install "trous==0.0.9"' in message and "--force" in message


def test_trous_grade_refuses_it_before_reading_any_copy_and_writes_nothing(built):
    _edit(built / standalone.MANIFEST, lambda d: d.update(trous="0.0.9"))
    (built / "submitted" / "alice" / "partie5").mkdir(parents=True)
    result = run_trous(built, "grade", ".")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "trous 0.0.9" in result.stdout and "Traceback" not in result.stdout + result.stderr
    assert not (built / "trous-resultats").exists() and not (built / "autograded").exists()


def test_points_edited_in_a_source_notebook_are_an_error_naming_both(built):
    _edit(_notebook(built), lambda d: _cell(d, "01_toux-trou-scores")["metadata"]["nbgrader"].update(points=2))
    with pytest.raises(standalone.StandaloneError) as refused:
        standalone.load(built)
    message = str(refused.value)
    assert "source/partie5/01_toux.ipynb, cellule 01_toux-trou-scores : 2 points" in message
    assert "course.yaml, trou « scores » de 01_toux : 1 point" in message


def test_hidden_data_edited_by_hand_is_refused(built):
    def rewrite(data, only_one=False):
        for cell in data["cells"]:
            if cell["metadata"]["nbgrader"].get("grade"):
                source = "".join(cell["source"])
                cell["source"] = source.replace("import math", "import  math")
                if only_one:
                    return

    _edit(_notebook(built), lambda d: rewrite(d, only_one=True))
    with pytest.raises(standalone.StandaloneError, match="pas toutes le même corrigé"):
        standalone.load(built)
    _edit(_notebook(built), rewrite)
    with pytest.raises(standalone.StandaloneError) as refused:
        standalone.load(built)
    assert "source/partie5/01_toux.ipynb" in str(refused.value) and "empreinte" in str(refused.value)


def test_a_missing_manifest_says_what_to_do(built, course):
    (built / standalone.MANIFEST).unlink()
    with pytest.raises(standalone.StandaloneError, match="trous-cours.json absent"):
        standalone.load(built)
    assert standalone.load(built, course.root) == course  # built from it: the course given grades it


def test_a_course_given_with_c_must_be_the_one_distributed(built, tmp_path):
    given = _course_copy(tmp_path)
    assert standalone.load(built, given).exercises[0].id == "01_toux"  # the same files: fine
    grader = given / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + "\n# corrigé revu\n", encoding="utf-8")
    with pytest.raises(standalone.StandaloneError) as refused:
        standalone.load(built, given)
    message = str(refused.value)
    assert "01_toux : graders/test_01_toux.py" in message and "02_places" not in message
    assert "trous nbgrader build" in message and "sans -C" in message


def test_nbgrader_gradebook_holding_other_points_is_refused(built, monkeypatch):
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", env()["PATH"])  # nbgrader runs alembic
    with Gradebook(f"sqlite:///{built / 'gradebook.db'}", "attention") as gradebook:
        gradebook.update_or_create_assignment("partie5")
        gradebook.update_or_create_notebook("01_toux", "partie5")
        data = json.loads(_notebook(built).read_text(encoding="utf-8"))
        for cell in data["cells"]:
            meta = cell["metadata"]["nbgrader"]
            if meta.get("grade"):
                points = 2.0 if meta["grade_id"] == "01_toux-trou-scores" else meta["points"]
                gradebook.update_or_create_grade_cell(meta["grade_id"], "01_toux", "partie5", max_score=points,
                                                      cell_type="code")
                gradebook.update_or_create_source_cell(meta["grade_id"], "01_toux", "partie5", cell_type="code",
                                                       locked=True, source="".join(cell["source"]), checksum="x")
    with pytest.raises(standalone.StandaloneError) as refused:
        standalone.load(built)
    message = str(refused.value)
    assert "gradebook.db (nbgrader), cellule 01_toux-trou-scores : 2 points" in message
    assert "source/partie5/01_toux.ipynb : 1 point" in message


# -- building again ---------------------------------------------------------------------------------
def test_building_again_over_an_untouched_build_needs_no_force(built, course):
    before = {p: p.read_bytes() for p in built.rglob("*") if p.is_file()}
    report = build(course, built, exchange="/srv/echange-test", only=EXERCISES)
    assert report.replaced == []
    assert {p: p.read_bytes() for p in built.rglob("*") if p.is_file()} == before


def test_a_changed_course_rebuilds_untouched_notebooks_without_force(built, tmp_path):
    given = _course_copy(tmp_path)
    yaml_path = given / "course.yaml"
    yaml_path.write_text(yaml_path.read_text(encoding="utf-8").replace("points: 1", "points: 2", 1), encoding="utf-8")
    changed = Course.load(given)
    report = build(changed, built, exchange="/srv/echange-test", only=EXERCISES)
    assert report.replaced == []
    assert standalone.load(built).exercise("01_toux").blanks[0].points == 2


def test_a_missing_file_of_the_course_notebook_is_a_clear_error(tmp_path):
    # course.yaml's explorer.files names the widget its notebook imports: without it, the build (and
    # the edition) stop with a French error naming it, before writing anything.
    given = _course_copy(tmp_path)
    shutil.rmtree(given / "explorateur")
    dest = tmp_path / "nb"
    with pytest.raises(BuildError, match="explorer.files : « explorateur » introuvable"):
        build(Course.load(given), dest, exchange="/srv/echange-test")
    assert not (dest / "source").exists()
    result = run_trous(given, "edition", str(tmp_path / "edition"), "--sans-zip")
    assert result.returncode == 2 and "« explorateur » introuvable" in result.stderr, result.stdout + result.stderr


def test_edited_notebooks_are_not_overwritten_without_force_and_what_differs_is_listed(built, course, capsys):
    notebook = _notebook(built)
    _edit(notebook, lambda d: (_cell(d, "01_toux-trou-scores")["metadata"]["nbgrader"].update(points=2),
                               _cell(d, "01_toux-consigne-1").update(source="# Ma consigne à moi")))
    edited = notebook.read_bytes()
    with pytest.raises(BuildRefused) as refused:
        build(course, built, exchange="/srv/echange-test", only=EXERCISES)
    message = str(refused.value)
    assert "source/partie5/01_toux.ipynb" in message and "02_places" not in message
    assert "cellule 01_toux-trou-scores : 2 point(s) dans le carnet, 1.0 dans course.yaml" in message
    assert "cellule 01_toux-consigne-1 : texte modifié" in message and "--force" in message
    assert notebook.read_bytes() == edited  # nothing written
    result = run_trous(ROOT, "nbgrader", "build", str(built), "--echange", "/srv/echange-test",
                       *[a for e in EXERCISES for a in ("--exercice", e)])
    assert result.returncode == 1 and "refusé" in result.stdout and "texte modifié" in result.stdout
    report = build(course, built, exchange="/srv/echange-test", only=EXERCISES, force=True)
    assert report.replaced == ["source/partie5/01_toux.ipynb"]
    assert notebook.read_bytes() != edited
    standalone.load(built)  # consistent again


def test_the_teacher_s_gitignore_is_kept_and_completed_once(built, course):
    (built / ".gitignore").write_text("*.log\nsubmitted/\n", encoding="utf-8")
    build(course, built, exchange="/srv/echange-test", only=EXERCISES)
    build(course, built, exchange="/srv/echange-test", only=EXERCISES)
    lines = (built / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["*.log", "submitted/"]
    ours = [ln for ln in GITIGNORE.splitlines() if ln and not ln.startswith("#")]
    assert all(lines.count(ln) == 1 for ln in ours)


# -- formgrader's grades, Moodle's names --------------------------------------------------------------
def _grade() -> SubmissionGrade:
    blanks = [BlankGrade("somme_exp", 1, 1.0, 1.0, PASSED), BlankGrade("scores", 2, 0.0, 1.0, FAILED),
              BlankGrade("nouveau", 3, 0.0, 1.0, FAILED)]
    return SubmissionGrade("4711", "attention", "v", [ExerciseGrade("01_toux", "t", 1.0, 3.0, "blanks", blanks)])


def test_formgrader_s_manual_grades_extra_credit_and_late_penalty_win():
    grade = _grade()
    changes = apply(grade, {("4711", "01_toux"): Final(manual={"01_toux-trou-scores": 1.0,
                                                                "01_toux-trou-somme_exp": 1.0},
                                                        extra=0.5, penalty=1.0)})
    exercise = grade.exercise("01_toux")
    assert [b.score for b in exercise.blanks] == [1.0, 1.0, 0.0]
    assert exercise.score == 1.5 and grade.score == 1.5  # 2 + 0,5 − 1
    assert len(changes) == 3  # the manual score equal to the engine's is no change
    assert any("automatique : 0 point" in n for n in exercise.notes)
    lines = describe(changes)
    assert "3 notes changées" in lines[0] and "l'emporte" in lines[0]
    assert any("pénalité de retard" in ln and "1 point" in ln for ln in lines)


def test_nothing_changed_in_formgrader_changes_nothing():
    grade = _grade()
    assert apply(grade, {("4711", "01_toux"): Final()}) == [] and describe([]) == []
    assert grade.exercise("01_toux").score == 1.0 and grade.exercise("01_toux").notes == []


@pytest.mark.parametrize("full, shown_first, shown_last_first", [
    ("Camille Durand", ("Camille", "Durand"), ("Durand", "Camille")),
    ("Jean-Pierre De La Fontaine", ("Jean-Pierre", "De La Fontaine"), ("De La Fontaine", "Jean-Pierre")),
    ("  Zoé ", (None, "Zoé"), (None, "Zoé")),
])
def test_moodle_s_full_name_is_split_as_the_site_shows_it(full, shown_first, shown_last_first):
    assert split_name(full) == shown_first  # (first name, last name), Moodle showing « Prénom Nom »
    assert split_name(full, last_name_first=True) == shown_last_first  # a site showing « NOM Prénom »


def test_zip_collect_reads_each_owner_where_moodle_writes_it(built):
    """The real `nbgrader zip_collect` with trous's collector: a folder a student made inside their own
    submission hands in for nobody else, two folders claiming one number are not merged into one
    student, and no layout of a student's files can stop the collection of the class."""
    import zipfile

    from nbgrader_support import nbgrader

    def notebook(marker: str) -> str:
        return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": marker}], "metadata": {},
                           "nbformat": 4, "nbformat_minor": 5})

    archive = built / "downloaded" / "partie5" / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "moodle.zip", "w") as z:
        z.writestr("Camille Durand_4711_assignsubmission_file_/01_toux.ipynb", notebook("camille"))
        z.writestr("Camille Durand_4711_assignsubmission_file_/Léo Martin_4712_assignsubmission_file_/01_toux.ipynb",
                   notebook("camille-pour-leo"))
        z.writestr("Léo Martin_4712_assignsubmission_file/01_toux.ipynb", notebook("leo"))  # Moodle >= 4.1
        z.writestr("Eve_4713_assignsubmission_file_/01_toux.ipynb", notebook("eve"))
        z.writestr("Zed_4713_assignsubmission_file_/01_toux.ipynb", notebook("zed"))
        z.writestr("Nina_4714_assignsubmission_file_/tp/01_toux.ipynb", notebook("nina"))  # in a folder of hers
        z.writestr("Nina_4714_assignsubmission_file_/tp2/01_toux.ipynb", notebook("nina-bis"))
    done = nbgrader(built, "zip_collect", "partie5")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    submitted = built / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["4711", "4712", "4714"]

    def text(student: str) -> str:
        return (submitted / student / "partie5" / "01_toux.ipynb").read_text(encoding="utf-8")

    assert '"camille"' in text("4711") and '"leo"' in text("4712")  # Léo's own, never Camille's
    assert '"nina"' in text("4714")
    assert "participant 4713 : 2 dossiers" in said and "Eve_4713" in said and "Zed_4713" in said
