"""`nbgrader release_feedback` for every student: nbgrader's stops at the first copy without
`submission_secret.txt` (one from `zip_collect`), and those after get nothing. Here each folder is
released on its own; Moodle's students are named with where their page is; a failure stops no other.
"""

from __future__ import annotations

import glob
import os
import re
import shutil

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from ...outputs.moodle import FEEDBACK_ZIP, SHEET_FILLED
from ...inputs.standalone import RESULTS

SECRET, TIMESTAMP = "submission_secret.txt", "timestamp.txt"


class ReleaseFeedback(ExchangeReleaseFeedback):
    def copy_files(self):
        excluded = set(self.coursedir.student_id_exclude.split(",")) if self.coursedir.student_id_exclude else set()
        pattern = re.escape(os.path.sep).join([
            self.coursedir.format_path(self.coursedir.feedback_directory, "(?P<student_id>.*)",
                                       self.coursedir.assignment_id, escape=True),
            "(?P<notebook_id>.*).html"])
        released, outside, failed = 0, {}, []
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            found = re.match(pattern, html_file)
            if found is None:
                self.log.error("%s : chemin inattendu pour un retour (motif %s)", html_file, pattern)
                continue
            student_id, notebook_id = found.group("student_id"), found.group("notebook_id")
            if student_id in excluded:
                continue
            folder = os.path.dirname(html_file)
            if not os.path.isfile(os.path.join(folder, SECRET)):
                outside.setdefault(student_id, []).append(html_file)
                continue
            try:
                self._release(folder, html_file, student_id, notebook_id)
                released += 1
            except OSError as exc:
                failed.append(student_id)
                self.log.error("retour de %s (%s/%s) non publié : %s", student_id, self.coursedir.assignment_id,
                               notebook_id, exc)
        for student_id, pages in outside.items():
            self.log.warning(
                "retour de %s non publié dans l'échange : sa copie n'y est pas passée (zip_collect, Moodle), il ne "
                "pourrait pas l'y chercher ; rendez-lui %s, ou par Moodle : « trous grade . » écrit %s, où sa page "
                "est dans le dossier de son numéro de participant (à déposer dans le devoir Moodle ; avec la feuille "
                "d'évaluation du devoir, « trous grade . --feuille <feuille> » écrit aussi %s, à déposer avant)",
                student_id, ", ".join(pages), os.path.join(self.coursedir.root, RESULTS, FEEDBACK_ZIP), SHEET_FILLED)
        self.log.info("%d retour(s) publié(s) dans l'échange, %d élève(s) à qui le rendre par Moodle%s", released,
                      len(outside), f", {len(failed)} échec(s)" if failed else "")
        if failed:
            self.fail(f"retours non publiés pour : {', '.join(sorted(set(failed)))}")

    def _release(self, folder: str, html_file: str, student_id: str, notebook_id: str) -> None:
        """nbgrader's own steps (copy under a temporary name, then move: atomic)."""
        with open(os.path.join(folder, SECRET)) as fh:
            secret = fh.read()
        try:
            with open(os.path.join(folder, TIMESTAMP)) as fh:
                timestamp = fh.read()
        except FileNotFoundError:
            timestamp = "sans date"
        checksum = notebook_hash(secret=secret, notebook_id=notebook_id)
        temporary = os.path.join(self.dest_path, f"{checksum}-tmp.html")
        self.log.info("Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)", student_id,
                      self.coursedir.course_id, self.coursedir.assignment_id, notebook_id, timestamp)
        shutil.copy(html_file, temporary)
        shutil.move(temporary, os.path.join(self.dest_path, f"{checksum}.html"))
