"""Stock `nbgrader autograde`, trous's nbgrader configuration, and `trous grade`, on the same notebooks.

    .venv/bin/python benchmarks/nbgrader_vs_trous.py                      # 50 students (2 looping), 01_toux
    .venv/bin/python benchmarks/nbgrader_vs_trous.py --eleves 80 --exercice 01_toux --exercice 02_places
    .venv/bin/python benchmarks/nbgrader_vs_trous.py --sans-config-trous  # stock nbgrader and trous grade only

Builds the nbgrader course (`trous nbgrader build`, only the chosen exercises, so that one assignment
holds their notebooks), generates it (`generate_assignment`), writes a class of submitted notebooks
(seeded: each blank right, wrong or left `___`; `--boucles` students whose first answer cell starts
with an endless `while True` loop), then times on fresh copies of the course, from the command line
as a teacher would run them:

- stock `nbgrader autograde <assignment>`: nbgrader's own default configuration (its default
  sanitizing and autograding preprocessors, its plain kernel, its default cell timeout: a loop costs
  it that timeout; only the course id, the gradebook and the exchange are set), on the same source
  and submitted notebooks: the grade cells' hidden tests grade each blank with trous's engine inside
  the kernel, as they are;
- `nbgrader autograde <assignment>` with the nbgrader_config.py trous writes (kernel in bubblewrap,
  the exercise's time limit for the student's cells, the grade cells not run in the kernel:
  VerifyGrades grades each blank outside it);
- `trous grade <course>`, run from the course folder without `-C` (the course it carries): intake of
  submitted/, the sandboxed engine in parallel, trous's reports, and nbgrader's gradebook and
  autograded/ written as nbgrader would.

The sides are timed in interleaved rounds (nbgrader, trous, nbgrader, trous…, `--essais` rounds,
each run on its own fresh copy), so that a neighbour on a shared machine weighs on both alike; the
ratio is that of the medians. Each run says how busy the machine was meanwhile with other processes
(CPU time of the whole machine minus that of the run, over its wall time: cores taken by others) and
the load average. It prints the peak memory of each process tree (sum of PSS), and checks that every
gradebook of every round holds the same points for every blank of every student.
Target (issue 21, part 6): trous grade at least 40 times faster than stock nbgrader at 50 notebooks.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import nbformat  # noqa: E402
from grade_class import TreeMemory  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, env  # noqa: E402

from trous.core import Course  # noqa: E402

BIN = Path(sys.executable).parent
TARGET = 40
LOOP = "while True:\n    pass\n"  # at the top of a looping student's first answer cell

STOCK_CONFIG = '''\
# nbgrader's own defaults: no trous preprocessor, no trous kernel (benchmarks/nbgrader_vs_trous.py)
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.db_url = {db_url!r}
c.Exchange.root = {exchange!r}
'''


def _looping(nb):
    cell = next(c for c in nb.cells if (c.metadata.get("nbgrader") or {}).get("solution"))
    cell.source = LOOP + cell.source


def make_class(course_dir: Path, assignment: str, exercises: list[str], students: int, loops: int,
               seed: int) -> list[str]:
    """The submitted notebooks; the looping students (their first exercise's notebook loops)."""
    rng = random.Random(seed)
    authors = {}
    for exercise in exercises:
        source = nbformat.read(course_dir / "source" / assignment / f"{exercise}.ipynb", 4)
        release = nbformat.read(course_dir / "release" / assignment / f"{exercise}.ipynb", 4)
        authors[exercise] = Author(source, release)
    looping = set(rng.sample(range(students), min(loops, students)))
    for n in range(students):
        folder = course_dir / "submitted" / f"eleve{n:03d}" / assignment
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(f"2026-11-0{1 + n % 5} 10:{n % 60:02d}:00.000000 UTC")
        for number, (exercise, author) in enumerate(authors.items()):
            choices = {}
            for i in range(len(author.solution_fills)):
                roll = rng.random()
                choices[i] = SOLUTION if roll < 0.7 else (None if roll < 0.85 else "0")
            edit = _looping if n in looping and number == 0 else None
            nbformat.write(author.notebook(choices, edit=edit), folder / f"{exercise}.ipynb")
    return [f"eleve{n:03d}" for n in sorted(looping)]


def stock(course_dir: Path, course_id: str, exchange: Path) -> None:
    """Make a copy of the course a stock nbgrader course: nbgrader's defaults everywhere."""
    (course_dir / "nbgrader_config.py").write_text(STOCK_CONFIG.format(
        root=str(course_dir), course_id=course_id, db_url=f"sqlite:///{course_dir / 'gradebook.db'}",
        exchange=str(exchange)))


def _busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (every core, every process) since boot."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    seconds: float
    peak_pss: int  # KiB
    result: subprocess.CompletedProcess
    folder: Path
    others: float  # cores other processes kept busy meanwhile (average)
    load: float  # 1-minute load average at the start


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path) -> Run:
    # Sampling /proc for a whole process tree costs CPU; a few times a second is enough for a peak
    # and stays out of the way of what is measured.
    memory = TreeMemory(interval=0.25)
    load = os.getloadavg()[0]
    busy, ours = _busy_seconds(), _cpu(resource.RUSAGE_CHILDREN) + _cpu(resource.RUSAGE_SELF)
    memory.start()
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    memory.stop()  # joins the sampler: its CPU counts as the run's, not as a neighbour's
    ours = _cpu(resource.RUSAGE_CHILDREN) + _cpu(resource.RUSAGE_SELF) - ours
    others = max(0.0, _busy_seconds() - busy - ours) / seconds
    return Run(seconds, memory.peak_pss, result, cwd, others, load)


