"""The course side: what a course is made of, read and checked, before any student code runs.

    definition.py   the course's records (course.yaml, validated) and where each exercise's files are
    schema.py       what a valid course.yaml is (pydantic; errors name the file, the line and what to write)
    yamlpos.py      YAML with line numbers, for those errors
    cache.py        a student edition's course.yaml once validated, read again without YAML or pydantic
    source.py       reading a file as a student saved it (encodings, BOM, CRLF)
    blanks.py       the `___` blanks of a template, aligned against a copy
    submission.py   a copy read against its template: which blanks are filled, with what
    flow.py         the data flow between blanks: what each blank's line reads, and from which blank
    spec.py         the check language of public checks and hidden graders
    compare.py      a value against the expected one, said in the course's notation
"""

from .course import COURSE_FILE, TEMPLATES_DIR, BlankSpec, Course, CourseError, Exercise, parse

__all__ = ["COURSE_FILE", "TEMPLATES_DIR", "BlankSpec", "Course", "CourseError", "Exercise", "parse"]
