"""Issue 20 §1: what comes out of a sandbox is read under the copy's bounds, wherever it is read.

The child's and the supervisor's own checks are bypassed: a sandbox that lies (forged_sandbox.py)
answers the grader's runner and sessions with bytes of the test's choosing, and a test worker is
handed forged answers directly. Every forgery must end as that probe's or that unit's error with a
French reason, quickly, without the receiving process growing, and the next job must be served.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from trous.sandbox.pool import STUCK, Runner
from trous.core.protocol import CRASH, OK, TIMEOUT, Job, Limits, Probe, ProbeResult, Unit, UnitResult
from trous.sandbox.backend import SandboxSpec
from trous.core.wire import Bounds, WireError, check
from trous.core.judge import describe_error

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHAPE_BOMB = [{"$nd": {"k": "O", "s": [10_000_000], "v": []}}] * 150  # the answer: 6 KB on the wire


def peak_rss_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM to the current RSS
        f.write("5")


def forged_runner(tmp_path: Path, lines: list[bytes], endless: bool = False, hang_once: bool = False,
                  freeze: bool = False) -> Runner:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"lines": [base64.b64encode(x).decode() for x in lines], "endless": endless,
                                  "hang_once": str(tmp_path / "hung") if hang_once else None, "freeze": freeze}))
    runner = Runner("fallback")
    runner.spec = SandboxSpec("faux", [sys.executable, str(HERE / "forged_sandbox.py"), str(script)],
                              dict(os.environ))
    return runner


def unit_line(result: dict, i: int = 0) -> bytes:
    return json.dumps({"i": i, "result": result}).encode()


def probe_of(value) -> dict:
    return {"status": "ok", "error": None, "probes": [{"value": value}], "output": "", "seconds": 0.01}


JOB = Job((Unit("x = 1", "exercises/copie.py", (Probe("x"),), state=()),), Limits(wall=2))


def run_forged(tmp_path: Path, lines: list[bytes], endless: bool = False) -> tuple[UnitResult, float, float]:
    runner = forged_runner(tmp_path, lines, endless)
    try:
        reset_peak()
        before = peak_rss_mib()
        started = time.monotonic()
        result = runner.run(JOB)[0]
        return result, time.monotonic() - started, peak_rss_mib() - before
    finally:
        runner.close()


# -- values that parse, but that no encoder within bounds writes: that probe's error ------------------
VALUES = {
    "the issue's shape bomb": (SHAPE_BOMB, "invalid", "tableau annoncé de plus de 400 000 éléments"),
    "a shape that is not its values": ({"$nd": {"k": "f", "s": [3, 3], "v": [1.0, 2.0, 3.0]}}, "invalid",
                                       "forme ne correspond pas"),
    "numbers that are not numbers": ({"$nd": {"k": "f", "s": [2], "v": ["a", "b"]}}, "invalid", "autre chose que des nombres"),
    "an unknown element kind": ({"$nd": {"k": "Z", "s": [1], "v": [1]}}, "invalid", "type d'éléments inconnu"),
    "a shape that is no shape": ({"$nd": {"k": "f", "s": [-1], "v": []}}, "invalid", "forme illisible"),
    "a summary outside a state": ({"$nd": {"k": "f", "s": [5000], "sum": {"n": 5000}}}, "invalid", "résumé"),
    "deep nesting": (json.loads("[" * 300 + "]" * 300), "invalid", "imbriquée"),
    "a huge text": ("x" * 3_000_000, "invalid", "texte de plus de 20 001 caractères"),
    "too many items": ([0] * 500_000, "invalid", "plus de 400 000 éléments"),
    "a tag that lies": ({"$float": "1e308"}, "invalid", "nombre étiqueté"),
    "a complex that is not one": ({"$complex": [1, "a"]}, "invalid", "complexe"),
    "a missing mark outside a state": ({"$missing": True}, "invalid", "étiquetée"),
}


@pytest.mark.parametrize("case", list(VALUES), ids=list(VALUES))
def test_a_forged_value_is_that_probes_error(tmp_path, case):
    value, kind, said = VALUES[case]
    result, seconds, grown = run_forged(tmp_path, [unit_line(probe_of(value))])
    assert result.status == OK  # the unit itself ran: only the value is refused
    probe = result.probes[0]
    assert probe.value is None and probe.error is not None and probe.error.kind == kind, probe
    assert said in probe.error.message, probe.error.message
    assert seconds < 10 and grown < 150, (seconds, grown)
    text = describe_error(probe.error, message=False)  # what a student reads, even on hidden inputs
    assert said in text and "10000000" not in text and "xxxx" not in text, text


def test_lines_that_no_supervisor_writes_lose_the_unit_not_the_grader(tmp_path):
    cases = {
        "UTF-8 invalide": b'{"i": 0, "result": {"status": "ok", "probes": [{"value": "\xff\xfe"}]}}',
        "NaN ou infini": b'{"i": 0, "result": {"status": "ok", "probes": [{"value": NaN}]}}',
        "JSON invalide": b'{"i": 0, "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    }
    for said, line in cases.items():
        result, seconds, _ = run_forged(tmp_path, [line])
        assert result.status == CRASH and result.error.kind == "protocol", (said, result)
        assert "perturbé le correcteur" in result.error.message and said in result.error.message, result.error.message
        assert seconds < 10


def test_an_endless_line_is_cut_off_while_it_is_read(tmp_path):
    result, seconds, grown = run_forged(tmp_path, [], endless=True)
    assert result.status == CRASH and "réponse de plus de" in result.error.message, result
    assert seconds < 20 and grown < 150, (seconds, grown)


def test_text_that_is_not_text_and_numbers_that_are_infinite(tmp_path):
    # Parsed by json, yet not what an encoder writes: a lone UTF-16 half, a number past float's range.
    line = b'{"i": 0, "result": {"status": "ok", "probes": [{"value": "\\ud800"}, {"value": 1e999}]}}'
    runner = forged_runner(tmp_path, [line])
    try:
        result = runner.run(Job((Unit("x = 1", "copie.py", (Probe("a"), Probe("b"))),), Limits(wall=2)))[0]
    finally:
        runner.close()
    texts = [p.error.message for p in result.probes]
    assert "UTF-16 isolé" in texts[0] and "infini" in texts[1], texts


def test_wrong_types_everywhere_are_read_as_nothing(tmp_path):
    line = unit_line({"status": 7, "error": [1, 2], "probes": "abc", "output": {"a": 1}, "seconds": "9",
                      "state": {"$nd": {"k": "O", "s": [10_000_000], "v": []}}})
    result, _, _ = run_forged(tmp_path, [line])
    assert result.status == CRASH and result.error is None and not result.probes[0].evaluated
    assert result.output == "" and result.seconds == 0.0
    assert "$error" in result.state and "variables du programme refusées" in result.state["$error"]["message"]


def test_a_forged_state_is_the_states_error_and_a_true_summary_passes(tmp_path):
    summary = {"$nd": {"k": "f", "s": [1000, 1000], "sum": {"n": 1_000_000, "total": 1.0, "abs": 1.0, "sq": 1.0,
                                                           "min": 0.0, "max": {"$float": "inf"}, "at": [0, 999_999],
                                                           "sample": [0.0, 1.0]}}}
    honest = unit_line({**probe_of(1), "state": {"q": summary, "n": 3, "absent": {"$missing": True}}})
    forged = unit_line({**probe_of(1), "state": {"q": {"$nd": {"k": "f", "s": [2], "v": [[1, 2], [3, 4]]}}}})
    runner = forged_runner(tmp_path, [honest])
    try:
        result = runner.run(JOB)[0]
    finally:
        runner.close()
    assert result.state["q"] == summary and result.state["n"] == 3
    result, _, _ = run_forged(tmp_path, [forged])
    assert list(result.state) == ["$error"], result.state


def test_a_runner_that_lied_is_replaced_for_the_next_job(tmp_path):
    runner = forged_runner(tmp_path, [b"\xff" * 10])
    try:
        first = runner.run(JOB)[0]
        assert first.status == CRASH
        assert runner.restarts >= 1  # the sandbox that lied was stopped, not asked again
    finally:
        runner.close()


def test_a_stuck_runner_costs_the_unit_in_progress_only(tmp_path):
    # The first runner freezes: the unit it was running is a timeout; the next unit never ran, so
    # it is run again in a fresh runner (it was once blamed too, as « processus de supervision tué »).
    job = Job((Unit("x = 1", "exercises/a.py", (Probe("x"),)), Unit("x = 1", "exercises/b.py", (Probe("x"),))),
              Limits(wall=0.1))
    runner = forged_runner(tmp_path, [unit_line(probe_of(1))], hang_once=True)
    try:
        stuck, second = runner.run(job)
    finally:
        runner.close()
    assert stuck.status == TIMEOUT and "redémarré" in stuck.error.message, stuck
    assert second.status == OK and second.probes[0].value == 1, second


# -- sessions: the answers a graders' test function gets --------------------------------------------
def test_a_session_answer_is_read_under_the_same_bounds(tmp_path):
    answers = [json.dumps({"status": "ok", "error": None, "probes": [{"value": SHAPE_BOMB}]}).encode(),
               json.dumps({"status": "ok", "error": None, "probes": [{"value": [1.0, 2.0]}]}).encode(),
               b"\xff"]
    runner = forged_runner(tmp_path, answers)
    try:
        with runner.session(Unit("x = 1", "copie.py"), Limits(wall=2)) as session:
            bomb, fine, garbled = session.ask("a"), session.ask("b"), session.ask("c")
    finally:
        runner.close()
    assert bomb.probes[0].error.kind == "invalid" and "annoncé" in bomb.probes[0].error.message
    assert fine.probes[0].value == [1.0, 2.0]
    assert garbled.status == CRASH and "UTF-8 invalide" in garbled.error.message


def test_an_endless_session_answer_is_cut_off(tmp_path):
    runner = forged_runner(tmp_path, [b""], endless=True)
    try:
        reset_peak()
        before = peak_rss_mib()
        with runner.session(Unit("x = 1", "copie.py"), Limits(wall=2)) as session:
            answer = session.ask("a")
        grown = peak_rss_mib() - before
    finally:
        runner.close()
    assert answer.status == CRASH and "réponse de plus de" in answer.error.message, answer
    assert grown < 150, grown


def test_a_question_to_a_frozen_supervisor_comes_back_as_a_timeout(tmp_path):
    """A copy that stops its supervisor (SIGSTOP) between two questions: the next question, larger
    than a pipe holds (a test's variables), is written within a deadline, never blocking the grading
    thread for good."""
    answer = json.dumps({"status": "ok", "error": None, "probes": [{"value": 1}]}).encode()
    runner = forged_runner(tmp_path, [answer], freeze=True)
    got: list = []

    def ask() -> None:
        with runner.session(Unit("x = 1", "copie.py"), Limits(wall=1)) as session:
            got.append(session.ask("x"))
            got.append(session.ask("len(x)", overrides=(("x", "[" + "1, " * 200_000 + "]"),)))

    thread = threading.Thread(target=ask, daemon=True)
    try:
        thread.start()
        thread.join(timeout=90)
        assert not thread.is_alive(), "la question attend sans fin un superviseur arrêté"
    finally:
        runner.close()
    assert got[0].probes[0].value == 1
    assert got[1].status == TIMEOUT and got[1].error.message == STUCK, got[1]


# -- the test worker: a teacher's process, outside the sandbox ----------------------------------------
def _worker_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def test_the_test_worker_reads_forged_answers_under_bounds():
    from trous.grade.testworker import Worker

    grader = ROOT / "graders" / "test_01_toux.py"
    worker = Worker(ROOT, [grader], memory_mb=512)
    try:
        nodeid = next(item["nodeid"] for item in worker.items if "gardent_l_ordre" in item["nodeid"])
        forged = {
            "shape bomb": SHAPE_BOMB,
            "deep": json.loads("[" * 300 + "]" * 300),
            "lie": {"$nd": {"k": "O", "s": [4, 4], "v": [[1]]}},
        }
        for name, value in forged.items():
            # Built directly, as no sandbox reading would have let it through: the worker reads it again.
            answer = UnitResult(OK, probes=(ProbeResult(value=value),))
            started = time.monotonic()
            done = worker.run(nodeid, lambda expr, overrides: answer, patience=60, cpu=30)
            assert time.monotonic() - started < 10, name
            assert done["outcome"] == "failed" and done["cause"] in ("stopped", "reading"), (name, done)
        assert worker.alive
        assert _worker_rss_mib(worker.process.pid) < 300
    finally:
        worker.close()


# -- the checker itself -------------------------------------------------------------------------------
def test_what_an_encoder_writes_within_bounds_passes():
    import numpy as np

    from trous.core.encode import encode, state

    values = [np.arange(12.0).reshape(3, 4), np.array([[1, "a"], [None, 2.5]], dtype=object), np.float64("nan"),
              [1, 2.5, "t", None, True], {"a": [1, {"b": (2, 3)}]}, 3 + 4j, np.zeros((0, 5)), np.array(7),
              {"$nd": "a student's own dict"}, np.arange(199_000)]
    for value in values:
        check(encode(value), Bounds())
    check(state({"q": np.ones((40, 5, 1024)), "n": 3}, ()), Bounds(), state=True)
    with pytest.raises(WireError):
        check(encode(np.arange(199_000)), Bounds(items=1000))


def test_the_decoders_rebuild_from_the_values_never_from_the_claimed_shape():
    # The 40 bytes: 9.2 GiB and 48 s of CPU when rebuilt element by element from the shape.
    from trous.core.compare import decode
    from trous.grade.eleve import Unknown, as_value

    answer = {"$nd": {"k": "O", "s": [10_000_000], "v": []}}
    reset_peak()
    before = peak_rss_mib()
    started = time.process_time()
    assert isinstance(as_value(answer), Unknown)
    assert isinstance(as_value({"$nd": {"k": "O", "s": [2, 2], "v": [[1, 2], [3]]}}), Unknown)
    assert as_value({"$nd": {"k": "O", "s": [2, 2], "v": [[1, "a"], [None, 2.5]]}}).tolist() == [[1, "a"], [None, 2.5]]
    decode(answer, arrays=True)  # the comparison keeps the shape as data, and builds nothing from it
    assert time.process_time() - started < 2 and peak_rss_mib() - before < 50


def test_no_forgery_of_any_shape_escapes_as_an_exception():
    # Random data built from the tags' own pieces: whatever it is, the reading ends in a value or an
    # error of that probe, and what it lets through the decoders rebuild without an exception.
    import random

    from trous.core.compare import decode
    from trous.grade.eleve import as_value

    rng = random.Random(20)
    tags = ["$nd", "$float", "$type", "$complex", "$missing", "$error", "k", "s", "v", "sum", "n", "at", "sample"]

    def anything(depth: int):
        roll = rng.random()
        if depth > 4 or roll < 0.3:
            return rng.choice([0, -1, 2**70, 1.5, 1e308, True, None, "", "nan", "inf", "O", "f", "x" * 30, [],
                               {}, 10_000_000])
        if roll < 0.55:
            return [anything(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(tags): anything(depth + 1) for _ in range(rng.randrange(1, 4))}

    let_through = 0
    for _ in range(3000):
        data = {"status": "ok", "probes": [{"value": anything(0)}], "state": {"x": anything(0)}}
        result = UnitResult.from_json(data, 1, bounds=Bounds())
        probe = result.probes[0]
        if probe.error is None:
            let_through += 1
            as_value(probe.value)
            decode(probe.value, arrays=True)
        if "$error" not in (result.state or {}):
            decode(result.state, arrays=True)
    assert let_through > 100  # plain data does pass
