"""The course side: what a course is made of, read and checked, before any student code runs.

    definition.py   course.yaml, validated (errors name the file, the line and what to write)
    yamlpos.py      YAML with line numbers, for those errors
    source.py       reading a file as a student saved it (encodings, BOM, CRLF)
    blanks.py       the `___` blanks of a template, aligned against a copy
    submission.py   a copy read against its template: which blanks are filled, with what
    flow.py         the data flow between blanks: what each blank's line reads, and from which blank
    spec.py         the check language of public checks and hidden graders
    compare.py      a value against the expected one, said in the course's notation
"""

from .definition import COURSE_FILE, TEMPLATES_DIR, BlankSpec, Course, CourseError, Exercise, parse

__all__ = ["COURSE_FILE", "TEMPLATES_DIR", "BlankSpec", "Course", "CourseError", "Exercise", "parse"]
