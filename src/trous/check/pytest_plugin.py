"""`pytest exercises/` (entry point `pytest11`): one item per blank, under the student's own file, so
pytest shows one line per exercise and one French mark per blank, never a traceback of trous;
outside a course directory, nothing.

For speed (benchmarks/pytest_exercises.py), the runner is launched as the session starts, every job is
sent ahead once collected, and the checking code is imported only after the launch.
"""

from __future__ import annotations

import gc
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from _pytest.terminal import TerminalReporter

from ..core.course import Exercise, course_at
from ..core.checks import checks_in, load_module
from ..core.wording import count

if TYPE_CHECKING:  # imported when first needed (see the module's docstring)
    from .checker import Checker

_CHECKER = pytest.StashKey["Checker"]()
_SEEN = pytest.StashKey[dict]()
UNKNOWN_BLANK = "trou inconnu"


@cache
def categories() -> dict[str, tuple[str, str, str, str]]:
    """(category, mark, word for -v, colour) by status: pytest counts each category in its last line."""
    from .feedback import LOOK  # noqa: PLC0415

    return {status: (category, mark, word, colour) for status, (mark, _, category, word, colour, _) in LOOK.items()}


def pytest_addoption(parser):
    group = parser.getgroup("trous")
    group.addoption("--tout", action="store_true", default=False,
                    help="trous : le détail de tous les exercices (par défaut : le premier pas encore réussi)")


@cache
def _public_exercise(path: Path) -> Exercise | None:
    """The exercise whose public checks or own file is at `path`."""
    course = course_at(path.parent.resolve()) if path.parent.name == "exercises" else None
    exercise = course.exercise_for_path(path) if course is not None else None
    if exercise is None or path.resolve() not in (exercise.checks_path.resolve(), exercise.path.resolve()):
        return None
    return exercise


def _checker(config) -> "Checker":
    if _CHECKER not in config.stash:
        from .checker import Checker  # noqa: PLC0415

        config.stash[_CHECKER] = Checker()
    return config.stash[_CHECKER]


def _exercises_asked(config) -> list[Exercise]:
    """The exercises this run's arguments name: a course's folders, or one exercise's files."""
    found: dict[tuple[Path, str], Exercise] = {}
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        folder = path if path.is_dir() else path.parent
        course = course_at(folder)
        if course is None:
            continue
        exercises = course.root / "exercises"
        if path in (course.root, exercises) or (path.is_dir() and exercises in path.parents):
            chosen = course.exercises
        elif exercises in path.parents:
            one = _public_exercise(path)
            chosen = [one] if one is not None else []
        else:
            continue
        for exercise in chosen:
            found.setdefault((course.root, exercise.id), exercise)
    return list(found.values())


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    reporter = config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None and type(reporter) is TerminalReporter and _exercises_asked(config):
        reporter.__class__ = CourseReporter


class CourseReporter(TerminalReporter):
    """pytest's own terminal reporter (its hooks stay registered), with a French header and collection line."""

    @property
    def showheader(self) -> bool:
        return False  # pytest_sessionstart below writes the course's title instead

    def report_collect(self, final: bool = False) -> None:
        if not final or self.config.option.verbose < 0:
            return
        items = list(getattr(self._session, "items", None) or [])
        blanks = [i for i in items if isinstance(i, BlankItem)]
        exercises = {i.exercise.id for i in blanks}
        line = f"{count(len(exercises), 'exercice')}, {count(len(blanks), 'trou')} à vérifier"
        if len(items) > len(blanks):
            line += f" (et {count(len(items) - len(blanks), 'autre test')})"
        deselected = len(self.stats.get("deselected", []))
        if deselected:
            line += f" ; {count(deselected, 'autre laissé')} de côté (-k)"
        errors = len(self.stats.get("error", []))
        if errors:
            line += f" ; {count(errors, 'erreur')} en lisant les vérifications"
        if self.isatty():
            self.rewrite(line, bold=True, erase=True)
            self.write("\n")
        else:
            self.write_line(line)


def pytest_sessionstart(session):
    reporter = session.config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None and type(reporter) is CourseReporter and reporter.verbosity >= 0:
        reporter.write_sep("=", "trous : vérification de tes exercices", bold=True)
    if session.config.option.collectonly:
        return
    exercises = _exercises_asked(session.config)
    if exercises:  # the runner starts now, while pytest collects, with what these exercises import
        _checker(session.config).launch(exercises)


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    exercises = {item.exercise.id: item.exercise for item in session.items if isinstance(item, BlankItem)}
    if exercises:
        # What exists now (pytest, the checks, numpy) lives until the run ends: frozen, the collector
        # no longer walks it again at each collection of the run nor at its end (a tenth of its CPU).
        gc.freeze()
        checker = _checker(session.config)
        for exercise in exercises.values():  # in the order the items run: the first is ready first
            try:
                checker.submit(exercise)
            except Exception:  # noqa: BLE001 - not sent ahead: its items check it again, and say why
                pass


