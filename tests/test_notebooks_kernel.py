"""The notebooks run in a real IPython kernel (nbclient, as nbconvert and nbgrader run them): the
preparation cell, an unfilled blank failing on its own line, the check cell's feedback, the explorer.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from conftest import ROOT, run_trous

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
    # IPython names its third-to-last output `___`: the preparation removes it, so an unfilled
    # blank fails here with NameError, as in the .py, instead of being ''.
    assert "NameError: name '___' is not defined" in text_of(ran), text_of(ran)
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
