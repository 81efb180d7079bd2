"""The engine's one memo: what another copy already ran is not run again, nor what another thread is
running (single flight); it stays within its bytes, the least recently used going first; what may end
otherwise when run again (a timeout) is never kept.

The memo on its own, then a class of identical copies graded for real across two runners, where
every program must reach the sandbox once and every grade be the one a copy gets alone.
"""

from __future__ import annotations

import threading
from pathlib import Path

from grading_support import mini_course
from trous.core import Course
from trous.grade.engine import Grader, Memo
from trous.sandbox.pool import RunnerPool


def test_the_memo_keeps_within_its_bytes_dropping_the_least_recently_used():
    memo = Memo(800)
    for key in "abcd":
        memo.put(key, key.upper(), 100)  # 100 bytes each: under an eighth of the budget
    assert memo.get("a") == "A"  # now the most recently used
    for key in "efghi":
        memo.put(key, key.upper(), 100)  # 900 bytes in all: one must go, the oldest unused (b)
    assert memo.get("b") is None
    assert [memo.get(k) for k in "acdefghi"] == list("ACDEFGHI")
    memo.put("big", "X", 101)  # over an eighth of the budget: would push out too much, not kept
    assert memo.get("big") is None


def test_what_is_not_to_be_kept_is_computed_again():
    memo, calls = Memo(1 << 20), []
    for _ in range(2):
        assert memo.get("boucle", lambda: (calls.append(1) or "timeout", None)) == "timeout"
    assert len(calls) == 2


def test_a_second_thread_waits_for_what_the_first_is_computing():
    memo, calls = Memo(1 << 20), []
    entered, release = threading.Event(), threading.Event()

    def compute():
        calls.append(threading.current_thread().name)
        entered.set()
        release.wait(10)
        return "résultat", 10

    got: list[str] = []
    first = threading.Thread(target=lambda: got.append(memo.get("k", compute)), name="premier")
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=lambda: got.append(memo.get("k", compute)), name="second")
    second.start()
    second.join(0.3)
    assert second.is_alive()  # waiting for the first, not computing
    release.set()
    first.join(10)
    second.join(10)
    assert got == ["résultat", "résultat"] and calls == ["premier"]


def test_a_class_of_identical_copies_runs_each_program_once(tmp_path: Path):
    course = Course.load(mini_course(tmp_path / "cours", ("01_toux", "02_places")))
    files = {e.id: e.solution_path.read_bytes() for e in course.exercises}
    copies = [(f"eleve{k}", dict(files)) for k in range(6)]
    sent: list[tuple] = []
    lock = threading.Lock()
    with RunnerPool(2, mode="auto") as pool:
        original = pool.run

        def spying(job):
            with lock:
                sent.extend((u.source, u.filename, u.overrides, u.probes, u.state) for u in job.units)
            return original(job)

        pool.run = spying
        grader = Grader(course, pool)
        try:
            grader.compute_references()
            sent.clear()
            grades = list(grader.grade_many(copies))
        finally:
            grader.close()
            pool.run = original
        alone = Grader(course, pool)
        try:
            expected = alone.grade("seul", files).to_json()["exercises"]
        finally:
            alone.close()
    assert sorted(g.student for g in grades) == [s for s, _ in copies]
    assert sent and len(sent) == len(set(sent)), "un programme envoyé deux fois au bac à sable"
    for grade in grades:
        assert grade.score == grade.max_score > 0
        assert grade.to_json()["exercises"] == expected, grade.student
