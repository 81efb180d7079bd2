"""`trous grade SUBMISSIONS`: grade a whole class, store it in the gradebook, write the reports.

`grade_class()` does everything but printing (the benchmarks reuse it). Extension points: input kinds
(`kinds.KINDS`, `--format`) and `SCHEDULERS` (`--ordonnanceur`), which yield the grades of their copies.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..core.course import Course, course_for, memory_bound
from ..grade import assignments as assignments_mod
from ..inputs import intake as intake_mod, kinds as kinds_mod
from . import moodle as moodle_mod
from .exports import assignment_columns, exercise_columns
from . import writing
from ..inputs.lookalike import lookalikes
from ..grade import testworker
from ..grade.engine import Grader, GraderError, fingerprint, preloaded
from ..core.grades import UNISOLATED, SubmissionGrade
from ..core.safetext import printable
from ..core.submission import IgnoredFile, Submission
from ..core.wording import count, french_number, plural
from ..core import options as cli_options
from ..sandbox import backend as sandbox_mod
from ..sandbox.pool import RunnerError, RunnerPool
from ..sandbox.uids import LeaseError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class GradeOptions:
    source: Path
    results: Path | None = None
    sandbox: str = "auto"  # "auto", "bwrap", or "sans-isolation" (never as root): runner.sandbox.choose
    workers: int | None = None
    gradebook: str | None = None  # SQLAlchemy URL; default sqlite:///<results>/gradebook.db
    force: bool = False
    kind: str = "auto"
    scheduler: str = "local"
    address: str | None = None  # a distributed scheduler's address (tcp://host:8786), for "dask"
    assignments: list[str] | None = None  # --devoir: grade these assignments only (else: read from the copies)
    worksheet: Path | None = None  # --feuille: Moodle's offline grading worksheet of the same assignment
    participants: Path | None = None  # --participants: each copy's Moodle account (username or email)
    exercises: tuple[str, ...] | None = None  # set by grade_class: the exercises the run grades

    @property
    def results_dir(self) -> Path:
        return self.results or default_results(self.source, self.assignments)


@dataclass
class Hooks:
    """What the caller wants to hear about while grading (the CLI draws with these)."""

    sandbox: Callable[[str, str], None] = lambda kind, description: None  # once, before the first copy
    started: Callable[[int, int], None] = lambda to_grade, skipped: None
    graded: Callable[[SubmissionGrade], None] = lambda grade: None


@dataclass
class Outcome:
    intake: intake_mod.Intake
    grades: Sequence[SubmissionGrade]  # current grade of every student of the input, in its order (SavedGrades)
    graded: list[str]  # students graded by this run
    skipped: list[str]  # students whose content this grader had already graded
    reports: dict[str, Path]
    gradebook: str
    sandbox: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    scope: assignments_mod.Scope | None = None
    round_trip: moodle_mod.RoundTrip | None = None
    # Graders' tests that behaved on a copy otherwise than on the reference, copies that tampered with
    # what the sandbox sends (each costs only that copy): for the teacher, in the terminal and the report.
    incidents: list[str] = field(default_factory=list)

    @property
    def summaries(self) -> Sequence[SubmissionGrade]:
        """What the terminal's table reads of each grade: a run's are its summaries (reports.summary)."""
        return self.grades.summaries if isinstance(self.grades, SavedGrades) else self.grades


def default_results(source: Path, assignments: list[str] | None = None) -> Path:
    """Next to the input, named after it (`classe/` → `classe-resultats/`, with --devoir
    `classe-resultats-chapitre1/`), unless the input kind has its own place (an nbgrader course's)."""
    suffix = "".join(f"-{a}" for a in sorted(dict.fromkeys(assignments or ())))
    carried = kinds_mod.carried_results(source)
    if carried is not None:
        return carried / suffix[1:] if suffix else carried
    source = Path(source).absolute()
    stem = source.name[:-4] if source.name.lower().endswith(".zip") else source.name
    return source.parent / f"{stem or 'copies'}-resultats{suffix}"


def check_results_place(source: Path, results: Path) -> None:
    """Refuse, before anything is read, a results folder that is the copies folder or inside one
    student's copy (directly in the copies folder is fine: it is then never graded)."""
    source, results = Path(source).resolve(), Path(results).resolve()
    if not source.is_dir():
        return
    if results == source:
        raise intake_mod.IntakeError(f"--resultats {results} : c'est le dossier des copies ; choisis un autre dossier "
                                     f"(par défaut : {default_results(source)})")
    carried = kinds_mod.carried_results(source)  # an input's own place (an nbgrader course's) holds no copy
    if source in results.parents and len(results.relative_to(source).parts) > 1 and not (
            carried is not None and carried.resolve() in results.parents):
        copy = printable(results.relative_to(source).parts[0])
        raise intake_mod.IntakeError(f"--resultats {results} : ce dossier est dans la copie « {copy} », que trous ne "
                                     "modifie jamais ; choisis un dossier hors des copies")


# -- schedulers -----------------------------------------------------------------------------------
Scheduler = Callable[[Course, list[Submission], GradeOptions, Hooks], Iterator[SubmissionGrade]]


def local_scheduler(course: Course, submissions: list[Submission], options: GradeOptions,
                    hooks: Hooks) -> Iterator[SubmissionGrade]:
    with RunnerPool(options.workers or cli_options.default_parallel(), options.sandbox,
                    memory_mb=memory_bound(course.exercises)) as pool:
        # Every sandbox starts now, preloading what the course requires (NumPy, torch…): the first
        # computes the references while the others get ready.
        pool.want(preloaded(course, options.exercises))
        for runner in pool.runners:
            runner.launch()
        spec, kind = pool.runners[0].spec, pool.kind
        hooks.sandbox(kind, spec.description if spec else kind)
        for grade in Grader(course, pool, only=options.exercises).grade_many(read_ahead(submissions, 2 * pool.size)):
            grade.isolation = kind
            yield grade


def read_ahead(submissions: Sequence[Submission], depth: int) -> Iterator[tuple[str, dict[str, bytes | None]]]:
    """(student, files) of each copy, its bytes read (`Stored`) by a thread of its own at most `depth`
    copies ahead of the graders: a class's bytes are never all held, and the grading threads, which
    take the copies one at a time, never wait on a disk while holding that turn."""
    reader = ThreadPoolExecutor(1, thread_name_prefix="trous-lecture")
    ahead: collections.deque[Future] = collections.deque()
    try:
        for submission in submissions:
            ahead.append(reader.submit(lambda s=submission: (s.student, dict(s.files))))
            if len(ahead) > depth:
                yield ahead.popleft().result()  # a reading's error is raised where the copies are taken
        while ahead:
            yield ahead.popleft().result()
    finally:
        reader.shutdown(cancel_futures=True)


def dask_scheduler(course: Course, submissions: list[Submission], options: GradeOptions,
                   hooks: Hooks) -> Iterator[SubmissionGrade]:
    from ..grade.dask import ClusterUnavailable  # noqa: PLC0415 - Dask only when asked for
    from ..grade.dask import dask_scheduler as on_cluster  # noqa: PLC0415

    try:
        yield from on_cluster(course, submissions, options, hooks)
    except ClusterUnavailable as exc:  # said as any other problem of the input: before grading
        raise intake_mod.IntakeError(str(exc)) from None


SCHEDULERS: dict[str, Scheduler] = {"local": local_scheduler, "dask": dask_scheduler}
ENV_SCHEDULER = "TROUS_SCHEDULER"  # --ordonnanceur's default: a site setting, not a course one


# -- isolation ------------------------------------------------------------------------------------
def grading_version(version: str, isolation: str) -> str:
    """The grader version recorded for a grading: a grading without isolation is another version, so
    that a later isolated run grades those copies again instead of keeping what their code could fake."""
    if isolation != UNISOLATED:
        return version
    return hashlib.sha256(f"trous/{UNISOLATED}\0{version}".encode()).hexdigest()


# -- the whole run --------------------------------------------------------------------------------
def grade_class(course: Course, options: GradeOptions, hooks: Hooks | None = None) -> Outcome:
    hooks = hooks or Hooks()
    timings: dict[str, float] = {}
    check_results_place(options.source, options.results_dir)
    try:
        if options.assignments:  # a typo is said before anything else happens
            assignments_mod.check_requested(course, options.assignments)
    except assignments_mod.ScopeError as exc:
        raise intake_mod.IntakeError(str(exc)) from None
    t = time.perf_counter()
    # The isolation first, before any copy is read: a refusal (SandboxRefused) stops everything here. On
    # a cluster each worker decides for itself: only the request is checked here.
    if options.scheduler == "local":
        options = dataclasses.replace(options, sandbox=sandbox_mod.choose(options.sandbox))
    elif options.sandbox not in sandbox_mod.GRADING_MODES:
        sandbox_mod.choose(options.sandbox)  # raises, saying why
    timings["bac à sable"] = time.perf_counter() - t
    t = time.perf_counter()
    if options.scheduler == "local":  # a cluster's workers collect the graders on their own machines
        testworker.start_ahead(course.root, testworker.test_files(course.exercises), memory_bound(course.exercises))
    try:
        intake = kinds_mod.load(options.source, course, options.kind, results=options.results_dir,
                                assignments=options.assignments)
        with contextlib.closing(intake):  # what the copies were read from (Moodle's archive)
            return _graded(course, options, hooks, intake, timings, t)
    finally:
        testworker.drop_ahead()  # not taken: fewer exercises graded than the course has, or a refusal


def _graded(course: Course, options: GradeOptions, hooks: Hooks, intake: intake_mod.Intake,
            timings: dict[str, float], t: float) -> Outcome:
    from .gradebook import Gradebook, default_url  # noqa: PLC0415  (SQLAlchemy: the grading extra)
    from .reports import ResultFiles  # noqa: PLC0415

    scope, trip, participants = _prepare(course, options, intake)
    options = dataclasses.replace(options, exercises=tuple(scope.exercises(course)))
    timings["lecture des copies"] = time.perf_counter() - t
    if options.scheduler not in SCHEDULERS:
        raise intake_mod.IntakeError(f"ordonnanceur inconnu « {options.scheduler} » "
                                     f"(possibles : {', '.join(SCHEDULERS)})")
    results_dir = options.results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    intake_mod.stamp(results_dir)  # kept among the copies, it is then never taken for a student's folder
    recorded = grading_version(fingerprint(course), options.sandbox)
    by_student = {s.student: s for s in intake.submissions}
    # The exercises graded for each set of assignments handed in (a few sets, however large the class).
    graded_exercises = {mine: scope.exercises(course, mine) for mine in set(scope.per_copy.values())}
    gradebook = Gradebook(options.gradebook or default_url(results_dir))
    # nbgrader's gradebook, written as grades come (an nbgrader course as input)
    sink = (writing.GradebookSink(intake.source, course, options.assignments, gradebook, list(by_student),
                                  writing.claim(intake.source)) if intake.kind == "nbgrader" else None)
    try:
        t = time.perf_counter()
        done = {} if options.force else gradebook.graded(intake.submissions, recorded)
        gradebook.reuse(intake.submissions, done)
        todo = [s for s in intake.submissions if s.student not in done]
        for submission in intake.submissions:
            if submission.student in done:
                submission.release()
        run_id = gradebook.start_run(course.id, recorded, sandbox=options.sandbox, source=str(options.source),
                                     submissions=len(intake.submissions))
        hooks.started(len(todo), len(done))
        graded, incidents, sandbox = [], [], ""  # students graded by this run, Outcome.incidents, the sandbox's kind
        timings["carnet de notes"] = time.perf_counter() - t
        not_handed_in = {s: tuple(a for a in scope.assignments if a not in scope.per_copy[s]) for s in by_student}
        # Each student's own files are written as soon as the grade is recorded, while the other copies
        # are graded; those whose grade changed since (formgrader's, through settle) are written again.
        files = ResultFiles(results_dir, course, intake.submissions, not_handed_in)
        files_time = 0.0
        if todo:
            t = time.perf_counter()
            recording = 0.0
            for grade in SCHEDULERS[options.scheduler](course, todo, options, hooks):
                if grade.unisolated and options.sandbox != UNISOLATED:  # a worker must never decide this alone
                    raise GraderError(f"{grade.student} : corrigée sans isolation alors que ce n'était pas demandé")
                sandbox = grade.isolation  # set by the scheduler: the kind its sandbox said it is
                grade.grader_version = grading_version(grade.grader_version, grade.isolation)
                # Only the assignments this copy hands in (a scheduler may grade the whole course).
                grade = assignments_mod.restrict_grade(grade, graded_exercises.get(scope.per_copy.get(grade.student), []))
                r = time.perf_counter()
                # once: a grader sharing the gradebook may have recorded this copy meanwhile (--force: a new grading)
                gradebook.record(run_id, by_student[grade.student], grade, once=not options.force)
                by_student[grade.student].release()  # graded: its bytes are not needed any more
                recording += time.perf_counter() - r
                if sink is not None:
                    sink.consume(grade)
                graded.append(grade.student)
                incidents += [f"copie « {printable(grade.student)} », {incident}" for incident in grade.incidents]
                hooks.graded(grade)
                w = time.perf_counter()
                files.consume(grade)
                files_time += time.perf_counter() - w
            timings["correction"] = time.perf_counter() - t - recording - files_time
            timings["carnet de notes"] += recording
        gradebook.finish_run(run_id, len(graded), len(done))
        t = time.perf_counter()
        reports = _settle(gradebook, by_student, files, sink, submissions=intake.submissions, ignored=intake.ignored,
                          notes=intake.warnings, participants=participants, round_trip=trip,
                          scope_notes=_scope_notes(course, scope), incidents=incidents)
        grades = [files.summaries[s.student] for s in intake.submissions]
        assignments_mod.record_results(results_dir, scope)
        timings["rapports"] = time.perf_counter() - t + files_time
        saved = SavedGrades(results_dir / "results", grades, [files.stems[g.student] for g in grades])
        return Outcome(intake, saved, graded, sorted(done), reports, gradebook.path, sandbox, timings, scope, trip,
                       incidents)
    finally:
        if sink is not None:  # stopped before the grades were settled (settling empties it)
            sink.close()
        gradebook.close()


def _settle(gradebook, by_student: dict[str, Submission], files, nbgrader, **class_files) -> dict[str, Path]:
    """Every current grade, read back from the gradebook, consumed by the results files, which then
    settle (`class_files`: write_class's keywords); on an nbgrader course, through its sink first."""
    current = (grade for _, grade in gradebook.each_current(by_student))
    reports: dict[str, Path] = {}
    if nbgrader is not None:
        for grade in current:
            nbgrader.consume(grade)
        reports = nbgrader.settle()
        current = nbgrader.current()
    consumed = set()
    for grade in current:
        files.consume(grade)
        consumed.add(grade.student)
    missing = [s for s in by_student if s not in consumed]
    if missing:  # cannot happen unless the database was changed under us
        raise GraderError(f"pas de note enregistrée pour : {', '.join(missing[:5])}")
    return {**files.settle(by_student, gradebook=gradebook, **class_files), **reports}


class SavedGrades(Sequence):
    """The run's grades in the input's order, each read back from its results file when asked: a class
    of any size is never all in memory (`Outcome.summaries` holds what the tables need)."""

    def __init__(self, folder: Path, summaries: list[SubmissionGrade], stems: list[str]):
        self.folder, self.summaries, self.stems = folder, summaries, stems

    def __len__(self) -> int:
        return len(self.stems)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        data = json.loads((self.folder / f"{self.stems[index]}.json").read_text(encoding="utf-8"))
        return SubmissionGrade.from_json(data)


def _scope_notes(course: Course, scope: assignments_mod.Scope) -> list[str]:
    """For the class report: the assignments graded, and why the others were not."""
    titles = assignments_mod.titles(course)
    how = "demandé avec --devoir" if scope.chosen else "rendu dans les copies"
    notes = [f"{plural(len(scope.assignments), 'devoir corrigé', 'devoirs corrigés')} : "
             f"{', '.join(titles.get(a, a) for a in scope.assignments)} ({how})"]
    if not scope.chosen:
        notes += [f"non corrigé : {titles.get(a, a)} — {why}" for a, why in scope.left_out]
    return notes


def _prepare(course: Course, options: GradeOptions, intake: intake_mod.Intake):
    """Before any copy is graded (a refusal now, not after minutes of grading): the run's assignments and
    each copy's, the Moodle worksheet, the accounts file; copies handing in none are listed as entries."""
    try:
        scope = assignments_mod.resolve(course, intake.submissions, options.assignments)
        if not scope.assignments:
            raise intake_mod.IntakeError(f"{intake.source} : aucun devoir du cours dans ces copies")
        titles = assignments_mod.titles(course)
        asked = ", ".join(titles.get(a, a) for a in scope.assignments)
        kept = []
        for submission in intake.submissions:
            mine = scope.per_copy[submission.student]
            if not mine:
                intake.ignored.append(IgnoredFile(printable(submission.student) + "/",
                                                  f"ne rend pas {asked} : rien à corriger ici"))
                continue
            kept.append(assignments_mod.restrict_files(course, submission, mine))
        if not kept:
            raise intake_mod.IntakeError(f"{intake.source} : aucune copie pour {asked}")
        intake.submissions = kept
        intake.warnings += lookalikes((s.student, s.name or s.student) for s in kept)
        assignments_mod.check_results(options.results_dir, scope)
        trip = None
        if options.worksheet is not None:
            if len(scope.assignments) != 1:
                raise intake_mod.IntakeError(
                    "--feuille : une feuille d'évaluation de Moodle est celle d'un seul devoir ; précise lequel "
                    f"avec --devoir (devoirs de ces copies : {', '.join(scope.assignments)})")
            sheet = moodle_mod.read_worksheet(options.worksheet)
            trip = moodle_mod.RoundTrip(scope.assignments, sheet, moodle_mod.match(sheet, kept, intake.moodle),
                                        intake.moodle)
        elif intake.moodle is not None and (intake.moodle.participants or intake.moodle.conflicts or intake.moodle.team):
            trip = moodle_mod.RoundTrip(scope.assignments, copies=intake.moodle)
        participants = None
        if options.participants is not None:
            participants = moodle_mod.read_participants(options.participants, [s.student for s in kept])
        return scope, trip, participants
    except (assignments_mod.ScopeError, moodle_mod.MoodleError) as exc:
        raise intake_mod.IntakeError(str(exc)) from None


# -- printing -------------------------------------------------------------------------------------
@dataclass
class _Column:
    header: str
    cells: list[str]  # rich markup, one per grade
    bold: bool = False


def _columns(course: Course, outcome: Outcome) -> list[list[_Column]]:
    """The table's columns, one block per assignment (its exercises, then its total when the run grades
    several), the total at the end of the last one: grades.csv's columns."""
    grades = outcome.summaries
    assignments = (outcome.scope.assignments if outcome.scope is not None
                   else tuple(assignments_mod.graded_assignments(course, grades)))
    several = len(assignments) > 1
    exercises = {e.id: e for e in course.exercises}
    blocks: list[list[_Column]] = []
    for assignment, ids in assignment_columns(course, exercise_columns(course, grades)):
        block = [_Column(f"{exercises[i].number}\n/{french_number(exercises[i].points)}",
                         [_cell(next((x for x in g.exercises if x.id == i), None)) for g in grades]) for i in ids]
        if several:
            held = [[x.score for x in g.exercises if x.id in ids] for g in grades]
            block.append(_Column(f"{_escape(assignment.key)}\n/{french_number(sum(exercises[i].points for i in ids))}",
                                 [french_number(sum(h)) if h else "[dim]non rendu[/]" for h in held], bold=True))
        blocks.append(block)
    if not several:
        maximum = max((g.max_score for g in grades), default=sum(e.points for e in course.exercises))
        total = _Column(f"total\n/{french_number(maximum)}", [french_number(g.score) for g in grades], bold=True)
        if blocks:
            blocks[-1].append(total)
        else:
            blocks.append([total])
    return blocks


def _cell(e) -> str:
    """An exercise's points in the table, coloured; « — » when the copy does not hold it."""
    if e is None:
        return "[dim]—[/]"
    colour = "green" if e.score >= e.max_score else ("red" if e.score == 0 else "yellow")
    return f"[{colour}]{french_number(e.score)}[/]"


def _tables(course: Course, outcome: Outcome, console) -> list:
    """The grades as tables that fit the terminal, nothing cut: names wrap; exercises that do not fit
    side by side go in several tables (whole assignments together when they fit)."""
    from rich import box  # noqa: PLC0415
    from rich.measure import Measurement  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    names = {s.student: s.name for s in outcome.intake.submissions}
    with_names = any(names.get(g.student) for g in outcome.summaries)
    title = f"{course.title} — {count(len(outcome.summaries), 'copie')}"

    def table(columns: list[_Column], part: int, parts: int):
        shown = title + (f" ({part}/{parts})" if parts > 1 else "")
        t = Table(title=_escape(shown), box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
        # Students' names: wrapped (sooner on a narrow terminal), never cut, never read as markup.
        t.add_column("étudiant", overflow="fold", max_width=min(28, max(10, console.width // 5)))
        if with_names:
            t.add_column("nom", overflow="fold", max_width=min(24, max(10, console.width // 5)))
        for column in columns:
            t.add_column(column.header, justify="right", no_wrap=True, style="bold" if column.bold else None)
        for row, grade in enumerate(outcome.summaries):
            who = [_escape(printable(grade.student))]
            if with_names:
                who.append(_escape(printable(names.get(grade.student, ""))))
            t.add_row(*who, *[c.cells[row] for c in columns])
        return t

    unbounded = console.options.update_width(1 << 20)  # the table's own width, not the terminal's

    def fits(columns: list[_Column]) -> bool:
        return Measurement.get(console, unbounded, table(columns, 1, 1)).maximum <= console.width

    chunks: list[list[_Column]] = []
    current: list[_Column] = []
    for block in _columns(course, outcome):
        if fits(current + block):
            current = current + block
            continue
        if current:
            chunks.append(current)
            current = []
        for column in block:  # a block too wide alone: as many of its columns per table as fit
            if current and not fits(current + [column]):
                chunks.append(current)
                current = []
            current.append(column)
    if current or not chunks:
        chunks.append(current)
    return [table(c, i + 1, len(chunks)) for i, c in enumerate(chunks)]


REPORT_LABELS = {
    "grades_csv": "notes (tableur)",
    "moodle_sheet": "feuille Moodle remplie",
    "moodle_sheet_fr": "feuille Moodle (français)",
    "moodle_sheet_en": "feuille Moodle (anglais)",
    "moodle_feedback": "retours pour Moodle (.zip)",
    "moodle_readme": "renvoyer dans Moodle (aide)",
    "moodle_csv": "import carnet Moodle",
    "moodle_help": "aide à l'import du carnet",
    "results": "résultats JSON par étudiant",
    "feedback": "retours HTML par étudiant",
    "schema": "schéma JSON des résultats",
    "class_report": "rapport de classe",
    "isolation_notice": "AVERTISSEMENT sans isolation",
}


def cmd_grade(args) -> int:
    from rich.console import Console  # noqa: PLC0415
    from rich.panel import Panel  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415
    from rich.progress import TimeRemainingColumn  # noqa: PLC0415

    console = Console(highlight=False)
    try:  # an input that carries its course (an nbgrader course built by trous) is graded with it
        course = kinds_mod.carried_course(Path(args.copies), args.format, args.cours) or course_for(args.cours)
    except intake_mod.IntakeError as exc:
        console.print(f"[red]erreur :[/] {_escape(str(exc))}", soft_wrap=True)
        return EXIT_USAGE
    try:
        sandbox_mode = cli_options.sandbox_mode(args)
    except ValueError as exc:
        console.print(f"[red]erreur :[/] {_escape(str(exc))}")
        return EXIT_USAGE
    try:  # the site's default is held to --ordonnanceur's rule: a typo there is no Dask address either
        scheduler = args.ordonnanceur or _scheduler(os.environ.get(ENV_SCHEDULER) or "local")
    except argparse.ArgumentTypeError as exc:
        console.print(f"[red]erreur :[/] ${ENV_SCHEDULER} : {_escape(str(exc))}")
        return EXIT_USAGE
    where, address = (scheduler, None) if scheduler in SCHEDULERS else ("dask", scheduler)
    grading = GradeOptions(Path(args.copies), Path(args.resultats) if args.resultats else None, sandbox_mode,
                           args.parallele, args.carnet, args.force, args.format, where, address=address,
                           assignments=args.devoir or None, worksheet=Path(args.feuille) if args.feuille else None,
                           participants=Path(args.participants) if args.participants else None)
    progress = Progress(TextColumn("[bold]correction[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("reste"), TimeRemainingColumn(), TextColumn("{task.description}"),
                        console=console, transient=False)
    task = None

    def sandbox(kind: str, description: str) -> None:
        if kind == UNISOLATED:
            console.print(Panel(f"[bold]{_escape(description)}[/]", title="[bold red]ATTENTION : SANS ISOLATION[/]",
                                border_style="red"))
        else:
            console.print(f"[dim]bac à sable : {_escape(description)}[/]")

    def started(to_grade: int, skipped: int) -> None:
        nonlocal task
        total = to_grade + skipped
        console.print(f"{count(total, 'copie')} : {to_grade} à corriger"
                      + (f", {skipped} {plural(skipped, 'inchangée')} depuis la dernière correction "
                         f"(déjà {plural(skipped, 'notée')})" if skipped else ""))
        if to_grade:
            progress.start()
            task = progress.add_task("", total=to_grade)

    def graded(grade: SubmissionGrade) -> None:
        if task is not None:
            progress.update(task, advance=1,
                            description=f"{_escape(printable(grade.student))} : {french_number(grade.score)}")

    failure = None  # (what to say once the progress bar is stopped, exit code, soft_wrap)
    try:
        outcome = grade_class(course, grading, Hooks(sandbox, started, graded))
    except ModuleNotFoundError as exc:
        if exc.name not in ("sqlalchemy", "jinja2"):
            raise
        failure = (f"[red]erreur :[/] il manque le module {exc.name} pour corriger une classe : "
                   "installe « pip install 'trous[grading]' »", EXIT_USAGE, False)
    except intake_mod.IntakeError as exc:  # escape: « trous[distributed] », paths
        failure = f"[red]erreur :[/] {_escape(str(exc))}", EXIT_USAGE, False
    except GraderError as exc:
        failure = (f"[red]le correcteur ne peut pas tourner :[/] {_escape(str(exc))}\n(lance « trous doctor » pour le "
                   "détail)", EXIT_FAILED, False)
    except RuntimeError as exc:  # no isolation here, or the sandbox cannot start
        if type(exc) is not RuntimeError and not isinstance(exc, (RunnerError, sandbox_mod.SandboxRefused, LeaseError)):
            raise  # RecursionError and friends are bugs, not sandbox trouble
        failure = f"[red]erreur du bac à sable :[/] {_escape(str(exc))}", EXIT_FAILED, True
    except KeyboardInterrupt:
        failure = ("[yellow]interrompu.[/] Les copies déjà corrigées sont enregistrées : relance la même "
                   "commande pour reprendre là où elle s'est arrêtée.", EXIT_INTERRUPTED, False)
    finally:
        progress.stop()
    if failure is not None:
        console.print(failure[0], soft_wrap=failure[2])
        return failure[1]
    _print_intake(console, outcome)
    _print_scope(console, course, outcome)
    for table in _tables(course, outcome, console):
        console.print(table)
    _print_copies(console, outcome)
    _print_incidents(console, outcome)
    if outcome.round_trip is not None:
        for line in outcome.round_trip.lines:
            console.print(_escape(f"Moodle : {line}"), soft_wrap=True)
    shown = outcome.gradebook if "://" in outcome.gradebook else _shown(Path(outcome.gradebook))
    console.print(f"carnet de notes : {_escape(shown)}", soft_wrap=True)
    unisolated = sum(1 for g in outcome.summaries if g.unisolated)
    if unisolated:
        console.print(f"[bold red]{count(unisolated, 'note obtenue', 'notes obtenues')} sans isolation[/] "
                      "(--sans-isolation) : elles ne valent que pour du code de confiance ; chaque page de résultats "
                      "le signale.")
    ordered = [k for k in REPORT_LABELS if k in outcome.reports] + [k for k in outcome.reports if k not in REPORT_LABELS]
    for key in ordered:  # reports an input kind adds (nbgrader's gradebook…) come last, under their key
        path = Path(outcome.reports[key])
        label = REPORT_LABELS.get(key, key.replace("_", " "))
        console.print(_escape(f"{label:30} {_shown(path)}{os.sep if path.is_dir() else ''}"), soft_wrap=True)
    return EXIT_OK


SHOWN_ENTRIES, SHOWN_COPIES, SHOWN_GROUPS, SHOWN_NAMES = 30, 30, 4, 4


def _print_incidents(console, outcome: Outcome) -> None:
    """What the teacher should look at (Outcome.incidents); the class report lists them all."""
    if not outcome.incidents:
        return
    console.print(f"[yellow]à vérifier[/] : {count(len(outcome.incidents), 'remarque')} pour l'enseignant (chacune "
                  "ne compte que contre sa copie ; la correction a continué) :", soft_wrap=True)
    _print_some(console, [f"  {printable(i)}" for i in outcome.incidents], SHOWN_COPIES,
                "  … et {} autres (rapport de classe)")


def _print_some(console, lines: list[str], shown: int, more: str, counted: str = "") -> None:
    """`lines` (plain text) up to `shown`, then `more` with the number of the others (`counted`: that
    number as `count(n, counted)`)."""
    for line in lines[:shown]:
        console.print(_escape(line), soft_wrap=True)
    if len(lines) > shown:
        hidden = len(lines) - shown
        console.print(more.format(count(hidden, counted) if counted else hidden))


def _print_scope(console, course: Course, outcome: Outcome) -> None:
    """Which assignments this run grades, and why the others are not."""
    scope = outcome.scope
    if scope is None:
        return
    titles = assignments_mod.titles(course)
    shown = ", ".join(f"{a} ({titles.get(a, a)})" for a in scope.assignments)
    how = "demandé avec --devoir" if scope.chosen else "rendu dans les copies"
    word = plural(len(scope.assignments), "devoir corrigé", "devoirs corrigés")
    console.print(_escape(f"{word} : {shown} — {how}"), soft_wrap=True)
    if scope.left_out and not scope.chosen:
        reasons: dict[str, list[str]] = {}
        for assignment, why in scope.left_out:
            reasons.setdefault(why, []).append(assignment)
        for why, ids in reasons.items():
            console.print(f"[dim]{plural(len(ids), 'laissé', 'laissés')} de côté : {_escape(', '.join(ids))} — "
                          f"{_escape(why)} (« --devoir » pour choisir)[/]", soft_wrap=True)
    missing = sum(1 for s in scope.per_copy.values() if 0 < len(s) < len(scope.assignments))
    if missing:
        console.print(f"[dim]{count(missing, 'copie')} ne {plural(missing, 'rend', 'rendent')} pas tous ces devoirs : "
                      "« non rendu » dans le tableau, jamais compté comme zéro[/]")


def _print_intake(console, outcome: Outcome) -> None:
    """Before the table: notes about the input, and its entries that are no copy, with why. Every name
    goes through `printable` and is escaped for rich (« [bold] » in a folder name is text)."""
    intake = outcome.intake
    source = printable(intake.source.name)
    for warning in intake.warnings:
        console.print(f"[yellow]remarque[/] ({_escape(source)}) : {_escape(printable(warning))}", soft_wrap=True)
    if intake.ignored:
        n = len(intake.ignored)
        verb = plural(n, "n'est pas une copie", "ne sont pas des copies")
        console.print(f"[yellow]{count(n, 'entrée')} de {_escape(source)} {verb}[/] :")
        _print_some(console, [f"  {printable(item.path)} : {printable(item.reason)}" for item in intake.ignored],
                    SHOWN_ENTRIES, "  … et {} (liste complète dans le rapport de classe)", "autre")


def _print_copies(console, outcome: Outcome) -> None:
    """After the table: each copy's notes and the files it held that matter (a renamed exercise, a
    stray .py); routine ones (the course's files, caches) are only counted here."""
    noted = [s for s in outcome.intake.submissions if s.warnings or any(i.notable for i in s.ignored)]
    if noted:
        console.print(f"[yellow]{count(len(noted), 'copie')} avec des remarques ou des fichiers non corrigés[/] "
                      "(repris dans leur page de retour) :")
    for s in noted[:SHOWN_COPIES]:
        label = printable(s.student) + (f" ({printable(s.name)})" if s.name else "")
        console.print(_escape(f"  {label} :"), soft_wrap=True)
        _print_some(console, [f"    {printable(note)}" for note in s.warnings], 3, "    … et {}", "autre remarque")
        groups: dict[str, list[str]] = {}
        for item in s.ignored:
            if item.notable:
                groups.setdefault(item.reason, []).append(item.path)
        more = dict(s.unlisted)
        lines = []
        for reason, paths in groups.items():
            hidden = max(0, len(paths) - SHOWN_NAMES) + more.get(reason, 0)
            names = ", ".join(printable(p) for p in paths[:SHOWN_NAMES])
            lines.append(f"    non corrigé : {names}{f' … (+{hidden})' if hidden > 0 else ''} — {printable(reason)}")
        _print_some(console, lines, SHOWN_GROUPS, "    … et {}", "autre raison")
    if len(noted) > SHOWN_COPIES:
        console.print(f"  … et {count(len(noted) - SHOWN_COPIES, 'autre copie')} (détail dans le rapport de classe)")
    routine = [(s, sum(1 for i in s.ignored if not i.notable)
                + sum(n for r, n in s.unlisted if not any(i.notable for i in s.ignored if i.reason == r)))
               for s in outcome.intake.submissions]
    files = sum(n for _, n in routine)
    if files:
        copies = sum(1 for _, n in routine if n)
        console.print(f"[dim]{count(files, 'autre fichier non corrigé', 'autres fichiers non corrigés')} dans "
                      f"{count(copies, 'copie')} (fournis avec le cours, pas des exercices, dossiers techniques) : "
                      "détail dans le rapport de classe et les pages de retour[/]")


def _escape(text: str) -> str:
    from rich.markup import escape  # noqa: PLC0415

    return escape(text)


def _shown(path: Path) -> str:
    """Relative to the current folder when inside it (shorter, and what the teacher typed)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def register(sub) -> None:
    p = sub.add_parser("grade", help="(enseignants) corriger toutes les copies d'une classe",
                       description="Corrige les copies (un dossier par étudiant, ou le .zip de Moodle), dans un bac "
                                   "à sable, en parallèle ; enregistre les notes dans le carnet de notes et écrit "
                                   "les retours. Relancer la commande ne recorrige que les copies qui ont changé.")
    p.add_argument("copies", metavar="COPIES", help="dossier des copies ou archive .zip de Moodle")
    p.add_argument("--resultats", "--results", dest="resultats", metavar="DOSSIER",
                   help="où écrire notes et retours (par défaut : <COPIES>-resultats/ à côté des copies)")
    cli_options.add_sandbox(p, "sur chaque page de résultats")
    cli_options.add_parallel(p)
    p.add_argument("--carnet", "--gradebook", dest="carnet", metavar="URL",
                   help="base SQLAlchemy du carnet de notes (par défaut : sqlite:///<resultats>/gradebook.db)")
    cli_options.add_force(p, "tout recorriger, même les copies déjà notées")
    cli_options.add_assignment(p, "ne corriger que ce devoir du cours (son id dans course.yaml, ex. chapitre1 ; "
                              "répétable) : notes, totaux, feuille Moodle, retours et rapport de ce devoir seul (par "
                              "défaut : les devoirs rendus dans les copies, un total par devoir)")
    p.add_argument("--feuille", "--grading-worksheet", dest="feuille", metavar="FICHIER.csv",
                   help="la feuille d'évaluation hors ligne téléchargée depuis le même devoir Moodle que l'archive : "
                        "trous y écrit la note et le commentaire de chaque copie et ne change rien d'autre "
                        "(résultat : moodle-feuille-remplie.csv, à redéposer dans Moodle)")
    p.add_argument("--participants", metavar="FICHIER.csv",
                   help="le compte Moodle de chaque copie (colonnes « etudiant » ou « Identifiant », et « username » "
                        "ou « email ») : écrit moodle.csv pour l'import du carnet de notes, qui en a besoin")
    kinds = ", ".join(f"{name} ({k.description})" for name, k in kinds_mod.KINDS.items())
    p.add_argument("--format", default="auto", choices=("auto", *kinds_mod.KINDS),
                   help=f"nature de COPIES (par défaut : devinée) : {kinds}")
    # One option for where the grading runs: a name (local, dask) or a Dask scheduler's address.
    p.add_argument("--ordonnanceur", "--scheduler", dest="ordonnanceur", metavar="ORDONNANCEUR", type=_scheduler,
                   default=None,
                   help="où tournent les corrections : local (les cœurs de cette machine), ou l'adresse d'un "
                        "ordonnanceur Dask (tcp://hôte:8786) dont chaque travailleur corrige des copies (par "
                        f"défaut : ${ENV_SCHEDULER}, sinon local ; extra pip trous[distributed])")
    p.set_defaults(func=cmd_grade)


def _scheduler(text: str) -> str:
    """local, dask, or an address (host:port, tcp://host:port): anything else is a typo, said now."""
    if text in SCHEDULERS or ":" in text:
        return text
    raise argparse.ArgumentTypeError(f"« {text} » : local, dask ou l'adresse d'un ordonnanceur Dask "
                                     "(tcp://hôte:8786) est attendu")


