"""Everything a grading run writes for people, from the grades alone, in `<results_dir>/`:

    grades.csv, moodle.csv (--participants), moodle-import.txt     exports.py
    moodle-feuille-*.csv, moodle-retours.zip, moodle-lisezmoi.txt  moodle.py
    results/<élève>.json (schema: results.schema.json), retours/<élève>.html, rapport.html
    AVERTISSEMENT-sans-isolation.txt   while some current grade was given with --sans-isolation

`<élève>` is the student's stem (`file_stems`): a hostile folder name never writes elsewhere, and two
students never share a file, not even on a case-insensitive disk. Every file is written to a
temporary name then renamed (a killed run leaves it as it was or complete); the same grades give the
same bytes; files of students no longer graded are removed.

The HTML pages show only what `SubmissionGrade` holds (messages the engine made safe to show, hints):
nothing of the hidden graders. Student-controlled text (their exceptions, folder names) is untrusted:
the templates always autoescape, and each page's Content-Security-Policy forbids scripts and remote content.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.course import Course
from ..core.wording import french_number
from ..grade import assignments as assignments_mod
from . import exports, moodle
from .exports import Column, exercise_columns, templates
from ..core.grades import ERROR, FAILED, MISSING, PASSED, UNFILLED, BlankGrade, ExerciseGrade, SubmissionGrade

SCHEMA_FILE = Path(__file__).with_name("results.schema.json")
ISOLATION_NOTICE = "AVERTISSEMENT-sans-isolation.txt"
RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def _cleaned(student: str) -> str:
    ascii_form = unicodedata.normalize("NFKD", student).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_form).strip("._-")[:80] or "eleve"


def _digest(student: str, length: int = 8) -> str:
    return hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def file_stem(student: str) -> str:
    cleaned = _cleaned(student)
    if cleaned != student or cleaned.lower().split(".")[0] in RESERVED:
        cleaned += "-" + _digest(student)
    return cleaned


def file_stems(students: Iterable[str]) -> dict[str, str]:
    """Each student's stem, two never the same on a case-insensitive disk: ids that clash (« Alice »,
    « alice ») get their own hash, longer while two still meet, and a counter at the very end."""
    students = list(dict.fromkeys(students))
    stems = {s: file_stem(s) for s in students}
    for length in (8, 16, 64, None):
        seen: dict[str, list[str]] = {}
        for student, stem in stems.items():
            seen.setdefault(stem.casefold(), []).append(student)
        clashes = [group for group in seen.values() if len(group) > 1]
        if not clashes:
            return stems
        for group in clashes:
            for i, student in enumerate(group):
                stems[student] = (f"{_cleaned(student)}-{_digest(student, length)}" if length
                                  else f"{_cleaned(student)}-{_digest(student, 64)}-{i}")
    return stems


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(temporary, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)
    return path


def _prune(folder: Path, keep: set[str], suffix: str) -> None:
    for path in folder.glob(f"*{suffix}"):
        if path.name not in keep and path.is_file():
            path.unlink()
    for path in folder.glob(".*.tmp*"):  # left by a killed run
        path.unlink(missing_ok=True)


def summary(grade: SubmissionGrade, shared: dict) -> SubmissionGrade:
    """What the class's outputs read of a grade: points, statuses and modes, without the messages,
    hints and notes only the student's own files show. Exercises and blanks graded alike are one
    object in `shared`: a few hundred bytes per student."""
    exercises = []
    for e in grade.exercises:
        blanks = tuple((b.id, b.number, b.score, b.max_score, b.status) for b in e.blanks)
        ok = None if e.run is None else bool(e.run.get("ok"))
        key = (e.id, e.title, e.score, e.max_score, e.mode, blanks, ok)
        if key not in shared:
            shared[key] = ExerciseGrade(e.id, e.title, e.score, e.max_score, e.mode,
                                        [shared.setdefault(b, BlankGrade(*b)) for b in blanks],
                                        run=None if ok is None else {"ok": ok})
        exercises.append(shared[key])
    version = shared.setdefault(grade.grader_version, grade.grader_version)
    return SubmissionGrade(grade.student, grade.course, version, exercises, grade.isolation)


# -- the HTML pages ---------------------------------------------------------------------------------
# A blank is « juste » on a page as in the self-check and the grade cell: one word for the point.
STATUS = {PASSED: "juste", FAILED: "faux", UNFILLED: "pas rempli", ERROR: "erreur", MISSING: "absent"}
MODE_NOTE = {
    "missing": "fichier absent de la copie",
    "unreadable": "fichier illisible",
    "syntax": "le fichier ne se compile pas : aucun trou n'a pu être vérifié",
}


@dataclass
class IgnoredGroup:  # files of a copy not graded for one reason: those named, and how many more
    reason: str
    files: list[str]
    more: int = 0

    @property
    def total(self) -> int:  # the class report sums it
        return len(self.files) + self.more


def ignored_groups(copy: object | None, exercise: str | None = None) -> list[IgnoredGroup]:
    """A submission's files not graded, grouped by reason in the submission's order (what matters
    most first). With `exercise`, only the files that could have been that exercise."""
    groups: dict[str, IgnoredGroup] = {}
    for item in getattr(copy, "ignored", ()) or ():
        if exercise is not None and item.exercise != exercise:
            continue
        groups.setdefault(item.reason, IgnoredGroup(item.reason, [])).files.append(item.path)
    if exercise is None:
        for reason, more in getattr(copy, "unlisted", ()) or ():
            groups.setdefault(reason, IgnoredGroup(reason, [])).more += more
    return list(groups.values())


def feedback_page(course: Course, grade: SubmissionGrade, copy: object | None = None,
                  not_handed_in: tuple[str, ...] = ()) -> str:
    """`copy`: the `Submission` graded (name, intake notes, the files graded or not and why);
    `not_handed_in`: the run's assignments it did not hand in (never counted as zero)."""
    numbers = {e.id: e.number for e in course.exercises}
    titles = {e.id: {b.id: b.title for b in e.blanks} for e in course.exercises}
    origins = dict(getattr(copy, "origins", {}) or {})
    expected = {e.id: e.path.relative_to(course.root).as_posix() if e.path.is_relative_to(course.root)
                else f"exercises/{e.id}.py" for e in course.exercises}
    not_taken = {e.id: ignored_groups(copy, e.id) for e in grade.exercises}
    return templates().get_template("feedback.html").render(
        STATUS=STATUS, course=course, grade=grade, name=getattr(copy, "name", "") or "",
        warnings=list(getattr(copy, "warnings", ()) or ()), numbers=numbers, blank_titles=titles,
        mode_note=MODE_NOTE, ratio=grade.score / grade.max_score if grade.max_score else 0.0,
        origins=origins, expected=expected, ignored=ignored_groups(copy), not_taken=not_taken,
        totals=assignments_mod.totals(course, grade),
        not_handed_in=[assignments_mod.titles(course).get(a, a) for a in not_handed_in])


