"""What the notebook's locked cells call in the kernel: `verifier` (the check cell), `verifier_trou`
(a grade cell's visible part, what Validate runs: raises while the blank is not right) and
`corriger_trou` (its hidden part: the engine's verdict; in trous's sandboxed kernel, VerifyGrades's).

The student's code is read from the notebook file under nbgrader, as `trous grade` reads it, else
from each answer cell's latest run in the history; it runs in the trous runner, never in the kernel.
"""

from __future__ import annotations

import atexit
import difflib
import hashlib
import json
import os
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path

from ...check.feedback import NotebookReport
from ...check.selfcheck import UNFILLED, WAITING, ExerciseResult, self_check
from ...core import blanks as blanks_mod
from ...core.analysis import Analysis, analyse_bytes
from ...core.course import Exercise
from ...core.grades import ExerciseGrade
from ...grade.engine import Grader
from ...inputs import answers
from ...inputs.bundle import Bundle, check_bundle_of, materialize
from ...inputs.answers import CellMap, cell_map
from ...outputs.outcome import TrouFaux, blank_outcome
from ...sandbox.backend import LIMITS, choose
from ...sandbox.pool import RunnerPool

_public: dict[str, Bundle] = {}
_hidden_done: set[tuple[str, str]] = set()
NEVER_RUN = ("note : la cellule de réponse {n} n'a pas encore été exécutée dans ce noyau : exécute-la "
             "(Maj+Entrée) avant de vérifier")
NO_NOTEBOOK = ("je ne trouve pas le carnet {name} (ni sa cellule de vérification) dans le dossier de ce noyau : "
               "ouvre le carnet de l'exercice tel qu'il a été distribué, sans le renommer")
IN_KERNEL_SANDBOX = "TROUS_NOYAU_ISOLE"  # set in trous's sandboxed kernel (kernel.py's KERNEL_ENV)
NOT_IN_KERNEL = ("trou non noté : les cellules de notation ne sont pas corrigées dans le noyau isolé de trous (déjà "
                 "dans bubblewrap, la correction ne peut pas y isoler le code) ; c'est VerifyGrades qui les note, hors "
                 "du noyau. Réactivez-le (nbgrader_config.py, nbgrader_config_local.py : ni « c.VerifyGrades.enabled = "
                 "False », ni VerifyGrades retiré de c.Autograde.autograde_preprocessors), puis relancez l'autograde")


@cache
def self_checker() -> Examiner:
    """For the kernel's life: resource limits suffice, the kernel runs the same code anyway (in trous's
    kernel sandbox, that sandbox is the wall)."""
    return Examiner(os.environ.get("TROUS_SANDBOX") or LIMITS)


@cache
def for_grading(sandbox: str = "auto") -> Examiner:
    """One per process (nbgrader grades notebooks one after the other), under `trous grade`'s sandbox
    rules: bubblewrap, else refused; never the limits-only runner; sans-isolation only when asked, never
    as root."""
    return Examiner(choose(sandbox))


