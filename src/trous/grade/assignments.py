"""Which assignments (devoirs) a grading run grades, and which of them each copy hands in.

A Moodle archive or an nbgrader folder is the work of one assignment. A run grades those asked for
(`--devoir`), else those the class handed in: named by the input (nbgrader), or with a copy holding
a file that is not the untouched template (a student edition ships every exercise: templates of
assignments never handed out must not count as « fichier absent »). Each copy is graded on those it
hands in; one it does not is « non rendu », an empty cell, never a zero. A copy holds only its
assignments' files (`restrict_files`), so a grading of one assignment is never reused for another.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core import blanks as blanks_mod
from ..core.course import Course
from ..core.grades import SubmissionGrade
from ..core.submission import IgnoredFile, Submission

SCOPE_FILE = ".trous-devoirs"  # in a results folder: the assignments it holds the grades of
WHOLE_COURSE = "*"


class ScopeError(Exception):
    """The assignments asked for cannot be graded (unknown id, results of another assignment…); French."""


@dataclass(frozen=True)
class Scope:
    assignments: tuple[str, ...]  # in course order
    chosen: bool  # asked for with --devoir (else: read from the copies)
    left_out: tuple[tuple[str, str], ...] = ()  # (assignment, why) not graded by this run
    per_copy: dict[str, tuple[str, ...]] = field(default_factory=dict)  # student → assignments graded

    def exercises(self, course: Course, assignments: tuple[str, ...] | None = None) -> list[str]:
        wanted = set(self.assignments if assignments is None else assignments)
        return [e.id for e in course.exercises if e.assignment.id in wanted]


def titles(course: Course) -> dict[str, str]:
    return {a.id: a.title for a in course.spec.assignments}


def of_exercise(course: Course) -> dict[str, str]:
    return {e.id: e.assignment.id for e in course.exercises}


def check_requested(course: Course, requested: list[str]) -> tuple[str, ...]:
    """The assignments asked for, in course order; ScopeError naming the known ones otherwise."""
    known = [a.id for a in course.spec.assignments]
    for wanted in requested:
        if wanted not in known:
            close = difflib.get_close_matches(wanted, known, n=1)
            raise ScopeError(f"devoir « {wanted} » inconnu du cours" + (f" : vouliez-vous dire « {close[0]} » ?" if close
                                                                         else "")
                             + f" (devoirs : {', '.join(known)})")
    return tuple(a for a in known if a in requested)


def _normalised(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _worked(course: Course) -> Callable[[str, bytes | None], bool]:
    """Tells a worked file from its exercise's untouched template (each template read once)."""
    templates: dict[str, str | None] = {}

    def worked(exercise_id: str, data: bytes | None) -> bool:
        if data is None:
            return False
        if exercise_id not in templates:
            try:
                templates[exercise_id] = course.exercise(exercise_id).template_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError, KeyError):
                templates[exercise_id] = None
        template, text = templates[exercise_id], data.decode("utf-8", "replace")
        if template is None:
            return True
        if _normalised(text) == _normalised(template):
            return False
        try:  # the same code, laid out otherwise (a notebook converted back to .py): still untouched?
            fills = blanks_mod.align(template, text)
        except Exception:  # noqa: BLE001 - a file that does not even tokenize was written by someone
            return True
        return fills is None or any(f.filled for f in fills)

    return worked


def resolve(course: Course, submissions: list[Submission], requested: list[str] | None) -> Scope:
    """The run's assignments, and each copy's."""
    known = [a.id for a in course.spec.assignments]
    owner = of_exercise(course)
    worked = _worked(course)
    # Each copy's files read once, and nothing of them kept but which assignments it works on and holds.
    facts = {s.student: _facts(s, owner, worked) for s in submissions if s.assignments is None}
    if requested:
        chosen = check_requested(course, requested)
        left = tuple((a, "non demandé (--devoir)") for a in known if a not in chosen)
        scope = Scope(chosen, True, left)
    else:
        explicit = any(s.assignments is not None for s in submissions)
        if explicit:
            handed = {a for s in submissions for a in s.assignments or () if a in known}
        else:  # nobody wrote anything: what the copies hold, else everything
            handed = (set().union(*(on for on, _ in facts.values()))
                      or set().union(*(held for _, held in facts.values())) or set(known))
        chosen = tuple(a for a in known if a in handed)
        why = ("aucune copie ne le contient" if explicit else
               "aucune copie n'y a rien écrit (seulement des modèles non remplis, ou rien)")
        scope = Scope(chosen, False, tuple((a, why) for a in known if a not in handed))
    per_copy = {s.student: _copy_assignments(s, scope.assignments, facts.get(s.student)) for s in submissions}
    return dataclasses.replace(scope, per_copy=per_copy)


