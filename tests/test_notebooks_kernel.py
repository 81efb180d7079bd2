"""The notebooks run in a real IPython kernel (nbclient, as nbconvert and nbgrader run them): the
preparation cell, an unfilled blank failing on its own line, the check cell's feedback, the explorer.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from conftest import ROOT, run_trous
from trous.core import Course

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    dest = tmp_path_factory.mktemp("noyau") / "cours"
    done = run_trous(ROOT, "notebooks", str(dest))
    assert done.returncode == 0, done.stdout + done.stderr
    return dest


def execute(path, cwd):
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return notebook


def text_of(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_exercise_notebook_in_a_kernel(edition, tmp_path):
    folder = tmp_path / "cours"
    shutil.copytree(edition, folder)
    path = folder / "exercises" / "01_toux.ipynb"
    notebook = nbformat.read(path, as_version=4)
    code = next(c for c in notebook.cells if "total = ___" in c.source)
    code.source = code.source.replace("total = ___", "total = sum(e)")
    nbformat.write(notebook, path)

    done = execute(path, path.parent)
    ran = next(c for c in done.cells if "total = sum(e)" in c.source)
    # IPython names its third-to-last output `___`: the preparation guards it, so an unfilled blank
    # fails here on its own line, in French, without a traceback, instead of being ''.
    said = "\n".join(line for o in ran.outputs for line in o.get("traceback", []))
    assert "✘ trou pas encore rempli (___) à la ligne 13 de sa cellule" in said, said
    assert "scores = [___ for t in x]" in said and "Traceback" not in said and "NameError" not in said
    report = text_of(done.cells[-1])
    assert "trou 1/3 « somme_exp » (ligne 9 de la cellule 3) : juste" in report, report
    assert "trou 2/3 « scores » (ligne 13 de la cellule 3) : pas encore rempli (___)" in report
    html = "".join(o.get("data", {}).get("text/html", "") for o in done.cells[-1].outputs)
    assert 'data-blank="somme_exp" data-status="passed"' in html


def test_explorer_notebook_in_a_kernel(edition):
    done = execute(edition / "explorateur.ipynb", edition)
    outputs = done.cells[-1].outputs
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    views = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 1


@pytest.mark.parametrize("exercise_id", ["01_toux", "06_moyenne"])
def test_a_fresh_notebook_run_all_ends_in_the_french_verdict(edition, tmp_path, exercise_id):
    """« Run All » on a notebook nobody touched, as nbclient runs it without allowing errors (as
    JupyterLab does): the cells that stop on a blank say so in French, and the run goes on to the
    check cell, whose verdict is `pytest exercises/`'s."""
    from nbclient import NotebookClient

    folder = tmp_path / "cours"
    shutil.copytree(edition, folder)
    path = folder / "exercises" / f"{exercise_id}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
                   ).execute()  # raises if a cell fails that is not allowed to
    errors = [line for c in notebook.cells for o in c.get("outputs", []) for line in o.get("traceback", [])]
    assert errors and all("Traceback" not in line and "name '___'" not in line for line in errors), errors
    assert any("✘ trou pas encore rempli (___)" in line for line in errors)
    report = text_of(notebook.cells[-1]).strip()
    blanks = Course.load(folder).exercise(exercise_id).blanks
    assert report.startswith(f"{exercise_id} — ") and f"0/{len(blanks)} trous justes" in report, report
    assert all(f"« {b.id} »" in report and "pas encore rempli (___)" in report for b in blanks)
