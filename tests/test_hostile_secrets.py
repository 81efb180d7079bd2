"""Issue 10 part 3 and issue 9 part 5: nothing hidden reaches a page, in any form.

1. What the process running student code holds: no source text, no linecache entry, no table of
   variant values, nothing on the stack above the student's frame that names another variant's
   inputs or a check not yet asked — observed from inside, by a program that looks everywhere.
2. A fill with zero knowledge (a search over everything visible in its process for text that
   could be the answer) earns nothing: 02's xp and xp2 share their reference fill, and each must
   not find the other's.
3. A hostile class graded by `trous grade`: every hidden string (grader expressions, variant inputs,
   hidden expected values, reference fills) is absent from every page, JSON and CSV written.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.core.compare import decode, format_value
from trous.core.checks import load_checks
from trous.grade.engine import Grader
from trous.sandbox.pool import Runner, RunnerPool
from trous.core.protocol import Job, Limits, Probe, Unit
from trous.sandbox.backend import bwrap_available

ROOT = Path(__file__).resolve().parent.parent
COURSE = Course.load(ROOT)
BIN = ROOT / ".venv" / "bin"
MODES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_available(), reason="bubblewrap absent")),
         "fallback"]

LOOK_EVERYWHERE = r'''
import gc, linecache, sys
def _everything():
    """Every text this process can reach from here: frames above, their locals, objects, caches."""
    seen = []
    frame = sys._getframe()
    while frame is not None:
        seen.append(frame.f_code.co_filename)
        for value in list(frame.f_locals.values()):
            try:
                seen.append(value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else repr(value))
            except Exception:
                pass
        frame = frame.f_back
    for obj in gc.get_objects():
        try:
            seen.append(repr(obj)[:20000])
        except Exception:
            pass
    seen += ["".join(lines) for _, _, lines, _ in linecache.cache.values()]
    return "\n".join(seen)
# The markers are joined only after looking, so that the search never finds itself.
_parts = (("SECRET-", "VARIANTE"), ("SECRET-", "SONDE"), ("SECRET-", "TEXTE"))
_text = _everything()
trouve = [a + b for a, b in _parts if a + b in _text]
del _text
'''


@pytest.mark.parametrize("mode", MODES)
def test_the_process_holds_nothing_it_was_not_asked_to_run(mode):
    program = LOOK_EVERYWHERE + "x = 1  # SECRET-TEXTE dans un commentaire\n"
    units = (
        # First unit: looks at module time, then a probe looks again; a second probe comes later.
        Unit(program, "exercises/espion.py", (Probe("trouve"), Probe("[a + b for a, b in _parts if a + b in _everything()]"),
                                              Probe("'SECRET-' 'SONDE'"), Probe("sorted(globals())"),
                                              Probe("list(linecache.cache)")),
             process="p", group="g"),
        # Another variant of the same group, in the same process: its inputs are hidden from the first.
        Unit(program, "exercises/espion.py", (Probe("x"), Probe("trouve")), overrides=(("x", "'SECRET-VARIANTE'"),),
             process="p", group="g"),
    )
    with Runner(mode) as runner:
        first, second = runner.run(Job(units, Limits(wall=10)))
    assert first.status == "ok", first.error
    values = [p.value for p in first.probes]
    assert values[0] == [], f"seen at module time: {values[0]}"
    assert values[1] == [], f"seen while a probe runs: {values[1]}"
    assert values[2] == "SECRET-SONDE"  # the probes did run
    assert "__trous_ov__" not in values[3] and "__trous_override__" not in values[3]
    assert "exercises/espion.py" not in values[4], "no linecache entry for the program"
    assert second.probes[0].value == "SECRET-VARIANTE"  # the override reached its own unit only
    # Its own input is its to see; the comment and the other unit's probe are not there either.
    assert set(second.probes[1].value) <= {"SECRET-VARIANTE"}, second.probes[1].value


# -- a fill that searches for the answer ----------------------------------------------------------
SEARCH = r'''
import gc, linecache, re, sys
def _texts():
    seen, frame = [], sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, str):
                seen.append(value)
            elif isinstance(value, (bytes, bytearray)):
                seen.append(value.decode("utf-8", "replace"))
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, (list, tuple, dict)):
            for item in (obj.values() if isinstance(obj, dict) else obj):
                if isinstance(item, str) and "zip" in item:
                    seen.append(item)
    seen += ["".join(lines) for _, _, lines, _ in linecache.cache.values()]
    try:
        seen.append(open(__file__).read())
    except Exception:
        pass
    return seen
def _search(v, p):
    for text in _texts():
        for found in re.findall(r"= \[(.+?) for v, p in zip", text):
            if "_search" in found:
                continue
            try:
                return eval(found, {**globals(), "v": v, "p": p})
            except Exception:
                continue
    return [0, 0]
'''


def test_a_fill_with_zero_knowledge_earns_nothing():
    exercise = COURSE.exercise("02_places")
    template = exercise.template_path.read_text(encoding="utf-8")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    fill = f"(exec({SEARCH!r}, globals()), _search(v, p))[1]"
    thief = blanks_mod.splice(solution, blanks_mod.align(template, solution), {0: fill, 1: fill})
    with RunnerPool(1, "auto") as pool:
        grade = Grader(COURSE, pool, only=["02_places"]).grade("pirate", {"02_places": thief.encode()})
    result = grade.exercise("02_places")
    assert result.mode == "blanks"
    assert result.score == 0.0, [(b.id, b.status, b.message) for b in result.blanks]


# -- a hostile class: nothing hidden in anything written -----------------------------------------
EXFILTRATE = {
    # Every way a fill can try to carry what its process holds into the feedback.
    "message": "(_ for _ in ()).throw(ValueError(repr({k: v for k, v in globals().items() if k[0] != '_'})))",
    "exit": "__import__('sys').exit(repr({k: v for k, v in globals().items() if k[0] != '_'}))",
    "valeur_texte": "repr({k: v for k, v in globals().items() if k[0] != '_'})",
    "nom": "eval(repr(sorted(globals())[-1]))",
}


def _hostile_copies(course_root: Path, copies: Path) -> None:
    for exercise in COURSE.exercises:
        template = exercise.template_path.read_text(encoding="utf-8")
        solution = exercise.solution_path.read_text(encoding="utf-8")
        fills = blanks_mod.align(template, solution)
        for name, fill in EXFILTRATE.items():
            folder = copies / f"pirate_{name}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{exercise.id}.py").write_text(
                blanks_mod.splice(solution, fills, {i: fill for i in range(len(fills))}), encoding="utf-8")
        # Outside the blanks: the whole file runs, on hidden inputs too, and raises with everything.
        folder = copies / "pirate_fichier"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{exercise.id}.py").write_text(
            solution + "\nraise ValueError(repr({k: v for k, v in globals().items() if k[0] != '_'}))\n",
            encoding="utf-8")
    honest = copies / "parfait"
    honest.mkdir()
    for exercise in COURSE.exercises:
        shutil.copyfile(exercise.solution_path, honest / f"{exercise.id}.py")


def _hidden_strings(grader: Grader) -> set[str]:
    """What only the hidden side knows, in every notation a page could use."""
    public = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "exercises").glob("*.py"))
    public += (ROOT / "course.yaml").read_text(encoding="utf-8")
    # Values the course shows are public whatever computed them: its public checks' and its own inputs'.
    for exercise in COURSE.exercises:
        for check in load_checks(exercise.checks_path):
            public += "\n".join(format_value(e.expected) for e in check.expects if not e.uses_solution)
    public += "\n".join(format_value(decode(p.value)) for (_, key), p in grader.references.items() if not key[0])
    found: set[str] = set()
    for exercise in COURSE.exercises:
        for check in load_checks(exercise.grader_path):
            for expect in check.expects:
                found.add(expect.expr)
                if expect.variant is not None:
                    found.update(value for _, value in expect.variant.overrides)
        for fill in grader.refs[exercise.id].fills:
            found.add(fill.text.strip())
    for (exercise_id, key), probe in grader.references.items():
        if not key[0]:
            continue  # a value on the course's own inputs is the course's (public) value
        value = decode(probe.value)
        found.add(format_value(value))
        for number in _numbers(value):
            if number != int(number) and len(f"{abs(number):.4f}".rstrip("0")) >= 6:
                found.add(f"{abs(number):.4f}".rstrip("0").replace(".", ","))
                found.add(f"{abs(number):.4f}".rstrip("0"))
    return {s for s in found if len(s) >= 8 and s not in public}


def _numbers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        if math.isfinite(value):
            yield float(value)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)


def test_nothing_hidden_reaches_any_output_of_a_hostile_class(tmp_path):
    copies = tmp_path / "copies"
    _hostile_copies(ROOT, copies)
    results = tmp_path / "resultats"
    run = subprocess.run([str(BIN / "trous"), "-C", str(ROOT), "grade", str(copies), "--resultats", str(results)],
                         capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with RunnerPool(1, "auto") as pool:
        grader = Grader(COURSE, pool)
        grader.compute_references()
        hidden = _hidden_strings(grader)
    assert len(hidden) > 50, "the hidden side is large: the test must look for much"
    written = [p for p in results.rglob("*") if p.is_file() and p.suffix in (".html", ".json", ".csv", ".txt")]
    assert any(p.suffix == ".html" for p in written) and any(p.suffix == ".json" for p in written)
    outputs = {str(p.relative_to(results)): p.read_text(encoding="utf-8", errors="replace") for p in written}
    outputs["terminal"] = run.stdout + run.stderr
    leaks = sorted({(name, secret) for name, text in outputs.items() for secret in hidden if secret in text})
    assert not leaks, leaks[:20]
    # And the pirates got nothing for it; the honest copy is untouched by them.
    grades = {row["etudiant"] if "etudiant" in row else next(iter(row.values())): row
              for row in csv.DictReader((results / "grades.csv").read_text(encoding="utf-8-sig").splitlines(),
                                        delimiter=_delimiter(results / "grades.csv"))}
    assert grades, "grades.csv has rows"
    parfait = json.loads((results / "results" / "parfait.json").read_text(encoding="utf-8"))
    assert parfait["score"] == parfait["max_score"]
    for name in EXFILTRATE:
        pirate = json.loads((results / "results" / f"pirate_{name}.json").read_text(encoding="utf-8"))
        assert pirate["score"] == 0.0, (name, pirate["score"])


def _delimiter(path: Path) -> str:
    head = path.read_text(encoding="utf-8-sig").split("\n", 1)[0]
    return ";" if head.count(";") > head.count(",") else ","
