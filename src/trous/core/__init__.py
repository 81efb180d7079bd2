"""The model every other layer shares, importing nothing else of trous: what a course is, what a
run of a student's program sends back, and how it is judged.

    course.py       the course's records (course.yaml, validated) and where each exercise's files are
    schema.py       what a valid course.yaml is (pydantic; errors name the file, the line and what to write)
    yamlpos.py      YAML with line numbers, for those errors
    cache.py        a student edition's course.yaml once validated, read again without YAML or pydantic
    source.py       reading a file as a student saved it (encodings, BOM, CRLF)
    blanks.py       the `___` blanks of a template, aligned against a copy
    analysis.py     a copy read against its template: which blanks are filled, with what
    submission.py, grades.py   what a grading run receives (a copy) and gives (its grade), as data
    flow.py         the data flow between blanks: what each blank's line reads, and from which blank
    checks.py       the check language of public checks and hidden graders
    protocol.py     what crosses between the grader and a sandbox (jobs, units, results), plain JSON
    encode.py       a student's value as JSON data, without trusting it (runs in the sandbox)
    wire.py         what comes out of a sandbox, read under the copy's bounds before it is rebuilt
    compare.py      a value against the expected one, said in the course's notation
    judge.py        does one expectation hold on a run's result: the one judge of self-check and grade
    glosses.py, wording.py   the French words: glosses of beginners' errors, plurals
"""

from .course import COURSE_FILE, TEMPLATES_DIR, BlankSpec, Course, CourseError, Exercise, parse

__all__ = ["COURSE_FILE", "TEMPLATES_DIR", "BlankSpec", "Course", "CourseError", "Exercise", "parse"]