# -- the notebook file -----------------------------------------------------------------------------
def _read_cells(exercise_id: str, checked: bool = True) -> list[dict] | None:
    """Of this kernel's notebook (JPY_SESSION_NAME), else of the exercise's where validate and autograde
    run. `checked`: holding the exercise's check cell."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    own = [Path(session)] if session.endswith(".ipynb") else []
    for path in own + [Path(f"{exercise_id}.ipynb")]:
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells")
        except (OSError, ValueError, AttributeError):
            continue
        cells = [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else None
        if cells is not None and (not checked or any(_check_bundle(c, exercise_id) for c in cells)):
            return cells
    return None


def _check_bundle(cell: dict, exercise_id: str) -> Bundle | None:
    bundle = check_bundle_of(cell)
    return bundle if bundle is not None and bundle.exercise_id == exercise_id else None


def _public_bundle(exercise_id: str) -> Bundle | None:
    """Read once: it never changes, only answers do."""
    if exercise_id not in _public:
        found = (_check_bundle(cell, exercise_id) for cell in _read_cells(exercise_id) or [])
        bundle = next((b for b in found if b is not None), None)
        if bundle is not None:
            _public[exercise_id] = bundle
    return _public.get(exercise_id)


# -- the student's code ----------------------------------------------------------------------------
def _from_file(bundle: Bundle) -> dict[str, str] | None:
    if os.environ.get("NBGRADER_EXECUTION") not in ("autograde", "validate"):
        return None
    # autograde's kernel sees the notebook reduced to its answer and check cells (a check cell may be gone)
    cells = _read_cells(bundle.exercise_id)
    cells = _read_cells(bundle.exercise_id, checked=False) if cells is None else cells
    return None if cells is None else answers.from_cells(cells)


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
        found[cell.grade_id] = matches[-1] if matches else cell.template
        if not matches:
            notes.append(NEVER_RUN.format(n=number))
    return found, notes


def student_cells(bundle: Bundle) -> tuple[dict[str, str], list[str]]:
    cells = _from_file(bundle)
    return _from_history(bundle) if cells is None else (cells, [])


class Examiner:
    """The engine and the self-check on a notebook's bundle, written once as a one-exercise course; a
    `Grader` per bundle keeps its reference values (the solution runs once)."""

    def __init__(self, sandbox: str):
        self.sandbox = sandbox
        self.pool: RunnerPool | None = None
        self.root = Path(tempfile.mkdtemp(prefix="trous-carnets-"))
        self.exercises: dict[str, Exercise] = {}
        self.graders: dict[str, Grader] = {}
        self.cache: dict[tuple[str, str, str], object] = {}
        atexit.register(self.close)

    def _pool(self) -> RunnerPool:
        if self.pool is None:
            self.pool = RunnerPool(1, mode=self.sandbox)
        return self.pool

    def exercise(self, bundle: Bundle) -> Exercise:
        key = bundle.digest
        if key not in self.exercises:
            self.exercises[key] = materialize(bundle, self.root / key[:16])
        return self.exercises[key]

    def grade(self, bundle: Bundle, code: bytes) -> ExerciseGrade:
        if not bundle.hidden:
            raise ValueError("correction impossible : ces données d'exercice n'ont pas le correcteur caché")
        key = ("grade", bundle.digest, hashlib.sha256(code).hexdigest())
        if key not in self.cache:
            exercise = self.exercise(bundle)
            if bundle.digest not in self.graders:
                self.graders[bundle.digest] = Grader(exercise.course, self._pool())
            grade = self.graders[bundle.digest].grade("carnet", {exercise.id: code})
            self.cache[key] = grade.exercise(exercise.id)
        return self.cache[key]

    def check(self, bundle: Bundle, code: bytes) -> ExerciseResult:
        key = ("check", bundle.digest, hashlib.sha256(code).hexdigest())
        if key not in self.cache:
            exercise = self.exercise(bundle)
            self.cache[key] = self.self_check(exercise, analyse_bytes(exercise, code, f"exercises/{exercise.id}.py"))
        return self.cache[key]

    def self_check(self, exercise: Exercise, analysis: Analysis) -> ExerciseResult:
        """`analysis`: of an exercise of a bundle or of a course."""
        return self_check(self._pool(), exercise, analysis)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        shutil.rmtree(self.root, ignore_errors=True)


# -- the report ------------------------------------------------------------------------------------
class CheckReport(NotebookReport):
    """No `trous hint` command in a notebook: the hint is in the report."""

    def step(self):
        step = super().step()
        return re.sub(r" — indice : trous hint \S+", " — son indice est ci-dessus", step) if step else step


def _check(exercise_id: str):
    bundle = _public_bundle(exercise_id)
    if bundle is None:
        raise TrouFaux(NO_NOTEBOOK.format(name=f"{exercise_id}.ipynb"))
    cells, notes = student_cells(bundle)
    where: CellMap = cell_map(bundle, cells)
    result = self_checker().check(bundle, where.text.encode("utf-8", "surrogatepass"))
    return where, result, notes


# -- the cells -------------------------------------------------------------------------------------
def verifier(exercise) -> object:
    """`exercise`: its id (or, in notebooks of older versions, the public bundle)."""
    if isinstance(exercise, dict):
        bundle = Bundle.from_dict(exercise).public()
        _public[bundle.exercise_id] = bundle
        exercise = bundle.exercise_id
    where, result, notes = _check(str(exercise))
    return CheckReport(result, where, notes)


def verifier_trou(exercise_id: str, blank_id: str) -> None:
    if (exercise_id, blank_id) in _hidden_done:
        return  # graded above by the hidden tests: their verdict is the one that counts
    where, result, notes = _check(exercise_id)
    blank = next(b for b in result.blanks if b.spec.id == blank_id)
    report = CheckReport(result, where, notes)
    if blank.passed:
        print(f"✔ {report.title(blank)} — vérification publique (exemples de l'énoncé)")
        return
    lines = [f"note : {n}" for n in report.notes()]
    if result.problem and blank.status not in (UNFILLED, *WAITING):
        lines.append(report.problem())
    lines += report.blank_text(blank, "✘")
    lines.append("    (vérification publique, sur les exemples de l'énoncé : c'est ce que lance le bouton Validate)")
    raise TrouFaux("\n".join(lines))


def corriger_trou(blank_id: str, data: dict) -> None:
    if os.environ.get(IN_KERNEL_SANDBOX):
        raise TrouFaux(NOT_IN_KERNEL)
    examiner = for_grading(os.environ.get("TROUS_SANDBOX") or "auto")  # refused here, before any answer is read
    bundle = Bundle.from_dict(data)
    cells, _ = student_cells(bundle)
    where = cell_map(bundle, cells)
    grade = examiner.grade(bundle, where.text.encode("utf-8", "surrogatepass"))
    _hidden_done.add((bundle.exercise_id, blank_id))
    passed, text = blank_outcome(grade, blank_id, where)
    if not passed:
        raise TrouFaux(text)
    print(text)
