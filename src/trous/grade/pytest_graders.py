"""The graders' pytest plugin (entry point `pytest11`): hidden graders are pytest files.

`pytest graders/` runs every hidden grader (each declaration and test function an item) against the
reference solutions, failures said in French with their blank, then a summary per blank;
`--copie CLASSE/alice` runs them on one student's copy as `trous grade` does, and prints its points.

A test function names its blank with the `trou` marker and asks the student's program through the
`eleve` fixture (grade/eleve.py); its asserts run here. Who answers `eleve` is the stash's `BACKEND`
(the engine's test worker, or author/copie.py). Outside a course, the plugin does nothing.
"""

from __future__ import annotations

import contextlib
import inspect
import resource
import signal
from pathlib import Path

import pytest

from ..core.checks import Check, GraderMistake, StudentError, StudentStopped, TestInfo, checks_in
from ..core.course import Course, Exercise, course_at, memory_bound
from ..core.wording import count, plural
from .eleve import Eleve

MARKER = "trou"
FIXTURE = "eleve"
HIDDEN, PUBLIC = "cache", "public"

_RESULTS = pytest.StashKey[dict]()
INFO = pytest.StashKey["TestInfo"]()
CAUSE = pytest.StashKey[tuple]()
BACKEND = pytest.StashKey[object]()  # has `eleve(info, path) -> Eleve`; author/copie.py's is never imported here


def skip_reason(report) -> str:
    return str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)


# -- bounds of this process while a test handles a copy's data -----------------------------------
# A test runs as the teacher, outside the sandbox, on a copy's values (a loop over a number the copy
# chose, a matrix built from its shape): passing a bound costs the copy that test, never the class's
# run. A test that blocks is the caller's wall clock's.
MIB = 1 << 20
PATIENCE = 60.0  # seconds a test's own code (not the student's) may run before it is called stuck


class TestOverrun(BaseException):
    """A test used up its time on a copy (a BaseException: the test's `except Exception` must not catch it)."""

    __test__ = False

    def __init__(self, seconds: float):
        super().__init__(f"le test a dépassé {seconds:g} s de calcul")
        self.seconds = seconds


def mapped() -> int:
    """Bytes this process maps now (what RLIMIT_AS counts)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def limit_memory(megabytes: int | None) -> tuple[int, int] | None:
    """Allow this process `megabytes` more than it maps now (MemoryError in the test past it; soft limit
    only: a process it starts may raise its own again). The previous limits; None: nothing changed."""
    if not megabytes or megabytes <= 0:
        return None
    try:
        before = resource.getrlimit(resource.RLIMIT_AS)
        wanted = mapped() + megabytes * MIB
        soft, hard = before
        if soft != resource.RLIM_INFINITY and soft <= wanted:
            return None  # already tighter
        if hard != resource.RLIM_INFINITY:
            wanted = min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
        return before
    except (ValueError, OSError):
        return None


class CpuBudget:
    """Within the block, `seconds` of this process's CPU; past them, TestOverrun is raised where
    the main thread is, unless inside `held()` (the grader's own code: then as soon as it leaves it)."""

    current: "CpuBudget | None" = None

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.holds = 0
        self.due = False
        self.previous = None

    def __enter__(self) -> "CpuBudget":
        if self.seconds and self.seconds > 0 and hasattr(signal, "setitimer"):
            self.previous = signal.signal(signal.SIGPROF, self._fire)
            signal.setitimer(signal.ITIMER_PROF, self.seconds)
            CpuBudget.current = self
        return self

    def __exit__(self, *exc) -> None:
        if CpuBudget.current is self:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, self.previous or signal.SIG_DFL)
            CpuBudget.current = None

    def _fire(self, signum, frame) -> None:
        if self.holds:
            self.due = True
            return
        raise TestOverrun(self.seconds)

    @classmethod
    @contextlib.contextmanager
    def held(cls):
        budget = cls.current
        if budget is None:
            yield
            return
        budget.holds += 1
        try:
            yield
        finally:
            budget.holds -= 1
            if budget.due and not budget.holds:
                budget.due = False
                raise TestOverrun(budget.seconds)


# -- where a test file belongs ---------------------------------------------------------------------
def role(path: Path) -> tuple[Course, Exercise | None, str] | None:
    """(course, exercise, HIDDEN or PUBLIC) of a course's test file (exercise None: in graders/ but no
    exercise's grader), else None."""
    path = Path(path).resolve()
    if path.parent.name not in ("graders", "exercises"):
        return None
    course = course_at(path.parent)
    if course is None or path.parent != (course.root / path.parent.name).resolve():
        return None
    exercise = course.exercise_for_path(path)
    if exercise is not None and path == exercise.grader_path.resolve():
        return course, exercise, HIDDEN
    if exercise is not None and path == exercise.checks_path.resolve():
        return course, exercise, PUBLIC
    if path.parent.name == "graders" and path.name.startswith("test"):
        return course, None, HIDDEN
    return None


