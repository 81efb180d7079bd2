"""What a course's description can get wrong: one error class, read everywhere, defined where
nothing else is needed (the schema and the course records both raise or pass it)."""

from __future__ import annotations

COURSE_FILE = "course.yaml"


class CourseError(Exception):
    """A `course.yaml` problem: file, line, message, what to write instead. When the file has several
    independent mistakes, the first is this error's own fields and `errors` lists them all, each
    said in its text (an author fixes them in one go, not one run each)."""

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
