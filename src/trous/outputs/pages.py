"""HTML pages in French: one feedback page per student, and the class report.

Everything shown comes from `SubmissionGrade` (messages the engine already made safe to show, hints
from course.yaml): nothing of the hidden graders. Student-controlled text (messages quoting their
exceptions, folder names) is untrusted: the templates always autoescape, and each page forbids
scripts and remote content through its Content-Security-Policy.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..core.course import Course
from ..grade import assignments as assignments_mod
from ..core.wording import french_number
from .exports import Column, exercise_columns, templates
from ..core.grades import ERROR, FAILED, MISSING, PASSED, UNFILLED, SubmissionGrade

# A blank is « juste » on a page as in the self-check and the grade cell: one word for the point.
STATUS = {PASSED: "juste", FAILED: "faux", UNFILLED: "pas rempli", ERROR: "erreur", MISSING: "absent"}
MODE_NOTE = {
    "missing": "fichier absent de la copie",
    "unreadable": "fichier illisible",
    "syntax": "le fichier ne se compile pas : aucun trou n'a pu être vérifié",
}


@dataclass
class IgnoredGroup:
    """Files of a copy not graded for one reason: the ones named, and how many more."""

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
    """`copy`: the `Submission` graded (the student's name, intake notes, which file was graded for each
    exercise, those that were not and why); `not_handed_in`: the run's assignments this copy did not hand
    in (never counted as zero)."""
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
class Section:
    """One assignment of the class report: who handed it in, and how it went."""

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
    """Per assignment graded: the totals of the copies that handed it in."""
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
    that are no copy, notes on the input; `incidents`: for the teacher (see run.Outcome)."""
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
