"""How long does a student wait for `pytest exercises/` on the fully solved course?

Builds a student edition, copies every solution over its exercise, runs `pytest exercises/` several
times and prints the median wall time, beside the median of a bare `pytest --version` run in the
same conditions (the interpreter and pytest start-up alone) so the ratio says what trous adds.
Target: under 3 s on a 2-core machine.

    python benchmarks/pytest_exercises.py [--runs 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trous.course import Course  # noqa: E402
from trous.edition import build  # noqa: E402


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    course = Course.load(ROOT)
    pytest = str(Path(sys.executable).parent / "pytest")
    with tempfile.TemporaryDirectory() as tmp:
        edition = build(course, Path(tmp) / "cours", make_zip=False)
        for exercise in course.exercises:
            if exercise.solution_path.exists():
                shutil.copyfile(exercise.solution_path, edition / "exercises" / exercise.path.name)
        timed([pytest, "-q", "-p", "no:cacheprovider", "exercises/"], edition)  # warm the disk cache
        full, bare = [], []
        for _ in range(args.runs):
            seconds, result = timed([pytest, "-q", "-p", "no:cacheprovider", "exercises/"], edition)
            if result.returncode != 0:
                print(result.stdout[-3000:])
                print("ÉCHEC : la course résolue ne passe pas ses vérifications", file=sys.stderr)
                return 1
            full.append(seconds)
            bare.append(timed([pytest, "--version"], edition)[0])
    n = sum(1 for e in course.exercises if e.solution_path.exists())
    median, base = statistics.median(full), statistics.median(bare)
    print(f"exercices résolus            : {n}")
    print(f"pytest exercises/ (médiane)  : {median:.2f} s sur {args.runs} essais "
          f"(min {min(full):.2f} s, max {max(full):.2f} s)")
    print(f"pytest --version (médiane)   : {base:.2f} s")
    print(f"rapport                      : {median / base:.1f} × le démarrage de pytest")
    print(f"objectif < 3 s               : {'atteint' if median < 3 else 'MANQUÉ'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