def blank_points(course_dir: Path, course_id: str) -> dict[tuple[str, str], float | None]:
    return {(student, cell): score for student, cells in blank_scores(course_dir, course_id).items()
            for cell, score in cells.items()}


def totals(points: dict[tuple[str, str], float | None]) -> dict[str, float]:
    total: dict[str, float] = {}
    for (student, _), value in points.items():
        total[student] = total.get(student, 0.0) + (value or 0)
    return total


def compare(name: str, a: dict, b: dict, students: int) -> bool:
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    total_a, total_b = totals(a), totals(b)
    same = not differ and len(total_a) == students
    print(f"mêmes points trou par trou ({name}) : {'oui' if same else 'NON'} ({len(total_a)} élèves, {len(a)} "
          f"trous notés, total de la classe {sum(total_a.values()):g} contre {sum(total_b.values()):g})")
    for key in differ[:10]:
        print(f"  différence {key} : {a.get(key)} contre {b.get(key)}")
    return same


def _describe(name: str, runs: list[Run], notebooks: int) -> str:
    middle = statistics.median(r.seconds for r in runs)
    return (f"{name:<38}: médiane {middle:7.1f} s ({middle / notebooks:.3f} s par carnet) ; essais "
            + ", ".join(f"{r.seconds:.1f} s (autres : {r.others:.2f} cœur, charge {r.load:.2f})" for r in runs)
            + f" ; mémoire de pointe {max(r.peak_pss for r in runs) / 1024:.0f} Mio")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="nbgrader autograde (d'origine, configuré par trous) contre trous "
                                                 "grade, mêmes carnets, en tours alternés.")
    parser.add_argument("--eleves", type=int, default=50)
    parser.add_argument("--boucles", type=int, default=2, help="élèves dont une cellule boucle sans fin (défaut : 2)")
    parser.add_argument("--exercice", action="append", help="exercice(s) du devoir (défaut : 01_toux)")
    parser.add_argument("--graine", type=int, default=2026)
    parser.add_argument("--essais", type=int, default=3, help="tours (nbgrader puis trous à chaque tour ; médianes)")
    parser.add_argument("--sans-config-trous", action="store_true",
                        help="ne pas chronométrer nbgrader autograde configuré par trous")
    parser.add_argument("--garder", action="store_true", help="garder le dossier de travail")
    args = parser.parse_args(argv)
    course = Course.load(ROOT)
    exercises = args.exercice or ["01_toux"]
    assignments = {course.exercise(e).assignment.id for e in exercises}
    if len(assignments) != 1:
        parser.error("les exercices doivent appartenir au même devoir")
    assignment = assignments.pop()
    work = Path(tempfile.mkdtemp(prefix="trous-bench-nbgrader-"))
    failed = False
    try:
        base = work / "cours"
        build = [str(BIN / "trous"), "nbgrader", "build", str(base), "--echange", str(work / "echange")]
        for exercise in exercises:
            build += ["--exercice", exercise]
        subprocess.run(build, cwd=ROOT, env=env(), check=True, capture_output=True)
        subprocess.run([str(BIN / "nbgrader"), "generate_assignment", assignment], cwd=base, env=env(), check=True,
                       capture_output=True)
        looping = make_class(base, assignment, exercises, args.eleves, args.boucles, args.graine)
        notebooks = args.eleves * len(exercises)
        print(f"classe : {args.eleves} élèves, devoir {assignment} ({', '.join(exercises)}) : {notebooks} carnets, "
              f"dont {len(looping)} qui bouclent sans fin ({', '.join(looping) or 'aucun'})")
        print(f"machine : {os.cpu_count()} cœurs, charge {', '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min)")

        sides = {"stock": "nbgrader autograde (d'origine)", "trous": "trous grade"}
        if not args.sans_config_trous:
            sides = {"stock": sides["stock"], "configured": "nbgrader autograde (config. de trous)",
                     "trous": sides["trous"]}
        commands = {"stock": [str(BIN / "nbgrader"), "autograde", assignment],
                    "configured": [str(BIN / "nbgrader"), "autograde", assignment],
                    "trous": [str(BIN / "trous"), "grade", "."]}
        runs: dict[str, list[Run]] = {side: [] for side in sides}
        for number in range(args.essais):
            for side in sides:  # interleaved: every round times each side once, one after the other
                folder = work / f"{side}-{number}"
                shutil.copytree(base, folder)
                if side == "stock":
                    stock(folder, course.id, work / "echange")
                run = timed(commands[side], folder)
                runs[side].append(run)
                print(f"  tour {number + 1}, {sides[side]} : {run.seconds:.1f} s (code de sortie "
                      f"{run.result.returncode}, autres processus : {run.others:.2f} cœur)", flush=True)
                failed |= run.result.returncode != 0
        for side, name in sides.items():
            print(_describe(name, runs[side], notebooks))
        middle = {side: statistics.median(r.seconds for r in runs[side]) for side in sides}
        others = statistics.mean(r.others for side in sides for r in runs[side])
        ratio = middle["stock"] / middle["trous"]
        print(f"rapport des médianes : trous grade est {ratio:.1f} fois plus rapide que nbgrader d'origine (objectif : "
              f"{TARGET})" + (f", {middle['configured'] / middle['trous']:.1f} fois que nbgrader configuré par trous"
                              if "configured" in middle else "")
              + f" ; machine occupée par d'autres processus : {others:.2f} cœur en moyenne sur {os.cpu_count()}")

        reference = blank_points(runs["trous"][0].folder, course.id)
        same = True
        for side, name in sides.items():
            for number, run in enumerate(runs[side]):
                if run is runs["trous"][0]:
                    continue  # the reference itself
                same &= compare(f"{name}, tour {number + 1} / trous grade, tour 1", blank_points(run.folder, course.id),
                                reference, args.eleves)
        for side, name in sides.items():
            for run in runs[side]:
                if run.result.returncode:
                    print(f"--- {name} ---\n{(run.result.stdout + run.result.stderr)[-2000:]}")
        return 0 if same and not failed else 1
    finally:
        if args.garder:
            print(f"dossier de travail : {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
