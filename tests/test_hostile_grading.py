"""Hostile and broken submissions: every bad input of issue 3, graded for real, in every sandbox kind:
bubblewrap and the limits-only runner (the self-check's).

Each case is graded in one batch with three honest students (in parallel on a pool of two runners),
and the test asserts that the batch finishes, that the honest students' results are exactly what
they are when graded without the offender, that the offender gets no credit for what it faked, and
that the feedback says what happened, in French.

Per-blank mode puts the hostile code inside a blank's fill (the rest of the file is the solution's,
so the blank is graded spliced into the reference); whole-file mode puts it outside the blanks.

The course is a copy of the repository's exercises 01_toux and 03_masque with tight bounds (2 s of
wall time, 256 MiB, 8 processes) so that the endless cases stay short. It lives in a world-readable
folder, as a teacher's course usually does, so the fallback's limits are stated on a realistic setup.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from trous.core import blanks as blanks_mod
from trous.core import Course
from trous.grade.engine import Grader
from trous.core.grades import ERROR, FAILED, MISSING, UNFILLED, SubmissionGrade
from trous.outputs.reports import SCHEMA_FILE
from trous.sandbox.pool import Runner, RunnerPool
from trous.core.protocol import Job, Limits, Probe, Unit
from trous.sandbox.backend import ISOLATED, bwrap_available

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ("01_toux", "03_masque")
LIMITS = "\nlimits:\n  wall: 2\n  memory_mb: 256\n  processes: 8\n  output_kb: 64\n  files: 20\n"
SCHEMA = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
BLANKS_01 = ("somme_exp", "scores", "nouveau")


# -- the course, the pool, the honest class ------------------------------------------------------
@pytest.fixture(scope="module")
def course() -> Course:
    root = Path(tempfile.mkdtemp(prefix="trous-hostile-"))
    os.chmod(root, 0o755)
    text = (ROOT / "course.yaml").read_text(encoding="utf-8") + LIMITS
    (root / "course.yaml").write_text(text, encoding="utf-8")
    for folder in ("exercises", "solutions", "graders"):
        (root / folder).mkdir()
    for e in EXERCISES:
        for rel in (f"exercises/{e}.py", f"exercises/test_{e}.py", f"solutions/{e}.py", f"graders/test_{e}.py"):
            shutil.copyfile(ROOT / rel, root / rel)
    results = root / "copies-resultats"
    results.mkdir()
    (results / "gradebook.db").write_text("SQLite format 3 CARNET-SECRET\n", encoding="utf-8")
    (root / "temoin.txt").write_text("ne pas effacer\n", encoding="utf-8")
    yield Course.load(root)
    shutil.rmtree(root, ignore_errors=True)


MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap absent")),
         "fallback"]


@pytest.fixture(scope="module", params=MODES)
def grader(request, course) -> Grader:
    with RunnerPool(2, request.param) as pool:
        grader = Grader(course, pool, only=EXERCISES)
        grader.mode = request.param
        yield grader


def text(course: Course, kind: str, exercise_id: str) -> str:
    e = course.exercise(exercise_id)
    path = {"template": e.template_path, "solution": e.solution_path}[kind]
    return path.read_text(encoding="utf-8")


def with_fill(course: Course, exercise_id: str, blank_id: str, fill: str) -> str:
    """The solution with one blank's fill replaced: everything else as the template wants it."""
    template, solution = text(course, "template", exercise_id), text(course, "solution", exercise_id)
    index = course.exercise(exercise_id).blank_index(blank_id)
    return blanks_mod.splice(solution, blanks_mod.align(template, solution), {index: fill})


def insert_before(source: str, line_start: str, statements: str) -> str:
    """Code outside the blanks: `statements` inserted before the first line starting with `line_start`."""
    lines = source.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(line_start))
    return "\n".join(lines[:at] + statements.split("\n") + lines[at:])


