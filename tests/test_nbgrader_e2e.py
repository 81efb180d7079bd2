"""The whole teacher workflow with the real nbgrader, on a temporary course directory and exchange.

One class goes through it: `trous nbgrader build`, `nbgrader validate` (source) and `validate
--invert` (release), generate_assignment, release_assignment, fetch_assignment and submit for each
student, collect, zip_collect from a Moodle-style archive, `nbgrader autograde`, generate_feedback,
export. A copy of the course taken right after collection is graded by `trous grade` instead; the
tests then compare the two, blank by blank, and look for what must not be there: hidden tests in
anything a student sees, and traces of a hostile notebook outside its own folder.

nbgrader's command-line start-up costs seconds, so the steps that are not the teacher's main commands
go through nbgrader's Python API (NbGraderAPI, the exchange classes), which is what the commands run.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from conftest import ROOT, run_trous  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, env, grade_id, nbgrader  # noqa: E402

from trous.core.blanks import align  # noqa: E402
from trous.core import Course  # noqa: E402
from trous.sandbox.backend import bwrap_available  # noqa: E402
from trous.spec import load_checks  # noqa: E402

pytestmark = pytest.mark.slow

EXERCISE, ASSIGNMENT, COURSE_ID = "01_toux", "partie5", "attention"
S, N = SOLUTION, None


def _read_cell(nb, suffix):
    return next(c for c in nb.cells if (grade_id(c) or "") == EXERCISE + suffix)


def _tamper_cells(nb):
    check = _read_cell(nb, "-verification-publique")
    check.source = "print('Tout est juste, 3/3 !')"
    grade = _read_cell(nb, "-trou-nouveau")
    grade.metadata["nbgrader"]["points"] = 100
    grade.source = "print('ok')"


def _delete_cells(nb):
    nb.cells = [c for c in nb.cells if not (grade_id(c) or "").endswith(("-verification-publique", "-trou-scores"))]


FAKE_KERNEL = """\
import sys, types
faux = types.ModuleType("trous.publish.nbgrader.incell")
faux.corriger_trou = lambda *a, **k: print("✔ juste")
faux.verifier_trou = faux.verifier = lambda *a, **k: None
sys.modules["trous.publish.nbgrader.incell"] = faux
"""

KILL_KERNEL = "import os\nos._exit(0)"


def _before_poids(code: str):
    """An edit putting `code` in the answer cell, right before `poids = softmax(scores)`."""
    def edit(nb):
        cell = _read_cell(nb, "-reponse-1")
        assert "poids = softmax(scores)" in cell.source
        cell.source = cell.source.replace("poids = softmax(scores)", code + "\npoids = softmax(scores)")
    return edit


LOOP = "while True:\n    pass"
DEAF_LOOP = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"  # ignores the interrupt
MEMORY = "tas = []\nwhile True:\n    tas.append(bytearray(64 * 1024 * 1024))"


def _pasted_twice(nb):
    """The answer cell copied below itself (JupyterLab keeps the metadata), the first copy then broken."""
    import copy

    cells = nb.cells
    i = next(i for i, c in enumerate(cells) if grade_id(c) == f"{EXERCISE}-reponse-1")
    cells.insert(i + 1, copy.deepcopy(cells[i]))
    cells[i].source = cells[i].source.replace("sum(e)", "len(e)")


def _curious(course_dir: Path, marker: Path) -> str:
    reads = {"source": course_dir / "source" / ASSIGNMENT / f"{EXERCISE}.ipynb",
             "carnet": course_dir / "gradebook.db",
             "autre": course_dir / "submitted" / "parfait" / ASSIGNMENT / f"{EXERCISE}.ipynb",
             "config": course_dir / "nbgrader_config.py"}
    writes = {"cours": course_dir / "pirate.txt",
              "autre": course_dir / "submitted" / "parfait" / ASSIGNMENT / "pirate.txt",
              "hote": marker}
    return f"""\
import os, socket
for nom, chemin in {json.dumps({k: str(v) for k, v in reads.items()})}.items():
    try:
        with open(chemin, "rb") as f:
            print("LU", nom, len(f.read()))
    except Exception as exc:
        print("REFUSE-LECTURE", nom, type(exc).__name__)
for nom, chemin in {json.dumps({k: str(v) for k, v in writes.items()})}.items():
    try:
        with open(chemin, "w") as f:
            f.write("pirate")
        print("ECRIT", nom)
    except Exception as exc:
        print("REFUSE-ECRITURE", nom, type(exc).__name__)
import glob
for canal in glob.glob("/tmp/trous-noyau-*/canal") or ["(aucun)"]:
    try:
        with open(os.path.join(canal, "pirate"), "w") as f:
            f.write("pirate")
        print("ECRIT canal")
    except Exception as exc:
        print("REFUSE-ECRITURE canal", type(exc).__name__)
