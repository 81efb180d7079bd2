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

from trous.core.blanks import align, find_blanks  # noqa: E402
from trous.inputs import answers  # noqa: E402
from trous.publish.nbgrader.build import build, buildable  # noqa: E402
from trous.inputs.bundle import Bundle, check_bundle_of  # noqa: E402
from trous.inputs.answers import released  # noqa: E402
from trous.publish.nbgrader.preprocessors import ClearBlanks, HideHiddenTests, grade_cells  # noqa: E402
from trous.inputs.standalone import notebook_exercise  # noqa: E402


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
    assert "trous.publish.nbgrader.preprocessors.ClearBlanks" in config
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
    bundle = check_bundle_of(cell)
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
    assert released(cell.source) == cell.source


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
    answer cell as last executed, the check cell shows the same report as `trous check`; an answer
    cell run with a blank left says « trou pas encore rempli », and every place is a cell's."""
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
            "\n".join(o.get("traceback", [])) for o in outputs if o.output_type == "error") + "".join(
            (o.get("data") or {}).get("text/plain", "") for o in outputs)

    # the answer cell itself, third blank left: IPython's `___` output cache no longer answers for it
    answer = by_id["01_toux-reponse-1"]
    assert answer.outputs[-1].ename == "TrouPasRempli"
    text = shown("01_toux-reponse-1")
    assert "trou pas encore rempli (___)" in text and "must be real number" not in text
    line = next(i for i, ln in enumerate(answer.source.split("\n"), start=1) if "___" in ln)
    assert f"à la ligne {line} de sa cellule" in text
    assert "✔ trou 1/3 « somme_exp » (ligne " in shown("01_toux-trou-somme_exp")
    assert "de la cellule de réponse 1) : juste" in shown("01_toux-trou-somme_exp")
    assert by_id["01_toux-trou-scores"].outputs[-1].ename == "TrouFaux"
    scores = shown("01_toux-trou-scores")
    assert "trou 2/3 « scores » (ligne " in scores and "de la cellule de réponse 1) : faux" in scores
    assert "indice : " + exercise.blanks[1].hints[0] in scores and "Validate" in scores
    assert "pas encore rempli (___)" in shown("01_toux-trou-nouveau")
    everything = "\n".join(shown(gid) for gid, c in by_id.items() if gid and c.cell_type == "code")
    assert "File " not in scores and "exercises/01_toux.py" not in everything  # places are cells, never the file
    report = shown("01_toux-verification-publique")
    assert "✔ trou 1/3 « somme_exp »" in report and "✘" in report and "« nouveau »" in report
    assert "pas encore rempli" in report and "trous hint" not in report
    html = "".join((o.get("data") or {}).get("text/html", "") for o in by_id["01_toux-verification-publique"].outputs)
    assert 'class="trous-check"' in html  # JupyterLab shows the same report as `trous lab`


def test_instructions_speak_to_notebook_users(course, built):
    for exercise in _ready(course):
        nb = _notebook(built, exercise)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for word in ("pytest", "exercises/", "trous hint", "python exercises"):
            assert word not in markdown, (exercise.id, word)
        assert "Validate" in markdown and "vérifications publiques" in markdown
        labels = [c.source for c in nb.cells if c.metadata["nbgrader"]["grade_id"].startswith(
            f"{exercise.id}-consigne-reponse-")]
        assert len(labels) == sum(1 for c in nb.cells if c.metadata["nbgrader"]["solution"])
        assert labels[0].startswith("**Cellule de réponse 1**")
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code[0].source.endswith("%load_ext trous.publish.nbgrader") and code[0].metadata["nbgrader"]["locked"]


def test_the_check_cell_is_a_short_call_carrying_its_data_in_metadata(course, built):
    for exercise in _ready(course):
        release = _release(_notebook(built, exercise))
        cell = next(c for c in release.cells if c.metadata["nbgrader"]["grade_id"].endswith("-verification-publique"))
        assert cell.source.splitlines()[-1] == f"verifier({exercise.id!r})" and len(cell.source) < 400
        bundle = _bundle(release, exercise)
        assert bundle.template == exercise.template_path.read_text(encoding="utf-8")


def test_lines_of_the_rebuilt_exercise_are_located_in_the_notebook_cells(course, built):
    from trous.inputs.answers import cell_map

    for exercise in _ready(course):
        release = _release(_notebook(built, exercise))
        bundle = _bundle(release, exercise)
        cells = answers.from_cells(release.cells)
        where = cell_map(bundle, cells)
        assert where.text == answers.exercise_text(bundle, cells)
        template_lines = where.text.split("\n")
        for number, cell in enumerate(bundle.cells, start=1):
            start = where.text.index(cell.template)
            first = where.text[:start].count("\n") + 1
            for offset, code in enumerate(cell.template.split("\n")):
                assert where.describe(first + offset) == f"ligne {offset + 1} de la cellule de réponse {number}"
                assert template_lines[first + offset - 1] == code
        for blank in find_blanks(where.text):  # every blank is in an answer cell
            assert "cellule de réponse" in where.describe(blank.line)
        # a locked code cell is named by its first line
        given = [s for s in where.spans if "réponse" not in s.label]
        for span in given:
            assert template_lines[span.first - 1].strip()[:20] in span.label or template_lines[span.first - 1].lstrip(
                ).startswith("#")


