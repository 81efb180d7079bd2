"""Grading on a Dask cluster: a real `distributed.LocalCluster` (separate worker processes) grades a
generated class; its results must equal a local run's, even when a worker is killed in the middle."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="Dask n'est pas installé (extra trous[distributed])")

from trous.core import Course  # noqa: E402
from trous.grade import dask as dist  # noqa: E402
from trous.outputs.run import GradeOptions, Hooks, grade_class  # noqa: E402
from gradebook_support import Gradebook  # noqa: E402
from trous.outputs.gradebook import default_url  # noqa: E402
from trous.inputs.intake import IntakeError  # noqa: E402
from trous.inputs.kinds import load  # noqa: E402

from grading_support import gradebook_counts, make_classe, mini_course, run_trous  # noqa: E402

EXERCISES = ("01_toux", "02_places", "03_masque")
N_STUDENTS = 24


@pytest.fixture(scope="module")
def classe(tmp_path_factory):
    """A three-exercise course and a class of every kind of copy: right, partial, wrong, unfilled,
    a missing file, a syntax error. Each student's fills are written their own way (in 1, 2, 3…
    pairs of brackets): the engine runs a fill another student wrote only once, and a class of
    identical copies would be graded too fast to kill a worker in the middle."""
    base = tmp_path_factory.mktemp("dask")
    course_dir = mini_course(base / "cours", EXERCISES)
    generator = make_classe()
    materials = generator.load_materials(Course.load(course_dir))

    def variants(m, depth):
        def own(fill):
            return "(" * depth + fill + ")" * depth

        perfect = m.fill({i: own(a) for i, a in enumerate(m.answers)})
        return [perfect, m.fill({0: own(m.answers[0])}),
                m.fill({i: own(generator.wrong(a, i)) for i, a in enumerate(m.answers)}), m.template, None,
                perfect + '\nprint("fini"\n']

    copies = base / "copies"
    for i in range(N_STUDENTS):
        folder = copies / f"eleve{i:02d}" / "exercises"
        folder.mkdir(parents=True)
        for j, material in enumerate(materials):
            text = variants(material, 1 + i // 6)[(i + j) % 6]
            if text is not None:
                (folder / f"{material.id}.py").write_text(text + f"\n# copie {i}\n", encoding="utf-8")
    return course_dir, copies


@pytest.fixture(scope="module")
def local_run(classe, tmp_path_factory):
    course_dir, copies = classe
    results = tmp_path_factory.mktemp("local") / "res"
    outcome = grade_class(Course.load(course_dir), GradeOptions(copies, results, workers=2))
    return outcome, results


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=logging.ERROR) as local_cluster:
        yield local_cluster


def results_of(results: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((results / "results").glob("*.json"))}


# -- the course archive -----------------------------------------------------------------------------
def test_course_archive_is_deterministic_and_carries_the_grader_version(classe, tmp_path):
    course_dir, _ = classe
    course = Course.load(course_dir)
    archive = dist.pack(course)
    assert dist.pack(Course.load(course_dir)).data == archive.data  # same course, same bytes, same key
    with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
        names = set(tar.getnames())
    expected = {"course.yaml"} | {f"{d}/{p}{e}.py" for e in EXERCISES
                                  for d, p in (("exercises", ""), ("exercises", "test_"), ("solutions", ""),
                                               ("graders", "test_"))}
    assert names == expected
    dist.unpack(archive.data, tmp_path / "recu")
    assert dist.fingerprint(Course.load(tmp_path / "recu")) == archive.version

    changed = tmp_path / "cours-modifie"
    mini_course(changed, EXERCISES)
    grader = changed / "graders" / "test_02_places.py"
    grader.write_text(grader.read_text(encoding="utf-8") + "\n# une ligne de plus\n", encoding="utf-8")
    other = dist.pack(Course.load(changed))
    assert other.version != archive.version and other.key != archive.key


@pytest.mark.parametrize("entry", ["../dehors.py", "/etc/cron.d/x", "lien"])
def test_unpack_refuses_entries_outside_the_course(tmp_path, entry):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo(entry)
        if entry == "lien":
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
        else:
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(dist.DistributedError, match="refusée"):
        dist.unpack(buffer.getvalue(), tmp_path / "cours")
    assert not (tmp_path / "dehors.py").exists()


def test_a_worker_refuses_a_course_of_another_grader_version(classe, cluster):
    course_dir, copies = classe
    course = Course.load(course_dir)
    archive = dist.pack(course)
    submission = load(copies, course).submissions[0]
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        future = client.submit(dist.grade_task, archive.data, "0" * 64, "auto", submission.student,
                               submission.files, pure=False)
        with pytest.raises(dist.DistributedError, match="même version des correcteurs"):
            future.result(timeout=120)


def _test_workers() -> set[int]:
    """This process's children that run graders' test functions (trous.grade.testworker)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            ppid = int(next(l for l in status.read_text().splitlines() if l.startswith("PPid:")).split()[1])
            cmdline = (status.parent / "cmdline").read_bytes()
        except (OSError, StopIteration, ValueError):
            continue
        if ppid == os.getpid() and b"trous.grade.testworker" in cmdline:
            found.add(int(status.parent.name))
    return found