with open("ici.txt", "w") as f:
    f.write("dans mon dossier")
print("ECRIT ici")
print("DOSSIERS", sorted(os.listdir({str(course_dir)!r})) if os.path.isdir({str(course_dir)!r}) else "absent")
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    print("RESEAU ouvert")
except OSError as exc:
    print("REFUSE-RESEAU", type(exc).__name__)
try:
    bombe = bytearray(8 * 1024 ** 3)
    print("MEMOIRE", len(bombe))
except MemoryError:
    print("REFUSE-MEMOIRE")
"""


# student → (blank choices, extra cells after the answer cell, notebook edit, expected points per blank)
def _students(course_dir: Path, marker: Path):
    answer = f"{EXERCISE}-reponse-1"
    return {
        "parfait": ({0: S, 1: S, 2: S}, [], None, (1, 1, 1)),
        "partiel": ({0: S, 1: "sum(a + b for a, b in zip(t, toux))", 2: N}, [], None, (1, 0, 0)),
        "en_dur": ({0: S, 1: "[1, 1, 2][x.index(t)]", 2: "0.79"}, [], None, (1, 0, 0)),
        "triche_points": ({0: S, 1: N, 2: N}, [], _tamper_cells, (1, 0, 0)),
        "sans_cellules": ({0: N, 1: S, 2: S}, [], _delete_cells, (0, 1, 1)),
        "noyau_falsifie": ({}, [(answer, FAKE_KERNEL)], None, (0, 0, 0)),
        "curieux": ({0: S, 1: N, 2: N}, [(answer, _curious(course_dir, marker))], None, (1, 0, 0)),
        "saboteur": ({0: S, 1: S, 2: S}, [(answer, KILL_KERNEL)], None, (1, 1, 1)),
        # Right wherever the declarations and the public checks look; wrong for two scores below 0,
        # which only the hidden grader's test function (pytest, issue 12) tries: its point is lost
        # under nbgrader autograde as under trous grade.
        "propriete": ({0: "2 * sum(e) if len(e) == 2 and e[0] < 1 else sum(e)", 1: S, 2: S}, [], None, (0, 1, 1)),
        # Issue 21, part 1: what stopped nbgrader from grading a student at all. A program that never
        # gets past its loop, or ends before `poids` (os._exit), gives no value to check; one that
        # stops on an error (raised, or memory exhausted) still has `scores`, computed before it.
        "boucle": ({0: S, 1: S, 2: S}, [], _before_poids(LOOP), (0, 0, 0)),
        "sourd": ({0: S, 1: S, 2: S}, [], _before_poids(DEAF_LOOP), (0, 0, 0)),
        "sortie": ({0: S, 1: S, 2: S}, [], _before_poids(KILL_KERNEL), (0, 0, 0)),
        "plante": ({0: S, 1: S, 2: S}, [], _before_poids("raise RuntimeError('boum')"), (0, 1, 0)),
        "memoire": ({0: S, 1: S, 2: S}, [], _before_poids(MEMORY), (0, 1, 0)),
        # the last copy of a cell counts, as in nbgrader (DeduplicateIds) and in the kernel
        "double": ({0: S, 1: S, 2: S}, [], _pasted_twice, (1, 1, 1)),
    }


MOODLE = {"4711": ("Camille Durand", {0: S, 1: S, 2: N}, (1, 1, 0)),
          "4712": ("Léo Martin", {0: "len(e)", 1: S, 2: S}, (0, 1, 1))}


def _api(root: Path):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from trous.outputs.nbgrader import load_config

    config = load_config(root)
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def _student_side(exchange: Path, home: Path, student: str, write_notebook, cache: Path) -> None:
    """What `nbgrader fetch_assignment` then `nbgrader submit --student` do, for one student."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit
    from traitlets.config import Config

    home.mkdir(parents=True)
    config = Config()
    config.CourseDirectory.root = str(home)
    config.CourseDirectory.course_id = COURSE_ID
    config.CourseDirectory.assignment_id = ASSIGNMENT
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(cache)
    config.Exchange.assignment_dir = str(home)
    fetch = ExchangeFetchAssignment(coursedir=CourseDirectory(config=config),
                                    authenticator=Authenticator(config=config), config=config)
    fetch.start()
    path = home / ASSIGNMENT / f"{EXERCISE}.ipynb"
    write_notebook(path, nbformat.read(path, 4))
    config.CourseDirectory.student_id = student
    submit = ExchangeSubmit(coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config),
                            config=config)
    submit.start()


def _grades(course_dir: Path) -> dict[str, dict[str, float | None]]:
    return blank_scores(course_dir, COURSE_ID)


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", env()["PATH"])  # nbgrader's API runs `alembic` from PATH
        yield _workflow(tmp_path_factory)


