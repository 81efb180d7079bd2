"""How long does a student wait for `pytest exercises/`, in the venv a student builds?

    .venv/bin/python benchmarks/pytest_exercises.py [--essais 9]
    .venv/bin/python benchmarks/pytest_exercises.py --comparer-avec main     # before/after, same run
    .venv/bin/python benchmarks/pytest_exercises.py --dossier /tmp/banc      # keep the venv for next time

Builds the student edition (`trous edition`), copies every solution over its exercise (the solved
course), then builds the student's venv the student's way (`python -m venv .venv`, `pip install -r
requirements.txt`: trous from the edition's bundled wheel, the rest repacked from this environment,
offline: see student_venv.py). Not this development venv, whose hypothesis and anyio plugins add
their own imports to every pytest start.

Then, round after round (the order turning each round, so that a load that comes and goes weighs on
each command alike), it times in that venv, as the student types them: `pytest exercises/` (the
solved course), `pytest exercises/01_toux.py` (one exercise) and `pytest --version` (the interpreter
and pytest alone). It prints, side by side, each command's median wall time, its spread, its median
CPU time (the whole process tree's: pytest, the runner, every child), and its ratio to `pytest
--version`. With `--comparer-avec REF`, a second edition built from that git revision is timed in the
same rounds, so that the machine's load weighs on both alike.

Targets (issue 9, part 7): the solved course under 1.2 s, one exercise under 0.6 s (medians).
The machine's load average is printed before and after: on a shared machine, read the ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import student_venv  # noqa: E402
from trous.core import Course  # noqa: E402

TARGETS = {"cours": 1.2, "exercice": 0.6}
SINGLE = "01_toux"


def commands(course: Course) -> dict[str, list[str]]:
    single = course.exercise(SINGLE).path.relative_to(course.root).as_posix()
    return {"cours": ["pytest", "exercises/"], "exercice": ["pytest", single], "version": ["pytest", "--version"]}


def timed(argv: list[str], cwd: Path, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds, CPU seconds of the whole process tree (every descendant is reaped inside it,
    so the kernel adds their times to this process's children), and the result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result


def edition_from(source: Path, dest: Path) -> None:
    """`trous edition` run from the course and the trous of `source` (a checkout)."""
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    done = subprocess.run([sys.executable, "-m", "trous", "-C", str(source), "edition", str(dest)],
                          cwd=source, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"échec de trous edition :\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def solve(course_root: Path, edition: Path) -> int:
    """Copy every solution over its exercise; how many there were."""
    n = 0
    for exercise in Course.load(course_root).exercises:
        if exercise.solution_path.exists():
            shutil.copyfile(exercise.solution_path, edition / "exercises" / exercise.path.name)
            n += 1
    return n


def checkout(ref: str, dest: Path) -> Path:
    """The tree of git revision `ref` (without touching any worktree)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref], capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"révision git « {ref} » introuvable : {archive.stderr.decode(errors='replace')}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def prepare(name: str, source: Path, work: Path, wheelhouse: Path, reuse: bool) -> tuple[Path, dict]:
    """The solved edition of `source` and the env of its student venv (built, or reused when asked)."""
    folder = work / name
    edition, venv = folder / "cours", folder / "cours" / ".venv"
    kept = reuse and (venv / "bin" / "pytest").exists()
    if kept:  # keep the installed dependencies; the edition and trous's wheel are new
        saved = folder / "venv-garde"
        shutil.rmtree(saved, ignore_errors=True)
        venv.rename(saved)
    shutil.rmtree(edition, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    edition_from(source, edition)
    solve(source, edition)
    if kept:
        saved.rename(venv)
        wheel = next((edition / ".trous" / "wheels").glob("trous-*.whl"))
        student_venv.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--force-reinstall",
                          "--no-deps", str(wheel)], edition)
    else:
        student_venv.build(edition, venv, wheelhouse)
    return edition, student_venv.clean_env(venv)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--essais", type=int, default=9, help="nombre de tours (par défaut : 9)")
    parser.add_argument("--comparer-avec", metavar="REF", help="révision git à mesurer dans les mêmes tours")
    parser.add_argument("--dossier", type=Path, help="dossier de travail gardé (le venv y est réutilisé)")
    args = parser.parse_args()
    course = Course.load(ROOT)
    work = args.dossier.resolve() if args.dossier else Path(tempfile.mkdtemp(prefix="trous-banc-"))
    try:
        wheelhouse = work / "roues"
        setups = {"ici": prepare("ici", ROOT, work, wheelhouse, reuse=args.dossier is not None)}
        if args.comparer_avec:
            source = checkout(args.comparer_avec, Path(tempfile.mkdtemp(prefix="trous-avant-")) / "src")
            try:
                setups[args.comparer_avec] = prepare("avant", source, work, wheelhouse, reuse=args.dossier is not None)
            finally:
                shutil.rmtree(source.parent, ignore_errors=True)
        argvs = commands(course)
        runs = [(setup, what) for setup in setups for what in argvs]
        for setup, what in runs:  # warm the disk cache, and make sure the solved course passes
            edition, env = setups[setup]
            _, _, result = timed(argvs[what], edition, env)
            if what != "version" and result.returncode != 0:
                print(result.stdout[-3000:], result.stderr[-2000:])
                print(f"ÉCHEC ({setup}) : la course résolue ne passe pas ses vérifications", file=sys.stderr)
                return 1
        load_before = os.getloadavg()
        walls = {key: [] for key in runs}
        cpus = {key: [] for key in runs}
        for round_ in range(args.essais):
            shift = round_ % len(runs)
            for key in runs[shift:] + runs[:shift]:
                edition, env = setups[key[0]]
                wall, cpu, result = timed(argvs[key[1]], edition, env)
                if key[1] != "version" and result.returncode != 0:
                    print(result.stdout[-3000:], result.stderr[-2000:])
                    print(f"ÉCHEC ({key[0]}) : {' '.join(argvs[key[1]])} a échoué", file=sys.stderr)
                    return 1
                walls[key].append(wall)
                cpus[key].append(cpu)
        load_after = os.getloadavg()
    finally:
        if not args.dossier:
            shutil.rmtree(work, ignore_errors=True)
    report(setups, argvs, walls, cpus, args.essais, load_before, load_after)
    return 0