def test_a_closed_course_stops_its_test_workers(classe):
    """A worker's course is closed when evicted or at exit: the graders' test processes go with it."""
    course_dir, _ = classe
    archive = dist.pack(Course.load(course_dir))
    before = _test_workers()
    ready = dist.Prepared(archive.data, archive.version, "auto")  # the references run the test functions
    try:
        started = _test_workers() - before
        assert started, "the references should have started a test worker"
    finally:
        ready.close()
    for _ in range(100):
        if not started & _test_workers():
            break
        time.sleep(0.05)
    assert not started & _test_workers()
    assert not ready.folder.exists()


def test_grades_of_another_version_are_refused(classe):
    """What comes back is checked too: a grade given by another version of the graders never reaches
    the gradebook."""
    course_dir, copies = classe
    course = Course.load(course_dir)
    archive = dist.pack(course)
    submission = load(copies, course).submissions[0]
    with pytest.raises(dist.DistributedError, match="autre version"):
        dist.check({"grade": {"student": submission.student, "course": course.id, "grader_version": "f" * 64,
                              "exercises": []}}, submission, archive)


# -- real runs ----------------------------------------------------------------------------------------
def test_trous_grade_on_a_cluster_gives_the_local_results(classe, local_run, cluster, tmp_path):
    course_dir, copies = classe
    outcome, local_results = local_run
    statuses = {b.status for g in outcome.grades for e in g.exercises for b in e.blanks}
    assert {"passed", "failed", "unfilled", "missing", "error"} <= statuses  # a varied class
    results = tmp_path / "grappe"
    done = run_trous("-C", str(course_dir), "grade", str(copies), "--resultats", str(results),
                     "--scheduler", cluster.scheduler_address, cwd=course_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{N_STUDENTS} à corriger" in done.stdout
    assert ("bubblewrap" in done.stdout) == (outcome.sandbox == "bwrap")  # the workers' sandbox is shown
    assert results_of(results) == results_of(local_results)
    assert (results / "grades.csv").read_bytes() == (local_results / "grades.csv").read_bytes()
    counts = gradebook_counts(results / "gradebook.db")
    assert counts["gradings"] == counts["current_grades"] == N_STUDENTS


def test_a_worker_killed_mid_task_loses_and_duplicates_nothing(classe, local_run, cluster, tmp_path):
    course_dir, copies = classe
    outcome_local, local_results = local_run
    course = Course.load(course_dir)
    archive = dist.pack(course)
    keys = {dist.task_key(s, archive, "auto"): s.student for s in load(copies, course).submissions}
    killed: dict = {}
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)

        def graded(grade) -> None:
            seen.append(grade.student)
            if killed or len(seen) < 2:
                return
            busy = {worker: [k for k in tasks if k in keys] for worker, tasks in client.processing().items()}
            victim = next((w for w, tasks in busy.items() if tasks), None)
            if victim is not None:  # else at the next copy
                os.kill(pids[victim], signal.SIGKILL)
                killed.update(worker=victim, pid=pids[victim], students=[keys[k] for k in busy[victim]])

        seen: list[str] = []
        results = tmp_path / "grappe-tuee"
        options = GradeOptions(copies, results, scheduler="dask", address=cluster.scheduler_address)
        outcome = grade_class(course, options, Hooks(graded=graded))

        assert killed, "la correction a fini avant qu'un travailleur soit tué"
        assert killed["pid"] not in client.run(os.getpid).values()  # it really died (the nanny made another)
    assert killed["students"]
    # The copies the dead worker was grading were graded again elsewhere, and recorded once each.
    assert sorted(outcome.graded) == sorted(keys.values())
    assert all(outcome.graded.count(s) == 1 for s in killed["students"])
    assert outcome.sandbox == outcome_local.sandbox
    assert results_of(results) == results_of(local_results)
    assert (results / "grades.csv").read_bytes() == (local_results / "grades.csv").read_bytes()
    with Gradebook(default_url(results)) as book:
        assert {s: g.to_json() for s, g in book.current().items()} == \
               {g.student: g.to_json() for g in outcome_local.grades}
    counts = gradebook_counts(results / "gradebook.db")
    assert counts["gradings"] == counts["current_grades"] == N_STUDENTS  # nobody graded twice


