"""A graded submission, as data: per exercise, per blank, points and a French message.

`SubmissionGrade.to_json()` is the stable `results.json` schema (version 2, outputs/results.schema.json).
Its `intake` (what the copy held besides its graded files) belongs to the copy as read by this run, not
to the grade: the gradebook's stored grade does not carry it. Version 1 documents (no `intake`) still load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PASSED, FAILED, UNFILLED, ERROR, MISSING = "passed", "failed", "unfilled", "error", "missing"
SCHEMA, VERSION = "trous/results", 2
UNISOLATED = "sans-isolation"  # the sandbox kind of a grading that did not isolate the student's code


@dataclass
class BlankGrade:
    id: str
    number: int  # 1-based position in the exercise
    score: float
    max_score: float
    status: str
    message: str = ""
    line: int | None = None
    hint: str = ""


@dataclass
class ExerciseGrade:
    id: str
    title: str
    score: float
    max_score: float
    mode: str  # "blanks", "whole_file", "missing", "unreadable", "syntax"
    blanks: list[BlankGrade] = field(default_factory=list)
    message: str | None = None
    notes: list[str] = field(default_factory=list)
    # The student's own file run as it is on the course's inputs: {"ok": true} or
    # {"ok": false, "line": 12, "text": "…", "error": "AttributeError: …"}; None when it was not run.
    run: dict | None = None


@dataclass
class SubmissionGrade:
    student: str
    course: str
    grader_version: str
    exercises: list[ExerciseGrade] = field(default_factory=list)
    isolation: str = ""  # the sandbox kind the copy was graded in ("" when not said, as in results v1)
    # For the teacher only, never in the copy's documents: what behaved on this copy otherwise than on
    # the reference (a graders' test past its bounds, or failing by itself on these values), and
    # answers of its sandbox that were refused as forged.
    incidents: list[str] = field(default_factory=list)

    @property
    def unisolated(self) -> bool:
        return self.isolation == UNISOLATED

    @property
    def score(self) -> float:
        return round(sum(e.score for e in self.exercises), 6)

    @property
    def max_score(self) -> float:
        return round(sum(e.max_score for e in self.exercises), 6)

    def exercise(self, exercise_id: str) -> ExerciseGrade:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise KeyError(exercise_id)

    def to_json(self, intake: dict | None = None) -> dict:
        """The results document; `intake` (a `Submission.report()`) adds what the copy held."""
        data = {"schema": SCHEMA, "version": VERSION, "student": self.student, "course": self.course,
                "grader_version": self.grader_version, "score": self.score, "max_score": self.max_score,
                "exercises": [_exercise_json(e) for e in self.exercises]}
        if self.isolation:
            data["isolation"] = self.isolation
        if intake is not None:
            data["intake"] = intake
        return data

    @classmethod
    def from_json(cls, data: dict) -> "SubmissionGrade":
        exercises = []
        for e in data.get("exercises", []):
            blanks = [BlankGrade(**b) for b in e.get("blanks", [])]
            exercises.append(ExerciseGrade(**{**e, "blanks": blanks}))
        return cls(data["student"], data["course"], data["grader_version"], exercises,
                   str(data.get("isolation") or ""))


def _exercise_json(e: ExerciseGrade) -> dict:
    # Written out rather than dataclasses.asdict: this runs for every student, several times.
    return {"id": e.id, "title": e.title, "score": e.score, "max_score": e.max_score, "mode": e.mode,
            "blanks": [{"id": b.id, "number": b.number, "score": b.score, "max_score": b.max_score,
                        "status": b.status, "message": b.message, "line": b.line, "hint": b.hint}
                       for b in e.blanks],
            "message": e.message, "notes": list(e.notes), "run": e.run}
