"""The order a class is graded in (grade/order.py): its files run as they are first, copies that may
loop graded first, the same grades in the end.

The schedule on its own, then a small class graded for real (sandbox, references, the course's own
checks), one of whose copies loops: it must be graded among the first, no file run as it is must be
run a second time for its copy's turn, and every grade must be the one its copy gets alone.
"""

from __future__ import annotations

import threading
from pathlib import Path

import yaml

from grading_support import mini_course
from trous.core import Course
from trous.grade.engine import AS_IS, Grader
from trous.grade.order import Schedule
from trous.sandbox.pool import RunnerPool

ROOT = Path(__file__).resolve().parent.parent


def drain(schedule: Schedule) -> list[tuple[str, int]]:
    tasks = []
    while (task := schedule.next()) is not None:
        tasks.append(task)
    return tasks


def test_scans_first_then_the_copies_in_order():
    assert drain(Schedule(3)) == [("scan", 0), ("scan", 1), ("scan", 2), ("grade", 0), ("grade", 1), ("grade", 2)]
    assert drain(Schedule(2, scan=False)) == [("grade", 0), ("grade", 1)]


def test_a_suspect_copy_is_graded_before_anything_still_waiting_once_only():
    schedule = Schedule(4)
    assert [schedule.next() for _ in range(3)] == [("scan", 0), ("scan", 1), ("scan", 2)]
    schedule.suspect(2)
    assert schedule.next() == ("grade", 2)  # before the last scan
    assert schedule.next() == ("scan", 3)
    schedule.suspect(2)  # already given out: not twice
    assert drain(schedule) == [("grade", 0), ("grade", 1), ("grade", 3)]


def test_a_stopped_schedule_gives_nothing_more():
    schedule = Schedule(3)
    schedule.next()
    schedule.stop()
    assert schedule.next() is None


ENDLESS = "while True:\n    pass\n"


LOOPING = 7


def small_class(course: Course) -> list[tuple[str, dict[str, bytes]]]:
    """Eight copies of the solutions, each its own (a comment); the last loops at the top of 01_toux."""
    copies = []
    for k in range(LOOPING + 1):
        files = {}
        for exercise in course.exercises:
            text = exercise.solution_path.read_text(encoding="utf-8") + f"\n# copie {k}\n"
            if k == LOOPING and exercise.id == "01_toux":
                lines = text.split("\n")
                first_code = next(i for i, line in enumerate(lines) if line.startswith("import "))
                text = "\n".join(lines[:first_code] + [ENDLESS] + lines[first_code:])
            files[exercise.id] = text.encode("utf-8")
        copies.append((f"eleve{k}", files))
    return copies


def test_a_class_with_a_loop_grades_it_first_runs_each_file_once_and_gives_the_same_grades(tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux", "02_places"))
    data = yaml.safe_load((root / "course.yaml").read_text(encoding="utf-8"))
    for assignment in data["assignments"]:
        for exercise in assignment["exercises"]:
            exercise["timeout"] = 2  # the loop costs this, twice over: keep the test short
    (root / "course.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    course = Course.load(root)
    copies = small_class(course)

    started: list[str] = []
    as_is_runs: list[tuple[str, float | None]] = []
    lock = threading.Lock()
    with RunnerPool(2, mode="auto") as pool:
        original = pool.run

        def spying(job):
            with lock:
                as_is_runs.extend((u.source, u.wall) for u in job.units if u.process == AS_IS)
            return original(job)

        pool.run = spying
        grader = Grader(course, pool)
        grade_one = grader.grade

        def grade(student, files):
            with lock:
                started.append(student)
            return grade_one(student, files)

        scan_one = grader.scan
        suspected_after: list[int] = []  # how many grades had started when the loop was found

        def scan(files):
            suspect = scan_one(files)
            if suspect:
                with lock:
                    suspected_after.append(len(started))
            return suspect

        grader.grade, grader.scan = grade, scan
        try:
            grades = {g.student: g for g in grader.grade_many(copies)}
        finally:
            grader.close()
            pool.run = original

        alone = Grader(course, pool)  # each copy on its own, in the class's order: no scan, no reordering
        try:
            expected = {student: alone.grade(student, files) for student, files in copies}
        finally:
            alone.close()

    assert sorted(grades) == sorted(s for s, _ in copies)
    # Found by the scan, alone, and graded next: before every copy still waiting then, although it is
    # the last of the class.
    loop = f"eleve{LOOPING}"
    assert len(suspected_after) == 1, suspected_after
    assert started.index(loop) <= suspected_after[0] + 1, (started, suspected_after)
    # Every file run as it is ran once, for the scan: no copy's turn ran it again with its full wall.
    full_wall = [wall for _, wall in as_is_runs if wall == 2]
    assert not full_wall, f"{len(full_wall)} fichiers relancés tels quels"
    scanned = [source for source, wall in as_is_runs if wall != 2]
    assert len(scanned) == len(set(scanned)) == len(copies) * 2  # each file once, the looping one included
    for student, grade in grades.items():
        assert grade.to_json()["exercises"] == expected[student].to_json()["exercises"], student
    looping = grades[loop].exercise("01_toux")
    assert looping.score == 0 and any("temps dépassé" in (b.message or "") for b in looping.blanks)
    assert all(grades[s].score == grades[s].max_score for s, _ in copies if s != loop)


def test_a_file_whose_reference_is_too_slow_to_tell_a_loop_early_is_left_to_its_turn(tmp_path):
    """With a wall time under twice the scan's time, the first pass could not tell a loop from a slow
    program without costing as much as the copy's own turn: nothing is run ahead."""
    root = mini_course(tmp_path / "cours", ("01_toux",))
    data = yaml.safe_load((root / "course.yaml").read_text(encoding="utf-8"))
    for assignment in data["assignments"]:
        for exercise in assignment["exercises"]:
            exercise["timeout"] = 1  # the least a course may set
    (root / "course.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    course = Course.load(root)
    files = {"01_toux": course.exercise("01_toux").solution_path.read_bytes()}
    jobs = []
    with RunnerPool(1, mode="auto") as pool:
        original = pool.run
        pool.run = lambda job: jobs.append(job) or original(job)
        grader = Grader(course, pool)
        try:
            grader.compute_references()
            jobs.clear()
            assert grader.scan(files) is False
            assert jobs == []
            grade = grader.grade("eleve", files)  # and the copy's turn runs it, as without a scan
        finally:
            grader.close()
    assert grade.score == grade.max_score
    assert any(u.process == AS_IS for job in jobs for u in job.units)