def _workflow(tmp_path_factory):
    base = tmp_path_factory.mktemp("nbgrader-e2e")
    course_dir, exchange, homes = base / "cours", base / "echange", base / "eleves"
    marker = base / "marque-du-pirate.txt"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    log: dict[str, object] = {"course_dir": course_dir, "exchange": exchange, "homes": homes, "marker": marker}

    built = run_trous(ROOT, "nbgrader", "build", str(course_dir), "--echange", str(exchange), "--exercice", EXERCISE)
    assert built.returncode == 0, built.stdout + built.stderr
    (course_dir / "nbgrader_config_local.py").write_text(
        "c = get_config()\n"
        "c.Execute.timeout = 90\n"
        f"c.Exchange.cache = {str(base / 'cache-prof')!r}\n")

    log["validate_source"] = nbgrader(course_dir, "validate", f"source/{ASSIGNMENT}/{EXERCISE}.ipynb")
    api = _api(course_dir)
    log["generate"] = api.generate_assignment(ASSIGNMENT)
    log["validate_release"] = nbgrader(course_dir, "validate", "--invert", f"release/{ASSIGNMENT}/{EXERCISE}.ipynb")
    log["release"] = api.release_assignment(ASSIGNMENT)

    source_nb = nbformat.read(course_dir / "source" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    release_nb = nbformat.read(course_dir / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    author = Author(source_nb, release_nb)
    log["author"] = author
    students = _students(course_dir, marker)
    log["students"] = students
    for student, (choices, added, edit, _) in students.items():
        def write(path, fetched, choices=choices, added=added, edit=edit):
            assert nbformat.writes(fetched) == nbformat.writes(release_nb)  # what the student fetched
            nbformat.write(author.notebook(choices, added=added, edit=edit), path)
        _student_side(exchange, homes / student, student, write, base / "caches" / student)  # each their own
    log["collect"] = api.collect(ASSIGNMENT)

    archive_dir = course_dir / "downloaded" / ASSIGNMENT / "archive"
    archive_dir.mkdir(parents=True)
    with zipfile.ZipFile(archive_dir / "moodle.zip", "w") as archive:
        for moodle_id, (name, choices, _) in MOODLE.items():
            archive.writestr(f"{name}_{moodle_id}_assignsubmission_file_/{EXERCISE}.ipynb",
                             nbformat.writes(author.notebook(choices)))
    log["zip_collect"] = nbgrader(course_dir, "zip_collect", ASSIGNMENT)

    copy_dir, assignment_copy = base / "copie-pour-trous", base / "copie-pour-trous-nbgrader"
    shutil.copytree(course_dir, copy_dir, symlinks=True)
    shutil.copytree(course_dir, assignment_copy, symlinks=True)
    log["copy_dir"], log["assignment_copy"] = copy_dir, assignment_copy

    log["autograde"] = nbgrader(course_dir, "autograde", ASSIGNMENT)
    log["feedback"] = nbgrader(course_dir, "generate_feedback", ASSIGNMENT)
    # Every student at once, as a teacher runs it: the Moodle students (zip_collect) are among them.
    log["release_feedback"] = nbgrader(course_dir, "release_feedback", ASSIGNMENT)
    log["fetched_feedback"] = {s: _fetch_feedback(exchange, homes / s, s, base / "caches" / s) for s in students}
    log["export"] = nbgrader(course_dir, "export")

    # From the course folder itself, wherever it is, without -C: the course it carries grades it.
    assert not any((p / "course.yaml").exists() for p in [copy_dir, *copy_dir.parents])
    log["trous_grade"] = run_trous(copy_dir, "grade", ".", timeout=600)
    log["trous_grade_devoir"] = run_trous(assignment_copy, "grade", ".", "--devoir", ASSIGNMENT, timeout=600)
    copy_api = _api(copy_dir)
    log["trous_feedback"] = copy_api.generate_feedback(ASSIGNMENT)
    log["trous_export"] = nbgrader(copy_dir, "export")
    log["copy_export_csv"] = (copy_dir / "grades.csv").read_text()
    log["copy_grades_before_override"] = _grades(copy_dir)
    # formgrader: the teacher gives « partiel » its second blank by hand, then grades again.
    _set_manual(copy_dir, "partiel", f"{EXERCISE}-trou-scores", 1.0)
    log["trous_regrade"] = run_trous(copy_dir, "grade", ".", timeout=600)
    log["trous_export_after_override"] = nbgrader(copy_dir, "export")
    log["feedback_after_override"] = nbgrader(copy_dir, "generate_feedback", ASSIGNMENT, "--force")
    return log


def _fetch_feedback(exchange: Path, home: Path, student: str, cache: Path) -> list[str]:
    """What `nbgrader fetch_feedback` brings to an exchange student: the feedback pages' names."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeFetchFeedback
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(home)
    config.CourseDirectory.course_id = COURSE_ID
    config.CourseDirectory.assignment_id = ASSIGNMENT
    config.CourseDirectory.student_id = student
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(cache)
    config.Exchange.assignment_dir = str(home)
    ExchangeFetchFeedback(coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config),
                          config=config).start()
    return sorted(p.name for p in home.glob(f"{ASSIGNMENT}/feedback/*/*.html"))


def _set_manual(course_dir: Path, student: str, cell: str, score: float) -> None:
    """What formgrader does when a teacher types a score into a grade cell."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}", COURSE_ID) as gradebook:
        grade = gradebook.find_grade(cell, EXERCISE, ASSIGNMENT, student)
        grade.manual_score = score
        gradebook.db.commit()


def _ok(result) -> bool:
    return result["success"] if isinstance(result, dict) else result.returncode == 0


def test_every_step_of_the_workflow_succeeds(workflow):
    for step in ("generate", "release", "collect", "zip_collect", "autograde", "feedback", "release_feedback",
                 "export", "trous_grade", "trous_feedback", "trous_export", "trous_grade_devoir", "trous_regrade",
                 "trous_export_after_override", "feedback_after_override"):
        result = workflow[step]
        detail = (result.get("error") or result.get("log", "")) if isinstance(result, dict) \
            else result.stdout + result.stderr
        assert _ok(result), f"{step} :\n{detail[-3000:]}"
    source = workflow["validate_source"]
    assert "Success! Your notebook passes all the tests." in source.stdout, source.stdout + source.stderr
    release = workflow["validate_release"]
    assert "Success! The notebook does not pass any tests." in release.stdout, release.stdout + release.stderr
    course_dir = workflow["course_dir"]
    expected = set(workflow["students"]) | set(MOODLE)
    assert {p.name for p in (course_dir / "submitted").iterdir()} == expected
    assert {p.name for p in (course_dir / "autograded").iterdir()} == expected
    assert {p.parent.parent.name for p in (course_dir / "feedback").glob(f"*/{ASSIGNMENT}/{EXERCISE}.html")} == expected


def test_release_answer_cell_shows_the_blanks_of_the_exercise(workflow):
    release = nbformat.read(workflow["course_dir"] / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    answer = next(c for c in release.cells if (c.metadata.get("nbgrader") or {}).get("solution"))
    template = (ROOT / "exercises" / f"{EXERCISE}.py").read_text(encoding="utf-8")
    assert answer.source in template and answer.source.count("___") == 3
    assert "YOUR CODE HERE" not in nbformat.writes(release)


def _expected():
    points = {}
    for student, (*_, expected) in _students(Path("/"), Path("/")).items():
        points[student] = expected
    for moodle_id, (_, _, expected) in MOODLE.items():
        points[moodle_id] = expected
    return points


BLANKS = ("somme_exp", "scores", "nouveau")


def test_nbgrader_autograde_gives_the_points_each_notebook_deserves(workflow):
    grades = _grades(workflow["course_dir"])
    for student, expected in _expected().items():
        got = tuple(grades[student][f"{EXERCISE}-trou-{b}"] for b in BLANKS)
        assert got == expected, student


def test_trous_grade_gives_the_same_points_per_blank_as_nbgrader_autograde(workflow):
    nbgrader_grades = _grades(workflow["course_dir"])
    trous_grades = workflow["copy_grades_before_override"]
    assert set(nbgrader_grades) == set(trous_grades) == set(_expected())
    for student in nbgrader_grades:
        assert trous_grades[student] == nbgrader_grades[student], student
    assert _grades(workflow["assignment_copy"]) == nbgrader_grades  # `trous grade . --devoir partie5`
    # and the totals nbgrader exported from both gradebooks (before the override) are the same
    exported = workflow["trous_export"]
    assert exported.returncode == 0
    assert sorted((workflow["course_dir"] / "grades.csv").read_text().splitlines()) == sorted(
        workflow["copy_export_csv"].splitlines())


def test_formgrader_sees_trous_grades_as_it_sees_nbgrader_s(workflow):
    """What formgrader's pages are made of (NbGraderAPI's submission listings), on both gradebooks."""
    def listing(root):
        api = _api(root)
        assignment = {s["student"]: (s["score"], s["max_score"], s["needs_manual_grade"], s["autograded"])
                      for s in api.get_submissions(ASSIGNMENT)}
        notebooks = {n["student"]: (n["score"], n["needs_manual_grade"], n["failed_tests"])
                     for n in api.get_notebook_submissions(ASSIGNMENT, EXERCISE)}
        return assignment, notebooks

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", env()["PATH"])
        from_nbgrader, from_trous = listing(workflow["course_dir"]), listing(workflow["assignment_copy"])
    assert from_trous == from_nbgrader
    assert set(from_trous[0]) == set(_expected())
    assert all(autograded and not manual for _, _, manual, autograded in from_trous[0].values())


def test_the_grade_cells_are_graded_outside_the_kernel_never_in_it(workflow):
    """With the generated configuration the kernel never runs a grade cell (its code is the student's
    to fake: `noyau_falsifie` replaced the module the hidden cells import); VerifyGrades writes each
    blank's verdict, the engine's, in its cell."""
    for student, expected in _expected().items():
        nb = nbformat.read(workflow["course_dir"] / "autograded" / student / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
        graded = {grade_id(c): c for c in nb.cells if "moteur" in c.metadata.get("trous", {})}
        assert set(graded) == {f"{EXERCISE}-trou-{b}" for b in BLANKS}, student
        for blank, points in zip(BLANKS, expected):
            cell = graded[f"{EXERCISE}-trou-{blank}"]
            assert cell.metadata["trous"] == {"moteur": points, "source": "nbgrader autograde"}, (student, blank)
            assert cell.execution_count is None, (student, blank)  # nbclient numbers every cell it runs
            text = "".join(o.get("text", "") + o.get("evalue", "") for o in cell.outputs)
            assert text.startswith(("✔ trou", "✘ trou")) and "✔ juste" not in text, (student, text)
    answer = _read_cell(nbformat.read(workflow["course_dir"] / "autograded" / "parfait" / ASSIGNMENT /
                                      f"{EXERCISE}.ipynb", 4), "-reponse-1")
    assert answer.execution_count is not None  # the kernel did run the notebook's own cells


def _outputs(nb, cell_source_part: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "code" and cell_source_part in cell.source:
            return "".join(o.get("text", "") for o in cell.outputs)
    raise AssertionError(cell_source_part)


def test_a_hostile_notebook_sees_nothing_of_the_course_and_writes_nothing_outside_its_folder(workflow):
    if not bwrap_available():
        pytest.skip("sans bubblewrap, le noyau n'est pas isolé (nbgrader_config.py le dit à chaque correction)")
    course_dir = workflow["course_dir"]
    nb = nbformat.read(course_dir / "autograded" / "curieux" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    printed = _outputs(nb, "REFUSE-LECTURE")
    for target in ("source", "carnet", "autre", "config"):
        assert f"REFUSE-LECTURE {target} FileNotFoundError" in printed, printed
    assert "LU " not in printed
    assert "REFUSE-ECRITURE cours" in printed and "REFUSE-ECRITURE autre" in printed
    assert "REFUSE-ECRITURE canal PermissionError" in printed  # its sockets' directory, once they are bound
    assert "ECRIT ici" in printed  # its own folder is writable…
    assert not (course_dir / "autograded" / "curieux" / ASSIGNMENT / "ici.txt").exists()  # …and private
    assert "DOSSIERS ['autograded']" in printed  # of the course, only the path to its own folder exists
    assert "REFUSE-RESEAU" in printed and "REFUSE-MEMOIRE" in printed
    assert not (course_dir / "pirate.txt").exists()
    assert not (course_dir / "submitted" / "parfait" / ASSIGNMENT / "pirate.txt").exists()
    assert not workflow["marker"].exists()  # its /tmp was its own


def _visible_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        return html.unescape(re.sub(r"<[^>]+>", " ", text)) + "\n" + html.unescape(text)
    if path.suffix == ".ipynb":
        return text + "\n" + json.dumps(json.loads(text), ensure_ascii=False)
    return text


def _secrets(author: Author) -> dict[str, list[str]]:
    course = Course.load(ROOT)
    exercise = course.exercise(EXERCISE)
    template = exercise.template_path.read_text(encoding="utf-8")
    public = "\n".join([template, exercise.checks_path.read_text(encoding="utf-8")] +
                       [b.hints[0] for b in exercise.blanks])
    grader = exercise.grader_path.read_text(encoding="utf-8")
    lines = [ln.strip() for ln in grader.split("\n") if len(ln.strip()) > 15 and ln.strip() not in public]
    inputs = [value for check in load_checks(exercise.grader_path) for e in check.expects if e.variant
              for _, value in e.variant.overrides]
    fills = [f.text for f in align(template, exercise.solution_path.read_text(encoding="utf-8"))
             if f.text not in public]
    assert lines and inputs and fills
    return {"grader": lines, "inputs": sorted(set(inputs)), "fills": fills}


def test_no_student_visible_file_holds_hidden_tests_or_solutions(workflow):
    secrets = _secrets(workflow["author"])
    course_dir, exchange, homes = workflow["course_dir"], workflow["exchange"], workflow["homes"]
    always = secrets["grader"] + secrets["inputs"] + ["corriger_trou('somme_exp'", "BEGIN HIDDEN TESTS"]
    blank_students = {"noyau_falsifie", "triche_points", "partiel", "en_dur"}  # never wrote the last fills
    visible = [p for p in (course_dir / "release").rglob("*") if p.is_file()]
    visible += [p for p in exchange.rglob("*") if p.is_file() and "inbound" not in p.parts]
    visible += [p for p in homes.rglob("*") if p.is_file()]
    visible += [p for p in (course_dir / "feedback").rglob("*") if p.is_file()]
    visible += [p for p in (workflow["copy_dir"] / "feedback").rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in visible) and any("outbound" in p.parts for p in visible)
    for path in visible:
        text = _visible_text(path)
        for secret in always:
            assert secret not in text, (path, secret)
        student = next((s for s in blank_students if s in path.parts), None)
        if "release" in path.parts or "outbound" in path.parts or student:
            for fill in secrets["fills"][1:]:
                assert fill not in text, (path, fill)


# -- the course on its own, one source of truth, students and teachers as nbgrader has them ----------
def test_release_feedback_reaches_every_exchange_student_and_names_the_moodle_ones(workflow):
    released = workflow["release_feedback"]
    said = released.stdout + released.stderr
    assert released.returncode == 0, said[-3000:]
    assert "FileNotFoundError" not in said and "Traceback" not in said
    for student, pages in workflow["fetched_feedback"].items():  # each fetched its own page from the exchange
        assert pages == [f"{EXERCISE}.html"], student
    for moodle_id in MOODLE:  # never went through the exchange: named, with where their page is
        page = workflow["course_dir"] / "feedback" / moodle_id / ASSIGNMENT / f"{EXERCISE}.html"
        assert page.is_file()
        line = next(ln for ln in said.splitlines() if f"retour de {moodle_id} non publié" in ln)
        assert str(page) in line and "Moodle" in line


def test_the_moodle_students_get_their_worksheet_and_feedback_zip_from_trous_grade(workflow, tmp_path):
    """zip_collect's students are Moodle participants: `trous grade .` writes what Moodle takes back,
    as for the archive graded directly, and release_feedback's message names what is really there."""
    from moodle_support import Participant, feedback_targets, import_worksheet, worksheet

    copy_dir = workflow["copy_dir"]
    results = copy_dir / "trous-resultats"
    grades = {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8")) for p in (results / "results").glob("*.json"))}
    data = (results / "moodle-retours.zip").read_bytes()
    targets = feedback_targets(data, {4711, 4712})
    assert sorted(p for p, _, _ in targets.values()) == [4711, 4712]  # Moodle's importer reads both numbers
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for entry, (number, _, _) in targets.items():
            assert z.read(entry) == (results / "retours" / f"{number}.html").read_bytes()
    assert len(targets) == 2  # only the Moodle students: the exchange ones are not Moodle participants
    # release_feedback (run on the course before trous grade) promised that file, in that folder.
    said = workflow["release_feedback"].stdout + workflow["release_feedback"].stderr
    line = next(ln for ln in said.splitlines() if "retour de 4711 non publié" in ln)
    promised = Path(re.search(r"écrit (\S+moodle-retours\.zip)", line).group(1))
    assert promised == workflow["course_dir"] / "trous-resultats" / "moodle-retours.zip"
    assert (copy_dir / promised.relative_to(workflow["course_dir"])).is_file()
    # With the assignment's worksheet: filled for them, as Moodle's importer reads it back.
    sheet = tmp_path / "Notes-partie5.csv"
    people = [Participant(4711, "Camille Durand", "c@x.fr"), Participant(4712, "Léo Martin", "l@x.fr"),
              Participant(4713, "Absente", "a@x.fr", submitted=False)]
    sheet.write_bytes(worksheet(people, "fr", maximum=3))
    done = run_trous(copy_dir, "grade", ".", "--feuille", str(sheet), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    imported = import_worksheet((results / "moodle-feuille-remplie.csv").read_bytes(), "fr")
    assert imported[4711].grade == grades["4711"]["score"] and imported[4712].grade == grades["4712"]["score"]
    assert imported[4713].grade is None
    assert "aucune copie ne porte" not in done.stdout


def test_zip_collect_carries_moodle_names_into_nbgrader_gradebook(workflow):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{workflow['course_dir'] / 'gradebook.db'}", COURSE_ID) as gradebook:
        names = {s.id: (s.first_name, s.last_name) for s in gradebook.students}
    for moodle_id, (full_name, _, _) in MOODLE.items():
        first, last = full_name.split(" ", 1)
        assert names[moodle_id] == (first, last)  # what formgrader shows as « Durand, Camille »
    assert names["parfait"] == (None, None)  # exchange students: nbgrader knows no name, none is made up
    table = workflow["trous_grade"].stdout
    assert "Camille Durand" in table and "Léo Martin" in table  # trous grade's table reads them too


def test_trous_grade_from_the_course_folder_writes_its_results_out_of_git(workflow):
    copy_dir = workflow["copy_dir"]
    results = copy_dir / "trous-resultats"
    assert (results / "gradebook.db").is_file() and (results / "grades.csv").is_file()
    ignored = (copy_dir / ".gitignore").read_text().splitlines()
    for entry in ("trous-resultats/", "gradebook.db", "submitted/", "autograded/", "feedback/", "downloaded/"):
        assert entry in ignored
    git = shutil.which("git")
    if git:  # what git itself makes of it, in the course folder made a repository
        import subprocess

        subprocess.run([git, "init", "-q"], cwd=copy_dir, check=True)
        status = subprocess.run([git, "status", "--porcelain", "--untracked-files=all"], cwd=copy_dir, check=True,
                                capture_output=True, text=True).stdout
        assert "trous-resultats" not in status and "submitted/" not in status and "gradebook.db" not in status
        assert "source/" in status and "nbgrader_config.py" in status and "trous-cours.json" in status


def test_a_grade_changed_in_formgrader_is_the_grade_trous_reports(workflow):
    regrade = workflow["trous_regrade"]
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    said = regrade.stdout
    assert "formgrader" in said and "l'emporte" in said
    line = next(ln for ln in said.splitlines() if ln.strip().startswith("partiel —"))
    assert "« scores »" in line and "1 point" in line and "automatique : 0 point" in line
    assert sum(1 for ln in said.splitlines() if ln.strip().startswith(tuple(f"{s} —" for s in _expected()))) == 1
    results = workflow["copy_dir"] / "trous-resultats"
    data = json.loads((results / "results" / "partiel.json").read_text())
    toux = next(e for e in data["exercises"] if e["id"] == EXERCISE)
    assert toux["score"] == 2 and [b["score"] for b in toux["blanks"]] == [1, 1, 0]
    assert any("formgrader" in n for n in toux["notes"])
    assert data["score"] == 2
    page = next((results / "retours").glob("partiel*"))
    assert "formgrader" in _visible_text(page)
    rows = {r["etudiant"]: r for r in csv.DictReader(io.StringIO((results / "grades.csv").read_text("utf-8-sig")))}
    assert rows["partiel"][EXERCISE] == "2"
    exported = {r["student_id"]: r for r in csv.DictReader(io.StringIO((workflow["copy_dir"] / "grades.csv").read_text()))}
    assert float(exported["partiel"]["score"]) == 2  # nbgrader export says the same
    # trous's own gradebook keeps the engine's grade; nbgrader's keeps the teacher's
    assert _grades(workflow["copy_dir"])["partiel"][f"{EXERCISE}-trou-scores"] == 1.0


def test_autograde_restores_hidden_tests_without_a_warning_but_still_reports_tampering(workflow):
    said = workflow["autograde"].stdout + workflow["autograde"].stderr
    checksum = [ln for ln in said.splitlines() if "Attribute 'checksum'" in ln]
    # nbgrader printed one per grade cell and per student (hidden tests stripped at release)
    assert all("triche_points" in ln or "verification-publique" in ln or "trou-nouveau" in ln for ln in checksum)
    assert any(f"{EXERCISE}-trou-nouveau" in ln for ln in checksum)  # the student who rewrote a grade cell
    assert any("Attribute 'points'" in ln for ln in said.splitlines())
    assert not any(f"-trou-{b}" in ln for ln in checksum for b in ("somme_exp", "scores"))


def test_the_notebook_speaks_of_its_cells_to_students(workflow):
    release = nbformat.read(workflow["course_dir"] / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    check = _read_cell(release, "-verification-publique")
    assert check.source.splitlines()[-1] == f"verifier('{EXERCISE}')" and len(check.source) < 400
    markdown = "\n".join(c.source for c in release.cells if c.cell_type == "markdown")
    assert "pytest" not in markdown and "exercises/" not in markdown
    assert "Validate" in markdown and "publiques" in markdown
    first_code = next(c for c in release.cells if c.cell_type == "code")
    assert "%load_ext trous.publish.nbgrader" in first_code.source
    # a wrong blank's grade cell, in nbgrader's feedback: located in the notebook, not in a file
    nb = nbformat.read(workflow["course_dir"] / "autograded" / "partiel" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    text = "\n".join("\n".join(o.get("traceback", [])) + o.get("text", "")
                     for o in _read_cell(nb, "-trou-scores").outputs)
    assert "cellule de réponse 1" in text and "exercises/" not in text


# -- issue 21: what used to cost a student their whole assignment, and what a teacher must be told ------
def _cell_outputs(workflow, student: str, suffix: str) -> list[dict]:
    nb = nbformat.read(workflow["course_dir"] / "autograded" / student / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    return list(_read_cell(nb, suffix).outputs)


def _errors(outputs) -> dict[str, str]:
    return {o.get("ename"): o.get("evalue", "") for o in outputs if o.get("output_type") == "error"}


def test_a_loop_or_a_dying_kernel_costs_its_cell_never_the_submission(workflow, course):
    said = workflow["autograde"].stdout + workflow["autograde"].stderr
    assert "Removing failed assignment" not in said and "There was an error processing" not in said, said[-3000:]
    limit = f"{course.exercise(EXERCISE).spec.timeout:g}".replace(".", ",")  # course.yaml's, not Execute.timeout (90)
    interrupted = _errors(_cell_outputs(workflow, "boucle", "-reponse-1"))
    assert "KeyboardInterrupt" in interrupted  # the kernel was interrupted, as nbgrader's own is
    assert f"après {limit} s, la limite de temps de l'exercice : elle a été interrompue" in interrupted["TempsEcoule"]
    deaf = _errors(_cell_outputs(workflow, "sourd", "-reponse-1"))["TempsEcoule"]
    assert f"après {limit} s" in deaf and "n'a pas répondu à l'interruption : il a été arrêté" in deaf
    assert "NoyauArrete" in _errors(_cell_outputs(workflow, "sortie", "-reponse-1"))
    assert "NonExecutee" in _errors(_cell_outputs(workflow, "sourd", "-verification-publique"))
    for student in ("boucle", "sourd", "sortie", "memoire", "plante"):
        for blank in BLANKS:  # each blank's cell says why, in the engine's words, never « not run »
            outputs = _cell_outputs(workflow, student, f"-trou-{blank}")
            verdicts = [o for o in outputs if o.get("ename") == "TrouFaux" or o.get("text", "").startswith("✔ trou")]
            assert len(verdicts) == len(outputs) == 1, (student, blank, outputs)


def _nbgrader_flagged(log: str) -> dict[str, set[str]]:
    """student → the cells nbgrader's autograde log says a student changed (read from its warnings,
    each under the « Sanitizing …/submitted/<student>/… » line it follows)."""
    flagged: dict[str, set[str]] = {}
    student = None
    for line in log.splitlines():
        found = re.search(r"Sanitizing .*/submitted/([^/]+)/", line)
        if found:
            student = found.group(1)
            flagged.setdefault(student, set())
            continue
        cell = re.search(r"Attribute '\w+' for cell (\S+) has changed|Cell with id '([^']+)' exists multiple times"
                         r"|Missing grade cell (\S+) encountered", line)
        if cell and student:
            flagged[student].add(next(g for g in cell.groups() if g))
    return flagged


def test_trous_grade_names_every_locked_cell_nbgrader_restores(workflow):
    results = workflow["copy_dir"] / "trous-resultats"
    nbgrader_says = _nbgrader_flagged(workflow["autograde"].stdout + workflow["autograde"].stderr)
    assert nbgrader_says["triche_points"] == {f"{EXERCISE}-verification-publique", f"{EXERCISE}-trou-nouveau"}
    assert nbgrader_says["double"] == {f"{EXERCISE}-reponse-1"}
    for student in _expected():
        notes = json.loads((results / "results" / f"{student}.json").read_text())["intake"]["notes"]
        named = {m.group(1) for n in notes for m in [re.search(r"cellule (?:verrouillée )?(\S+) (?:modifiée|supprimée|"
                                                                r"présente)", n)] if m}
        assert named == nbgrader_says.get(student, set()), (student, notes)
    notes = json.loads((results / "results" / "triche_points.json").read_text())["intake"]["notes"]
    assert any(f"{EXERCISE}-trou-nouveau modifiée (texte, points (100 au lieu de 1))" in n for n in notes), notes
    assert all("la note n'en dépend pas" in n for n in notes)
    page = next((results / "retours").glob("triche_points*"))
    assert f"cellule verrouillée {EXERCISE}-trou-nouveau modifiée" in _visible_text(page)
    assert f"cellule verrouillée {EXERCISE}-trou-nouveau modifiée" in workflow["trous_grade"].stdout


def test_feedback_after_a_formgrader_override_does_not_contradict_its_score(workflow):
    page = _visible_text(workflow["copy_dir"] / "feedback" / "partiel" / ASSIGNMENT / f"{EXERCISE}.html")
    assert re.search(r"« scores » \([^)]*\) : faux à la correction automatique \(0 sur 1 point\) — note donnée par "
                     r"l'enseignant : 1 sur 1 point", page), page[:3000]
    assert not re.search(r"« scores » \([^)]*\) : faux — 0 sur 1 point", page)
    assert re.search(r"« nouveau » [^\n]*: pas rempli \(___\) — 0 sur 1 point", page)  # not overridden: as it was