def pytest_pycollect_makemodule(module_path: Path, parent):
    # The student's file is never imported: its module holds the exercise's checks. Collected from
    # exercises/test_01_moyenne.py too, it is shown under the student's file (its node id) while its path
    # stays the one pytest found, which is how pytest matches the paths given to it.
    exercise = _public_exercise(module_path)
    if exercise is None or not exercise.checks_path.exists():
        return None
    try:
        shown = exercise.path.resolve().relative_to(parent.config.rootpath.resolve()).as_posix()
    except ValueError:
        return CheckModule.from_parent(parent, path=module_path)
    return CheckModule.from_parent(parent, path=module_path, nodeid=shown)


class CheckModule(pytest.Module):
    """One item per blank, if the public checks hold any `Check`; test functions are part of their
    blank's verdict (selfcheck.py), not items."""

    def _getobj(self):
        return load_module(_public_exercise(Path(self.path)).checks_path)

    def collect(self) -> list:
        checks = checks_in(vars(self.obj))
        if not checks:
            return []
        exercise = _public_exercise(Path(self.path))
        known = {b.id for b in exercise.blanks}
        named = [(b.id, b.id) for b in exercise.blanks] + [(c.name, c.blank) for c in checks if c.blank not in known]
        return [BlankItem.from_parent(self, name=name, blank_id=blank_id, exercise=exercise) for name, blank_id in named]


class BlankFailure(Exception):
    """Its text is the item's whole report (no traceback)."""


class BlankItem(pytest.Item):
    def __init__(self, *, blank_id: str, exercise: Exercise, **kwargs):
        super().__init__(**kwargs)
        self.blank_id, self.exercise = blank_id, exercise
        try:
            self.blank_index = exercise.blank_index(blank_id)
        except ValueError:
            self.blank_index = None
        # -k matches the exercise id and the blank id, whatever the file is called.
        self.extra_keyword_matches.update({exercise.id, blank_id})

    def runtest(self) -> None:
        if self.blank_index is None:
            self.user_properties.append(("trous", UNKNOWN_BLANK))  # pytest hands it to the item's report
            raise BlankFailure(f"{self.exercise.checks_path.name} : le trou « {self.blank_id} » n'existe pas dans "
                               f"course.yaml (trous de {self.exercise.id} : "
                               f"{', '.join(b.id for b in self.exercise.blanks)})")
        result = _checker(self.config).check(self.exercise)
        self.config.stash.setdefault(_SEEN, {})[self.exercise.id] = result
        blank = result.blanks[self.blank_index]
        self.user_properties.append(("trous", blank.status))
        if not blank.passed:
            raise BlankFailure(f"trou « {blank.spec.id} » : {blank.status}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, BlankFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        result = self.config.stash.get(_SEEN, {}).get(self.exercise.id)
        known = result is not None and self.blank_index is not None
        line = result.blanks[self.blank_index].line if known else None
        return self.exercise.path, (line - 1) if line else None, f"{self.exercise.id} · trou « {self.blank_id} »"


def pytest_report_teststatus(report, config):
    status = dict(getattr(report, "user_properties", ())).get("trous") if report.when == "call" else None
    if status is None:
        return None
    if status == UNKNOWN_BLANK:
        return "trou inconnu", "E", ("TROU INCONNU", {"red": True})
    category, mark, word, color = categories()[status]
    return category, mark, (word, {color: True})


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    seen: dict = config.stash.get(_SEEN, {})
    unknown = terminalreporter.stats.get("trou inconnu", [])
    if not seen and not unknown:
        return
    from .feedback import exercise_line, exercise_report, next_step, progress_line  # noqa: PLC0415

    everything = bool(config.getoption("tout", False)) or config.get_verbosity() > 0
    results = sorted(seen.values(), key=lambda r: r.exercise.number)
    unfinished = [r for r in results if not r.passed]
    terminalreporter.section("trous", sep="=")
    for report in unknown:
        terminalreporter.write_line(str(report.longrepr), red=True)
    if everything:
        for result in results:
            terminalreporter.write_line(exercise_line(result))
        terminalreporter.write_line("")
    for result in unfinished if everything else unfinished[:1]:
        terminalreporter.write_line(exercise_report(result, details=everything, step=False))
        terminalreporter.write_line("")
    terminalreporter.write_line(progress_line(results), bold=True)
    if not unfinished and results:
        terminalreporter.write_line("Bravo : tout est juste.", green=True, bold=True)
    elif unfinished:
        first = unfinished[0]
        step = next_step(first)
        terminalreporter.write_line(f"Prochain exercice : {first.exercise.id}" + (f" — {step}" if step else ""))
        if len(unfinished) > 1 and not everything:
            terminalreporter.write_line("(le détail de tous les exercices : pytest exercises/ --tout)")


def pytest_unconfigure(config):
    if _CHECKER in config.stash:
        config.stash[_CHECKER].close()
