"""The model every other layer shares, importing nothing else of trous: what a course is
(course.yaml, validated), what a run of a student's program sends back, and how it is judged."""

from .course import COURSE_FILE, TEMPLATES_DIR, BlankSpec, Course, CourseError, Exercise, parse

__all__ = ["COURSE_FILE", "TEMPLATES_DIR", "BlankSpec", "Course", "CourseError", "Exercise", "parse"]
