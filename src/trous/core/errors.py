"""The error of a course's description, apart: schema.py and course.py both raise it, and course.py
imports schema.py (pydantic) only when something is to validate."""

from __future__ import annotations

COURSE_FILE = "course.yaml"


class CourseError(Exception):
    """A `course.yaml` problem: file, line, message, what to write instead. `errors` lists every
    independent mistake, this one first (an author fixes them in one go, not one run each)."""

    def __init__(self, path: str, line: int | None, message: str, example: str | None = None,
                 others: "list[CourseError] | None" = None):
        self.path, self.line, self.message, self.example = path, line, message, example
        self.errors = [self, *(others or [])]
        text = "\n".join(e.said() for e in self.errors)
        if others:
            text = f"{len(self.errors)} erreurs dans {path} :\n" + text
        super().__init__(text)

    def said(self) -> str:
        text = f"{self.path}:{self.line} : {self.message}" if self.line else f"{self.path} : {self.message}"
        if self.example:
            text += "\n    à écrire par exemple :\n" + "\n".join("      " + ln for ln in self.example.splitlines())
        return text
