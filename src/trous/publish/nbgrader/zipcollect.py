"""`nbgrader zip_collect` on Moodle's « Télécharger tous les travaux remis » archive, names kept.

The participant's number in `<Full Name>_<N>_assignsubmission_file` is the student id, read from the
first folder so named, never deeper (a student's own folder « Bob_12_assignsubmission_file » does not
hand in for Bob). Folders claiming one number are not collected (nbgrader would merge them). The name
goes in the gradebook (nbgrader's collector drops it: formgrader showed « None, None »).
"""

from __future__ import annotations

import atexit
import os

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import Bool

from ...inputs import moodle as moodlefolders
from ...inputs.intake import student_id as _student_id


def split_name(full_name: str, last_name_first: bool = False) -> tuple[str | None, str | None]:
    words = full_name.split()
    if len(words) < 2:
        return None, (words[0] if words else None)
    first, last = (words[1:], words[:1]) if last_name_first else (words[:1], words[1:])
    return " ".join(first), " ".join(last)


class MoodleCollector(FileNameCollectorPlugin):
    last_name_first = Bool(False, help="Moodle shows « NOM Prénom » (first word: last name)").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._seen: set[str] = set()
        self._gradebook = None
        self._conflicts: dict[str, list[str]] | None = None
        self._told: set[str] = set()
        self._tops: dict[str, set[str]] = {}  # owner's folder → the notebooks right in it
        self._taken: set[tuple[str, str]] = set()  # (student, notebook) collected

    def _root(self) -> str | None:
        app = self.parent
        try:
            return os.path.realpath(app._format_collect_path(app.extracted_directory))
        except (AttributeError, KeyError, ValueError):
            return None

    def _owner(self, submitted_file: str) -> tuple[moodlefolders.Name, str, str] | None:
        """(the Moodle folder's reading, its path, the path inside it) of the first folder so named."""
        root = self._root()
        path = os.path.realpath(submitted_file)
        inside = bool(root) and path.startswith(root + os.sep)
        rel = os.path.relpath(path, root) if inside else path
        parts = [p for p in rel.split(os.sep) if p][:-1]
        for i, part in enumerate(parts):
            found = moodlefolders.read(part, True)
            if isinstance(found, moodlefolders.Name):
                base = os.path.join(root, *parts[: i + 1]) if inside else os.sep + os.path.join(*parts[: i + 1])
                return found, base, "/".join(parts[i + 1:])
        return None

    def _claimed(self) -> dict[str, list[str]]:
        """N → the folders that all claim it (read once)."""
        if self._conflicts is None:
            root, tops = self._root(), {}
            for entry, owner in moodlefolders.extracted([root] if root else []):
                tops.setdefault(entry.name, owner)  # the owner's folder: what is below it is theirs
                try:
                    self._tops[os.path.realpath(entry.path)] = {
                        e.name for e in os.scandir(entry.path) if e.name.endswith(".ipynb")
                        and e.is_file(follow_symlinks=False)}
                except OSError:
                    pass
            self._conflicts = moodlefolders.group(tops, _student_id).copies.conflicts
        return self._conflicts

    def collect(self, submitted_file: str):
        if not submitted_file.endswith(".ipynb"):
            return None
        owner = self._owner(submitted_file)
        if owner is None:
            self.log.warning("%s : dans aucun dossier nommé comme Moodle les nomme (<Nom>_<N>_assignsubmission_file) : "
                             "non collecté", submitted_file)
            return None
        found, base, inner = owner
        if found.number is None or found.plugin != "file":
            return None
        folders = self._claimed().get(found.number)
        if folders:
            if found.number not in self._told:
                self._told.add(found.number)
                self.log.error("participant %s : %d dossiers de l'archive portent ce numéro (%s) : aucun n'est "
                               "collecté (nbgrader les fondrait en un élève) ; vérifie l'archive", found.number,
                               len(folders), ", ".join(folders))
            return None
        student, notebook = found.number, os.path.basename(submitted_file)
        # One notebook of a name per student: the one right in the folder, else the first one below it
        # (nbgrader's zip_collect stops the whole class on a duplicate it cannot date).
        if (inner and notebook in self._tops.get(base, ())) or (student, notebook) in self._taken:
            self.log.warning("%s : un autre %s de la même copie est collecté à sa place (celui à la racine de son "
                             "dossier, ou le premier trouvé)", submitted_file, notebook)
            return None
        self._taken.add((student, notebook))
        if found.name and found.name != moodlefolders.BLIND and student not in self._seen:
            self._seen.add(student)
            self._record(student, found.name)
        return {"student_id": student, "file_id": notebook}

    def _record(self, student: str, full_name: str) -> None:
        first, last = split_name(full_name, self.last_name_first)
        gradebook = self._open()
        if gradebook is None:
            return
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
            self._gradebook = Gradebook(coursedir.db_url, coursedir.course_id)
            atexit.register(self._gradebook.close)
        return self._gradebook
