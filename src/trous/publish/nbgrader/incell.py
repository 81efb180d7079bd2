"""What the notebook's locked cells call, inside the kernel.

- `verifier("01_moyenne")` (the check cell): runs the public checks on the student's code and shows the
  same French report as `trous check` and `pytest exercises/`, with places named as the notebook
  names them (« ligne 3 de la cellule de réponse 1 »); the public bundle it needs is the one in the
  check cell's metadata, read from the notebook file;
- `verifier_trou(exercise, blank)` (visible part of a grade cell, what nbgrader's Validate runs): that
  blank's public verdict; raises while the blank is not right, so a release notebook fails its tests
  (`validate --invert`);
- `corriger_trou(blank, hidden_bundle)` (hidden part of a grade cell, present at autograde only):
  the engine's verdict for that blank, per-blank splicing and hidden variants included; the
  visible part of the cell then stays silent. Only nbgrader's own configuration runs it: with the
  generated one, the grade cells are not run in the kernel and VerifyGrades writes that verdict.

The student's code is what the answer cells hold. Under nbgrader (autograde, validate), it is read
from the notebook file being executed, exactly as `trous grade` reads the submitted file. In an
interactive session, it is the latest execution of each answer cell in the kernel's history.
All code runs in separate processes (the trous runner), never in the kernel's namespace.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path

from ...core import blanks as blanks_mod
from ...inputs import answers
from ...inputs.bundle import Bundle, check_bundle_of
from ...inputs.cells import CellMap, cell_map
from ...outputs.outcome import TrouFaux, blank_outcome

_public: dict[str, Bundle] = {}
_hidden_done: set[tuple[str, str]] = set()
_examiner = None
NEVER_RUN = ("note : la cellule de réponse {n} n'a pas encore été exécutée dans ce noyau : exécute-la "
             "(Maj+Entrée) avant de vérifier")
NO_NOTEBOOK = ("je ne trouve pas le carnet {name} (ni sa cellule de vérification) dans le dossier de ce noyau : "
               "ouvre le carnet de l'exercice tel qu'il a été distribué, sans le renommer")


def _sandbox() -> str:
    # The student's self-check, in the student's own kernel: resource limits are what it needs (the
    # kernel already runs the same code). Inside trous's kernel sandbox, a nested one could not start
    # anyway: the kernel's sandbox is the wall. Grades come from VerifyGrades, outside the kernel.
    if os.environ.get("TROUS_NOYAU_ISOLE"):
        return "limites"
    return os.environ.get("TROUS_SANDBOX") or "limites"


def _get_examiner():
    global _examiner
    if _examiner is None:
        from .examiner import Examiner  # noqa: PLC0415

        _examiner = Examiner(_sandbox())
    return _examiner


# -- the notebook file -----------------------------------------------------------------------------
def _candidates(exercise_id: str) -> list[Path]:
    """The notebook this kernel runs (jupyter_server names it in JPY_SESSION_NAME), then the exercise's
    notebook in the kernel's folder (nbgrader's validate and autograde run there)."""
    found = []
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        found.append(Path(session))
    found.append(Path(f"{exercise_id}.ipynb"))
    return found


def _read_cells(exercise_id: str) -> list[dict] | None:
    for path in _candidates(exercise_id):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        cells = data.get("cells") if isinstance(data, dict) else None
        if isinstance(cells, list) and any(_check_bundle(c, exercise_id) for c in cells if isinstance(c, dict)):
            return [c for c in cells if isinstance(c, dict)]
    return None


def _check_bundle(cell: dict, exercise_id: str) -> Bundle | None:
    bundle = check_bundle_of(cell)
    return bundle if bundle is not None and bundle.exercise_id == exercise_id else None


def _public_bundle(exercise_id: str) -> Bundle | None:
    """The check cell's bundle (it never changes: only answers do)."""
    if exercise_id in _public:
        return _public[exercise_id]
    for cell in _read_cells(exercise_id) or []:
        bundle = _check_bundle(cell, exercise_id)
        if bundle is not None:
            _public[exercise_id] = bundle
            return bundle
    return None


# -- the student's code ----------------------------------------------------------------------------
def _from_file(bundle: Bundle) -> dict[str, str] | None:
    if os.environ.get("NBGRADER_EXECUTION") not in ("autograde", "validate"):
        return None
    cells = _read_cells(bundle.exercise_id)
    if cells is None:  # autograde's kernel sees the notebook reduced to its answer and check cells
        try:
            data = json.loads(Path(f"{bundle.exercise_id}.ipynb").read_text(encoding="utf-8"))
            cells = data.get("cells", [])
        except (OSError, ValueError, AttributeError):
            return None
    return answers.from_cells(cells)