# -- what a test function is for -------------------------------------------------------------------
def _blanks_of(item) -> tuple[list[str], object, str | None]:
    """(blank ids, points= if any, problem) from the item's `trou` markers."""
    blanks: list[str] = []
    points = None
    for mark in item.iter_markers(MARKER):
        if not mark.args or not all(isinstance(a, str) and a for a in mark.args):
            return [], None, ("@pytest.mark.trou(...) attend le ou les identifiants de trou, en texte : "
                              "@pytest.mark.trou(\"somme_exp\")")
        unknown = sorted(set(mark.kwargs) - {"points"})
        if unknown:
            return [], None, f"@pytest.mark.trou(...) : argument inconnu {', '.join(unknown)} (seul points= existe)"
        blanks += [a for a in mark.args if a not in blanks]
        if "points" in mark.kwargs:
            points = mark.kwargs["points"]
    return blanks, points, None


def describe(item) -> TestInfo | None:
    """How grading sees a collected test function (None: not in a course's test file)."""
    if not isinstance(item, pytest.Function):
        return None
    found = role(Path(item.path))
    if found is None:
        return None
    course, exercise, kind = found
    rel = Path(item.path).resolve().relative_to(course.root.resolve()).as_posix()
    blanks, points, problem = _blanks_of(item)
    params = getattr(getattr(item, "callspec", None), "params", {})
    blank = params[FIXTURE] if FIXTURE in params and len(blanks) > 1 else (blanks[0] if blanks else None)
    if exercise is None:
        problem = (f"{rel} n'est le correcteur d'aucun exercice de course.yaml (attendu : graders/test_<exercice>.py) : "
                   "trous grade ne lirait jamais ce test")
    elif problem is None and not blanks:
        problem = (f"ce test ne dit pas quel trou il note : ajoutez @pytest.mark.trou(\"…\") au-dessus de « def "
                   f"{item.originalname} » (trous de {exercise.id} : {', '.join(b.id for b in exercise.blanks)})")
    elif problem is None:
        ids = [b.id for b in exercise.blanks]
        wrong = [b for b in blanks if b not in ids]
        if wrong:
            problem = (f"le trou « {wrong[0]} » n'existe pas dans {exercise.id} (trous de course.yaml : "
                       f"{', '.join(ids)})")
        elif points is not None:
            for b in blanks:
                expected = exercise.blank(b).points
                if not isinstance(points, (int, float)) or isinstance(points, bool) or points != expected:
                    problem = (f"points={points!r}, mais course.yaml donne {expected:g} point(s) au trou « {b} » : les "
                               "points d'un trou se règlent dans course.yaml (retirez points= ou accordez-les)")
                    break
    if problem is None and FIXTURE not in getattr(item, "fixturenames", ()):
        problem = ("ce test n'utilise pas la fixture eleve : il ne demande rien au programme de l'élève, il ne peut "
                   "donc rien noter (ajoutez le paramètre eleve et demandez-lui une valeur)")
    return TestInfo(item.nodeid, rel, item.name, exercise.id if exercise else None, blank, kind == HIDDEN,
                    _description(item), problem)


def _description(item) -> str:
    """The first line of the test's docstring, else its name in words; never its parameters."""
    doc = inspect.getdoc(getattr(item, "function", None)) or ""
    first = next((line.strip() for line in doc.splitlines() if line.strip()), "")
    if first:
        return first.rstrip(".")
    return item.originalname.removeprefix("test").removeprefix("_").replace("_", " ").strip() or item.originalname


def classify(excinfo, when: str) -> tuple[str, dict]:
    """Why a test function failed: a cause of CAUSES, "student" (the student's code raised, asked by
    the test or a fixture) or "stopped" (it gave no answer)."""
    exc = excinfo.value
    if isinstance(exc, StudentError):
        return "student", {"kind": exc.kind, "type": exc.type, "line": exc.line}
    if isinstance(exc, StudentStopped):
        return "stopped", {"kind": exc.kind, "message": exc.message, "line": exc.line, "type": exc.type}
    if isinstance(exc, TestOverrun):
        return "overrun", {"kind": "time", "seconds": exc.seconds}
    if isinstance(exc, MemoryError):
        return "overrun", {"kind": "memory"}
    # A fixture or a teardown that fails by itself; a misuse of eleve; a name, a module or a syntax no value
    # of the student's could have caused.
    if when != "call" or isinstance(exc, (GraderMistake, NameError, ImportError, SyntaxError, pytest.UsageError,
                                          pytest.FixtureLookupError)):
        return "bug", {"type": type(exc).__name__}
    if isinstance(exc, (AssertionError, pytest.fail.Exception)):
        return "assert", {}
    return "reading", {"type": type(exc).__name__}


