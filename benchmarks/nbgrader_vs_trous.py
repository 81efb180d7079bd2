"""Stock `nbgrader autograde`, trous's nbgrader configuration, and `trous grade`, on the same notebooks.

    .venv/bin/python benchmarks/nbgrader_vs_trous.py                      # 50 students, exercise 01_toux
    .venv/bin/python benchmarks/nbgrader_vs_trous.py --eleves 80 --exercice 01_toux --exercice 02_places
    .venv/bin/python benchmarks/nbgrader_vs_trous.py --sans-config-trous  # stock nbgrader and trous grade only

Builds the nbgrader course (`trous nbgrader build`, only the chosen exercises, so that one assignment
holds their notebooks), generates it (`generate_assignment`), writes a class of submitted notebooks
(seeded: each blank right, wrong or left `___`), then times on fresh copies of the course, from the
command line as a teacher would run them:

- stock `nbgrader autograde <assignment>`: nbgrader's own default configuration (its default
  sanitizing and autograding preprocessors, its plain kernel; only the course id, the gradebook and
  the exchange are set), on the same source and submitted notebooks: the grade cells' hidden tests
  grade each blank with trous's engine inside the kernel, as they are;
- `nbgrader autograde <assignment>` with the nbgrader_config.py trous writes (kernel in bubblewrap,
  VerifyGrades grading again outside it);
- `trous grade <course>`, run from the course folder without `-C` (the course it carries): intake of
  submitted/, the sandboxed engine in parallel, trous's reports, and nbgrader's gradebook and
  autograded/ written as nbgrader would (run `--essais` times, each on its own copy: the median
  counts, so that a neighbour's burst on a shared machine does not).

It prints the times, the ratios, the peak memory of each process tree (sum of PSS), and checks that
every gradebook holds the same points for every blank of every student.
Target (issue 11, part 6): trous grade at least 25 times faster than stock nbgrader at 50 notebooks.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import nbformat  # noqa: E402
from grade_class import TreeMemory  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, env  # noqa: E402

from trous.course import Course  # noqa: E402

BIN = Path(sys.executable).parent
TARGET = 25

STOCK_CONFIG = '''\
# nbgrader's own defaults: no trous preprocessor, no trous kernel (benchmarks/nbgrader_vs_trous.py)
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = {course_id!r}
c.CourseDirectory.db_url = {db_url!r}
c.Exchange.root = {exchange!r}
'''


def make_class(course_dir: Path, assignment: str, exercises: list[str], students: int, seed: int) -> None:
    rng = random.Random(seed)
    authors = {}
    for exercise in exercises:
        source = nbformat.read(course_dir / "source" / assignment / f"{exercise}.ipynb", 4)
        release = nbformat.read(course_dir / "release" / assignment / f"{exercise}.ipynb", 4)
        authors[exercise] = Author(source, release)
    for n in range(students):
        folder = course_dir / "submitted" / f"eleve{n:03d}" / assignment
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(f"2026-11-0{1 + n % 5} 10:{n % 60:02d}:00.000000 UTC")
        for exercise, author in authors.items():
            choices = {}
            for i in range(len(author.solution_fills)):
                roll = rng.random()
                choices[i] = SOLUTION if roll < 0.7 else (None if roll < 0.85 else "0")
            nbformat.write(author.notebook(choices), folder / f"{exercise}.ipynb")


def stock(course_dir: Path, course_id: str, exchange: Path) -> None:
    """Make a copy of the course a stock nbgrader course: nbgrader's defaults everywhere."""
    (course_dir / "nbgrader_config.py").write_text(STOCK_CONFIG.format(
        root=str(course_dir), course_id=course_id, db_url=f"sqlite:///{course_dir / 'gradebook.db'}",
        exchange=str(exchange)))


