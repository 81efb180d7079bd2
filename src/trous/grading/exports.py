"""Grades as CSV: `grades.csv` for the teacher's spreadsheet, and a file Moodle's grade import takes.

`grades.csv` (UTF-8 with a byte-order mark, so that a spreadsheet opened by double-click shows the
accents): one row per student, `etudiant`, `nom`, one column per exercise (points), `total`,
`total_max`. Numbers use a dot.

`moodle.csv` (UTF-8, comma, no byte-order mark), for Moodle's *Notes › Importer › Fichier CSV*
(Grades › Import › CSV file):

    Identifiant, Nom complet, <title of each assignment (devoir)>…, Total, Commentaires

On the import screen: *Identifier l'utilisateur par* — map `Identifiant` to the Moodle user field it
holds (`username` when students are identified by their login, `useridnumber` for an ID number,
`useremail` for an email address, `userid` for Moodle's internal number); `Nom complet` → ignorer;
each assignment column → its Moodle grade item (or « nouvel élément d'évaluation »); `Total` → the
item that stands for the whole course, if any, otherwise ignorer; `Commentaires` → « Feedback » of
that same item. Grades are points: the Moodle item's maximum must equal the column's maximum (written
in `moodle-import.txt` next to the file). Moodle aborts the whole import when one row names an
unknown user, so the identifier must be a real Moodle account of the course.

The feedback column holds only what trous itself writes (exercise ids, blank ids, points): never a
message that could carry text from the student's program.

Every cell of every CSV goes through `safetext.csv_cell` (one printable line, never a formula: OWASP's
rule), and every cell is quoted, so that a spreadsheet that splits on « ; » cannot cut one in two.
An identifier that had to be protected (it began with « = », « + », « - », « @ ») no longer matches
a Moodle account: `moodle-import.txt` names those rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

from ..course.compare import format_number
from ..course.definition import Course
from .model import PASSED, SubmissionGrade
from .safetext import csv_cell
from .wording import count, plural


def number(value: float) -> str:
    """Points as the CSV writes them: at most two decimals, a dot, no useless zeros."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cell(text: object) -> str:
    """A cell a spreadsheet will not run as a formula, on one printable line (student ids come from
    folder names, full names from Moodle)."""
    return csv_cell(text)


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
    # RFC 4180, what Moodle and spreadsheets expect; every cell guarded and quoted, whoever built it.
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    writer.writerows([[cell(value) for value in row] for row in rows])
    return out.getvalue()


def grades_csv(course: Course, grades: list[SubmissionGrade], names: dict[str, str]) -> bytes:
    columns = exercise_columns(course, grades)
    rows = [["etudiant", "nom", *[c.key for c in columns], "total", "total_max"]]
    for grade in sorted(grades, key=lambda g: g.student):
        by_id = {e.id: e for e in grade.exercises}
        rows.append([grade.student, names.get(grade.student, ""),
                     *[number(by_id[c.key].score) if c.key in by_id else "" for c in columns],
                     number(grade.score), number(grade.max_score)])
    return b"\xef\xbb\xbf" + _render(rows).encode("utf-8")


def points(value: float) -> str:
    """Points inside French text (a comment): a decimal comma, unlike the CSV's number cells."""
    return format_number(round(value, 2), 2)


def moodle_feedback(grade: SubmissionGrade) -> str:
    parts = []
    for e in grade.exercises:
        text = f"{e.id} : {points(e.score)}/{points(e.max_score)}"
        missed = [b.id for b in e.blanks if b.status != PASSED]
        if e.mode == "missing":
            text += " (fichier absent)"
        elif missed and len(missed) < len(e.blanks):
            text += " (à revoir : " + ", ".join(missed) + ")"
        parts.append(text)
    return (f"Total {points(grade.score)}/{points(grade.max_score)}. " + " ; ".join(parts)
            + ". Le détail de chaque trou est dans ta page de retour.")


def moodle_csv(course: Course, grades: list[SubmissionGrade], names: dict[str, str]) -> tuple[bytes, str]:
    """The CSV, and the French help text naming which column to map to what (with the maxima)."""
    exercises = exercise_columns(course, grades)
    assignments = assignment_columns(course, exercises)
    rows = [["Identifiant", "Nom complet", *[c.title for c, _ in assignments], "Total", "Commentaires"]]
    for grade in sorted(grades, key=lambda g: g.student):
        by_id = {e.id: e for e in grade.exercises}
        scores = [number(sum(by_id[i].score for i in ids if i in by_id)) for _, ids in assignments]
        rows.append([grade.student, names.get(grade.student, ""), *scores, number(grade.score),
                     moodle_feedback(grade)])
    # Guarded like every cell, an identifier that looked like a formula no longer matches its account.
    changed = [g.student for g in sorted(grades, key=lambda g: g.student) if cell(g.student) != g.student]
    total = sum(c.max_score for c in exercises)
    help_lines = [
        "Importer ces notes dans Moodle : Notes › Importer › Fichier CSV",
        "  fichier moodle.csv, encodage UTF-8, séparateur virgule.",
        "",
        "Identifier l'utilisateur par :",
        "  « Identifiant » (du fichier) → le champ Moodle qui contient cet identifiant :",
        "    username (nom d'utilisateur), useridnumber (numéro d'identification), useremail (adresse",
        "    de courriel) ou userid (numéro interne). Une seule ligne inconnue de Moodle annule tout",
        "    l'import : chaque identifiant doit être un compte inscrit au cours.",
        "",
        "Correspondance des éléments d'évaluation :",
        "  « Nom complet » → ignorer",
    ]
    for column, _ in assignments:
        help_lines.append(f"  « {column.title} » → l'élément d'évaluation de ce devoir "
                          f"(note maximale : {number(column.max_score)} points)")
    help_lines += [
        f"  « Total » → l'élément qui représente tout le cours s'il existe (note maximale : {number(total)} "
        "points), sinon ignorer",
        "  « Commentaires » → « Feedback » (commentaire) de l'élément choisi pour le total ou le devoir",
        "",
        "Les notes sont en points : la note maximale de l'élément Moodle doit être celle indiquée ci-dessus.",
        "",
    ]
    if changed:
        help_lines += [
            f"Attention : {count(len(changed), 'identifiant')} "
            f"{plural(len(changed), 'a été protégé', 'ont été protégés')} dans le fichier (caractères de contrôle retirés, apostrophe devant = + - @ pour qu'un tableur n'en fasse pas "
            "une formule) : ces lignes ne correspondront à aucun compte Moodle, corrige-les ou retire-les "
            "avant l'import :",
            *[f"  {cell(student)}" for student in changed[:50]],
            *([f"  … et {len(changed) - 50} autres"] if len(changed) > 50 else []),
            "",
        ]
    return _render(rows).encode("utf-8"), "\n".join(help_lines)
