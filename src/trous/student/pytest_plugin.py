"""The pytest plugin (entry point `pytest11`): `pytest exercises/` checks a student's blanks.

Each `Check` declared in a check module becomes one test item per blank. The student's file runs
once per exercise in a separate process (bounded in time), and each item reports its blank in
French: unfilled with its hint, expected versus obtained, the student's own line on an error, never
a traceback of trous itself. The run ends with the student's progress. Outside a course directory,
the plugin does nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .checking import Checker, ExerciseResult
from ..course.definition import Course, CourseError, Exercise
from .feedback import blank_report, exercise_line, progress_line
from ..course.spec import Check

_CHECKER = pytest.StashKey[Checker]()
_SEEN = pytest.StashKey[dict]()
_COURSES: dict[Path, Course | None] = {}


def _course_of(path: Path) -> Course | None:
    folder = path.parent.resolve()
    if folder not in _COURSES:
        try:
            _COURSES[folder] = Course.find(folder)
        except CourseError:
            _COURSES[folder] = None
    return _COURSES[folder]


def _public_exercise(path: Path) -> Exercise | None:
    """The exercise whose public checks live at `path` (exercises/test_<id>.py), if any."""
    if path.parent.name != "exercises":
        return None
    course = _course_of(path)
    if course is None:
        return None
    exercise = course.exercise_for_path(path)
    if exercise is None or path.resolve() not in (exercise.checks_path.resolve(), exercise.path.resolve()):
        return None
    return exercise


def pytest_pycollect_makemodule(module_path: Path, parent):
    # `pytest exercises/01_toux.py` must check the exercise, never import the student's file.
    exercise = _public_exercise(module_path)
    if exercise is not None and module_path.resolve() == exercise.path.resolve():
        return CheckModule.from_parent(parent, path=module_path)
    return None


class CheckModule(pytest.Module):
    """Collected in place of an exercise file: holds that exercise's public checks."""

    def _getobj(self):
        from ..course.spec import load_module  # noqa: PLC0415

        exercise = _public_exercise(Path(self.path))
        return load_module(exercise.checks_path)


def pytest_pycollect_makeitem(collector, name: str, obj):
    if not isinstance(obj, Check):
        return None
    exercise = _public_exercise(Path(collector.path))
    if exercise is None:
        return None
    return BlankItem.from_parent(collector, name=name, check=obj, exercise=exercise)


def _importable(module: str) -> bool:
    import importlib.util  # noqa: PLC0415

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class BlankFailure(Exception):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class BlankItem(pytest.Item):
    def __init__(self, *, check: Check, exercise: Exercise, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.exercise = exercise
        try:
            self.blank_index = exercise.blank_index(check.blank)
        except ValueError:
            self.blank_index = None
        # -k matches the exercise id and the blank id, whatever the file is called.
        self.extra_keyword_matches.update({exercise.id, check.blank})

    def _checker(self) -> Checker:
        stash = self.config.stash
        if _CHECKER not in stash:
            stash[_CHECKER] = Checker()
        return stash[_CHECKER]

    def runtest(self) -> None:
        if self.blank_index is None:
            raise BlankFailure(f"{self.path.name} : le trou « {self.check.blank} » n'existe pas dans course.yaml "
                               f"(trous de {self.exercise.id} : {', '.join(b.id for b in self.exercise.blanks)})")
        missing = [m for m in self.check.requires if not _importable(m)]
        result = self._checker().check(self.exercise)
        self.config.stash.setdefault(_SEEN, {})[self.exercise.id] = result
        blank = result.blanks[self.blank_index]
        if missing and blank.filled:
            pytest.skip(f"vérification sautée : module absent ({', '.join(missing)}), elle n'est pas exigée")
        if blank.passed:
            return
        own = result.by_check.get(self.check.name)
        if blank.status == "failed" and own is not None and not own:
            return  # this item's own expectations hold; the blank's other checks say what is wrong
        if own:
            blank = type(blank)(blank.index, blank.spec, blank.status, blank.line, own)
        first_failure = not getattr(result, "_output_shown", False)
        if first_failure and result.output.strip():
            result._output_shown = True  # type: ignore[attr-defined]
            self.add_report_section("call", "ce que ton programme a affiché", result.output[:4000])
        raise BlankFailure(blank_report(result, blank))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, BlankFailure):
            return excinfo.value.text
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        result = self.config.stash.get(_SEEN, {}).get(self.exercise.id)
        line = None
        if result is not None and self.blank_index is not None:
            line = result.blanks[self.blank_index].line
        return self.exercise.path, (line - 1) if line else None, f"{self.exercise.id} · trou « {self.check.blank} »"


def pytest_report_teststatus(report, config):
    if report.when != "call" or not hasattr(report, "nodeid"):
        return None
    seen = config.stash.get(_SEEN, None)
    if not seen:
        return None
    if report.failed and isinstance(report.longrepr, str) and "pas encore rempli (___)" in report.longrepr.split("\n")[0]:
        return "failed", "…", ("NON REMPLI", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    seen: dict[str, ExerciseResult] = config.stash.get(_SEEN, {})
    if not seen:
        return
    results = sorted(seen.values(), key=lambda r: r.exercise.number)
    terminalreporter.section("trous : ta progression", sep="=")
    for result in results:
        terminalreporter.write_line(exercise_line(result))
    terminalreporter.write_line("")
    terminalreporter.write_line(progress_line(results), bold=True)
    unfinished = [r for r in results if not r.passed]
    if unfinished:
        terminalreporter.write_line(f"Prochain exercice : {unfinished[0].exercise.id} — "
                                    f"indice : trous hint {unfinished[0].exercise.id}")


def pytest_unconfigure(config):
    checker = config.stash.get(_CHECKER, None)
    if checker is not None:
        checker.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    # A skipped check is reported at the exercise, not at the line of trous that skipped it.
    if isinstance(item, BlankItem) and report.skipped and isinstance(report.longrepr, tuple):
        _, _, reason = report.longrepr
        report.longrepr = (str(item.exercise.path), 1, reason)