CAUSES = {
    "assert": "l'assertion du test échoue",
    "overrun": "le test a dépassé ses propres bornes (temps de calcul ou mémoire) sur ces valeurs",
    "reading": "le test n'a pas pu se servir de ce que donne le code de l'élève",
    "bug": "erreur dans le test lui-même, quoi que l'élève ait écrit (bug du correcteur)",
}


# -- the backend that answers eleve(...) -----------------------------------------------------------
def _backend(config):
    backend = config.stash.get(BACKEND, None)
    if backend is None:
        raise pytest.UsageError("trous : aucun greffon ne fait tourner le programme de l'élève (le "
                                "greffon trous_copie n'est pas chargé : pytest -p trous.author.copie)")
    return backend


def _worker(config) -> bool:
    return bool(getattr(config.stash.get(BACKEND, None), "worker", False))


@pytest.fixture
def eleve(request) -> Eleve:
    """The student's program (the reference solution, a copy's, or the student's own file)."""
    info = request.node.stash.get(INFO, None)
    if info is None:
        pytest.fail("la fixture eleve ne sert que dans les tests d'un cours : graders/test_<exercice>.py ou "
                    "exercises/test_<exercice>.py", pytrace=False)
    if info.problem:
        pytest.fail(info.problem, pytrace=False)
    return _backend(request.config).eleve(info, Path(request.node.path))


# -- hooks -----------------------------------------------------------------------------------------
def pytest_addoption(parser):
    group = parser.getgroup("trous-correcteurs", "trous : correcteurs cachés")
    group.addoption("--copie", metavar="CHEMIN", default=None,
                    help="trous : corriger cette copie (le dossier ou le .zip d'un élève, dans le dossier des "
                         "copies) au lieu des solutions, dans le bac à sable de trous grade, et afficher ses points")
    group.addoption("--bac-a-sable", dest="trous_bac_a_sable", default=None,
                    choices=("auto", "bwrap", "limites"),
                    help="trous : le bac à sable des tests de correcteurs (par défaut : auto avec --copie, sinon "
                         "limites, comme trous doctor)")


def pytest_configure(config):
    config.addinivalue_line("markers", "trou(id, ..., points=None): le ou les trous que ce test note (trous)")
    config.stash[_RESULTS] = {}


def pytest_generate_tests(metafunc):
    """A test naming several blanks runs once per blank, each on that blank's program."""
    if FIXTURE not in metafunc.fixturenames or role(Path(metafunc.definition.path)) is None:
        return
    blanks, _, problem = _blanks_of(metafunc.definition)
    if problem is None and len(blanks) > 1:
        metafunc.parametrize(FIXTURE, blanks, indirect=True, ids=blanks)