def test_the_explorer_is_released_with_the_first_assignment_and_works_in_its_folder(course, built, tmp_path):
    explorers = sorted(p.relative_to(built.root).as_posix() for p in built.root.rglob("explorateur.ipynb"))
    first = next(e.assignment.id for e in _ready(course)
                 if "def softmax" in e.template_path.read_text(encoding="utf-8"))
    assert explorers == [f"source/{first}/explorateur.ipynb"]
    pytest.importorskip("anywidget")
    from explorateur import Explorer

    folder = tmp_path / first  # what a student fetches: the release notebooks, no course.yaml
    folder.mkdir()
    for path in (built.root / "source" / first).glob("*.ipynb"):
        nbformat.write(_release(nbformat.read(path, 4)), folder / path.name)
    explorer = Explorer(folder)
    assert "02_places.ipynb" in explorer.source
    assert explorer.view["rows"] and not explorer.view["error"] and not explorer.view["rnn_error"]


def test_the_hidden_cell_judges_with_verify_grades_examiner_and_refuses_the_limits_only_runner(
        course, built, tmp_path, monkeypatch, capsys):
    """`corriger_trou` (the hidden part of a grade cell, run in the kernel under nbgrader's own
    configuration) grades with VerifyGrades's examiner: the limits-only runner of the self-check is
    refused before any answer is read, and in a sandbox each blank gets VerifyGrades's verdict."""
    from nbgrader_support import SOLUTION, Author

    from trous.publish.nbgrader import incell
    from trous.publish.nbgrader.preprocessors import VerifyGrades
    from trous.sandbox.backend import SandboxRefused, bwrap_available

    exercise = course.exercise("01_toux")
    source = _notebook(built, exercise)
    answers = Author(source, _release(source)).answers({0: SOLUTION, 1: "sum(a + b for a, b in zip(t, toux))",
                                                        2: SOLUTION})
    nb = copy.deepcopy(source)  # as autograde runs it: the student's answers, the hidden tests restored
    for cell in nb.cells:
        cell.source = answers.get(cell.metadata["nbgrader"]["grade_id"], cell.source)
    nbformat.write(nb, tmp_path / f"{exercise.id}.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    entries = grade_cells(nb)[exercise.id]
    monkeypatch.setenv("TROUS_SANDBOX", "limites")
    with pytest.raises(SandboxRefused, match="limites seules"):
        incell.corriger_trou(entries[0][1], entries[0][2].to_dict())
    if not bwrap_available():
        return
    monkeypatch.setenv("TROUS_SANDBOX", "bwrap")
    in_kernel = {}
    for _, blank_id, bundle in entries:
        try:
            incell.corriger_trou(blank_id, bundle.to_dict())
            in_kernel[blank_id] = capsys.readouterr().out
        except incell.TrouFaux as exc:
            in_kernel[blank_id] = str(exc)
    VerifyGrades(sandbox="bwrap").preprocess(nb, {})
    outside = {blank_id: "".join(o.get("text") or o.get("evalue") for o in cell.outputs)
               for cell, blank_id, _ in entries}
    assert {b: text.strip() for b, text in in_kernel.items()} == {b: text.strip() for b, text in outside.items()}
    assert [b for b, text in in_kernel.items() if text.startswith("✔")] == ["somme_exp", "nouveau"]
    assert ": faux — 0 sur" in in_kernel["scores"]


def test_the_hidden_cell_in_trous_kernel_says_verify_grades_grades_and_gives_no_point(
        course, built, tmp_path, monkeypatch):
    """With VerifyGrades disabled, grade cells run in trous's sandboxed kernel, where the grading sandbox
    cannot start: no point, and the words say why and what to change, not « install bubblewrap »."""
    from trous.publish.nbgrader import incell, kernel
    from trous.sandbox import backend

    exercise = course.exercise("01_toux")
    nb = _notebook(built, exercise)  # the solution: graded, it would get every point
    nbformat.write(nb, tmp_path / f"{exercise.id}.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    for key, value in kernel.KERNEL_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(backend, "_bwrap_problem", lambda: "bubblewrap ne démarre pas")  # as in the kernel
    for _, blank_id, bundle in grade_cells(nb)[exercise.id]:
        with pytest.raises(incell.TrouFaux) as refused:
            incell.corriger_trou(blank_id, bundle.to_dict())
        assert str(refused.value).startswith("trou non noté : les cellules de notation ne sont pas corrigées "
                                             "dans le noyau isolé de trous")
        assert "c.VerifyGrades.enabled = False" in str(refused.value)
        assert "Installez bubblewrap" not in str(refused.value)
