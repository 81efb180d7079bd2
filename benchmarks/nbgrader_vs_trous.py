"""`nbgrader autograde` versus `trous grade`, on the same generated class of notebooks.

    .venv/bin/python benchmarks/nbgrader_vs_trous.py                      # 50 students, exercise 01_toux
    .venv/bin/python benchmarks/nbgrader_vs_trous.py --eleves 80 --exercice 01_toux --exercice 02_places

Builds the nbgrader course (`trous nbgrader build`, only the chosen exercises, so that one assignment
holds their notebooks), generates it (`generate_assignment`), writes a class of submitted notebooks
(seeded: each blank right, wrong or left `___`), then times on fresh copies of the course, from the
command line as a teacher would run them:

- `nbgrader autograde <assignment>` with the generated nbgrader_config.py (kernel in bubblewrap,
  hidden cells grading with the engine, VerifyGrades);
- `trous grade <course>`: intake of submitted/, the sandboxed engine in parallel, trous's reports,
  and nbgrader's gradebook and autograded/ written as nbgrader would (run `--essais` times, each on
  its own copy: the median counts, so that a neighbour's burst on a shared machine does not).

It prints both times, their ratio, the peak memory of each process tree (sum of PSS, sampled four
times a second), and checks that both gradebooks hold the same points for every blank of every
student.
Target (issue 4): trous grade at least 20 times faster.
"""

from __future__ import annotations

import argparse
import random
import shutil
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


def timed(argv: list[str], cwd: Path) -> tuple[float, int, subprocess.CompletedProcess]:
    # Four samples a second: reading /proc for every process of the tree fifty times a second costs
    # a core's worth of a short run on two cores, and would be measured as trous's time.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="nbgrader autograde contre trous grade, mêmes carnets.")
    parser.add_argument("--eleves", type=int, default=50)
    parser.add_argument("--exercice", action="append", help="exercice(s) du devoir (défaut : 01_toux)")
    parser.add_argument("--graine", type=int, default=2026)
    parser.add_argument("--essais", type=int, default=3, help="passages de trous grade (médiane)")
    parser.add_argument("--garder", action="store_true", help="garder le dossier de travail")
    args = parser.parse_args(argv)
    course = Course.load(ROOT)
    exercises = args.exercice or ["01_toux"]
    assignments = {course.exercise(e).assignment.id for e in exercises}
    if len(assignments) != 1:
        parser.error("les exercices doivent appartenir au même devoir")
    assignment = assignments.pop()
    work = Path(tempfile.mkdtemp(prefix="trous-bench-nbgrader-"))
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
        nb_dir = work / "pour-nbgrader"
        shutil.copytree(base, nb_dir)

        t_nb, m_nb, r_nb = timed([str(BIN / "nbgrader"), "autograde", assignment], nb_dir)
        print(f"nbgrader autograde : {t_nb:8.1f} s  ({t_nb / notebooks:.2f} s par carnet)  "
              f"mémoire de pointe {m_nb / 1024:.0f} Mio  (code de sortie {r_nb.returncode})")
        # trous grade is short: run it a few times, each on a fresh copy, and keep the median, so
        # that a neighbour's burst on a shared machine does not decide the ratio.
        runs = []
        for n in range(args.essais):
            trous_dir = work / f"pour-trous-{n}"
            shutil.copytree(base, trous_dir)
            runs.append((*timed([str(BIN / "trous"), "-C", str(ROOT), "grade", str(trous_dir), "--resultats",
                                 str(work / f"resultats-{n}")], ROOT), trous_dir))
        runs.sort(key=lambda r: r[0])
        t_tr, m_tr, r_tr, trous_dir = runs[len(runs) // 2]
        print(f"trous grade        : {t_tr:8.1f} s  ({t_tr / notebooks:.3f} s par carnet)  "
              f"mémoire de pointe {m_tr / 1024:.0f} Mio  (code de sortie {r_tr.returncode})  "
              f"[médiane de {len(runs)} : {', '.join(f'{r[0]:.1f}' for r in runs)} s]")
        print(f"rapport : trous grade est {t_nb / t_tr:.1f} fois plus rapide (objectif : 20)")

        a, b = blank_points(nb_dir, course.id), blank_points(trous_dir, course.id)
        differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        total_a = {s: 0.0 for s, _ in a}
        total_b = {s: 0.0 for s, _ in b}
        for (s, _), v in a.items():
            total_a[s] += v or 0
        for (s, _), v in b.items():
            total_b[s] += v or 0
        same = not differ and total_a == total_b and len(total_a) == args.eleves
        print(f"totaux égaux : {'oui' if same else 'NON'} ({len(total_a)} élèves, {len(a)} trous notés, "
              f"total de la classe {sum(total_a.values()):g} contre {sum(total_b.values()):g})")
        for key in differ[:10]:
            print(f"  différence {key} : nbgrader {a.get(key)}, trous {b.get(key)}")
        if r_nb.returncode or any(r[2].returncode for r in runs):
            print((r_nb.stderr[-2000:] if r_nb.returncode else "") + (r_tr.stdout[-2000:] if r_tr.returncode else ""))
        return 0 if same and not r_nb.returncode and not any(r[2].returncode for r in runs) else 1
    finally:
        if args.garder:
            print(f"dossier de travail : {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