def pytest_pycollect_makeitem(collector, name, obj):
    if not isinstance(obj, Check):
        return None
    found = role(Path(collector.path))
    if found is None or found[2] != HIDDEN or found[1] is None:
        return None  # public checks are the student plugin's
    if _worker(collector.config):
        return []  # the engine grades declarations itself
    return [DeclarationItem.from_parent(collector, name=name, check=check, exercise=found[1])
            for check in checks_in({name: obj})]


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        info = describe(item)
        if info is not None:
            item.stash[INFO] = info
            # -k matches the exercise and the blank, as in pytest exercises/.
            item.extra_keyword_matches.update(x for x in (info.exercise, info.blank) if x)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    info = item.stash.get(INFO, None)
    if info is not None and info.problem and not _worker(item.config):
        pytest.fail(f"{info.path}::{item.name} refusé : {info.problem}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """With --copie, a test runs in the teacher's own process on a copy's values: within the bounds a
    test worker of `trous grade` gives it."""
    info = item.stash.get(INFO, None)
    if info is None or _worker(item.config) or item.config.getoption("copie", None) is None:
        return (yield)
    found = role(Path(item.path))
    backend = _backend(item.config)
    cpu = backend.cpu_budget(found[0], info) if found is not None and hasattr(backend, "cpu_budget") else PATIENCE
    before = limit_memory(memory_bound([found[1]]) if found is not None and found[1] is not None else None)
    try:
        with CpuBudget(cpu):
            return (yield)
    finally:
        if before is not None:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_AS, before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    info = item.stash.get(INFO, None)
    if info is not None and call.excinfo is not None and report.failed:
        cause = classify(call.excinfo, call.when)
        item.stash[CAUSE] = cause
        if not _worker(item.config) and not info.problem:
            report.longrepr = _french(info, cause, call.excinfo, report.longrepr)
    _keep(item, report)
    return report


def _keep(item, report) -> None:
    """Each hidden grader item's outcome, by blank, for the summary."""
    info = item.stash.get(INFO, None)
    if isinstance(item, DeclarationItem):
        key = item.exercise.id, item.check.blank
    elif info is not None and info.hidden and info.exercise and info.blank and not _worker(item.config):
        key = info.exercise, info.blank
    else:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        said = "passe" if report.passed else "sautée" if report.skipped else "échoue"
        why = skip_reason(report).removeprefix("Skipped: ") if report.skipped else ""
        item.config.stash[_RESULTS].setdefault(key, []).append((item.name, said, why))


def _french(info: TestInfo, cause: tuple[str, dict], excinfo, longrepr) -> str:
    kind, _ = cause
    head = f"trou « {info.blank} » ({info.exercise}), {info.label} :"
    if kind in ("student", "stopped"):
        where = ""
        for entry in reversed(excinfo.traceback):
            if Path(str(entry.path)).name == Path(info.path).name:
                where = f"\n  {info.path}:{entry.lineno + 1} | {str(entry.statement).strip()}"
                break
        return f"{head}\n  {excinfo.value}{where}"
    return f"{head}\n  {CAUSES[kind]} :\n{longrepr}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _worker(config):
        return
    results: dict = config.stash.get(_RESULTS, {})
    backend = config.stash.get(BACKEND, None)
    copy = config.getoption("copie", None)
    if not results and copy is None:
        return
    terminalreporter.section("trous — correcteurs, trou par trou", sep="=")
    subject = f"la copie {copy}" if copy else "les solutions de référence"
    terminalreporter.write_line(f"sur {subject} :")
    for (exercise_id, blank_id), runs in sorted(results.items()):
        failed = [name for name, said, _ in runs if said == "échoue"]
        skipped = [(name, why) for name, said, why in runs if said == "sautée"]
        passed = len(runs) - len(failed) - len(skipped)
        if failed:
            text = (f"✘ {exercise_id} · « {blank_id} » : {len(failed)} sur {len(runs)} "
                    f"{plural(len(failed), 'échoue', 'échouent')} ({', '.join(failed)})")
        elif passed:
            text = f"✔ {exercise_id} · « {blank_id} » : {count(passed, 'vérification')}, " + (
                "toutes passent" if passed > 1 else "elle passe")
        else:
            text = f"○ {exercise_id} · « {blank_id} » : rien de vérifié"
        if skipped:
            text += f" — {count(len(skipped), 'sautée')} : {skipped[0][1] or 'sans raison dite'}"
        terminalreporter.write_line("  " + text, red=bool(failed), green=not failed and bool(passed))
    if copy is not None and backend is not None and hasattr(backend, "points_table"):
        terminalreporter.write_line("")
        for line, style in backend.points_table(sorted({e for e, _ in results})):
            terminalreporter.write_line(line, **style)


def pytest_unconfigure(config):
    backend = config.stash.get(BACKEND, None)
    if backend is not None and hasattr(backend, "close"):
        backend.close()


# -- declarations as items -------------------------------------------------------------------------
class DeclarationItem(pytest.Item):
    """One `blank(...)` declaration of a hidden grader."""

    def __init__(self, *, check: Check, exercise: Exercise, **kwargs):
        super().__init__(**kwargs)
        self.check, self.exercise = check, exercise
        self.extra_keyword_matches.update({exercise.id, check.blank})

    def runtest(self) -> None:
        if self.check.blank not in [b.id for b in self.exercise.blanks]:
            pytest.fail(f"le trou « {self.check.blank} » n'existe pas dans {self.exercise.id} (trous de "
                        f"course.yaml : {', '.join(b.id for b in self.exercise.blanks)})", pytrace=False)
        failures = _backend(self.config).declaration(self.exercise, self.check)
        if failures:
            lines = [f"trou « {self.check.blank} » ({self.exercise.id}), déclaration « {self.name} » : "
                     f"{count(len(failures), 'attente')} sur {len(self.check.expects)} "
                     f"{plural(len(failures), 'non satisfaite')}"]
            lines += ["  " + line for failure in failures for line in failure.split("\n")]
            pytest.fail("\n".join(lines), pytrace=False)

    def reportinfo(self):
        return self.path, None, f"{self.exercise.id} · trou « {self.check.blank} » · {self.name}"
