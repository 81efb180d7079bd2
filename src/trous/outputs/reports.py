"""Everything a grading run writes for people, from the grades alone, in `<results_dir>/`:

    grades.csv, moodle.csv (--participants), moodle-import.txt     exports.py
    moodle-feuille-*.csv, moodle-retours.zip, moodle-lisezmoi.txt  moodle.py
    results/<élève>.json (schema: results.schema.json), retours/<élève>.html, rapport.html
    AVERTISSEMENT-sans-isolation.txt   while some current grade was given with --sans-isolation

`<élève>` is the student's stem (`file_stems`): a hostile folder name never writes elsewhere, and two
students never share a file, not even on a case-insensitive disk. Every file is written to a
temporary name then renamed (a killed run leaves it as it was or complete); the same grades give the
same bytes; files of students no longer graded are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from ..core.course import Course
from . import exports, moodle, pages
from ..core.grades import BlankGrade, ExerciseGrade, SubmissionGrade

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


def _identities(submissions: Iterable | None) -> tuple[dict[str, str], dict[str, object]]:
    copies = {s.student: s for s in submissions or ()}
    return {student: s.name for student, s in copies.items() if getattr(s, "name", "")}, copies


def _intake(copy: object | None) -> dict | None:
    report = getattr(copy, "report", None)
    return report() if callable(report) else None


def _document_key(document: dict) -> bytes:
    # Sorted: the same content gives the same key, kept as a digest (documents are never all held at once).
    text = json.dumps(document, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


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


class ResultFiles:
    """Sink: a student's results JSON and feedback page, written as soon as the grade is consumed, again
    only if it changed (a digest of each document is kept, and its `summary`). `settle` writes the
    class's files and removes those of students no longer graded."""

    def __init__(self, results_dir: Path, course: Course, submissions: Iterable | None = None,
                 not_handed_in: dict[str, tuple[str, ...]] | None = None):
        self.results_dir, self.course = Path(results_dir), course
        _, self.copies = _identities(submissions)
        self.not_handed_in = not_handed_in or {}
        self.written: dict[str, bytes] = {}  # student → digest of the document its files hold
        self.stems = file_stems(self.copies)  # fixed for the whole class before the first file is written
        self.summaries, self.shared = {}, {}  # student → summary; what summaries share

    def consume(self, grade: SubmissionGrade) -> None:
        document = grade.to_json(intake=_intake(self.copies.get(grade.student)))
        key = _document_key(document)
        if self.written.get(grade.student) == key:
            return  # the same document: the same files, the same summary
        self.summaries[grade.student] = summary(grade, self.shared)
        stem = self.stems.setdefault(grade.student, file_stem(grade.student))
        data = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        _write(self.results_dir / "results" / f"{stem}.json", data.encode("utf-8"))
        html = pages.feedback_page(self.course, grade, self.copies.get(grade.student),
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
    """The class's own files, once every student's files are written (`stems`: theirs, ResultFiles):
    `grades` may be summaries (`summary`). `ignored`, `notes`: the input's entries that are no copy,
    notes on the input; `gradebook`: only named in the class report; `participants`
    (moodle.Participants): moodle.csv is written only with them; `round_trip` (moodle.RoundTrip): the
    Moodle worksheet and feedback zip; `scope_notes`: atop the class report; `incidents`: see
    run.Outcome."""
    names, copies = _identities(submissions)
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
    report = pages.class_report(course, grades, names, links, label, copies=copies, ignored=list(ignored),
                                notes=list(notes), scope_notes=list(scope_notes), incidents=list(incidents))
    keep("class_report", "rapport.html", report.encode("utf-8"))
    page_files = {student: results_dir / "retours" / f"{stem}.html" for student, stem in stems.items()}
    paths.update(moodle.write_outputs(results_dir, course, grades, names, page_files, round_trip, _write))
    unisolated = sorted(g.student for g in grades if g.unisolated)  # then a text next to grades.csv says so
    notice = exports.templates().get_template(ISOLATION_NOTICE).render(students=unisolated, total=len(grades))
    keep("isolation_notice", ISOLATION_NOTICE, notice.encode("utf-8") if unisolated else None)
    return paths