def _aligned(template: str, text: str) -> bool:
    try:
        return blanks_mod.align(template, text) is not None
    except blanks_mod.TokenizeError:
        return False


def _from_history(bundle: Bundle) -> tuple[dict[str, str], list[str]]:
    try:
        history = list(get_ipython().history_manager.input_hist_raw)  # noqa: F821 - IPython's builtin
    except NameError:
        history = []
    history = [h for h in history if h.strip() and "from trous.publish.nbgrader.incell import" not in h
               and not h.lstrip().startswith(("%load_ext", "get_ipython()"))]
    found, notes = {}, []
    for number, cell in enumerate(bundle.cells, start=1):
        matches = [h for h in history if _aligned(cell.template, h)]
        if not matches:  # code changed outside the blanks: the closest recent execution
            scored = [(difflib.SequenceMatcher(None, cell.template, h).ratio(), i) for i, h in enumerate(history)]
            matches = [history[i] for ratio, i in scored if ratio >= 0.6]
        if matches:
            found[cell.grade_id] = matches[-1]
        else:
            found[cell.grade_id] = cell.template
            notes.append(NEVER_RUN.format(n=number))
    return found, notes


def student_cells(bundle: Bundle) -> tuple[dict[str, str], list[str]]:
    cells = _from_file(bundle)
    notes: list[str] = []
    if cells is None:
        cells, notes = _from_history(bundle)
    return cells, notes


# -- the report ------------------------------------------------------------------------------------
def _report_class():
    from ..notebooks.report import NotebookReport  # noqa: PLC0415

    class CheckReport(NotebookReport):
        """The report of `trous lab`, where no `trous hint` command exists: the hint is in the report."""

        def step(self):
            step = super().step()
            return re.sub(r" — indice : trous hint \S+", " — son indice est ci-dessus", step) if step else step

    return CheckReport


def _check(exercise_id: str):
    bundle = _public_bundle(exercise_id)
    if bundle is None:
        raise TrouFaux(NO_NOTEBOOK.format(name=f"{exercise_id}.ipynb"))
    cells, notes = student_cells(bundle)
    where: CellMap = cell_map(bundle, cells)
    result = _get_examiner().check(bundle, where.text.encode("utf-8", "surrogatepass"))
    return bundle, where, result, notes


# -- the cells -------------------------------------------------------------------------------------
def verifier(exercise) -> object:
    """The check cell. `exercise`: the exercise id (or, from notebooks built by older versions of
    trous, the public bundle itself)."""
    if isinstance(exercise, dict):
        bundle = Bundle.from_dict(exercise).public()
        _public[bundle.exercise_id] = bundle
        exercise = bundle.exercise_id
    _, where, result, notes = _check(str(exercise))
    return _report_class()(result, where, notes)


def verifier_trou(exercise_id: str, blank_id: str) -> None:
    if (exercise_id, blank_id) in _hidden_done:
        return  # graded above by the hidden tests: their verdict is the one that counts
    _, where, result, notes = _check(exercise_id)
    blank = next(b for b in result.blanks if b.spec.id == blank_id)
    report = _report_class()(result, where, notes)
    if blank.passed:
        print(f"✔ {report.title(blank)} — vérification publique (exemples de l'énoncé)")
        return
    from ...check.selfcheck import UNFILLED, WAITING  # noqa: PLC0415
    from ...check.feedback import hint_text, wants_hint  # noqa: PLC0415

    lines = [f"note : {n}" for n in report.notes()]
    if result.problem and blank.status not in (UNFILLED, *WAITING):
        lines.append(report.problem())
    lines.append(f"✘ {report.title(blank)}")
    lines += ["    " + line for line in report.blank_lines(blank)]
    if wants_hint(blank):
        lines.append(f"    indice : {hint_text(blank)}")
    lines.append("    (vérification publique, sur les exemples de l'énoncé : c'est ce que lance le bouton Validate)")
    raise TrouFaux("\n".join(lines))


def corriger_trou(blank_id: str, data: dict) -> None:
    bundle = Bundle.from_dict(data)
    cells, _ = student_cells(bundle)
    where = cell_map(bundle, cells)
    grade = _get_examiner().grade(bundle, where.text.encode("utf-8", "surrogatepass"))
    _hidden_done.add((bundle.exercise_id, blank_id))
    passed, text = blank_outcome(grade, blank_id, where)
    if not passed:
        raise TrouFaux(text)
    print(text)
