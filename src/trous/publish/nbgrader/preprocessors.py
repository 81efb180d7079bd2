"""trous's nbgrader preprocessors, named in the generated nbgrader_config.py. `VerifyGrades` grades
outside the kernel: the student's code owns the kernel and could fake any output.
"""

from __future__ import annotations

import math

import nbformat

from nbconvert.preprocessors import Preprocessor
from nbgrader import utils
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor, OverwriteCells
from traitlets import Bool, Unicode

from ...core.grades import UNISOLATED
from ...inputs.bundle import TROUS_KEY, grade_cells
from ...inputs.answers import HIDDEN_BEGIN, HIDDEN_END, released
from ...outputs.outcome import fill, teacher_outputs
from .incell import for_grading


class ClearBlanks(ClearSolutions):
    """An answer cell gets back the template's source, with its `___`."""

    def preprocess_cell(self, cell, resources, cell_index):
        template = (cell.metadata.get(TROUS_KEY) or {}).get("modele")
        if template is not None and utils.is_solution(cell):
            cell.source = template
            del cell.metadata[TROUS_KEY]
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)


class VerifyGrades(NbGraderPreprocessor):
    enabled = Bool(True, help="Corriger chaque trou hors du noyau (recommandé).").tag(config=True)
    sandbox = Unicode("auto", help="Bac à sable du moteur : auto (bubblewrap, sinon refus), bwrap, ou "
                                   "sans-isolation (jamais en root, signalé dans chaque cellule notée).").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.enabled:
            return nb, resources
        examiner = for_grading(self.sandbox)  # refused here, before any answer is read
        fill(nb, lambda bundle, where: examiner.grade(bundle, where.text.encode("utf-8", "surrogatepass")),
             examiner.sandbox == UNISOLATED, "nbgrader autograde")
        return nb, resources


# -- autograde's sanitizing -----------------------------------------------------------------------
FLAGS = ("grade", "solution", "locked", "task")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class RepairCells(NbGraderPreprocessor):
    """A student's damaged nbgrader metadata, which would make nbgrader drop the submission, put in the
    shape it expects, each repair logged: unusable metadata is removed (a grade cell comes back from
    the gradebook); points that are not a number are 0 (RestoreCells restores the gradebook's)."""

    def preprocess_cell(self, cell, resources, cell_index):
        if "nbgrader" not in cell.metadata:
            return cell, resources
        meta = cell.metadata["nbgrader"]
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or (any(meta.get(f) for f in FLAGS) and not (
                isinstance(grade_id, str) and grade_id)):
            what = f"grade_id {grade_id!r:.40}" if isinstance(meta, dict) else f"{type(meta).__name__} {meta!r:.40}"
            self.log.warning("cellule n° %s : métadonnées nbgrader illisibles (%s), retirées", cell_index + 1, what)
            del cell.metadata["nbgrader"]
            return cell, resources
        for flag in FLAGS:
            if not isinstance(meta.get(flag, False), bool):
                self.log.warning("cellule %s : « %s » de nbgrader vaut %.40r, lu %s", grade_id, flag, meta[flag],
                                 bool(meta[flag]))
            meta[flag] = bool(meta.get(flag, False))
        if "points" in meta and not _number(meta["points"]):
            self.log.warning("cellule %s : points illisibles (%.40r)", grade_id, meta["points"])
            meta["points"] = 0.0
        if meta.get("grade") and "points" not in meta:
            meta["points"] = 0.0
        meta["schema_version"] = 3
        return cell, resources


