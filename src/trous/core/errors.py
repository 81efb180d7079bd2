"""What a course's description can get wrong: one error class, read everywhere, defined where
nothing else is needed (the schema, the cache and the course records all raise or pass it)."""

from __future__ import annotations

COURSE_FILE = "course.yaml"


class CourseError(Exception):
    """A `course.yaml` problem: file, line, message, what to write instead."""

    def __init__(self, path: str, line: int | None, message: str, example: str | None = None):
        self.path, self.line, self.message, self.example = path, line, message, example
        text = f"{path}:{line} : {message}" if line else f"{path} : {message}"
        if example:
            text += "\n    à écrire par exemple :\n" + "\n".join("      " + ln for ln in example.splitlines())
        super().__init__(text)