def test_a_cluster_that_refuses_the_course_stops_the_run(classe, cluster, monkeypatch, tmp_path):
    """Workers given a course whose fingerprint is not the one announced refuse it: the run stops with
    the reason, and nothing is recorded."""
    course_dir, copies = classe
    real_pack = dist.pack
    monkeypatch.setattr(dist, "pack", lambda course: dist.CourseArchive("e" * 64, real_pack(course).data))
    options = GradeOptions(copies, tmp_path / "res", scheduler="dask", address=cluster.scheduler_address)
    with pytest.raises(dist.DistributedError, match="même version des correcteurs"):
        grade_class(Course.load(course_dir), options)
    assert gradebook_counts(tmp_path / "res" / "gradebook.db")["gradings"] == 0


# -- without Dask ---------------------------------------------------------------------------------
BLOCK_DASK = ("import sys\n"
              "for name in ('dask', 'distributed'):\n"
              "    sys.modules[name] = None  # as if not installed: importing it raises ImportError\n")


def test_trous_works_without_dask_and_says_how_to_get_it(classe):
    course_dir, copies = classe
    code = BLOCK_DASK + (
        "import trous.grade.dask, trous.outputs.run\n"
        "from trous.cli import main\n"
        f"sys.exit(main(['-C', {str(course_dir)!r}, 'grade', {str(copies)!r}, '--scheduler', 'tcp://127.0.0.1:1']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Dask n'est pas installé" in done.stdout and "trous[distributed]" in done.stdout


def test_an_unreachable_scheduler_is_a_clear_error(classe, monkeypatch, tmp_path):
    course_dir, copies = classe
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(dist, "TIMEOUT", 3.0)
    options = GradeOptions(copies, tmp_path / "res", scheduler="dask", address=f"tcp://127.0.0.1:{port}")
    # Said as any other problem of the input, before any grade is written.
    with pytest.raises(IntakeError, match=f"impossible de joindre l'ordonnanceur Dask tcp://127.0.0.1:{port}"):
        grade_class(Course.load(course_dir), options)
    assert not (tmp_path / "res" / "grades.csv").exists()


def test_a_forged_copy_on_a_cluster_costs_only_itself(cluster, tmp_path):
    # Issue 20: through Dask as locally, a copy that forges its answers and one on which a graders'
    # test computes without end are graded among honest copies; the run ends with every grade.
    root = mini_course(tmp_path / "cours", ("01_toux",))
    grader = root / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + '''

import pytest


@pytest.mark.trou("scores")
def test_qui_calcule_sans_fin(eleve):
    """les scores"""
    scores = eleve("scores")
    while scores[0] > 100:
        pass
    assert len(scores) == 3
''', encoding="utf-8")
    course = Course.load(root)
    exercise = course.exercise("01_toux")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    generator = make_classe()
    material = next(m for m in generator.load_materials(course) if m.id == "01_toux")
    child = "__import__('sys').modules['trous.sandbox.child'].__dict__"
    copies = {
        "honnete": solution,
        "debutant": material.template,
        "bombe": material.with_blank(0, f"({child}.__setitem__('_probe', lambda setup, expr, ns, limit: "
                                        "{'value': [{'$nd': {'k': 'O', 's': [10_000_000], 'v': []}}] * 150}), sum(e))[1]"),
        "grands_scores": material.with_blank(1, "1000 + sum(a * b for a, b in zip(t, toux))"),
    }
    for name, text in copies.items():
        (tmp_path / "classe" / name / "exercises").mkdir(parents=True)
        (tmp_path / "classe" / name / "exercises" / "01_toux.py").write_text(text, encoding="utf-8")
    options = GradeOptions(tmp_path / "classe", tmp_path / "res", scheduler="dask", address=cluster.scheduler_address)
    outcome = grade_class(course, options)
    grades = {g.student: g for g in outcome.grades}
    assert set(grades) == set(copies) and (tmp_path / "res" / "grades.csv").exists()
    assert grades["honnete"].score == grades["honnete"].max_score and grades["debutant"].score == 0
    somme = grades["bombe"].exercise("01_toux").blanks[0]
    assert somme.score == 0 and "tableau annoncé de plus de 400 000 éléments" in somme.message, somme.message
    assert any("test_qui_calcule_sans_fin" in i and "grands_scores" in i for i in outcome.incidents), outcome.incidents