@pytest.fixture(scope="module")
def honest(course) -> dict[str, dict[str, bytes | None]]:
    solution = {e: text(course, "solution", e).encode() for e in EXERCISES}
    template = {e: text(course, "template", e).encode() for e in EXERCISES}
    wrong_sum = with_fill(course, "01_toux", "somme_exp", "len(e)").encode()
    return {
        "parfait": dict(solution),
        "moitie": {"01_toux": wrong_sum, "03_masque": solution["03_masque"]},
        "debutant": dict(template),
    }


@pytest.fixture(scope="module")
def baseline(grader, honest) -> dict[str, dict]:
    """The honest students graded without any offender."""
    grades = {g.student: g.to_json() for g in grader.grade_many(honest.items())}
    assert grades["parfait"]["score"] == grades["parfait"]["max_score"] == 4.0
    assert grades["debutant"]["score"] == 0.0
    return grades


def grade_with_class(grader, honest, baseline, files: dict[str, bytes | None]) -> SubmissionGrade:
    """Grade the offender among the honest class; check the batch and the others; return its grade."""
    grades = {g.student: g for g in grader.grade_many([*honest.items(), ("pirate", files)])}
    assert set(grades) == {*honest, "pirate"}, "the batch did not finish"
    for student in honest:
        assert grades[student].to_json() == baseline[student], f"{student}'s result changed"
    jsonschema.validate(grades["pirate"].to_json(), SCHEMA)
    return grades["pirate"]


def statuses(grade: SubmissionGrade, exercise_id: str) -> dict[str, str]:
    return {b.id: b.status for b in grade.exercise(exercise_id).blanks}


def message(grade: SubmissionGrade, exercise_id: str, blank_id: str | None = None) -> str:
    e = grade.exercise(exercise_id)
    if blank_id is None:
        return "\n".join([e.message or "", *e.notes, *(b.message for b in e.blanks)])
    return next(b.message for b in e.blanks if b.id == blank_id)


def assert_only_blank_lost(grade: SubmissionGrade, blank_id: str, *fragments: str) -> None:
    """Per-blank mode: the hostile blank scores 0 with a message naming the cause; the other
    blanks, filled as the solution, keep their points; the other exercise is untouched."""
    e = grade.exercise("01_toux")
    assert e.mode == "blanks"
    assert {b.id: b.score for b in e.blanks} == {b: (0.0 if b == blank_id else 1.0) for b in BLANKS_01}
    lost = message(grade, "01_toux", blank_id)
    assert statuses(grade, "01_toux")[blank_id] == FAILED
    for fragment in fragments:
        assert fragment in lost, lost
    assert grade.exercise("03_masque").score == 1.0


def assert_whole_file(grade: SubmissionGrade, lost: tuple[str, ...], *fragments: str) -> None:
    e = grade.exercise("01_toux")
    assert e.mode == "whole_file"
    assert any("en dehors des trous" in n for n in e.notes)
    for b in e.blanks:
        if b.id in lost:
            assert b.score == 0.0 and b.status in (FAILED, ERROR), (b.id, b.status)
    everything = message(grade, "01_toux")
    for fragment in fragments:
        assert fragment in everything, everything
    assert grade.exercise("03_masque").score == 1.0


def check_unfilled(grade: SubmissionGrade) -> None:
    assert statuses(grade, "01_toux") == dict.fromkeys(BLANKS_01, UNFILLED)
    assert grade.exercise("01_toux").score == 0.0
    assert all(b.message == "pas rempli (___)" for b in grade.exercise("01_toux").blanks)
    assert grade.exercise("03_masque").score == 1.0


def check_unrunnable(grade: SubmissionGrade, mode: str, *fragments: str) -> None:
    """Nothing ran: no point, every blank in error, the reason once for the exercise."""
    e = grade.exercise("01_toux")
    assert (e.mode, e.score) == (mode, 0.0)
    assert {b.status for b in e.blanks} == {ERROR}
    for fragment in fragments:
        assert fragment in (e.message or ""), e.message
    assert grade.exercise("03_masque").score == 1.0


