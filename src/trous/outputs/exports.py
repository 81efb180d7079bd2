"""Grades as CSV: `grades.csv` for the teacher's spreadsheet, and a file Moodle's grade import takes.

`grades.csv` (UTF-8 with a byte-order mark, for spreadsheets opened by double-click; numbers with a
dot): one column per exercise graded, then the totals: per assignment when several (empty when not
handed in), and `total_sur_<M>`, one not handed in counting 0: one scale for everyone, so that
sorting compares like with like.

`moodle.csv` (UTF-8, comma), for Moodle's *Notes › Importer › Fichier CSV*, only when the accounts
are known (`--participants`): the archive's participant numbers are per assignment, which the
gradebook import cannot map, and one unknown identifier stops the whole import, so a copy without
an account is left out and named in `moodle-import.txt` (which also says what to map to what).
Its comments hold only what trous writes (ids, points): never text from the student's program.

Every cell goes through `safetext.csv_cell` (one printable line, never a formula) and is quoted, so
that a spreadsheet splitting on « ; » cannot cut one in two; an identifier it had to protect no
longer matches a Moodle account, which `moodle-import.txt` says.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.course import Course
from ..core.grades import PASSED, SubmissionGrade
from ..core.safetext import csv_cell
from ..core.wording import count, french_number, plural

# Moodle's own column titles for the account a participants file names (moodle.Participants.field).
USERNAME, EMAIL = "username", "useremail"
IDENTITY_TITLES = {USERNAME: "Nom d'utilisateur", EMAIL: "Adresse de courriel"}
TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def templates():
    """HTML escaped, plain text as it is; cached: one environment compiles each template once."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape  # noqa: PLC0415

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(("html",)),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(points=french_number, number=number, percent=lambda x: f"{round(100 * x):d} %")
    env.globals.update(count=count, plural=plural)
    return env


def number(value: float) -> str:
    """Points as the CSV writes them: French text's number (core/wording.py) with a dot."""
    return french_number(value).replace(",", ".")


@dataclass(frozen=True)
class Column:
    key: str  # exercise id, or assignment id
    title: str
    max_score: float


def exercise_columns(course: Course, grades: Iterable[SubmissionGrade]) -> list[Column]:
    """The exercises graded in this run, in course order (a run may grade only some of them)."""
    seen: dict[str, float] = {}
    titles: dict[str, str] = {}
    for grade in grades:
        for e in grade.exercises:
            seen[e.id] = max(seen.get(e.id, 0.0), e.max_score)
            titles.setdefault(e.id, e.title)
    order = {e.id: i for i, e in enumerate(course.exercises)}
    ids = sorted(seen, key=lambda x: (order.get(x, len(order)), x))
    return [Column(i, titles[i], seen[i]) for i in ids]


def assignment_columns(course: Course, exercises: list[Column]) -> list[tuple[Column, list[str]]]:
    graded = {c.key: c for c in exercises}
    columns = []
    for assignment in course.spec.assignments:
        ids = [e.id for e in assignment.exercises if e.id in graded]
        if ids:
            total = sum(graded[i].max_score for i in ids)
            columns.append((Column(assignment.id, assignment.title, total), ids))
    return columns


