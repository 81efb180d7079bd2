"""One source of truth: what a teacher changed in formgrader counts in trous's reports too.

nbgrader keeps, per grade cell, the autograder's score and a manual score set in formgrader (which
wins in nbgrader and survives a new grading), plus extra credit and late penalties. Once `trous
grade` has written nbgrader's gradebook, those are read back (nbgrader.py) and applied to the grades
trous reports, each change said with the engine's own score beside it; trous's own gradebook keeps
the engine's grades. `WriteReport` is what a write of nbgrader's gradebook did (here or in the
writing process, writing.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.wording import count
from ..core.grades import SubmissionGrade


@dataclass
class Final:
    """nbgrader's word on one submitted notebook (one exercise of one student)."""

    manual: dict[str, float] = field(default_factory=dict)  # grade cell → manual score (formgrader)
    extra: float = 0.0  # extra credit given in formgrader, over the notebook
    penalty: float = 0.0  # late penalty (AssignLatePenalties)


@dataclass
class WriteReport:
    root: Path
    written: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment)
    problems: list[str] = field(default_factory=list)
    final: dict[tuple[str, str], Final] = field(default_factory=dict)  # (student, notebook) → nbgrader's word


def say(report: WriteReport) -> WriteReport:
    """What the terminal shows of a write."""
    for problem in report.problems:
        print(f"nbgrader : {problem}")
    print(f"carnet de notes nbgrader : {count(len(report.written), 'copie enregistrée', 'copies enregistrées')} "
          f"dans {report.root / 'gradebook.db'}")
    return report


def _points(value: float) -> str:
    return count(value, "point")


def cell_id(exercise_id: str, blank_id: str) -> str:
    return f"{exercise_id}-trou-{blank_id}"  # notebooks.grade_id(exercise, "trou", blank)


def apply(grade: SubmissionGrade, final: dict[tuple[str, str], Final]) -> list[tuple[str, str, str]]:
    """Make `grade` say what nbgrader's gradebook says; the changes: (student, exercise, what in French)."""
    changes = []
    for exercise in grade.exercises:
        word = final.get((grade.student, exercise.id))
        if word is None:
            continue
        notes = []
        for blank in exercise.blanks:
            manual = word.manual.get(cell_id(exercise.id, blank.id))
            if manual is None or manual == blank.score:
                continue
            text = (f"trou {blank.number} « {blank.id} » : {_points(manual)} donné(s) à la main dans formgrader "
                    f"(correction automatique : {_points(blank.score)})")
            blank.score = float(manual)
            notes.append(text)
        if word.extra:
            notes.append(f"bonus donné dans formgrader : {_points(word.extra)}")
        if word.penalty:
            notes.append(f"pénalité de retard (nbgrader) : −{_points(word.penalty)}")
        if not notes:
            continue
        total = sum(b.score for b in exercise.blanks) + word.extra - word.penalty
        exercise.score = round(max(0.0, total), 6)
        exercise.notes = list(exercise.notes) + [f"carnet de notes de nbgrader : {n}" for n in notes]
        changes += [(grade.student, exercise.id, n) for n in notes]
    return changes


def describe(changes: list[tuple[str, str, str]]) -> list[str]:
    if not changes:
        return []
    lines = [f"formgrader (carnet de notes de nbgrader) : {count(len(changes), 'note changée', 'notes changées')} "
             "à la main ou par nbgrader ; le carnet de nbgrader l'emporte : elles comptent dans grades.csv, les "
             "pages, le rapport de classe et l'export de nbgrader :"]
    lines += [f"  {student} — {exercise}, {what}" for student, exercise, what in changes]
    return lines