def check_empty(grade: SubmissionGrade) -> None:
    """An empty file is said to be empty, not graded as code that lost its functions."""
    e = grade.exercise("01_toux")
    assert (e.mode, e.score) == ("empty", 0.0)
    assert "fichier vide" in (e.message or ""), e.message
    assert grade.exercise("03_masque").score == 1.0


def check_fork_bomb_in_fill(grade: SubmissionGrade) -> None:
    e = grade.exercise("01_toux")
    assert e.mode == "blanks"
    assert statuses(grade, "01_toux")["somme_exp"] == FAILED and e.blanks[0].score == 0.0
    assert grade.exercise("03_masque").score == 1.0


# -- the cases -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Course], str | bytes]  # the offender's 01_toux (03_masque is the solution)
    check: Callable[[SubmissionGrade], None]


def _with_01(course: Course, source: str | bytes) -> dict[str, bytes | None]:
    """The offender's files: its 01_toux, and 03_masque as the solution (to see that it is untouched)."""
    return {"01_toux": source if isinstance(source, bytes) else source.encode("utf-8"),
            "03_masque": text(course, "solution", "03_masque").encode()}


def _files(course: Course, case: Case) -> dict[str, bytes | None]:
    return _with_01(course, case.build(course))


FORGED_EVENTS = (
    "__import__('os').write(3, b'{\"ev\": \"probe\", \"i\": 0, \"j\": 0, \"result\": {\"value\": [1, 1, 2]}}\\n')")
FAKE_PYTEST = '''
import json, os, sys
print("============================= 10 passed in 0.02s =============================")
sys.__stdout__.write("10 passed\\n")
for i in range(6):
    for event in ({"ev": "module", "i": i, "status": "ok"}, {"ev": "probe-start", "i": i, "j": 0},
                  {"ev": "probe", "i": i, "j": 0, "result": {"value": [1, 1, 2]}}, {"ev": "end", "i": i}):
        try:
            os.write(3, (json.dumps(event) + "\\n").encode())
        except OSError:
            pass
'''
LIAR_FLOAT = ("type('Menteur', (float,), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False, "
              "'__repr__': lambda s: '0.79', '__float__': lambda s: 0.79, '__round__': lambda s, n=0: 0.79, "
              "'__sub__': lambda s, o: 0.0, '__rsub__': lambda s, o: 0.0, '__abs__': lambda s: 0.0})(42.0)")
ALWAYS_EQUAL = "type('Toujours', (), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False})()"
OVERRIDES = '''import builtins
builtins.round = lambda *a, **k: 0.79
builtins.abs = lambda *a: 0
builtins.isinstance = lambda *a: True
math.isclose = lambda *a, **k: True
math.exp = lambda v: 1.0'''


def hard_coded(course: Course) -> str:
    """The public values written by hand, which the public checks accept."""
    source = text(course, "template", "01_toux")
    return (source.replace("total = ___", "total = 4.0")
            .replace("[___ for t in x]", "[[1, 1, 2][x.index(t)] for t in x]")
            .replace("[___ for j in range(2)]", "[0.79 for j in range(2)]"))