def _render(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    writer.writerows([[csv_cell(value) for value in row] for row in rows])
    return out.getvalue()


def grades_csv(course: Course, grades: list[SubmissionGrade], names: dict[str, str]) -> bytes:
    columns = exercise_columns(course, grades)
    assignments = assignment_columns(course, columns)
    several = len(assignments) > 1
    maximum = sum(a.max_score for a, _ in assignments)
    totals = ([name for a, _ in assignments for name in (a.key, f"{a.key}_max")]
              + [f"total_sur_{number(maximum)}", f"devoirs_rendus_sur_{len(assignments)}"]
              if several else ["total", "total_max"])
    rows = [["etudiant", "nom", *[c.key for c in columns], *totals]]
    for grade in sorted(grades, key=lambda g: g.student):
        by_id = {e.id: e for e in grade.exercises}
        row = [grade.student, names.get(grade.student, ""),
               *[number(by_id[c.key].score) if c.key in by_id else "" for c in columns]]
        if several:
            held = [[by_id[i] for i in ids if i in by_id] for _, ids in assignments]
            for part in held:
                row += ([number(sum(e.score for e in part)), number(sum(e.max_score for e in part))]
                        if part else ["", ""])
            row += [number(sum(sum(e.score for e in part) for part in held)), str(sum(1 for p in held if p))]
        else:  # every student graded on all of it (a missing file counts 0)
            row += [number(grade.score), number(grade.max_score)]
        rows.append(row)
    return b"\xef\xbb\xbf" + _render(rows).encode("utf-8")


def moodle_feedback(grade: SubmissionGrade, exercise_ids: Iterable[str] | None = None,
                    moodle_scale: tuple[float, float] | None = None) -> str:
    """The comment Moodle shows with a grade: the total, each exercise's points and the blanks to
    work on. `exercise_ids`: only those exercises (one assignment's); `moodle_scale`: (grade, maximum)
    when the Moodle assignment counts on another maximum than trous's points."""
    wanted = None if exercise_ids is None else set(exercise_ids)
    exercises = [e for e in grade.exercises if wanted is None or e.id in wanted]
    parts = []
    for e in exercises:
        text = f"{e.id} : {french_number(e.score)}/{french_number(e.max_score)}"
        missed = [b.id for b in e.blanks if b.status != PASSED]
        if e.mode == "missing":
            text += " (fichier absent)"
        elif missed and len(missed) < len(e.blanks):
            text += " (à revoir : " + ", ".join(missed) + ")"
        parts.append(text)
    score, maximum = sum(e.score for e in exercises), sum(e.max_score for e in exercises)
    total = f"Total {french_number(score)}/{french_number(maximum)}"
    if moodle_scale is not None:
        total += f" points, soit {french_number(moodle_scale[0])}/{french_number(moodle_scale[1])}"
    return f"{total}. " + " ; ".join(parts) + ". Le détail de chaque trou est dans ta page de retour."


def moodle_csv(course: Course, grades: list[SubmissionGrade], names: dict[str, str],
               participants=None) -> tuple[bytes, str] | None:
    """The gradebook import and its French help (which column to map to what, with the maxima), or
    None without `participants` (moodle.Participants: each copy's Moodle account)."""
    if participants is None:
        return None
    exercises = exercise_columns(course, grades)
    assignments = assignment_columns(course, exercises)
    identity_title = IDENTITY_TITLES[participants.field]
    rows = [[identity_title, "Nom complet",
             *[title for c, _ in assignments for title in (c.title, f"{c.title} — commentaire")]]]
    missing: list[str] = []
    changed: list[str] = []
    for grade in sorted(grades, key=lambda g: g.student):
        identity = participants.identities.get(grade.student)
        if not identity:
            missing.append(grade.student)
            continue
        if csv_cell(identity) != identity:
            changed.append(identity)
        by_id = {e.id: e for e in grade.exercises}
        cells: list[str] = []
        for _, ids in assignments:
            held = [i for i in ids if i in by_id]
            cells += ([number(sum(by_id[i].score for i in held)), moodle_feedback(grade, held)] if held else ["", ""])
        rows.append([identity, names.get(grade.student, ""), *cells])
    field = "username (nom d'utilisateur)" if participants.field == "username" else "useremail (adresse de courriel)"
    help_text = templates().get_template("moodle-import.txt").render(
        identity_title=identity_title, field=field, file=participants.path.name, columns=[c for c, _ in assignments],
        missing=[csv_cell(s) for s in missing], unmatched=[csv_cell(v) for v in participants.unmatched],
        changed=[csv_cell(v) for v in changed])
    return _render(rows).encode("utf-8"), help_text