def timed(argv: list[str], cwd: Path) -> tuple[float, int, subprocess.CompletedProcess]:
    # Sampling /proc for a whole process tree costs CPU; a few times a second is enough for a peak
    # and stays out of the way of what is measured.
    memory = TreeMemory(interval=0.25)
    memory.start()
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    memory.stop()
    return seconds, memory.peak_pss, result


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="nbgrader autograde (d'origine, configuré par trous) contre trous "
                                                 "grade, mêmes carnets.")
    parser.add_argument("--eleves", type=int, default=50)
    parser.add_argument("--exercice", action="append", help="exercice(s) du devoir (défaut : 01_toux)")
    parser.add_argument("--graine", type=int, default=2026)
    parser.add_argument("--essais", type=int, default=3, help="passages de trous grade (médiane)")
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
        make_class(base, assignment, exercises, args.eleves, args.graine)
        notebooks = args.eleves * len(exercises)
        print(f"classe : {args.eleves} élèves, devoir {assignment} ({', '.join(exercises)}) : {notebooks} carnets")

        stock_dir = work / "nbgrader-d-origine"
        shutil.copytree(base, stock_dir)
        stock(stock_dir, course.id, work / "echange")
        t_stock, m_stock, r_stock = timed([str(BIN / "nbgrader"), "autograde", assignment], stock_dir)
        print(f"nbgrader autograde (d'origine)        : {t_stock:7.1f} s  ({t_stock / notebooks:.2f} s par carnet)  "
              f"mémoire de pointe {m_stock / 1024:5.0f} Mio  (code de sortie {r_stock.returncode})")
        failed |= r_stock.returncode != 0
        configured = None
        if not args.sans_config_trous:
            nb_dir = work / "nbgrader-config-trous"
            shutil.copytree(base, nb_dir)
            configured = timed([str(BIN / "nbgrader"), "autograde", assignment], nb_dir)
            print(f"nbgrader autograde (config. de trous) : {configured[0]:7.1f} s  ({configured[0] / notebooks:.2f} s "
                  f"par carnet)  mémoire de pointe {configured[1] / 1024:5.0f} Mio  (code de sortie "
                  f"{configured[2].returncode})")
            failed |= configured[2].returncode != 0
        # trous grade is short: run it a few times, each on a fresh copy, and keep the median, so
        # that a neighbour's burst on a shared machine does not decide the ratio.
        runs = []
        for n in range(args.essais):
            trous_dir = work / f"pour-trous-{n}"
            shutil.copytree(base, trous_dir)
            runs.append((*timed([str(BIN / "trous"), "grade", "."], trous_dir), trous_dir))
        ordered = sorted(runs, key=lambda r: r[0])
        t_tr, m_tr, r_tr, trous_dir = ordered[len(ordered) // 2]
        failed |= any(r[2].returncode for r in runs)
        print(f"trous grade                           : {t_tr:7.1f} s  ({t_tr / notebooks:.3f} s par carnet)  "
              f"mémoire de pointe {m_tr / 1024:5.0f} Mio  (code de sortie {r_tr.returncode})  "
              f"[médiane de {len(runs)} : {', '.join(f'{r[0]:.1f}' for r in runs)} s, "
              f"écart type {statistics.pstdev([r[0] for r in runs]):.2f} s]")
        ratio = t_stock / t_tr
        print(f"rapport : trous grade est {ratio:.1f} fois plus rapide que nbgrader d'origine (objectif : {TARGET})"
              + (f", {configured[0] / t_tr:.1f} fois que nbgrader configuré par trous" if configured else ""))

        trous_points = blank_points(trous_dir, course.id)
        same = compare("nbgrader d'origine / trous grade", blank_points(stock_dir, course.id), trous_points,
                       args.eleves)
        if configured:
            same &= compare("nbgrader configuré / trous grade", blank_points(work / "nbgrader-config-trous", course.id),
                            trous_points, args.eleves)
        for name, result in [("nbgrader d'origine", r_stock)] + ([("nbgrader configuré", configured[2])]
                                                                  if configured else []) + [("trous", r_tr)]:
            if result.returncode:
                print(f"--- {name} ---\n{(result.stdout + result.stderr)[-2000:]}")
        return 0 if same and not failed else 1
    finally:
        if args.garder:
            print(f"dossier de travail : {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