# -- the class report ----------------------------------------------------------------------------
@dataclass
class Bar:
    count: int
    label: str
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


@dataclass
class Histogram:
    bars: list[Bar]
    width: int = 640
    height: int = 260
    top: int = 20
    bottom: int = 40  # room for the labels under the bars
    left: int = 40
    ticks: list[tuple[float, int]] = field(default_factory=list)  # (y, count) of horizontal lines

    @property
    def base(self) -> int:
        return self.height - self.bottom


def histogram(scores: list[float], max_score: float) -> Histogram:
    """One bar per point when the scores are whole points on a small scale, else ten equal bins."""
    whole = max_score <= 30 and float(max_score).is_integer() and all(float(s).is_integer() for s in scores)
    step = (max_score or 1.0) / 10
    labels = ([str(k) for k in range(int(max_score) + 1)] if whole
              else [f"{french_number(i * step)}–{french_number((i + 1) * step)}" for i in range(10)])
    counts = [0] * len(labels)
    for s in scores:
        k = int(round(s)) if whole else (min(int(s / (max_score or 1.0) * 10), 9) if s > 0 else 0)
        counts[max(0, min(k, len(counts) - 1))] += 1
    chart = Histogram([Bar(c, label) for c, label in zip(counts, labels)])
    span = chart.width - chart.left - 10
    slot = span / len(chart.bars)
    tallest = max(counts) if counts and max(counts) else 1
    usable = chart.base - chart.top
    for i, bar in enumerate(chart.bars):
        bar.width = round(slot * 0.8, 1)
        bar.x = round(chart.left + i * slot + slot * 0.1, 1)
        bar.height = round(usable * bar.count / tallest, 1)
        bar.y = round(chart.base - bar.height, 1)
    step = max(1, -(-tallest // 5))
    chart.ticks = [(round(chart.base - usable * n / tallest, 1), n) for n in range(0, tallest + 1, step)]
    return chart


@dataclass
class BlankStat:
    exercise: str
    exercise_title: str
    number: int
    id: str
    title: str
    got: int
    total: int
    counts: dict[str, int]

    @property
    def share(self) -> float:
        return self.got / self.total if self.total else 0.0


@dataclass
class ExerciseStat:
    column: Column
    number: int | str
    mean: float
    full: int  # students with full marks
    zero: int
    total: int
    whole_file: int  # graded by running the whole file (code changed outside the blanks)
    stopped: int  # whose file, run as it is, stops before its end


def class_stats(course: Course, grades: list[SubmissionGrade]) -> tuple[list[ExerciseStat], list[BlankStat]]:
    columns = exercise_columns(course, grades)
    numbers = {e.id: e.number for e in course.exercises}
    blank_titles = {e.id: {b.id: b.title or "" for b in e.blanks} for e in course.exercises}
    exercise_stats, blank_stats = [], []
    for column in columns:
        graded = [e for g in grades for e in g.exercises if e.id == column.key]
        scores = [e.score for e in graded]
        exercise_stats.append(ExerciseStat(
            column, numbers.get(column.key, ""), statistics.fmean(scores) if scores else 0.0,
            sum(1 for e in graded if e.max_score and e.score >= e.max_score),
            sum(1 for e in graded if e.score == 0), len(graded),
            sum(1 for e in graded if e.mode == "whole_file"),
            sum(1 for e in graded if e.run is not None and not e.run.get("ok"))))
        per_blank: dict[tuple[int, str], Counter] = {}  # (number, id) → how many of each status
        for e in graded:
            for b in e.blanks:
                per_blank.setdefault((b.number, b.id), Counter())[b.status] += 1
        for (number, blank_id), counts in sorted(per_blank.items()):
            blank_stats.append(BlankStat(column.key, column.title, number, blank_id,
                                         blank_titles.get(column.key, {}).get(blank_id, ""),
                                         counts.get(PASSED, 0), sum(counts.values()), counts))
    # The blanks the class struggles with first; ties in course order.
    exercise_order = {c.key: i for i, c in enumerate(columns)}
    blank_stats.sort(key=lambda s: (s.share, exercise_order[s.exercise], s.number))
    return exercise_stats, blank_stats


@dataclass
class Section:  # one assignment of the class report
    id: str
    title: str
    summary: dict
    chart: Histogram


def summarise(scores: list[float], max_score: float) -> dict:
    return {
        "count": len(scores),
        "mean": statistics.fmean(scores) if scores else 0.0,
        "median": statistics.median(scores) if scores else 0.0,
        "low": min(scores, default=0.0),
        "high": max(scores, default=0.0),
        "max": max_score,
    }


def sections(course: Course, grades: list[SubmissionGrade]) -> list[Section]:
    """Per assignment graded, the totals of the copies that handed it in."""
    per: dict[str, list[assignments_mod.Total]] = {}
    for grade in grades:
        for total in assignments_mod.totals(course, grade):
            per.setdefault(total.assignment, []).append(total)
    out = []
    for assignment in assignments_mod.graded_assignments(course, grades):
        items = per.get(assignment, [])
        maximum = max((t.max_score for t in items), default=0.0)
        scores = [t.score for t in items]
        out.append(Section(assignment, items[0].title if items else assignment, summarise(scores, maximum),
                           histogram(scores, maximum)))
    return out


def class_report(course: Course, grades: list[SubmissionGrade], names: dict[str, str],
                 links: dict[str, str], gradebook_label: str = "", *, copies: dict[str, object] | None = None,
                 ignored: list | None = None, notes: list[str] | None = None,
                 scope_notes: list[str] | None = None, incidents: list[str] | None = None) -> str:
    """`copies` (student → Submission): the files not graded; `ignored`, `notes`: the input's entries
    that are no copy, notes on the input; `scope_notes`: atop; `incidents`: for the teacher (run.Outcome)."""
    grades = sorted(grades, key=lambda g: g.student)
    scores = [g.score for g in grades]
    max_score = max((g.max_score for g in grades), default=0.0)
    exercise_stats, blank_stats = class_stats(course, grades)
    summary = summarise(scores, max_score)
    parts = sections(course, grades)
    totals = {g.student: {t.assignment: t for t in assignments_mod.totals(course, g)} for g in grades}
    versions = sorted({g.grader_version[:12] for g in grades})
    unisolated = [g.student for g in grades if g.unisolated]
    copies = copies or {}
    per_copy = {g.student: ignored_groups(copies.get(g.student)) for g in grades}
    return templates().get_template("class_report.html").render(
        STATUS=STATUS, course=course, grades=grades, names=names, links=links, summary=summary,
        chart=histogram(scores, max_score), exercises=exercise_stats, blanks=blank_stats,
        statuses=[PASSED, FAILED, UNFILLED, ERROR, MISSING], versions=versions, gradebook=gradebook_label,
        unisolated=unisolated, input_ignored=list(ignored or ()), input_notes=list(notes or ()), per_copy=per_copy,
        notes_of={g.student: list(getattr(copies.get(g.student), "warnings", ()) or ()) for g in grades},
        sections=parts if len(parts) > 1 else [], totals=totals, scope_notes=list(scope_notes or ()),
        incidents=list(incidents or ()))


class ResultFiles:
    """Sink: a student's results JSON and feedback page, written as soon as the grade is consumed, again
    only if it changed (a digest of each document is kept, and its `summary`); then `settle`."""

    def __init__(self, results_dir: Path, course: Course, submissions: Iterable | None = None,
                 not_handed_in: dict[str, tuple[str, ...]] | None = None):
        self.results_dir, self.course = Path(results_dir), course
        self.copies = {s.student: s for s in submissions or ()}
        self.not_handed_in = not_handed_in or {}
        self.written: dict[str, bytes] = {}  # student → digest of the document its files hold
        self.stems = file_stems(self.copies)  # fixed for the whole class before the first file is written
        self.summaries, self.shared = {}, {}  # student → summary; what summaries share

    def consume(self, grade: SubmissionGrade) -> None:
        report = getattr(self.copies.get(grade.student), "report", None)
        document = grade.to_json(intake=report() if callable(report) else None)
        # Sorted: the same content gives the same key, kept as a digest (documents are never all held at once).
        text = json.dumps(document, ensure_ascii=False, sort_keys=True, allow_nan=False)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        if self.written.get(grade.student) == key:
            return  # the same document: the same files, the same summary
        self.summaries[grade.student] = summary(grade, self.shared)
        stem = self.stems.setdefault(grade.student, file_stem(grade.student))
        data = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        _write(self.results_dir / "results" / f"{stem}.json", data.encode("utf-8"))
        html = feedback_page(self.course, grade, self.copies.get(grade.student),
                                   self.not_handed_in.get(grade.student, ()))
        _write(self.results_dir / "retours" / f"{stem}.html", html.encode("utf-8"))
        self.written[grade.student] = key

    def settle(self, students: Iterable[str], **class_files) -> dict[str, Path]:
        """`students`: the class, in the order of its files; `class_files`: write_class's keywords."""
        paths = {}
        for key, folder, suffix in (("results", "results", ".json"), ("feedback", "retours", ".html")):
            paths[key] = self.results_dir / folder
            paths[key].mkdir(parents=True, exist_ok=True)
            _prune(paths[key], {self.stems[student] + suffix for student in self.written}, suffix)
        students = list(students)
        return {**paths, **write_class(self.results_dir, self.course, [self.summaries[s] for s in students],
                                       {s: self.stems[s] for s in students}, **class_files)}


def write_class(results_dir: Path, course: Course, grades: list[SubmissionGrade], stems: dict[str, str],
                gradebook=None, *, submissions: Iterable | None = None,
                ignored: Iterable = (), notes: Iterable[str] = (), participants=None, round_trip=None,
                scope_notes: Iterable[str] = (), incidents: Iterable[str] = ()) -> dict[str, Path]:
    """The class's own files, once every student's are written (`stems`: theirs); `grades` may be
    summaries. moodle.csv only with `participants` (moodle.Participants); `round_trip`
    (moodle.RoundTrip): the Moodle worksheet and zip; the other keywords are for the class report."""
    copies = {s.student: s for s in submissions or ()}
    names = {student: s.name for student, s in copies.items() if getattr(s, "name", "")}
    paths: dict[str, Path] = {}

    def keep(key: str, name: str, data: bytes | None) -> None:
        """Write `name`; without data, remove it: a file of an earlier run that no longer applies is not left."""
        if data is None:
            (results_dir / name).unlink(missing_ok=True)
        else:
            paths[key] = _write(results_dir / name, data)

    keep("grades_csv", "grades.csv", exports.grades_csv(course, grades, names))
    # Only with the accounts: a file Moodle's import would choke on is never written.
    data, help_text = exports.moodle_csv(course, grades, names, participants) or (None, None)
    keep("moodle_csv", "moodle.csv", data)
    keep("moodle_help", "moodle-import.txt", help_text and help_text.encode("utf-8"))
    keep("schema", "results.schema.json", SCHEMA_FILE.read_bytes())
    label = str(getattr(gradebook, "path", "") or getattr(gradebook, "url", "") or "") if gradebook else ""
    links = {student: f"retours/{stem}.html" for student, stem in stems.items()}
    report = class_report(course, grades, names, links, label, copies=copies, ignored=list(ignored),
                                notes=list(notes), scope_notes=list(scope_notes), incidents=list(incidents))
    keep("class_report", "rapport.html", report.encode("utf-8"))
    page_files = {student: results_dir / "retours" / f"{stem}.html" for student, stem in stems.items()}
    paths.update(moodle.write_outputs(results_dir, course, grades, names, page_files, round_trip, _write))
    unisolated = sorted(g.student for g in grades if g.unisolated)  # then a text next to grades.csv says so
    notice = templates().get_template(ISOLATION_NOTICE).render(students=unisolated, total=len(grades))
    keep("isolation_notice", ISOLATION_NOTICE, notice.encode("utf-8") if unisolated else None)
    return paths
