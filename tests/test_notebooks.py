"""The course in JupyterLab, without a browser: the notebooks `trous notebooks` writes, the check cell's
verdicts (the same as the terminal's), and the explorer's numbers (the course's, from the course's code).

The browser drives all of it for real in test_browser_lab.py; kernels run in test_notebooks_kernel.py.
"""

from __future__ import annotations

import json
import re
import math
import shutil
import time
from pathlib import Path

import jupytext
import nbformat
import pytest

from conftest import ROOT, complete_exercises, run_trous
from trous.check.checker import Checker
from trous.check.selfcheck import DEPENDS, FAILED, PASSED, UNFILLED
from trous.core import Course
from trous.publish.notebooks import build as nbbuild
from trous.publish.notebooks import checkcell, definitions
from trous.publish.notebooks.checkcell import check
from explorateur.calcul import Attention, Settings, rnn_comparison, sentence  # the course's own widget
from explorateur.vue import build as build_view
from explorateur.vue import fraction, number
from trous.core.analysis import analyse_path


def softmax(scores):
    """The test's own softmax, to compare with what the explorer shows."""
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


@pytest.fixture(scope="module")
def notebooks_edition(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("nb") / "cours"
    done = run_trous(ROOT, "notebooks", str(dest))
    assert done.returncode == 0, done.stdout + done.stderr
    return dest


@pytest.fixture
def edition(notebooks_edition, tmp_path) -> Path:
    copy = tmp_path / "cours"
    shutil.copytree(notebooks_edition, copy)
    return copy


def code_cells(notebook):
    return [c for c in notebook.cells if c.cell_type == "code" and not checkcell.is_ours(c)]


def fill(path: Path, old: str, new: str) -> None:
    """What a student does in JupyterLab, then saves: replace text in a code cell of the notebook."""
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in code_cells(notebook) if old in c.source)
    cell.source = cell.source.replace(old, new, 1)
    nbformat.write(notebook, path)


# -- the notebooks -------------------------------------------------------------------------------------
def test_every_exercise_gets_a_paired_notebook_with_preparation_and_check(notebooks_edition):
    course = Course.load(notebooks_edition)
    for exercise in course.exercises:
        path = exercise.path.with_suffix(".ipynb")
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata["jupytext"]["formats"] == "ipynb,py:percent"
        kinds = [c.metadata.get("tags", []) for c in notebook.cells]
        first_code = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
        assert kinds[first_code] == ["trous-preparation"]
        assert "%load_ext trous.publish.notebooks" in notebook.cells[first_code].source
        assert kinds[-1] == ["trous-verification"] and f'check("{exercise.id}")' in notebook.cells[-1].source
        # The student's code cells are the template's, untouched
        template = jupytext.read(exercise.template_path, fmt="py:percent")
        assert [c.source for c in code_cells(notebook)] == [c.source for c in template.cells if c.cell_type == "code"]


def test_paired_py_is_still_the_exercise(notebooks_edition):
    """Our cells reach the .py as comments only: every blank is still found, none filled, the code aligned."""
    course = Course.load(notebooks_edition)
    for exercise in course.exercises:
        text = exercise.path.read_text(encoding="utf-8")
        assert '# %% active="ipynb"' in text
        analysis = analyse_path(exercise, exercise.path)
        assert analysis.aligned, exercise.id
        assert len(analysis.unfilled) == len(exercise.blanks), exercise.id
        # and jupytext reads the same notebook back from it (the pairing's round trip)
        again = jupytext.read(exercise.path, fmt="py:percent")
        notebook = nbformat.read(exercise.path.with_suffix(".ipynb"), as_version=4)
        assert [c.source for c in again.cells] == [c.source for c in notebook.cells]