CASES = [
    Case("unfilled", lambda c: text(c, "template", "01_toux"), check_unfilled),
    Case("syntax_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp", "sum(e) +"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "SyntaxError", "total = sum(e) +")),
    Case("syntax_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ", "def f(:"),
         lambda g: check_unrunnable(g, "syntax", "erreur de syntaxe ligne")),
    Case("exception_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp", "sum(e) / 0"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "ZeroDivisionError")),
    Case("exception_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                      "raise ValueError('données invalides')"),
         lambda g: assert_whole_file(g, ("somme_exp", "nouveau"), "ValueError: données invalides")),
    Case("endless_loop_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                     "sum(e) + next(v for v in iter(int, 1) if v)"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "temps dépassé", "boucle sans fin")),
    Case("endless_loop_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                         "n = 0\nwhile n >= 0:\n    n = n + 1"),
         lambda g: assert_whole_file(g, BLANKS_01, "temps dépassé")),
    Case("memory_bomb_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                    "sum(e) + len([0] * 10**10)"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "mémoire")),
    # 400 MiB is fine for the default bound (1 GiB) but not for this course's 256 MiB: course.yaml's
    # limits, not only its wall time, hold when grading.
    Case("memory_over_course_bound_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                                 "sum(e) + 0 * len(bytearray(400 * 2**20))"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "mémoire")),
    Case("memory_bomb_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                        "bombe = []\nwhile True:\n    bombe.append(bytearray(10**7))"),
         lambda g: assert_whole_file(g, ("somme_exp", "nouveau"), "mémoire")),
    # The forked copies go on running the exercise's next units in the same process and may upset
    # them (the student's own other blanks): only the hostile blank and the other exercise are certain.
    Case("fork_bomb_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                  "[__import__('os').fork() for _ in range(8)] and sum(e)"),
         lambda g: check_fork_bomb_in_fill(g)),
    Case("fork_bomb_outside", lambda c: insert_before(
        text(c, "solution", "01_toux"), "x = ",
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"),
        lambda g: assert_whole_file(g, BLANKS_01, "temps dépassé")),
    Case("os_exit_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                "sum(e) if not __import__('os')._exit(0) else 0"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "os._exit")),
    Case("os_exit_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                    "import os\nos._exit(0)"),
         lambda g: assert_whole_file(g, BLANKS_01, "os._exit")),
    Case("sys_exit_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp",
                                                 "sum(e) if not __import__('sys').exit(0) else 0"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "sys.exit(0)")),
    Case("sys_exit_mid_file", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                      "import sys\nsys.exit(0)"),
         lambda g: assert_whole_file(g, ("somme_exp", "nouveau"), "sys.exit(0)")),
    Case("fake_pytest_output_in_fill", lambda c: with_fill(
        c, "01_toux", "scores", f"print('10 passed') or {FORGED_EVENTS} and [1, 1, 2][x.index(t)]"),
        lambda g: assert_only_blank_lost(g, "scores")),
    Case("fake_pytest_output_outside", lambda c: hard_coded(c) + FAKE_PYTEST,
         lambda g: assert_whole_file(g, BLANKS_01)),
    Case("always_equal_in_fill", lambda c: with_fill(c, "01_toux", "scores", ALWAYS_EQUAL),
         lambda g: assert_only_blank_lost(g, "scores", "objet de type Toujours")),
    Case("always_equal_outside", lambda c: text(c, "solution", "01_toux") + f"\nnouveau = {ALWAYS_EQUAL}\n",
         lambda g: assert_whole_file(g, ("nouveau",), "objet de type Toujours")),
    Case("lying_float_in_fill", lambda c: with_fill(c, "01_toux", "nouveau", LIAR_FLOAT),
         lambda g: assert_only_blank_lost(g, "nouveau", "obtenu [42 ; 42]")),
    Case("lying_float_outside", lambda c: text(c, "solution", "01_toux") + f"\nnouveau = [{LIAR_FLOAT}] * 2\n",
         lambda g: assert_whole_file(g, ("nouveau",), "obtenu [42 ; 42]")),
    Case("builtins_in_fill", lambda c: with_fill(
        c, "01_toux", "nouveau",
        "(__import__('math').__setattr__('isclose', lambda *a, **k: True), "
        "__import__('builtins').__setattr__('round', lambda *a: 0.79), 0.79)[2]"),
        lambda g: assert_only_blank_lost(g, "nouveau", "écrit en dur")),
    Case("builtins_and_math_outside", lambda c: insert_before(hard_coded(c), "x = ", OVERRIDES),
         lambda g: assert_whole_file(g, BLANKS_01)),
    Case("huge_output_in_fill", lambda c: with_fill(c, "01_toux", "somme_exp", "print('x' * 40_000_000) or sum(e)"),
         lambda g: assert_only_blank_lost(g, "somme_exp", "sortie trop volumineuse")),
    Case("huge_output_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "poids = ",
                                                        "while True:\n    print('spam ' * 1000)"),
         lambda g: assert_whole_file(g, BLANKS_01, "sortie trop volumineuse")),
    # Forty files left in its own folder, over this course's bound of twenty: the run earns nothing.
    Case("too_many_files_outside", lambda c: insert_before(text(c, "solution", "01_toux"), "print(",
                                                           "for k in range(40):\n    open(f'f{k}.txt', 'w').write('x')"),
         lambda g: assert_whole_file(g, BLANKS_01, "trop de fichiers écrits (40, limite 20)")),
    Case("empty_file", lambda c: b"", lambda g: check_empty(g)),
    Case("binary_file", lambda c: bytes(range(256)) * 8,
         lambda g: check_unrunnable(g, "unreadable", "fichier binaire")),
    Case("latin1_file", lambda c: text(c, "solution", "01_toux").encode("latin-1", "replace"),
         lambda g: check_unrunnable(g, "unreadable", "n'est pas en UTF-8", "Enregistre-le en UTF-8")),
]


def _full(grade: SubmissionGrade) -> None:
    assert grade.score == grade.max_score == 4.0, grade.to_json()


# Files that Python reads fine are graded like any other: full marks for the solution; and a module
# the runner did not preload can still be imported.
CASES += [
    Case("stdlib_import_not_preloaded", lambda c: with_fill(
        c, "01_toux", "somme_exp", "float(__import__('fractions').Fraction(math.fsum(e))) + 0 * len(__import__('csv').__name__)"), _full),
    Case("latin1_declared", lambda c: ("# -*- coding: latin-1 -*-\n" + text(c, "solution", "01_toux"))
         .encode("latin-1", "replace"), _full),
    Case("bom", lambda c: b"\xef\xbb\xbf" + text(c, "solution", "01_toux").encode(), _full),
    Case("crlf", lambda c: text(c, "solution", "01_toux").replace("\n", "\r\n").encode(), _full),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_submission(grader, honest, baseline, course, case):
    grade = grade_with_class(grader, honest, baseline, _files(course, case))
    case.check(grade)


def test_missing_exercise_file(grader, honest, baseline, course):
    grade = grade_with_class(grader, honest, baseline, {"01_toux": None,
                                                        "03_masque": text(course, "solution", "03_masque").encode()})
    e = grade.exercise("01_toux")
    assert e.mode == "missing" and e.score == 0.0
    assert {b.status for b in e.blanks} == {MISSING}
    assert "fichier absent" in e.message
    assert grade.exercise("03_masque").score == 1.0


def test_extra_exercise_file_changes_nothing(grader, honest, baseline, course):
    files = {e: text(course, "solution", e).encode() for e in EXERCISES}
    alone = grader.grade("pirate", files)
    extra = {**files, "99_bonus": b"print('bonus')\n", "test_01_toux": b"assert True\n"}
    grade = grade_with_class(grader, honest, baseline, extra)
    assert grade.to_json() == alone.to_json()
    assert [e.id for e in grade.exercises] == list(EXERCISES)


def test_overriding_builtins_in_one_exercise_leaves_the_other_alone(grader, honest, baseline, course):
    """Each exercise runs in its own process: 03_masque, right, is graded as if 01 were honest."""
    clean = grader.grade("pirate", {e: text(course, "solution", e).encode() for e in EXERCISES})
    sabotage = insert_before(text(course, "solution", "01_toux"), "x = ",
                             "import builtins\nbuiltins.float = lambda *a: 0.0\nbuiltins.sum = lambda *a: 0\n"
                             "import math\nmath.exp = lambda v: 0.0")
    grade = grade_with_class(grader, honest, baseline, {"01_toux": sabotage.encode(),
                                                        "03_masque": text(course, "solution", "03_masque").encode()})
    assert grade.exercise("03_masque") == clean.exercise("03_masque")
    assert grade.exercise("01_toux").score == 0.0


def test_sandbox_outlives_the_thread_that_started_it(grader):
    """bwrap's --die-with-parent follows the thread that started it: a runner started from a worker
    thread (as grade_many's are) must not be killed when that thread ends."""
    runner = Runner(grader.mode, slot=7)
    try:
        starter = threading.Thread(target=runner.start)
        starter.start()
        starter.join()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and runner.process.poll() is None:
            time.sleep(0.05)
        assert runner.process.poll() is None, "the sandbox died with the thread that started it"
        result = runner.run(Job((Unit("v = 6 * 7", "f.py", (Probe("v"),)),), Limits(wall=5)))[0]
        assert (result.status, result.probes[0].value, runner.restarts) == ("ok", 42, 0)
    finally:
        runner.close()


# -- files outside the student's own directory ---------------------------------------------------
def _reader(path: str) -> str:
    """A fill for `scores` that shows the first characters of `path`, or the error reading it."""
    return f"open({path!r}).read(60)"


def _secret(course: Course, rel: str) -> str:
    return (course.root / rel).read_text(encoding="utf-8")[:40]


TARGETS = ["graders/test_01_toux.py", "solutions/01_toux.py", "copies-resultats/gradebook.db"]


@pytest.mark.parametrize("target", TARGETS)
def test_reading_course_files_by_relative_path(grader, honest, baseline, course, target):
    """`../graders`, `../../solutions`, …: the working directory is a private temporary folder."""
    for prefix in ("../", "../../", "../../../"):
        grade = grade_with_class(grader, honest, baseline, _with_01(
            course, with_fill(course, "01_toux", "scores", _reader(prefix + target))))
        assert_only_blank_lost(grade, "scores", "FileNotFoundError")
        assert _secret(course, target) not in message(grade, "01_toux", "scores")


@pytest.mark.parametrize("target", TARGETS)
def test_reading_course_files_by_absolute_path(grader, honest, baseline, course, target):
    """bubblewrap: the course does not exist in the sandbox, whatever the path. Fallback: the code
    runs as the grader's own user with no mount isolation, so whatever the grader can read is
    readable (that is why the fallback announces itself loudly); reading earns nothing."""
    path = str(course.root / target)
    grade = grade_with_class(grader, honest, baseline, _with_01(
        course, with_fill(course, "01_toux", "scores", _reader(path))))
    assert_only_blank_lost(grade, "scores")
    shown = message(grade, "01_toux", "scores")
    # Whatever the fill read, its text is never echoed into the feedback (only types and shapes).
    assert _secret(course, target)[:30] not in shown, shown
    if grader.mode in ISOLATED:
        assert "FileNotFoundError" in shown
    else:
        assert "FileNotFoundError" not in shown and "obtenu une liste" in shown, shown


def test_finding_the_course_through_other_processes(grader, course):
    """The course folder is the grader's working directory, so /proc/<pid>/cwd of a process above the
    student's leads to it. bubblewrap hides those processes (own pid namespace,
    another user id); the fallback does not."""
    finder = ("[(lambda os: [c for c in (os.path.join('/proc', d, 'cwd') for d in os.listdir('/proc') if d.isdigit()) "
              "if os.path.isdir(os.path.join(c, 'graders'))])(__import__('os'))][0] or [1, 1, 2][x.index(t)]")
    previous = os.getcwd()
    os.chdir(course.root)  # as a teacher would, before starting the grader
    try:
        with RunnerPool(1, grader.mode) as pool:
            own = Grader(course, pool, only=EXERCISES)
            grade = own.grade("pirate", _with_01(course, with_fill(course, "01_toux", "scores", finder)))
    finally:
        os.chdir(previous)
    assert_only_blank_lost(grade, "scores")
    shown = message(grade, "01_toux", "scores")
    assert "/proc/" not in shown, shown  # found or not, paths are never echoed into the feedback
    if grader.mode in ISOLATED:
        # Nothing found: the fill falls back to the course's literal, which the hidden variants reject.
        assert "écrit en dur" in shown, shown
    elif os.geteuid() != 0:
        assert "écrit en dur" not in shown and "obtenu une liste" in shown, shown
    # As root, the fallback's student code holds no capability: the kernel then hides from it every
    # root process that holds some (the grader among them); what else it finds depends on the machine,
    # and earns nothing either way (above).


def test_writing_and_deleting_outside_its_directory(grader, honest, baseline, course, tmp_path):
    """bubblewrap: nothing outside the run's own folder is writable, and the course
    is not even there.
    Fallback: the code runs as the grader's own user without mount isolation, so it can change any
    file that user can (stated here on a throw-away folder); the runner survives its own folder being
    deleted."""
    victim = tmp_path / "cours"
    (victim / "graders").mkdir(parents=True)
    (victim / "graders" / "test_01_toux.py").write_text("# correcteur\n", encoding="utf-8")
    witness = victim / "temoin.txt"
    witness.write_text("ne pas effacer\n", encoding="utf-8")
    shared = [Path(f"/tmp/trous-pirate-{os.getpid()}-{grader.mode}.txt"),
              Path(f"/dev/shm/trous-pirate-{os.getpid()}-{grader.mode}.txt")]
    targets = ["../pirate.txt", str(victim / "pirate.txt"), *map(str, shared)]
    attack = "\n".join(
        ["import os, shutil"]
        + [f"try:\n    open({t!r}, 'w').write('pirate')\nexcept OSError:\n    pass" for t in targets]
        + [f"try:\n    os.remove({str(witness)!r})\nexcept OSError:\n    pass",
           f"shutil.rmtree({str(victim / 'graders')!r}, ignore_errors=True)",
           "shutil.rmtree('..', ignore_errors=True)"])
    try:
        grade = grade_with_class(grader, honest, baseline, _with_01(
            course, insert_before(text(course, "solution", "01_toux"), "print(", attack)))
        reached = {"témoin effacé": not witness.exists(), "correcteurs effacés": not (victim / "graders").exists(),
                   "fichier écrit": (victim / "pirate.txt").exists(), "/tmp": shared[0].exists(),
                   "/dev/shm": shared[1].exists()}
    finally:
        for path in shared:
            path.unlink(missing_ok=True)
    if grader.mode in ISOLATED:
        assert not any(reached.values()), reached
    else:
        assert all(reached.values()), reached
    assert grade.exercise("01_toux").mode == "whole_file"
    # The runner survived the attempt on its folders: the next student is graded as before.
    again = grader.grade("parfait", honest["parfait"])
    assert again.to_json() == baseline["parfait"]


# -- once weaknesses, now guarded -----------------------------------------------------------------
def _steal(pattern: str) -> str:
    """A fill that finds its own blank's reference fill in the other units' programs (the solution
    with another blank replaced), held in the memory of the process that runs it."""
    return ("eval(next(m.group(1) for o in __import__('gc').get_objects() if type(o).__name__ == 'Unit' "
            f"for m in [__import__('re').search(r'{pattern}', o.source)] if m and 'gc' not in m.group(1)), "
            "{**globals(), **locals()})")


def test_a_fill_cannot_read_the_reference_solution_from_memory(grader, honest, baseline, course):
    template, solution = text(course, "template", "01_toux"), text(course, "solution", "01_toux")
    thief = blanks_mod.splice(solution, blanks_mod.align(template, solution), {
        0: _steal(r"total = (.+)"), 1: _steal(r"scores = \[(.+) for t in x\]"),
        2: _steal(r"nouveau = \[(.+) for j in range\(2\)\]")})
    grade = grade_with_class(grader, honest, baseline, {"01_toux": thief.encode(), "03_masque": None})
    assert grade.exercise("01_toux").score == 0.0


def test_endless_loop_at_the_end_is_named_in_the_feedback(grader, honest, baseline, course):
    looping = insert_before(text(course, "solution", "01_toux"), "print(", "while True:\n    pass")
    grade = grade_with_class(grader, honest, baseline, {"01_toux": looping.encode(), "03_masque": None})
    assert grade.exercise("01_toux").score == 0.0
    assert all("temps dépassé" in b.message for b in grade.exercise("01_toux").blanks)
    assert not any("écrit en dur" in b.message for b in grade.exercise("01_toux").blanks)
