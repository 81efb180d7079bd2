"""The check cell: the exercise as written in the notebook, judged by the student's self-check
(the same run, checks and verdicts as `pytest exercises/`).
"""

from __future__ import annotations

import atexit
import os
from functools import cache
from pathlib import Path

from ...check.checker import Checker
from ...check.selfcheck import interpret, prepare
from ...core.course import Course, Exercise
from ...core.source import Source
from ...core.analysis import analyse_source
from . import snapshot, tracking
from .report import NotebookReport

@cache
def _checker() -> Checker:
    """One runner for the kernel's life: the second check does not pay the sandbox's start again."""
    checker = Checker()
    atexit.register(checker.close)
    return checker


def notebook_of(exercise: Exercise, given: str | None = None) -> Path:
    """The notebook being checked: the one given, the kernel's own (jupyter_server says which in
    JPY_SESSION_NAME), or the exercise's notebook next to its .py."""
    if given:
        return Path(given).resolve()
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_absolute() and Path(session).is_file():
        path = Path(session)
        if exercise.course.exercise_for_path(path.with_suffix(".py")) == exercise:
            return path
    return exercise.path.with_suffix(".ipynb")


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def check(exercise_id: str, notebook: str | None = None, course: Course | None = None) -> NotebookReport:
    prepared = tracking.installed()
    try:  # from now on, cells run in this kernel are seen as run (the preparation cell does this first)
        from IPython import get_ipython  # noqa: PLC0415

        tracking.install(get_ipython())
    except ImportError:
        pass
    course = course or Course.find(Path.cwd())
    exercise = course.exercise(exercise_id)
    path = notebook_of(exercise, notebook)
    ran = tracking.ran()
    snap = snapshot.take(path, ran)
    notes = []
    if not prepared:
        snap.stale = []
        if tracking.installed():
            notes.append("la cellule de préparation (en haut) n'a pas été exécutée : je vérifie la version "
                         "enregistrée du notebook. Exécute-la, puis tes cellules, ou enregistre (Ctrl+S)")
    elif not ran:
        snap.stale = []  # this front end does not say which cell runs (nbclient…): the file is the truth
    analysis = analyse_source(exercise, Source(path=_shown(path, course.root), text=snap.text))
    job, context = prepare(exercise, analysis)
    if context is None:
        result = job
    else:
        results = _checker().runner.run(job) if job.units else []
        result = interpret(exercise, analysis, context, results)
    if snap.unsaved:
        notes.append(f"vérifié : le code que tu as exécuté. Enregistre le notebook (Ctrl+S) pour que "
                     f"{_shown(exercise.path, course.root)} le contienne aussi")
    return NotebookReport(result, snap, notes)