def _facts(submission: Submission, owner: dict[str, str],
           worked: Callable[[str, bytes | None], bool]) -> tuple[set[str], set[str]]:
    """(the assignments this copy works on, those it holds a file of)."""
    worked_on: set[str] = set()
    held: set[str] = set()
    for exercise_id, data in submission.files.items():
        assignment = owner.get(exercise_id)
        if assignment and data is not None:
            held.add(assignment)
            if assignment not in worked_on and worked(exercise_id, data):
                worked_on.add(assignment)
    return worked_on, held


def _copy_assignments(submission: Submission, assignments: tuple[str, ...],
                      facts: tuple[set[str], set[str]] | None) -> tuple[str, ...]:
    """The run's assignments this copy hands in; () when the input says it hands in none."""
    if submission.assignments is not None:
        return tuple(a for a in assignments if a in submission.assignments)
    worked_on, held = facts
    return (tuple(a for a in assignments if a in worked_on) or tuple(a for a in assignments if a in held)
            or assignments)


def restrict_files(course: Course, submission: Submission, assignments: tuple[str, ...]) -> Submission:
    """The copy with only these assignments' exercises (absent ones stay, as None); its other files
    are named among the files not graded, with why."""
    ids = [e.id for e in course.exercises if e.assignment.id in assignments]
    owner = of_exercise(course)
    names = titles(course)
    graded = ", ".join(names.get(a, a) for a in assignments)
    others = tuple(IgnoredFile(path, f"exercice de « {names.get(owner[e], owner[e])} » : pas corrigé avec {graded}", e,
                               notable=False)
                   for e, path in submission.origins.items() if e in owner and e not in ids)
    return dataclasses.replace(submission, files=submission.only(ids),
                               origins={e: path for e, path in submission.origins.items() if e in ids},
                               ignored=tuple(submission.ignored) + others)


def restrict_grade(grade: SubmissionGrade, exercise_ids: list[str]) -> SubmissionGrade:
    """The grade with only these exercises (a grader may return the whole course's)."""
    wanted = set(exercise_ids)
    if all(e.id in wanted for e in grade.exercises):
        return grade
    return dataclasses.replace(grade, exercises=[e for e in grade.exercises if e.id in wanted])


@dataclass(frozen=True)
class Total:
    assignment: str
    title: str
    score: float
    max_score: float


def totals(course: Course, grade: SubmissionGrade) -> list[Total]:
    """Per assignment the grade holds, in course order."""
    owner = of_exercise(course)
    sums: dict[str, list[float]] = {}
    for e in grade.exercises:
        entry = sums.setdefault(owner.get(e.id, ""), [0.0, 0.0])
        entry[0] += e.score
        entry[1] += e.max_score
    names = titles(course)
    order = [a.id for a in course.spec.assignments] + [""]
    return [Total(a, names.get(a, a), round(sums[a][0], 6), round(sums[a][1], 6)) for a in order if a in sums]


def graded_assignments(course: Course, grades: list[SubmissionGrade]) -> list[str]:
    """In course order."""
    owner = of_exercise(course)
    held = {owner.get(e.id) for g in grades for e in g.exercises}
    return [a.id for a in course.spec.assignments if a.id in held]


# -- one results folder, one scope ---------------------------------------------------------------
def _label(record: str) -> str:
    return "de tout le cours" if record == WHOLE_COURSE else f"du devoir {record.replace(chr(10), ', ')}"


def _recorded(results: Path) -> str:
    try:
        return (Path(results) / SCOPE_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""  # a new folder, or one written before trous kept this record


def _record(scope: Scope) -> str:
    return "\n".join(scope.assignments) if scope.chosen else WHOLE_COURSE


def check_results(results: Path, scope: Scope) -> None:
    """Refuse to mix in one results folder the grades of an assignment chosen with --devoir and those
    of another, or of the whole course: two assignments' « Participant 12 » are two different people."""
    found, wanted = _recorded(results).strip(), _record(scope)
    if found and found != wanted:
        raise ScopeError(f"{results} contient déjà les notes {_label(found)} : pour les notes {_label(wanted)}, "
                         "choisis un autre dossier (--resultats), ou supprime celui-ci")


def record_results(results: Path, scope: Scope) -> None:
    text = _record(scope) + "\n"
    if _recorded(results) != text:
        (Path(results) / SCOPE_FILE).write_text(text, encoding="utf-8")
