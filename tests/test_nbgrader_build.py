"""`trous nbgrader build`: the source notebooks, their nbgrader metadata, the release made by
trous's ClearBlanks, and the rebuilding of an exercise's text from a notebook (no kernel here: the
real nbgrader workflow is in test_nbgrader_e2e.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")
pytest.importorskip("jupytext")

from nbgrader.nbgraderformat import MetadataValidator  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, ComputeChecksums, LockCells  # noqa: E402

from trous.course.blanks import align, find_blanks  # noqa: E402
from trous.nbgrader_course import answers  # noqa: E402
from trous.nbgrader_course.build import build, buildable  # noqa: E402
from trous.nbgrader_course.bundle import Bundle, check_bundle  # noqa: E402
from trous.nbgrader_course.preprocessors import ClearBlanks, HideHiddenTests, grade_cells, strip_hidden  # noqa: E402
from trous.nbgrader_course.intake import notebook_exercise  # noqa: E402


@pytest.fixture(scope="module")
def built(course, tmp_path_factory):
    root = tmp_path_factory.mktemp("nbgrader") / "cours"
    return build(course, root, exchange="/srv/echange-test")


def _ready(course):
    return [e for e in course.exercises if buildable(e) is None]


def _notebook(built, exercise):
    return nbformat.read(built.root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb", 4)


def _release(nb):
    """What generate_assignment does to the cells, with the preprocessors the built config names."""
    nb = copy.deepcopy(nb)
    resources = {}
    for pp in (LockCells(), ClearBlanks(), ComputeChecksums(), ClearHiddenTests()):
        nb, resources = pp.preprocess(nb, resources)
    return nb


def test_every_exercise_with_its_files_is_built_and_only_those_are_skipped(course, built):
    ready = _ready(course)
    assert ready, "au moins un exercice complet"
    for exercise in course.exercises:
        path = built.root / "source" / exercise.assignment.id / f"{exercise.id}.ipynb"
        assert path.exists() == (exercise in ready), exercise.id
    assert {e for e, _ in built.skipped} == {e.id for e in course.exercises if e not in ready}
    config = (built.root / "nbgrader_config.py").read_text()
    assert f"course_id = {course.id!r}" in config
    assert "sqlite:///" in config and "/srv/echange-test" in config
    assert "trous.nbgrader_course.preprocessors.ClearBlanks" in config
    assert "nbgrader.preprocessors.ClearSolutions" not in config


def test_building_twice_gives_identical_bytes(course, built, tmp_path):
    again = build(course, tmp_path / "encore", exchange="/srv/echange-test")
    first = {p.relative_to(built.root): p.read_bytes() for p in built.written}
    second = {p.relative_to(again.root): p.read_bytes() for p in again.written}
    assert first == second


def test_cell_metadata_follows_nbgrader_schema_3(course, built):
    validator = MetadataValidator()
    for exercise in _ready(course):
        nb = _notebook(built, exercise)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
        assert len(ids) == len(set(ids))
        for cell in nb.cells:
            meta = cell.metadata["nbgrader"]
            assert meta["schema_version"] == 3
            validator.validate_cell(cell)
            if cell.cell_type == "markdown":
                assert meta["locked"] and not meta["solution"] and not meta["grade"]


def test_one_answer_cell_per_code_cell_with_blanks_and_one_grade_cell_per_blank(course, built):
    for exercise in _ready(course):
        nb = _notebook(built, exercise)
        solution_cells = [c for c in nb.cells if c.metadata["nbgrader"]["solution"]]
        assert solution_cells and all(c.cell_type == "code" and not c.metadata["nbgrader"]["grade"]
                                      for c in solution_cells)
        for cell in solution_cells:  # the source version holds the solution: no blank left
            assert find_blanks(cell.source) == []
        graded = [c for c in nb.cells if c.metadata["nbgrader"]["grade"]]
        assert [(c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"]["points"]) for c in graded] == \
            [(f"{exercise.id}-trou-{b.id}", b.points) for b in exercise.blanks]
        assert all(c.metadata["nbgrader"]["locked"] for c in graded)
        for i, cell in enumerate(nb.cells):  # nbgrader re-adds a deleted grade cell after its predecessor,
            if cell.metadata["nbgrader"]["grade"]:  # which must be an answer or grade cell
                before = nb.cells[i - 1].metadata["nbgrader"]
                assert before["solution"] or before["grade"]
        checks = [c for c in nb.cells if c.metadata["nbgrader"]["grade_id"].endswith("-verification-publique")]
        assert len(checks) == 1 and checks[0].metadata["nbgrader"]["locked"]


def test_hidden_blocks_carry_the_grader_and_the_solution(course, built):
    for exercise in _ready(course):
        nb = _notebook(built, exercise)
        found = grade_cells(nb)[exercise.id]
        assert [blank for _, blank, _ in found] == [b.id for b in exercise.blanks]
        for _, _, bundle in found:
            assert bundle.grader == exercise.grader_path.read_text(encoding="utf-8")
            assert bundle.solution == exercise.solution_path.read_text(encoding="utf-8")


def test_release_shows_exactly_the_blanks_of_the_exercise_and_no_hidden_test(course, built):
    for exercise in _ready(course):
        release = _release(_notebook(built, exercise))
        template = exercise.template_path.read_text(encoding="utf-8")
        answer = [c for c in release.cells if c.metadata["nbgrader"]["solution"]]
        for cell in answer:
            assert cell.source in template and "YOUR CODE HERE" not in cell.source
            assert "trous" not in cell.metadata
        assert sum(len(find_blanks(c.source)) for c in answer) == len(exercise.blanks)
        text = nbformat.writes(release)
        assert "BEGIN HIDDEN TESTS" not in text and "corriger_trou" not in text
        assert exercise.grader_path.read_text(encoding="utf-8")[-200:] not in text
        # and what a student gets back is the exercise file itself, blanks included
        assert answers.exercise_text(_bundle(release, exercise), answers.from_cells(release.cells)) == template


def _bundle(nb, exercise) -> Bundle:
    cell = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"].endswith("-verification-publique"))
    bundle = check_bundle(cell.source)
    assert bundle is not None and bundle.exercise_id == exercise.id and not bundle.hidden
    return bundle


def test_notebook_text_is_the_exercise_file_with_the_fills(course, built):
    """The source notebook's answer cells rebuild solutions/<id>.py byte for byte, through the same
    intake `trous grade` uses."""
    for exercise in _ready(course):
        nb = _notebook(built, exercise)
        notes: list[str] = []
        text = notebook_exercise(exercise, nbformat.writes(nb).encode(), "x.ipynb", notes)
        assert text.decode() == exercise.solution_path.read_text(encoding="utf-8")
        assert notes == []
        template = exercise.template_path.read_text(encoding="utf-8")
        assert align(template, text.decode()) is not None


def test_a_deleted_answer_cell_is_noted_and_counts_as_empty(course, built):
    exercise = _ready(course)[0]
    nb = _notebook(built, exercise)
    nb.cells = [c for c in nb.cells if not c.metadata["nbgrader"]["solution"]]
    notes: list[str] = []
    text = notebook_exercise(exercise, nbformat.writes(nb).encode(), "x.ipynb", notes)
    assert "supprimée" in notes[0]
    assert find_blanks(text.decode()) == [] and "total = sum(e)" not in text.decode()
    assert notebook_exercise(exercise, b"{pas du json", "x.ipynb", notes) is None
    assert "illisible" in notes[-1]


def test_feedback_preprocessor_strips_hidden_blocks_and_outputs_quoting_them(course, built):
    exercise = _ready(course)[0]
    nb = _notebook(built, exercise)
    cell = next(c for c in nb.cells if c.metadata["nbgrader"]["grade"])
    hidden_line = next(line for line in cell.source.split("\n") if line.startswith("corriger_trou("))
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="fuite : " + hidden_line[:80] + "\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="✔ trou 1/3 : juste\n")]
    answer = next(c for c in nb.cells if c.metadata["nbgrader"]["solution"])
    grader_line = next(line for line in exercise.grader_path.read_text().split("\n") if "variant(" in line)
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text=grader_line.strip() + "\n")]
    out, _ = HideHiddenTests().preprocess(nb, {})
    text = nbformat.writes(out)
    assert "corriger_trou" not in text and "BEGIN HIDDEN" not in text
    assert grader_line.strip() not in text
    assert "✔ trou 1/3 : juste" in text
    assert strip_hidden(cell.source) == cell.source


def test_cli_build_reports_what_it_wrote(course, tmp_path):
    from conftest import run_trous

    result = run_trous(course.root, "nbgrader", "build", str(tmp_path / "nb"), "--echange", str(tmp_path / "x"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "nb" / "nbgrader_config.py").exists()
    written = sorted(p.relative_to(tmp_path / "nb").as_posix() for p in (tmp_path / "nb").rglob("*.ipynb"))
    assert written and f"{len(written)} carnet(s)" in result.stdout
    assert str(Path(tmp_path / "x")) in (tmp_path / "nb" / "nbgrader_config.py").read_text()


def test_in_a_plain_kernel_the_notebook_checks_the_latest_answers(course, built, tmp_path):
    """A student's session (no nbgrader): the grade cells give each blank's public verdict from the
    answer cell as last executed, the check cell prints the same report as `trous check`."""
    from nbclient import NotebookClient

    from nbgrader_support import SOLUTION, Author

    exercise = course.exercise("01_toux")
    source = _notebook(built, exercise)
    release = _release(source)
    author = Author(source, release)
    nb = author.notebook({0: SOLUTION, 1: "sum(a + b for a, b in zip(t, toux))"})
    nbformat.write(nb, tmp_path / f"{exercise.id}.ipynb")
    NotebookClient(nb, timeout=300, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}).execute()
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}

    def shown(gid):
        outputs = by_id[gid].outputs
        return "".join(o.get("text", "") for o in outputs) + "\n".join(
            "\n".join(o.get("traceback", [])) for o in outputs if o.output_type == "error")

    assert "✔ trou 1/3 « somme_exp » : juste" in shown("01_toux-trou-somme_exp")
    assert by_id["01_toux-trou-scores"].outputs[-1].ename == "TrouFaux"
    assert "trou 2/3 « scores » : faux" in shown("01_toux-trou-scores")
    assert "indice : " + exercise.blanks[1].hints[0] in shown("01_toux-trou-scores")
    assert "pas encore rempli (___)" in shown("01_toux-trou-nouveau")
    assert "File " not in shown("01_toux-trou-scores")  # an explanation, not a Python traceback
    report = shown("01_toux-verification-publique")
    assert "✔ trou 1 « somme_exp » : juste" in report and "✘" in report and "« nouveau » : pas encore rempli" in report
