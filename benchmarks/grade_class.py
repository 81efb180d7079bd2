"""How fast and how big is `trous grade` on a realistic class over the whole course?

    .venv/bin/python benchmarks/grade_class.py                 # 200 students, 2 endless loops
    .venv/bin/python benchmarks/grade_class.py --eleves 400 --boucles 0 --workers 2
    .venv/bin/python benchmarks/grade_class.py --profil        # where the grader's own time goes

Generates a class (seeded: the same arguments give the same class) from the course's templates and
solutions (examples/make_classe.py), grades it with the `trous grade` machinery (intake, gradebook,
sandboxed runners in parallel, reports) in a fresh results folder, and prints side by side: copies per
second, seconds per student, and the peak memory of the whole process tree (this process, the
bubblewrap sandboxes, their zygotes and every student process), sampled from /proc by a process of its
own: RSS 4 times a second, PSS once a second (each PSS sample walks the page tables of the whole tree;
more often, the sampling would take a visible share of the CPU it measures).

Targets (issue 3): under 0.1 s per student over the whole course on 2 cores, under 500 Mio peak.
The mixture: strong, average and weak students (right, partly filled, wrong, unfilled, missing
exercises; a right fill is written the textbook way 60 % of the time, else in the student's own
spelling, so that no cache of identical programs makes the class look easier), a few troubled ones (syntax error, exception, values written by hand) and `--boucles`
copies with an endless loop, each of which costs one exercise's wall-time limit on one core.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "examples"))

import make_classe as gen  # noqa: E402

from trous.core import Course  # noqa: E402
from trous.core.options import cores, default_parallel  # noqa: E402
from trous.outputs.run import GradeOptions, Hooks, grade_class  # noqa: E402

PROFILES = {  # share of students, then per exercise: right, partial, wrong, unfilled, missing
    "fort": (0.40, (0.92, 0.03, 0.05, 0.00, 0.00)),
    "moyen": (0.35, (0.70, 0.12, 0.10, 0.03, 0.05)),
    "faible": (0.20, (0.40, 0.20, 0.15, 0.10, 0.15)),
    "en difficulté": (0.05, (0.30, 0.20, 0.20, 0.10, 0.20)),
}


def _style(answer: str, rng: random.Random) -> str:
    """A right fill as a student writes it: most often the textbook form, sometimes in their own
    spelling (the same value, other text), so that a class is not hundreds of identical programs."""
    roll = rng.random()
    if roll < 0.6:
        return answer
    if roll < 0.85:
        return f"({answer})"
    return f"( {answer} )"


def _one(material: gen.Material, state: str, rng: random.Random) -> str | None:
    n = len(material.blanks)
    if state == "right":
        return material.fill({i: _style(a, rng) for i, a in enumerate(material.answers)})
    if state == "partial":
        keep = rng.sample(range(n), k=max(1, n // 2)) if n > 1 else []
        return material.fill({i: _style(a, rng) for i, a in enumerate(material.answers) if i in keep})
    if state == "wrong":
        bad = rng.randrange(n)
        return material.with_blank(bad, gen.wrong(material.answers[bad], rng.randrange(3)))
    if state == "unfilled":
        return material.template
    return None  # missing


def troubled(material: gen.Material, rng: random.Random) -> str:
    """A syntax error, an exception, or values written by hand."""
    choice = rng.randrange(3)
    if choice == 0:
        return material.perfect() + '\nprint("fini"\n'
    if choice == 1:
        return material.with_blank(0, "variable_inconnue")
    return gen.hard_code(material.perfect(), material.constants) if material.constants else material.perfect()


def endless(material: gen.Material) -> str:
    text = material.perfect()
    return gen.insert_before_line(text, gen._top_level_line(material, text), "while True:\n    pass\n")


def make_class(course: Course, dest: Path, students: int, loops: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    materials = gen.load_materials(course)
    names = list(PROFILES)
    weights = [PROFILES[p][0] for p in names]
    counts: dict[str, int] = {}
    looping = set(rng.sample(range(students), k=min(loops, students)))
    for k in range(students):
        profile = rng.choices(names, weights)[0]
        counts[profile] = counts.get(profile, 0) + 1
        states = ("right", "partial", "wrong", "unfilled", "missing")
        folder = dest / f"eleve{k:04d}" / "exercises"
        folder.mkdir(parents=True)
        trouble_at = rng.randrange(len(materials)) if profile == "en difficulté" else None
        for j, material in enumerate(materials):
            if k in looping and j == 0:
                text = endless(material)
            elif j == trouble_at:
                text = troubled(material, rng)
            else:
                text = _one(material, rng.choices(states, PROFILES[profile][1])[0], rng)
            if text is not None:
                # Each copy is its own (a name in a comment), as in a real class.
                (folder / f"{material.id}.py").write_text(text + f"\n# {k:04d}\n", encoding="utf-8")
    counts["boucle sans fin"] = len(looping)
    return counts


# -- memory of the process tree -------------------------------------------------------------------
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> tuple[dict[int, list[int]], dict[int, float]]:
    """Children of every process, and each one's CPU seconds including its reaped descendants."""
    tree: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                data = f.read()
            fields = data[data.rindex(b")") + 2:].split()
            ppid = int(fields[1])
            cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree, cpu