def test_notebooks_again_keeps_the_students_notebooks_unless_forced(edition):
    notebook = edition / "exercises" / "01_toux.ipynb"
    fill(notebook, "total = ___", "total = sum(e)")
    done = run_trous(edition, "notebooks")
    assert done.returncode == 0 and "gardé : exercises/01_toux.ipynb" in done.stdout, done.stdout
    assert "total = sum(e)" in notebook.read_text(encoding="utf-8")
    # --force rebuilds from the .py, which holds the student's work once saved
    py = edition / "exercises" / "01_toux.py"
    py.write_text(py.read_text(encoding="utf-8").replace("scores = [___", "scores = [sum(a * b for a, b in zip(t, toux))"),
                  encoding="utf-8")
    done = run_trous(edition, "notebooks", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    rebuilt = nbformat.read(notebook, as_version=4)
    sources = "\n".join(c.source for c in rebuilt.cells)
    assert "zip(t, toux)" in sources and "total = ___" in sources
    assert sum(1 for c in rebuilt.cells if checkcell.is_ours(c) and c.cell_type == "code") == 2  # not doubled


def test_notebooks_without_jupyter_say_what_to_install(edition, monkeypatch, capsys):
    """A student's edition installs trous alone: `trous notebooks` names what is missing, in French,
    instead of stopping on an ImportError."""
    import sys

    from trous.cli import main

    monkeypatch.setitem(sys.modules, "jupytext", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "trous.publish.notebooks.build")
    assert main(["-C", str(edition), "notebooks"]) == 1
    said = capsys.readouterr().out
    assert "il manque jupytext pour JupyterLab" in said and "python -m pip install" in said, said


def test_notebooks_never_rewrite_the_authoring_course(tmp_path):
    course = Course.load(ROOT)
    with pytest.raises(nbbuild.NotebookError):
        nbbuild.build(course)  # the repository's exercises are templates: not an edition
    with pytest.raises(nbbuild.NotebookError):
        nbbuild.folder_for(course, ROOT)


def test_lab_command_runs_jupyterlab_from_this_python(notebooks_edition):
    import sys

    from trous.publish.notebooks.cli import command

    argv = command(Course.load(notebooks_edition), port=8899, open_browser=False)
    assert argv[:3] == [sys.executable, "-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={notebooks_edition}" in argv and "--ServerApp.port=8899" in argv
    assert "--ServerApp.default_url=/lab/tree/exercises/01_toux.ipynb" in argv and "--no-browser" in argv


# -- the check cell ----------------------------------------------------------------------------------
def statuses(result):
    return [b.status for b in result.blanks]


def test_check_cell_reports_each_blank_where_it_is_in_the_notebook(edition):
    notebook = edition / "exercises" / "01_toux.ipynb"
    fill(notebook, "total = ___", "total = sum(e) + 1")
    report = check("01_toux", str(notebook), course=Course.load(edition))
    assert statuses(report.result) == [FAILED, UNFILLED, UNFILLED]
    text = str(report)
    assert "trou 1/3 « somme_exp » (ligne 9 de la cellule 3) : faux" in text
    assert "softmax([1, 1, 2]) : attendu [0,21 ; 0,21 ; 0,58]" in text
    assert "trou 2/3 « scores » (ligne 13 de la cellule 3) : pas encore rempli (___)" in text
    exercise = Course.load(edition).exercise("01_toux")
    assert f"indice : {exercise.blanks[1].hints[0]}" in text
    page = report._repr_html_()
    assert 'data-blank="somme_exp" data-status="failed"' in page and 'data-blank="scores" data-status="unfilled"' in page
    for later in exercise.blanks[1].hints[1:]:  # the next hints wait behind a click
        assert f"{later}</details>" in page or f"{later}<details" in page


def test_check_cell_gives_the_terminal_verdicts(edition, course):
    """For every exercise, its solution typed into the notebook passes; half of it gives the same
    verdicts, blank by blank, as `trous check` on the .py holding the same code."""
    student = Course.load(edition)
    with Checker() as checker:
        for exercise in complete_exercises(course):
            solution = jupytext.read(exercise.solution_path, fmt="py:percent")
            solved = [c.source for c in solution.cells if c.cell_type == "code"]
            path = student.exercise(exercise.id).path.with_suffix(".ipynb")
            notebook = nbformat.read(path, as_version=4)
            for cell, source in zip(code_cells(notebook), solved, strict=True):
                cell.source = source
            nbformat.write(notebook, path)
            report = check(exercise.id, str(path), course=student)
            assert report.result.passed, (exercise.id, str(report))
            # the .py a save would write is checked the same way by the terminal's checker
            py = student.exercise(exercise.id).path
            py.write_text(report.snapshot.text, encoding="utf-8")
            assert statuses(checker.check(student.exercise(exercise.id), refresh=True)) == statuses(report.result)


def test_check_cell_sees_what_ran_when_newer_than_the_save(edition, monkeypatch):
    path = edition / "exercises" / "01_toux.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cell = code_cells(notebook)[0]
    typed = cell.source.replace("total = ___", "total = sum(e)")
    monkeypatch.setattr(checkcell, "_RAN", {cell.id: checkcell.Ran(typed, time.time() + 5)})
    monkeypatch.setattr(checkcell, "_INSTALLED", {0})
    report = check("01_toux", str(path), course=Course.load(edition))
    assert statuses(report.result) == [PASSED, UNFILLED, UNFILLED]
    assert any("Enregistre le notebook (Ctrl+S)" in n for n in report.notes())
    # A save after that run wins: the file is newer than what ran
    monkeypatch.setattr(checkcell, "_RAN", {cell.id: checkcell.Ran(typed, path.stat().st_mtime - 60)})
    report = check("01_toux", str(path), course=Course.load(edition))
    assert statuses(report.result) == [UNFILLED, UNFILLED, UNFILLED]


def test_check_cell_says_when_the_preparation_did_not_run(edition, monkeypatch):
    monkeypatch.setattr(checkcell, "_RAN", {})
    monkeypatch.setattr(checkcell, "_INSTALLED", set())

    class FakeShell:
        user_ns: dict = {}
        ast_transformers: list = []
        custom: tuple = ()

        class events:  # noqa: N801
            registered: list = []

            @classmethod
            def register(cls, name, fn):
                cls.registered.append(name)

        @classmethod
        def set_custom_exc(cls, types, handler):
            cls.custom = types

    monkeypatch.setattr("IPython.get_ipython", lambda: FakeShell)
    report = check("01_toux", str(edition / "exercises" / "01_toux.ipynb"), course=Course.load(edition))
    assert any("préparation" in n for n in report.notes())
    # what ran is remembered; `___` is guarded (said in French); a NameError is said in French
    assert FakeShell.events.registered == ["pre_run_cell", "pre_run_cell"]
    assert len(FakeShell.ast_transformers) == 1 and FakeShell.custom == (NameError,)


def test_snapshot_is_the_py_a_save_would_write(edition):
    path = edition / "exercises" / "02_places.ipynb"
    snap = checkcell.take(path, {})
    assert snap.text == (edition / "exercises" / "02_places.py").read_text(encoding="utf-8")
    line = snap.text.split("\n").index("xp = [___ for v, p in zip(x, places)]     # v + p, composante par composante") + 1
    label, in_cell = snap.where(line)
    assert label.startswith("la cellule ")
    cell = int(label.removeprefix("la cellule "))
    notebook = nbformat.read(path, as_version=4)
    assert notebook.cells[cell - 1].source.split("\n")[in_cell - 1].startswith("xp = [___")


# -- where the explorer's functions come from ------------------------------------------------------------
def test_definitions_come_from_exercise_2_and_refuse_blanks(course, tmp_path):
    path = definitions.find(course, ("softmax", "attention"))
    assert path.name.startswith("02_")
    found = definitions.load(path, ("softmax", "attention", "places"))
    assert [round(w, 2) for w in found["softmax"]([1, 1, 2])] == [0.21, 0.21, 0.58]
    assert found["places"] == [[1, 0], [0, 0], [0, 1]]
    with pytest.raises(definitions.DefinitionError, match="trou"):
        definitions.load(course.exercise("01_toux").path, ("softmax",))  # its softmax has a blank
    with pytest.raises(definitions.DefinitionError, match="introuvable"):
        definitions.load(path, ("absente",))


def test_the_explorer_computes_with_the_students_code_not_its_own(edition):
    """Change softmax in the student's exercise 2 (here: powers of 2 instead of e): the explorer follows."""
    own = edition / "exercises" / "02_places.py"
    text = own.read_text(encoding="utf-8")
    assert "e = [math.exp(v) for v in s]" in text
    own.write_text(text.replace("e = [math.exp(v) for v in s]", "e = [2 ** v for v in s]"), encoding="utf-8")
    attention = Attention.from_course(Course.load(edition))
    row = attention.row([[1, 0], [0, 1], [1, 1]], 2)
    assert row.weights == [0.25, 0.25, 0.5]  # 2¹, 2¹, 2² over 8
    assert row.new == [0.75, 0.75] and attention.fallback is None


def test_the_explorer_names_the_file_it_reads(notebooks_edition):
    """The footer names the file the intro names (exercises/02_places.py), which is the file the
    functions are read from; when that file no longer gives them, the pristine copy's, and why."""
    from explorateur import Explorer

    course = Course.load(notebooks_edition)
    widget = Explorer(course)
    intro = re.findall(r"exercises/\w+\.py", course.explorer.text)
    assert intro and all(path in widget.source for path in intro), (intro, widget.source)
    assert ".trous" not in widget.source and "modeles" not in widget.source
    assert Attention.from_course(course).source == course.exercise("02_places").path
    own = course.exercise("02_places").path
    text = own.read_text(encoding="utf-8")
    try:
        own.write_text(text.replace("def softmax(s):", "def softmax(s:"), encoding="utf-8")
        widget.selected = 2  # any control: the explorer looks at the file again
        assert "celles du modèle de l'exercice 2" in widget.source and "SyntaxError" in widget.source
        assert widget.view["rows"][2]["weights"] == ["0,21", "0,21", "0,58"]  # the pristine copy's
        own.write_text(text.replace("e = [math.exp(v) for v in s]", "e = [2 ** v for v in s]"), encoding="utf-8")
        widget.selected = 1
        assert "modèle" not in widget.source and widget.view["rows"][2]["weights"] == ["0,25", "0,25", "0,5"]
        own.write_text(text.replace("def softmax(s):", "def softmax(s):\n    return 1 / 0"), encoding="utf-8")
        widget.selected = 0
        assert widget.view["error"].startswith("le calcul s'arrête dans softmax ou attention (02_places.py)")
    finally:
        own.write_text(text, encoding="utf-8")


# -- the explorer's numbers: the course's ------------------------------------------------------------------
@pytest.fixture(scope="module")
def attention(course):
    return Attention.from_course(course)


PLACES = [[1, 0], [0, 0], [0, 1]]


def test_toux_reads_the_sentence_as_in_the_course(attention):
    row = attention.row([[1, 0], [0, 1], [1, 1]], 2)
    assert row.scores == [1, 1, 2]
    assert [round(w, 2) for w in row.weights] == [0.21, 0.21, 0.58]
    assert [round(v, 2) for v in row.new] == [0.79, 0.79]
    assert row.exps == [math.exp(1), math.exp(1), math.exp(2)] and row.total == sum(row.exps)


def test_place_vectors_tell_the_two_orders_apart(attention):
    s = sentence(Settings(places=True), PLACES)
    assert s.inputs[2] == [1, 2]
    assert [round(v, 2) for v in attention.row(s.inputs, 2).new] == [1, 1.86]
    other = sentence(Settings(names=["toux", "sans", "fièvre"], vectors=[[1, 1], [0, 1], [1, 0]], places=True), PLACES)
    assert [round(v, 2) for v in attention.row(other.inputs, 0).new] == [1.85, 1]


def test_the_mask_gives_padding_exactly_zero(attention):
    s = sentence(Settings(padding=[False, False, True], mask=True), PLACES)
    assert s.labels[2] == "<rempl>" and s.inputs[2] == [0, 0]
    row = attention.row(s.inputs, 0, masked=s.masked)
    assert row.scores == [1, 0, 0] and row.used[2] == float("-inf")
    assert [round(w, 2) for w in row.weights] == [0.73, 0.27, 0] and row.weights[2] == 0.0
    unmasked = attention.row(s.inputs, 0)  # without the mask, exp(0) = 1 keeps a big weight
    assert unmasked.weights == pytest.approx(softmax([1, 0, 0]))


def test_dividing_by_root_d(attention):
    row = attention.row([[1, 0], [0, 1], [1, 1]], 2, scale=True)
    assert row.scores == [1, 1, 2]
    assert row.used == pytest.approx([1 / math.sqrt(2), 1 / math.sqrt(2), 2 / math.sqrt(2)])
    assert row.weights == pytest.approx(softmax([s / math.sqrt(2) for s in (1, 1, 2)]))


def test_rnn_forgets_pas_attention_does_not(attention, course):
    path = definitions.find(course, ("phrase", "vec"))
    found = definitions.load(path, ("phrase", "vec"))
    c = rnn_comparison(attention, found["phrase"], found["vec"], 0.5)
    assert c.distance == 8 and c.share == 1 / 256
    assert round(c.weight, 2) == 0.13  # e¹ / (3 e¹ + 5 e⁰ + e²), exercise 4's value
    assert [d.words_between for d in c.by_distance] == list(range(1, 9))
    assert {d.attention_weight for d in c.by_distance} == {c.weight}
    assert [d.rnn_share for d in c.by_distance] == [0.5 ** k for k in range(1, 9)]
    assert rnn_comparison(attention, found["phrase"], found["vec"], 0.9).weight == c.weight


def test_view_writes_numbers_the_french_way(attention):
    assert [number(x) for x in (0.2119, 1.0000000001, 1.8618, float("-inf"), -0.0001, 0.125)] == \
        ["0,21", "1", "1,86", "−∞", "0", "0,13"]
    assert fraction(0.5 ** 8) == "1/256" and fraction(0.45 ** 8).startswith("≈ 1/") and fraction(0.43) == ""
    view = build_view(Settings(selected=2), attention, PLACES, None)
    assert view["rows"][2]["weights"] == ["0,21", "0,21", "0,58"] and view["rows"][2]["new"] == "[0,79 ; 0,79]"
    lines = [line for part in view["steps"]["parts"] for line in part["lines"]]
    assert "exp(2) = 7,39" in lines and "somme = 2,72 + 2,72 + 7,39 = 12,83" in lines
    assert "0,21 × [1 ; 0] + 0,21 × [0 ; 1] + 0,58 × [1 ; 1] = [0,79 ; 0,79]" in lines
    assert json.loads(json.dumps(view)) == view  # what crosses to the browser is plain JSON


def test_explorer_widget_recomputes_when_a_control_changes(course):
    from explorateur import Explorer

    widget = Explorer(course)
    assert widget.view["steps"] is None and widget.view["rnn"]["fraction"] == "1/256"
    widget.selected = 2
    assert widget.view["steps"]["token"] == "toux"
    widget.mask = True  # no padding yet: the last token becomes <rempl>
    assert widget.padding == [False, False, True]
    assert [r["weights"][-1] for r in widget.view["rows"]] == ["0", "0", "0"]
    assert widget.view["rows"][0]["scores"] == ["1", "0", "−∞"]  # what the softmax receives
    widget.mask = False  # the token the mask made <rempl> comes back
    assert widget.padding == [False, False, False] and widget.view["labels"][-1] == "toux"
    widget.scale = True  # the scores column shows the scores divided by √2
    assert widget.view["rows"][2]["scores"] == ["0,71", "0,71", "1,41"]
    assert widget.view["scores_heading"].startswith("scores ÷ √2")
    widget.scale = False
    widget.padding = [True, False, False]
    widget.mask = True
    widget.mask = False  # a <rempl> the student chose stays
    assert widget.padding == [True, False, False]
    widget.padding = [False, False, False]
    widget.vectors = [[100, 0], [0, 1], [1, 1]]  # kept within ±10: exp() must not overflow
    assert widget.view["error"] is None and widget.view["rows"][0]["input"] == "[10 ; 0]"
    widget.w = 0.9
    assert widget.view["rnn"]["share"] == number(0.9 ** 8, 3) and widget.view["rnn"]["weight"] == "0,13"


def test_check_cell_places_a_syntax_error_in_its_cell(edition):
    notebook = edition / "exercises" / "01_toux.ipynb"
    fill(notebook, "total = ___", "total = sum(e")
    report = check("01_toux", str(notebook), course=Course.load(edition))
    assert not report.result.passed
    problem = report.problem()
    assert problem.startswith("ligne 9 de la cellule 3 — erreur de syntaxe"), problem
    assert "total = sum(e" in problem
    assert problem in str(report) and "trous-problem" in report._repr_html_()
    assert str(report).count("erreur de syntaxe") == 1  # once for the exercise, not once per blank
    assert "d'abord : corrige la ligne 9 de la cellule 3" in str(report)


def test_check_cell_says_which_blank_waits_for_which(edition):
    notebook = edition / "exercises" / "01_toux.ipynb"
    fill(notebook, "total = ___", "total = sum(e)")
    fill(notebook, "scores = [___", "scores = [sum(t) * 2")
    fill(notebook, "nouveau = [___", "nouveau = [sum(poids[i] * x[i][j] for i in range(len(x)))")
    report = check("01_toux", str(notebook), course=Course.load(edition))
    assert statuses(report.result) == [PASSED, FAILED, DEPENDS]
    text, page = str(report), report._repr_html_()
    assert "« nouveau » (ligne 15 de la cellule 3) : dépend de « scores »" in text
    assert 'data-blank="nouveau" data-status="depends"' in page
    assert "d'abord : trou 2 « scores » (à corriger)" in text
    # every block of text breaks between words only (JupyterLab's output area breaks anywhere)
    blocks = re.findall(r"<pre[^>]*>", page)
    assert blocks and all("word-break:normal" in tag for tag in blocks), blocks
