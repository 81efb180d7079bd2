"""What the notebook's locked cells call, inside the kernel.

- `verifier(public_bundle)` (the check cell): runs the public checks on the student's code and
  prints the same French report as `trous check` and `pytest exercises/`;
- `verifier_trou(exercise, blank)` (visible part of a grade cell): that blank's public verdict;
  raises while the blank is not right, so a release notebook fails its tests (`validate --invert`);
- `corriger_trou(blank, hidden_bundle)` (hidden part of a grade cell, present at autograde only):
  the engine's verdict for that blank, per-blank splicing and hidden variants included; the
  visible part of the cell then stays silent.

The student's code is what the answer cells hold. Under nbgrader (autograde, validate), it is read
from the notebook file being executed, exactly as `trous grade` reads the submitted file. In an
interactive session, it is the latest execution of each answer cell in the kernel's history.
All code runs in separate processes (the trous runner), never in the kernel's namespace.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

from ..course import blanks as blanks_mod
from ..student.feedback import blank_report, exercise_report
from . import answers
from .bundle import Bundle, check_bundle
from .outcome import TrouFaux, blank_outcome

_public: dict[str, Bundle] = {}
_hidden_done: set[tuple[str, str]] = set()
_examiner = None
NEVER_RUN = ("note : la cellule de réponse {n} n'a pas encore été exécutée dans ce noyau : exécute-la "
             "(Maj+Entrée) avant de vérifier")


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


# -- the student's code ----------------------------------------------------------------------------
def _from_file(bundle: Bundle) -> dict[str, str] | None:
    if os.environ.get("NBGRADER_EXECUTION") not in ("autograde", "validate"):
        return None
    path = Path(f"{bundle.exercise_id}.ipynb")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return answers.from_cells(data.get("cells", []))
    except (OSError, ValueError, AttributeError):
        return None


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
    history = [h for h in history if h.strip() and "from trous.nbgrader_course.incell import" not in h]
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


def student_code(bundle: Bundle) -> tuple[bytes, list[str]]:
    cells = _from_file(bundle)
    notes: list[str] = []
    if cells is None:
        cells, notes = _from_history(bundle)
    return answers.exercise_text(bundle, cells).encode("utf-8", "surrogatepass"), notes


# -- the cells -------------------------------------------------------------------------------------
def verifier(data: dict) -> None:
    bundle = Bundle.from_dict(data).public()
    _public[bundle.exercise_id] = bundle
    code, notes = student_code(bundle)
    result = _get_examiner().check(bundle, code)
    for note in notes:
        print(note)
    print(exercise_report(result))


def _public_from_file(exercise_id: str) -> Bundle | None:
    """The check cell's bundle, read from the notebook file (it never changes: only answers do)."""
    try:
        data = json.loads(Path(f"{exercise_id}.ipynb").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for cell in data.get("cells", []):
        source = cell.get("source", "")
        bundle = check_bundle("".join(source) if isinstance(source, list) else str(source))
        if bundle is not None and bundle.exercise_id == exercise_id:
            _public[exercise_id] = bundle
            return bundle
    return None


def verifier_trou(exercise_id: str, blank_id: str) -> None:
    if (exercise_id, blank_id) in _hidden_done:
        return  # graded above by the hidden tests: their verdict is the one that counts
    bundle = _public.get(exercise_id) or _public_from_file(exercise_id)
    if bundle is None:
        raise TrouFaux(f"exécute d'abord la cellule de vérification de l'exercice {exercise_id} (à la fin du carnet)")
    code, notes = student_code(bundle)
    result = _get_examiner().check(bundle, code)
    blank = next(b for b in result.blanks if b.spec.id == blank_id)
    if blank.passed:
        print(f"✔ trou {blank.index + 1}/{len(result.blanks)} « {blank_id} » : juste sur l'exemple du cours")
        return
    raise TrouFaux("\n".join(notes + [blank_report(result, blank)]))


def corriger_trou(blank_id: str, data: dict) -> None:
    bundle = Bundle.from_dict(data)
    code, _ = student_code(bundle)
    grade = _get_examiner().grade(bundle, code)
    _hidden_done.add((bundle.exercise_id, blank_id))
    passed, text = blank_outcome(grade, blank_id)
    if not passed:
        raise TrouFaux(text)
    print(text)