class RestoreCells(OverwriteCells):
    """OverwriteCells, quiet about grade cells released without their hidden tests (its warning for each
    made 95 lines for five students); also restores what it leaves and then stops on."""

    def _restore_flags(self, cell, stored) -> None:
        """Else OverwriteCells meets a MissingEntry or inconsistent checksums, and drops the submission."""
        meta, grade_id = cell.metadata["nbgrader"], cell.metadata["nbgrader"]["grade_id"]
        try:
            points = float(self.gradebook.find_graded_cell(grade_id, self.notebook_id, self.assignment_id).max_score)
        except MissingEntry:
            points = None
        expected = {"grade": points is not None}
        if stored.locked:
            expected["solution"] = False
        for flag, value in expected.items():
            if bool(meta.get(flag)) != value:
                self.report_change(grade_id, flag, value, meta.get(flag))
                meta[flag] = value
        if points is None:
            meta.pop("points", None)
        elif not _number(meta.get("points")):  # a number is OverwriteCells' to check and restore
            self.report_change(grade_id, "points", points, meta.get("points"))
            meta["points"] = points

    def preprocess_cell(self, cell, resources, cell_index):
        if "nbgrader" in cell.metadata and not cell.metadata["nbgrader"]:
            # A copy DeduplicateIds emptied (a cell pasted twice): OverwriteCells would stop on it.
            del cell.metadata["nbgrader"]
            return cell, resources
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        stored = None
        if grade_id is not None:
            try:
                stored = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except Exception:  # noqa: BLE001 - MissingEntry and friends: nbgrader's own path reports them
                stored = None
        if stored is not None:
            self._restore_flags(cell, stored)
        if stored is not None and utils.is_grade(cell) and cell.cell_type == "code" and stored.locked \
                and stored.source != cell.source and released(stored.source) == cell.source:
            cell.source = stored.source  # what nbgrader would do, after its warning
        return super().preprocess_cell(cell, resources, cell_index)


# -- feedback ------------------------------------------------------------------------------------
class TeacherGrades(Preprocessor):
    """A grade changed in formgrader: the verdict says both, to agree with nbgrader's « Score » above it."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self._where = (info["notebook"], info["assignment"], info["student"])
        with Gradebook(info["db_url"]) as self._gradebook:
            return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code" or not utils.is_grade(cell):
            return cell, resources
        try:
            grade = self._gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], *self._where)
        except Exception:  # noqa: BLE001 - MissingEntry: GetGrades has already said so
            return cell, resources
        auto, manual, extra = grade.auto_score, grade.manual_score, grade.extra_credit or 0.0
        if auto is None or ((manual is None or manual == auto) and not extra):
            return cell, resources
        final = (manual if manual is not None else auto) + extra
        cell.outputs = [nbformat.from_dict(o) for o in
                        teacher_outputs(cell.outputs, auto, final, grade.max_score, extra)]
        return cell, resources


def secrets_of(nb) -> list[str]:
    """Hidden-test lines, and the hidden bundles' solution and grader lines (long enough to mean
    something, and absent from the public material)."""
    secrets = {"corriger_trou(", HIDDEN_BEGIN}
    for cell in nb.cells:
        if cell.cell_type == "code" and utils.is_grade(cell):  # its hidden-test blocks' lines (not the delimiters)
            shown = set(released(cell.source).split("\n"))
            secrets.update(line.strip() for line in cell.source.split("\n") if line not in shown
                           and len(line.strip()) >= 12 and HIDDEN_BEGIN not in line and HIDDEN_END not in line)
    for entries in grade_cells(nb).values():
        for _, _, bundle in entries:
            public = bundle.template + "\n" + bundle.checks
            for text in (bundle.solution or "", bundle.grader or ""):
                for line in text.split("\n"):
                    line = line.strip()
                    if len(line) >= 12 and line not in public:
                        # as written, and as it appears inside the hidden block's string literals
                        secrets.update({line, repr(line)[1:-1]})
    return sorted(secrets)


def _output_text(output) -> str:
    parts = [output[key] for key in ("text", "evalue", "ename") if key in output]
    parts += [*output.get("traceback", []), *(output.get("data") or {}).values()]
    return "\n".join(str(part) for part in parts)


WITHHELD = "[sortie retirée : elle citait le code des tests cachés]"


class HideHiddenTests(Preprocessor):
    """No hidden-test block, nor any output quoting hidden material, in the feedback."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        secrets = secrets_of(nb)
        for cell in nb.cells:
            if cell.cell_type == "code" and HIDDEN_BEGIN in cell.source:
                cell.source = released(cell.source)
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=WITHHELD + "\n")
                                if any(secret in _output_text(output) for secret in secrets) else output
                                for output in cell.get("outputs", [])]
        return nb, resources