PAGE_KIB = (os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096) // 1024


def _rss_kib(pid: int) -> int:
    """RSS alone, from the kernel's counters (statm): no walk through the page tables."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_KIB
    except (OSError, ValueError, IndexError):
        return 0


def _memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in KiB; PSS shares the pages forked processes have in common instead of counting
    them once per process."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = pss = int(line.split()[1])
        except OSError:
            pass
    return rss, pss


class TreeMemory:
    """Samples the summed RSS and PSS of this process and all its descendants, and the CPU time of
    the sandboxes: each runner's zygote reaps every process below it (it is their subreaper), so its
    last-seen utime + stime + cutime + cstime covers all the student processes it ran.

    It samples from a process of its own (forked before the grader starts its threads): as a thread
    of this process, every sample would take the interpreter's lock from the grader's threads.

    A sample is not free either: PSS walks the page tables of every process of the tree
    (smaps_rollup, about 16 ms of CPU for the whole tree), on the same cores as the grading. At 20
    samples a second that was about a tenth of the machine's CPU during a run (a tenth of what is
    measured). The memory is held by long-lived processes (grader, zygotes, pytest workers): RSS,
    read from the kernel's counters, is sampled `interval` apart, and PSS every `pss_every`th
    sample. Its own CPU time is reported, so that what it costs stays in sight."""

    def __init__(self, interval: float = 0.25, pss_every: int = 4):
        self.interval, self.pss_every = interval, max(1, pss_every)
        self.peak_rss = self.peak_pss = 0
        self.peak_processes = 0
        self.peak_teacher = 0  # RSS of the largest process of the teacher's (the grader, a test worker)
        self.samples = 0
        self.zygote_cpu: dict[int, float] = {}
        self.own_cpu = 0.0  # the sampler's own CPU seconds

    def start(self) -> None:
        context = multiprocessing.get_context("fork")
        self._results, theirs = context.Pipe(duplex=False)
        self._halt = context.Event()
        self._process = context.Process(target=_sample, args=(os.getpid(), self.interval, self.pss_every,
                                                              self._halt, theirs), daemon=True)
        self._process.start()
        theirs.close()

    def stop(self) -> None:
        self._halt.set()
        (self.peak_rss, self.peak_pss, self.peak_processes, self.samples,
         self.zygote_cpu, self.own_cpu, self.peak_teacher) = self._results.recv()
        self._process.join()


def _sample(root: int, interval: float, pss_every: int, halt, results) -> None:
    me = os.getpid()  # the sampler itself is not part of what is measured
    commands: dict[int, bool] = {}

    def is_zygote(pid: int) -> bool:
        # Only a yes is remembered: the same pid is bubblewrap's child before it execs Python.
        if not commands.get(pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                # bubblewrap's own command line holds the zygote's: only the Python process counts.
                commands[pid] = b"trous.sandbox.zygote" in argv and b"bwrap" not in os.path.basename(argv[0])
            except OSError:
                return False
        return commands[pid]

    def is_test_worker(pid: int) -> bool:
        if pid not in workers:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    workers[pid] = b"trous.grade.testworker" in f.read().split(b"\0")
            except OSError:
                return False
        return workers[pid]

    workers: dict[int, bool] = {}
    peak_rss = peak_pss = peak_processes = samples = peak_teacher = 0
    zygote_cpu: dict[int, float] = {}
    while not halt.is_set():
        tree, cpu = _processes()
        pids, frontier = [root], [root]
        while frontier:
            for child in tree.get(frontier.pop(), []):
                if child != me:
                    pids.append(child)
                    frontier.append(child)
        rss = pss = 0
        with_pss = samples % pss_every == 0
        for pid in pids:
            r, p = _memory_kib(pid) if with_pss else (_rss_kib(pid), 0)
            rss, pss = rss + r, pss + p
            if pid == root or is_test_worker(pid):  # the teacher's own processes (not the sandboxes')
                peak_teacher = max(peak_teacher, r)
            if pid in cpu and is_zygote(pid):
                # The first zygote found is the one under bubblewrap's init, or the unisolated runner's own.
                parent_is_zygote = any(pid in tree.get(q, []) and is_zygote(q) for q in pids)
                if not parent_is_zygote:
                    zygote_cpu[pid] = cpu[pid]
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        peak_processes = max(peak_processes, len(pids))
        samples += 1
        halt.wait(interval)
    results.send((peak_rss, peak_pss, peak_processes, samples, zygote_cpu,
                  _cpu(resource.getrusage(resource.RUSAGE_SELF)), peak_teacher))
    results.close()


def _cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mesure trous grade sur une classe générée.")
    parser.add_argument("--eleves", type=int, default=200)
    parser.add_argument("--boucles", type=int, default=2, help="copies avec une boucle sans fin")
    parser.add_argument("--parallele", "-j", "--workers", dest="workers", type=int, default=None)
    parser.add_argument("--bac-a-sable", default="auto", choices=("auto", "bwrap", "sans-isolation"))
    parser.add_argument("--graine", type=int, default=3)
    parser.add_argument("--profil", action="store_true", help="profil cProfile du processus principal")
    parser.add_argument("--garder", help="dossier où garder la classe et les résultats")
    parser.add_argument("--echantillons", type=float, default=4.0, metavar="PAR_SECONDE",
                        help="échantillons de mémoire (RSS) par seconde (défaut : 4)")
    parser.add_argument("--echantillons-pss", type=float, default=1.0, metavar="PAR_SECONDE",
                        help="dont, avec la PSS (qui parcourt les tables de pages), par seconde (défaut : 1)")
    args = parser.parse_args(argv)

    course = Course.load(ROOT)
    work = Path(args.garder) if args.garder else Path(tempfile.mkdtemp(prefix="trous-bench-"))
    if args.garder and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = time.perf_counter()
        counts = make_class(course, work / "classe", args.eleves, args.boucles, args.graine)
        generated = time.perf_counter() - t
        exercises = len(gen.load_materials(course))
        print(f"classe : {args.eleves} élèves × {exercises} exercices ({generated:.1f} s pour la générer) : "
              + ", ".join(f"{v} {k}" for k, v in counts.items()))
        options = GradeOptions(work / "classe", work / "resultats", args.bac_a_sable, args.workers)
        sandbox = []
        first = []
        hooks = Hooks(sandbox=lambda kind, text: sandbox.append(kind),
                      graded=lambda grade: first.append(time.perf_counter()) if not first else None)
        memory = TreeMemory(interval=1.0 / args.echantillons,
                            pss_every=max(1, round(args.echantillons / args.echantillons_pss)))
        memory.start()
        profile = cProfile.Profile() if args.profil else None
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        self_before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        if profile:
            profile.enable()
        outcome = grade_class(course, options, hooks)
        if profile:
            profile.disable()
        wall = time.perf_counter() - start
        memory.stop()
        # CPU seconds hardly depend on what else the machine runs (wall time does, on a shared machine).
        own = _cpu(resource.getrusage(resource.RUSAGE_SELF)) - _cpu(self_before)
        children = sum(memory.zygote_cpu.values())
        n = len(outcome.grades)
        grading = outcome.timings.get("correction", float("nan"))
        workers = args.workers or default_parallel()
        rows = [
            ("copies notées", f"{n}", ""),
            ("bac à sable, workers", f"{sandbox[0] if sandbox else '?'}, {workers}", ""),
            ("durée totale (lecture → rapports)", f"{wall:.1f} s", ""),
            ("  dont correction", f"{grading:.1f} s", ""),
            *((f"  dont {k}", f"{v:.2f} s", "") for k, v in outcome.timings.items() if k != "correction"),
            ("copies par seconde", f"{n / wall:.2f}", ""),
            ("secondes par élève", f"{wall / n:.3f} s", "< 0,1 s"),
            ("secondes par élève (correction seule)", f"{grading / n:.3f} s", ""),
            ("CPU par élève, tous processus", f"{(own + children) / n:.3f} s", f"< {0.1 * cores():.1f} s"),
            ("  dont processus principal", f"{own / n:.3f} s", ""),
            ("  dont bacs à sable (zygotes et tout ce qu'ils lancent)", f"{children / n:.3f} s", ""),
            ("pic mémoire, arbre de processus (PSS)", f"{memory.peak_pss / 1024:.0f} Mio", "< 500 Mio"),
            ("pic mémoire, somme des RSS", f"{memory.peak_rss / 1024:.0f} Mio", ""),
            ("processus au plus", f"{memory.peak_processes}", ""),
            ("mesure de la mémoire (hors arbre)", f"{memory.samples} éch. (PSS : 1 sur {memory.pss_every}), {memory.own_cpu:.2f} s CPU", ""),
            ("charge de la machine au départ", f"{load:.1f} (cœurs : {os.cpu_count()})", ""),
        ]
        width = max(len(r[0]) for r in rows)
        print()
        for label, value, target in rows:
            print(f"{label:<{width}}  {value:>16}  {target}")
        per_student = wall / n
        print()
        print(("OBJECTIF ATTEINT" if per_student < 0.1 else "objectif de temps manqué")
              + f" : {per_student:.3f} s par élève ; "
              + ("mémoire sous 500 Mio" if memory.peak_pss / 1024 < 500 else "mémoire AU-DESSUS de 500 Mio"))
        if profile:
            print("\nprofil du processus principal (le code des élèves tourne dans les bacs à sable) :")
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(18)
            print(out.getvalue())
    finally:
        if not args.garder:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