def report(setups, argvs, walls, cpus, rounds, load_before, load_after) -> None:
    print(f"{rounds} tours, dans le venv d'un élève (python -m venv ; pip install -r requirements.txt)")
    print(f"charge de la machine : {load_before[0]:.2f} avant, {load_after[0]:.2f} après (2 cœurs : au-delà de 2, "
          "les temps s'allongent ; lire les rapports)")
    width = max(len(" ".join(a)) for a in argvs.values())
    for setup in setups:
        base = statistics.median(walls[(setup, "version")])
        print(f"\n[{setup}]")
        print(f"  {'commande':<{width}}  médiane   (min – max)        CPU médian   × pytest --version")
        for what, argv in argvs.items():
            wall = walls[(setup, what)]
            median = statistics.median(wall)
            print(f"  {' '.join(argv):<{width}}  {median:5.2f} s  ({min(wall):4.2f} – {max(wall):4.2f} s)   "
                  f"{statistics.median(cpus[(setup, what)]):5.2f} s      {median / base:4.1f}")
        for what, target in TARGETS.items():
            median = statistics.median(walls[(setup, what)])
            verdict = "atteint" if median < target else "MANQUÉ"
            print(f"  objectif {' '.join(argvs[what])} < {target} s : {verdict} ({median:.2f} s)")
    if len(setups) == 2:
        now, before = setups
        print()
        for what, argv in argvs.items():
            if what == "version":
                continue
            ratio = statistics.median(walls[(before, what)]) / statistics.median(walls[(now, what)])
            cpu_ratio = statistics.median(cpus[(before, what)]) / statistics.median(cpus[(now, what)])
            print(f"{' '.join(argv)} : {ratio:.1f} × plus rapide qu'à {before} (CPU : {cpu_ratio:.1f} ×)")


if __name__ == "__main__":
    sys.exit(main())
