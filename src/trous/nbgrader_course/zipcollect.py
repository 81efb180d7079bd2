"""`nbgrader zip_collect` on Moodle's « Télécharger tous les travaux remis » archive, names kept.

Moodle names each student's folder `<Full Name>_<N>_assignsubmission_file_` (Moodle ≥ 4.1 may drop
the last `_`), where `<N>` is the participant's number inside the assignment: it becomes the nbgrader
student id, as before. nbgrader's filename collector drops the name, so formgrader showed « None,
None » for every such student. `MoodleCollector` reads the same folder names and records each
student's name in nbgrader's gradebook when the gradebook has none for them (a name set by hand in
formgrader is kept). Moodle gives one « full name » in the order the site displays names: by default
the first word is taken as the first name and the rest as the last name (`last_name_first = True` for
a site that shows « NOM Prénom »).
"""

from __future__ import annotations

import atexit

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import Bool, Unicode

MOODLE = (r".*/(?P<full_name>[^/]*?)_(?P<student_id>[0-9]+)_assignsubmission_file_?/(?:[^/]*/)*"
          r"(?P<file_id>[^/]+[.]ipynb)$")


def split_name(full_name: str, last_name_first: bool = False) -> tuple[str | None, str | None]:
    """(first name, last name) of Moodle's full name."""
    words = full_name.split()
    if not words:
        return None, None
    if len(words) == 1:
        return None, words[0]
    if last_name_first:
        return " ".join(words[1:]), words[0]
    return words[0], " ".join(words[1:])


class MoodleCollector(FileNameCollectorPlugin):
    named_regexp = Unicode(MOODLE, help="Moodle's folder names: <Full Name>_<N>_assignsubmission_file_/<file>"
                           ).tag(config=True)
    last_name_first = Bool(False, help="Moodle shows « NOM Prénom » (first word: last name)").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._seen: set[str] = set()
        self._gradebook = None

    def collect(self, submitted_file: str):
        found = super().collect(submitted_file)
        if not found:
            return found
        full_name = found.pop("full_name", None)
        student = found.get("student_id")
        if full_name and student and student not in self._seen:
            self._seen.add(student)
            self._record(student, full_name.strip())
        return found

    def _record(self, student: str, full_name: str) -> None:
        first, last = split_name(full_name, self.last_name_first)
        gradebook = self._open()
        if gradebook is None:
            return
        from nbgrader.api import MissingEntry  # noqa: PLC0415

        try:
            known = gradebook.find_student(student)
        except MissingEntry:
            known = None
        if known is not None and (known.first_name or known.last_name):
            if (known.first_name, known.last_name) != (first, last):
                self.log.info("élève %s : nom déjà dans le carnet de notes (%s %s), gardé (Moodle : %s)", student,
                              known.first_name, known.last_name, full_name)
            return
        gradebook.update_or_create_student(student, first_name=first, last_name=last)
        self.log.info("élève %s : %s (nom pris dans l'archive de Moodle)", student, full_name)

    def _open(self):
        if self._gradebook is None:
            app = self.parent
            coursedir = getattr(app, "coursedir", None)
            if coursedir is None:
                return None
            from nbgrader.api import Gradebook  # noqa: PLC0415

            self._gradebook = Gradebook(coursedir.db_url, coursedir.course_id)
            atexit.register(self._gradebook.close)
        return self._gradebook
