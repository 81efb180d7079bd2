"""How long, and how much grader memory, for a class of hostile students?

    .venv/bin/python benchmarks/hostile_class.py                  # 51 hostile copies + 3 honest ones
    .venv/bin/python benchmarks/hostile_class.py --gros 200       # 200 copies whose values are 200 000-element arrays

The hostile class (issue 10): every trick that costs the grader time or memory, each in every blank
of the whole course where it fits (endless loops, right fills that sleep just under the wall time,
fork and memory bombs, output floods, files and /tmp filled, the grader's channel closed, its own
processes signalled, values far too large to check…), plus the sample class of examples/classe
(syntax errors, liars, spies, encodings…). Three honest copies (perfect, half, beginner) are graded
in the same run and must come out exactly as when graded alone.

Printed side by side: wall time of the whole run, seconds per copy, the longest copy, peak memory of
the grader's own process (RSS, sampled), of the largest of the teacher's processes (the grader or a
graders' test worker: what a forged answer would make grow) and of the whole process tree (RSS and
PSS). Targets: the hostile class under 5 minutes on 2 cores, no process of the teacher's over 500 MiB;
`--gros 200` under 1 GiB for the grader's process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import make_classe as gen  # noqa: E402
from grade_class import TreeMemory  # noqa: E402

from trous.core import Course  # noqa: E402
from trous.core import blanks as blanks_mod  # noqa: E402
from trous.outputs.run import GradeOptions, Hooks, grade_class  # noqa: E402

# A fill that does what the solution does, after `payload` (a statement made into an expression).
def _after(payload: str, answer: str) -> str:
    return f"({payload}, {answer})[1]"


IN_EVERY_BLANK = {
    # name: (what it does, fill built from the solution's fill)
    "boucle_partout": ("une boucle sans fin dans chaque trou", lambda a: f"next(v for v in iter(int, 1) if v) or {a}"),
    "lent_partout": ("réponses justes qui dorment 7,5 s chacune", lambda a: _after("__import__('time').sleep(7.5)", a)),
    "fourche_partout": ("une bombe de processus dans chaque trou",
                        lambda a: _after("[__import__('os').fork() for _ in range(6)]", a)),
    "memoire_partout": ("4 Gio demandés dans chaque trou", lambda a: _after("bytearray(4 * 2**30)", a)),
    "bavard_partout": ("20 Mo affichés dans chaque trou", lambda a: _after("print('x' * 20_000_000)", a)),
    "canal_ferme": ("ferme le canal du correcteur", lambda a: _after("__import__('os').close(3)", a)),
    "signal_parent": ("signale son processus parent", lambda a: _after(
        "__import__('os').kill(__import__('os').getppid(), 9)", a)),
    "tmp_plein": ("remplit /tmp", lambda a: _after(
        "[open(f'/tmp/plein{i}', 'wb').write(b'x' * 2**24) for i in range(64)]", a)),
    "cpu_partout": ("calcule sans fin sur plusieurs fils", lambda a: _after(
        "[__import__('threading').Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start() "
        "for _ in range(4)]", a)),
    "geant": ("rend des tableaux de 300 000 nombres", lambda a: "__import__('numpy').arange(300_000.0)"),
    "exfiltre": ("lève une erreur qui porte toutes ses variables", lambda a:
                 "(_ for _ in ()).throw(ValueError(repr(globals())))"),
    # Issue 20: the child's answer replaced by a description of arrays of ten million objects.
    "reponse_forgee": ("fait répondre au processus des valeurs forgées (forme de 10 millions)", lambda a: _after(
        "__import__('sys').modules['trous.sandbox.child'].__dict__.__setitem__('_probe', lambda setup, expr, ns, "
        "limit: {'value': [{'$nd': {'k': 'O', 's': [10_000_000], 'v': []}}] * 150})", a)),
}
# In the first blank of each exercise only, as a student would: right fills, one of which keeps a
# large value at top level (issue 20 §2). These copies must keep every point.
IN_FIRST_BLANK = {
    "garde_memoire": ("juste, mais un trou garde 300 Mio au premier niveau", lambda a: _after(
        "'reserve' in globals() or globals().__setitem__('reserve', bytearray(300 * 2**20))", a)),
}


def _with_every_blank(material: gen.Material, make, first_only: bool = False) -> str:
    return blanks_mod.splice(material.template, material.blanks,
                             {i: make(answer) if i == 0 or not first_only else answer
                              for i, answer in enumerate(material.answers)})


def hostile_class(course: Course, dest: Path, copies: int) -> dict[str, str]:
    """Write `copies` hostile copies (cycling through the kinds) and three honest ones."""
    materials = gen.load_materials(course)
    kinds = list(IN_EVERY_BLANK.items()) + list(IN_FIRST_BLANK.items())
    described: dict[str, str] = {}
    # The sample class's troublemakers first (everything but its honest students).
    sample = [s for s in gen.STUDENTS if s[0] not in ("alice_parfaite", "bruno_partiel")]
    for i in range(copies):
        if i < len(sample):
            name, description, build = sample[i]
            gen.write_tree(dest / f"{i:02d}_{name}", build(materials))
            described[f"{i:02d}_{name}"] = description
            continue
        key, (description, make) = kinds[(i - len(sample)) % len(kinds)]
        folder = dest / f"{i:02d}_{key}"
        folder.mkdir(parents=True)
        for material in materials:
            (folder / f"{material.id}.py").write_text(
                _with_every_blank(material, make, first_only=key in IN_FIRST_BLANK), encoding="utf-8")
        described[folder.name] = description
    for name, build in (("honnete_parfait", gen.parfaite), ("honnete_partiel", gen.partiel)):
        gen.write_tree(dest / name, build(materials))
    beginner = dest / "honnete_debutant"
    beginner.mkdir()
    for material in materials:
        (beginner / f"{material.id}.py").write_text(material.template, encoding="utf-8")
    return described


def big_values_class(course: Course, dest: Path, copies: int) -> None:
    """Copies whose every blank gives a 200 000-element array: what the grader must not keep."""
    materials = gen.load_materials(course)
    for i in range(copies):
        folder = dest / f"gros_{i:03d}"
        folder.mkdir(parents=True)
        for material in materials:
            fill = f"__import__('numpy').arange(200_000.0) + {i}"
            (folder / f"{material.id}.py").write_text(_with_every_blank(material, lambda a: fill), encoding="utf-8")


class OwnMemory(threading.Thread):
    """Peak RSS of this process alone (the grader), sampled."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.peak = max(self.peak, int(line.split()[1]))
            self._halt.wait(0.05)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mesure trous grade sur une classe hostile.")
    parser.add_argument("--copies", type=int, default=51, help="copies hostiles")
    parser.add_argument("--gros", type=int, default=0, help="à la place : N copies aux valeurs géantes")
    parser.add_argument("--bac-a-sable", default="auto", choices=("auto", "bwrap"))
    parser.add_argument("--parallele", "-j", "--workers", dest="workers", type=int, default=None)
    parser.add_argument("--garder", help="dossier où garder la classe et les résultats")
    args = parser.parse_args(argv)

    course = Course.load(ROOT)
    work = Path(args.garder) if args.garder else Path(tempfile.mkdtemp(prefix="trous-hostile-"))
    if args.garder and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.gros:
            big_values_class(course, work / "classe", args.gros)
            described = {}
        else:
            described = hostile_class(course, work / "classe", args.copies)
        options = GradeOptions(work / "classe", work / "resultats", args.bac_a_sable, args.workers)
        times: dict[str, float] = {}
        started = time.perf_counter()
        last = [started]

        def graded(grade) -> None:
            now = time.perf_counter()
            times[grade.student] = now - last[0]
            last[0] = now

        tree, own = TreeMemory(), OwnMemory()
        tree.start()
        own.start()
        outcome = grade_class(course, options, Hooks(graded=graded))
        wall = time.perf_counter() - started
        tree.stop()
        own.stop()
        n = len(outcome.grades)
        scores = {g.student: g for g in outcome.grades}
        rows = [("copies notées", str(n), ""),
                ("durée totale", f"{wall:.1f} s", "< 300 s" if not args.gros else ""),
                ("secondes par copie", f"{wall / n:.2f} s", ""),
                ("pic mémoire du correcteur (RSS)", f"{own.peak / 1024:.0f} Mio", "< 1024 Mio" if args.gros else ""),
                ("plus gros processus de l'enseignant (RSS)", f"{tree.peak_teacher / 1024:.0f} Mio", "< 500 Mio"),
                ("pic mémoire, arbre de processus (RSS)", f"{tree.peak_rss / 1024:.0f} Mio", ""),
                ("pic mémoire, arbre de processus (PSS)", f"{tree.peak_pss / 1024:.0f} Mio", ""),
                ("processus au plus", str(tree.peak_processes), "")]
        width = max(len(r[0]) for r in rows)
        print()
        for label, value, target in rows:
            print(f"{label:<{width}}  {value:>12}  {target}")
        if described:
            print("\ncopie : note, ce qu'elle fait")
            for name in sorted(described):
                grade = scores.get(name)
                shown = f"{grade.score:g}/{grade.max_score:g}" if grade else "absente !"
                print(f"  {name:<28} {shown:>9}  {described[name]}")
            honest = {g: scores[g].score for g in ("honnete_parfait", "honnete_partiel", "honnete_debutant")}
            print(f"\ncopies honnêtes : {json.dumps(honest)}")
            keeping = [g for g in scores if g.endswith("garde_memoire")]  # right, and must stay so
            ok = (wall < 300 and scores["honnete_parfait"].score == scores["honnete_parfait"].max_score
                  and all(scores[g].score == scores[g].max_score for g in keeping))
            print("OBJECTIF ATTEINT" if ok else "objectif manqué", f": {wall:.0f} s pour {n} copies")
        else:
            print("OBJECTIF ATTEINT" if own.peak / 1024 < 1024 else "objectif manqué",
                  f": {own.peak / 1024:.0f} Mio pour {n} copies aux valeurs géantes")
    finally:
        if not args.garder:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
