"""`trous grade`'s own memory stays flat in the size of the class.

The teacher's process hands each grade to the outputs as it comes and keeps only a small summary
per student (the class report, grades.csv and Moodle's files are written from those); a copy's bytes
are read when it is graded and dropped once it is, the intake having kept none of them: grading four
times as many copies must not make its peak memory grow by more than a few KiB per added copy.
Before, every feedback page, every results document and every grade stayed in memory until the end,
and every copy's bytes from the intake until it was graded.

Measured through the command itself, in a process of its own: the peak of the memory Python
allocates in it (tracemalloc, every thread; not its sandboxes, which are other processes). The peak
RSS says the same with the allocator's noise on top.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from trous.core import Course
from trous.inputs import kinds
from trous.inputs.answers import nbgrader_meta

from grading_support import make_classe, mini_course, zip_of

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="trous grade corrige dans bubblewrap : Linux")

SMALL, LARGE = 50, 250
EXERCISES = ("01_toux", "02_places", "03_masque")
# KiB of peak memory per copy added, measured on these three exercises: 30 when the outputs took the
# whole class's grades, pages and documents at the end; 9 since (each copy's name, notes, digest and
# summary, and a step of the interpreter's own tables, 1.8 MiB at once, between the two sizes). Still
# 8.4 to 9.3 once the intake kept no bytes: the peak comes after the last copy is graded, when every
# copy's bytes are gone either way (the test below checks the intake itself).
BOUND_KIB = 14

GRADE = """
import sys, tracemalloc
tracemalloc.start()
from trous.cli import main
code = main(sys.argv[1:])
print("PEAK", tracemalloc.get_traced_memory()[1], file=sys.stderr)
sys.exit(code)
"""


def _class(course: Path, dest: Path, n: int) -> Path:
    """n copies of each exercise: right, half filled, wrong or left as given. Four programs per
    exercise only, so that what the engine keeps for identical programs (bounded, and not the
    outputs') is the same whatever n: what grows with n is what the run keeps per student."""
    gen = make_classe()
    materials = gen.load_materials(Course.load(course))
    for k in range(n):
        folder = dest / f"eleve{k:04d}" / "exercises"
        folder.mkdir(parents=True)
        for material in materials:
            text = (material.perfect(), material.fill({0: material.answers[0]}),
                    material.with_blank(0, gen.wrong(material.answers[0], 0)), material.template)[k % 4]
            (folder / f"{material.id}.py").write_text(text, encoding="utf-8")
    return dest


def _peak_kib(course: Path, copies: Path, results: Path) -> int:
    done = subprocess.run([sys.executable, "-c", GRADE, "grade", str(copies), "--resultats", str(results),
                           "--parallele", "2"], cwd=course, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    line = next(x for x in done.stderr.splitlines() if x.startswith("PEAK "))
    return int(line.split()[1]) // 1024


def test_the_teacher_s_peak_memory_does_not_grow_with_the_class(tmp_path):
    course = mini_course(tmp_path / "cours", EXERCISES)
    small = _class(course, tmp_path / "petite", SMALL)
    large = _class(course, tmp_path / "grande", LARGE)
    peaks = {n: _peak_kib(course, copies, tmp_path / f"resultats-{n}")
             for n, copies in ((SMALL, small), (LARGE, large))}
    assert len(list((tmp_path / f"resultats-{LARGE}" / "results").glob("*.json"))) == LARGE
    per_copy = (peaks[LARGE] - peaks[SMALL]) / (LARGE - SMALL)
    assert per_copy < BOUND_KIB, f"{per_copy:.1f} KiB de plus par copie ({peaks})"


def _loaded(source, course: Course):
    """The intake of `source`, and the bytes still allocated once it is read."""
    tracemalloc.start()
    try:
        found = kinds.load(source, course)
        return found, tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_the_intake_holds_none_of_the_copies_bytes(tmp_path):
    """Reading a class chooses each copy's files and knows their digests, but keeps none of their
    bytes: they are read again when the copy is graded. Here 40 copies of 3 files of 100 KB (12 MB):
    before, all of it stayed in memory until each copy was graded."""
    course = Course.load(mini_course(tmp_path / "cours", EXERCISES))
    copies = tmp_path / "copies"
    for k in range(40):
        for exercise in EXERCISES:
            path = copies / f"eleve{k:02d}" / "exercises" / f"{exercise}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"# " + bytes([97 + k % 26]) * 100_000 + b"\nx = 1\n")
    found, held = _loaded(copies, course)
    assert len(found.submissions) == 40 and len({s.digest for s in found.submissions}) == 26
    assert held < 2 * 1024 * 1024, f"{held // 1024} Kio gardés après la lecture des copies"
    assert found.submissions[3].files[EXERCISES[0]].startswith(b"# ddd")


def test_a_folder_of_zipped_copies_holds_one_archive_at_a_time(tmp_path):
    """A student's own .zip is read whole into memory to be opened: it is opened when its copy is
    submitted, then dropped. Here 30 archives of 1 MB: before, every one was read when the folder was
    listed and all stayed in memory until the last copy was submitted (a peak of 30 MB)."""
    course = Course.load(mini_course(tmp_path / "cours", EXERCISES))
    copies = tmp_path / "copies"
    copies.mkdir()
    for k in range(30):
        data = zip_of({f"exercises/{EXERCISES[0]}.py": b"x = 1\n", "donnees.bin": os.urandom(1_000_000)})
        (copies / f"eleve{k:02d}.zip").write_bytes(data)
    kinds.load(copies, course)  # once before measuring: what it imports and caches once is not the class
    tracemalloc.start()
    try:
        found = kinds.load(copies, course)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(found.submissions) == 30 and all(s.files[EXERCISES[0]] == b"x = 1\n" for s in found.submissions)
    assert peak < 8 * 1024 * 1024, f"pic de {peak // 1024} Kio pour 30 archives de 1 Mo"


def test_the_nbgrader_intake_holds_none_of_the_notebooks(tmp_path):
    """The same for nbgrader's submitted/: each notebook is read once to know the exercise text it gives
    and its digest, then read again when graded. Here 40 students whose answer cells hold 100 KB each,
    3 notebooks apiece (12 MB of exercise texts): before, all of it stayed in memory."""
    pytest.importorskip("nbgrader")
    from trous.publish.nbgrader.notebooks import notebook_bytes, source_notebook

    course = Course.load(mini_course(tmp_path / "cours", EXERCISES))
    root = tmp_path / "cours-nbgrader"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    for exercise in course.exercises:
        nb = source_notebook(exercise)
        answer = next(c for c in nb.cells if nbgrader_meta(c).get("solution"))
        given = answer.source
        for k in range(40):
            answer.source = "# " + chr(97 + k % 26) * 100_000 + "\n" + given
            path = root / "submitted" / f"eleve{k:02d}" / exercise.assignment.id / f"{exercise.id}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(notebook_bytes(nb))
    kinds.load(root, course)  # once before measuring: what it imports and caches once is not the class
    found, held = _loaded(root, course)
    assert len(found.submissions) == 40 and len({s.digest for s in found.submissions}) == 26
    assert held < 2 * 1024 * 1024, f"{held // 1024} Kio gardés après la lecture des copies"
    assert b"# ddd" in found.submissions[3].files[EXERCISES[0]]


def _held_by_nbgrader_sink(course: Course, n: int) -> int:
    """Bytes still allocated once an nbgrader sink (no writing process) has consumed n grades, made
    one at a time as the grading loop hands them: what the sink keeps of them."""
    from trous.core.grades import PASSED, BlankGrade, ExerciseGrade, SubmissionGrade
    from trous.outputs import writing

    def grade(k: int) -> SubmissionGrade:
        exercises = [ExerciseGrade(e.id, e.title, e.points, e.points, "blanks",
                                   [BlankGrade(b.id, i + 1, b.points, b.points, PASSED, "juste " * 20)
                                    for i, b in enumerate(e.blanks)]) for e in course.exercises]
        return SubmissionGrade(f"eleve{k:05d}", course.id, "v", exercises)

    sink = writing.GradebookSink(Path("."), course, None, None, [])
    sink.consume(grade(-1))  # what the first grade builds once (the course's tables) is not the class
    tracemalloc.start()
    try:
        for k in range(n):
            sink.consume(grade(k))
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_the_nbgrader_sink_keeps_no_grade(tmp_path):
    """The sink that writes nbgrader's gradebook reads the grades back from trous's gradebook when it
    settles: consuming four times as many grades holds no more. Before, it kept every grade it got
    (a few KiB each) until the end of the run."""
    course = Course.load(mini_course(tmp_path / "cours", EXERCISES))
    small, large = (_held_by_nbgrader_sink(course, n) for n in (SMALL, 4 * SMALL))
    assert large - small < 3 * SMALL * 64, f"{(large - small) // (3 * SMALL)} octets de plus par note ({small}, {large})"
