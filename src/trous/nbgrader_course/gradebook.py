"""`trous grade`'s results written where `nbgrader autograde` writes its own: nbgrader's gradebook
(submissions, per-cell grades, comments, late penalties) and `autograded/<student>/<assignment>/`.

The work is nbgrader's own: the autograde preprocessors configured in nbgrader_config.py run on each
submitted notebook, in nbgrader's order (sanitize: outputs cleared, locked cells and points restored
from the gradebook, missing grade cells added back; then the autograde list, with timestamps, late
penalties, "No response." comments and missing notebooks handled as nbgrader does), except that no
kernel runs: the step that would execute the notebook fills each blank's grade cell with the output
the engine's grade calls for (outcome.py), the very output the hidden cell would print in the kernel.
nbgrader's `generate_feedback`, `export` and formgrader then work on the result as on their own.

All preprocessors share one gradebook session (nbgrader's open a new database connection each,
which costs more than the grading itself), and the metadata schema is checked once instead of once
per cell; nothing else of nbgrader is changed.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path


def _without_iri_grammars() -> None:
    """jsonschema (imported by nbformat, so by nbgrader) compiles some forty grammars at import when
    rfc3987_syntax is installed (JupyterLab's dependencies bring it), to check the "iri" string
    format, which no notebook or nbgrader schema uses: seconds, more than grading a class takes.
    jsonschema skips that checker when the module cannot be imported; so does this process."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


_without_iri_grammars()

import nbformat  # noqa: E402
from nbconvert.preprocessors import ExecutePreprocessor, Preprocessor  # noqa: E402
from traitlets import Bool  # noqa: E402
from traitlets.config import Config  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402
from traitlets.utils.importstring import import_item  # noqa: E402

from ..course import Course  # noqa: E402
from ..grading.model import SubmissionGrade  # noqa: E402
from .outcome import outputs_for  # noqa: E402
from .preprocessors import TROUS_KEY, VerifyGrades, grade_cells  # noqa: E402

GRADEBOOK_MODULES = ("overwritecells", "overwritekernelspec", "saveautogrades", "latesubmissions")


@dataclass
class WriteReport:
    root: Path
    written: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment)
    problems: list[str] = field(default_factory=list)


def load_config(root: Path) -> Config:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    return config


class _Borrowed:
    """Stands for nbgrader's `Gradebook` class inside its preprocessors: every `Gradebook(url)` is the
    one session opened here, and closing it is left to us. The assignment's own rows (its notebooks,
    source and graded cells) do not change while grading: they are looked up once, not once per
    student."""

    FIXED = ("find_notebook", "find_source_cell", "find_graded_cell", "find_assignment")

    def __init__(self, gradebook):
        self._gradebook = gradebook
        self._fixed: dict[tuple, object] = {}
        self._rows: dict[tuple, dict] = {}

    def forget_student(self) -> None:
        self._rows.clear()

    def _row(self, kind: str, cell: str, notebook: str, assignment: str, student: str):
        """A student's grade or comment of a cell, from the rows of their notebook loaded at once
        (nbgrader runs one five-table join per cell); anything unusual goes to nbgrader's own."""
        key = (kind, notebook, assignment, student)
        if key not in self._rows:
            submission = self._gradebook.find_submission_notebook(notebook, assignment, student)
            self._rows[key] = {row.name: row for row in (submission.grades if kind == "grade" else submission.comments)}
        row = self._rows[key].get(cell)
        if row is None:
            return getattr(self._gradebook, f"find_{kind}")(cell, notebook, assignment, student)
        return row

    def find_grade(self, cell, notebook, assignment, student):
        return self._row("grade", cell, notebook, assignment, student)

    def find_comment(self, cell, notebook, assignment, student):
        return self._row("comment", cell, notebook, assignment, student)

    def _memo(self, name):
        method = getattr(self._gradebook, name)

        def lookup(*args):
            key = (name, *args)
            if key not in self._fixed:
                self._fixed[key] = method(*args)
            return self._fixed[key]
        return lookup

    def __call__(self, *args, **kwargs):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass

    def __getattr__(self, name):
        if name in self.FIXED:
            return self._memo(name)
        return getattr(self._gradebook, name)


def _schema_checked_once():
    """nbgrader validates each cell's metadata with `jsonschema.validate`, which first validates the
    schema itself, every time: most of the cost of a notebook. Same check, schema checked once."""
    import jsonschema  # noqa: PLC0415

    validators: dict[str, object] = {}  # nbgrader loads its schema anew for each notebook: key by content
    valid: set[tuple[str, str]] = set()  # every student's notebook has the same cells

    def validate(instance, schema, *args, **kwargs):
        schema_key = json.dumps(schema, sort_keys=True)
        validator = validators.get(schema_key)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = validators[schema_key] = cls(schema)
        try:
            key = (schema_key, json.dumps(instance, sort_keys=True))
        except (TypeError, ValueError):
            key = None
        if key in valid:
            return
        if validator.is_valid(instance):
            if key is not None:
                valid.add(key)
            return
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    return validate


class _Deferred:
    """nbgrader's session, whose `commit()` only flushes: nbgrader commits after every cell, and each
    commit waits for the disk. The writer commits for real after each submission and each notebook,
    so that an interrupted run leaves whole notebooks, never half of one."""

    def __init__(self, session):
        self.session = session

    def commit(self):
        self.session.flush()

    def really_commit(self):
        self.session.commit()

    def __getattr__(self, name):
        return getattr(self.session, name)


class _Namespace:
    """A module with some attributes replaced (seen only by the nbgrader module it is given to)."""

    def __init__(self, module, **replaced):
        self._module, self._replaced = module, replaced

    def __getattr__(self, name):
        return self._replaced[name] if name in self._replaced else getattr(self._module, name)


@contextlib.contextmanager
def shared_gradebook(gradebook):
    import importlib  # noqa: PLC0415

    modules = [importlib.import_module(f"nbgrader.preprocessors.{m}") for m in GRADEBOOK_MODULES]
    saved = [m.Gradebook for m in modules]
    borrowed = _Borrowed(gradebook)
    common = importlib.import_module("nbgrader.nbgraderformat.common")
    saved_jsonschema = common.jsonschema
    try:
        for module in modules:
            module.Gradebook = borrowed
        common.jsonschema = _Namespace(saved_jsonschema, validate=_schema_checked_once())
        yield borrowed
    finally:
        common.jsonschema = saved_jsonschema
        for module, original in zip(modules, saved):
            module.Gradebook = original


class FillGrades(Preprocessor):
    """Where Execute was: the grade cells of trous's blanks get the engine's outputs."""

    enabled = Bool(True)
    grade: SubmissionGrade | None = None

    def preprocess(self, nb, resources):
        for exercise_id, entries in grade_cells(nb).items():
            try:
                exercise_grade = self.grade.exercise(exercise_id)
            except KeyError:
                continue
            for cell, blank_id, _ in entries:
                try:
                    cell.outputs, score = outputs_for(exercise_grade, blank_id)
                except KeyError:
                    continue
                cell.metadata[TROUS_KEY] = {"moteur": score, "source": "trous grade"}
        return nb, resources


def _sa_warning():
    from sqlalchemy.exc import SAWarning  # noqa: PLC0415

    return SAWarning


def _classes(items) -> list:
    return [import_item(i) if isinstance(i, str) else i for i in items]


class Writer:
    def __init__(self, root: Path):
        from nbgrader.converters import Autograde  # noqa: PLC0415
        from nbgrader.coursedir import CourseDirectory  # noqa: PLC0415

        self.root = Path(root).resolve()
        self.config = load_config(self.root)
        self.coursedir = CourseDirectory(config=self.config)
        reference = Autograde(coursedir=self.coursedir, config=self.config)
        self.permissions = int(str(reference.permissions), 8)
        self.exclude_overwriting = reference.exclude_overwriting
        self.fill = FillGrades()
        self.borrowed: _Borrowed | None = None  # set while writing (shared_gradebook)
        self.sanitize = [c(config=self.config) for c in _classes(reference.sanitize_preprocessors)]
        steps = []
        for cls in _classes(reference.autograde_preprocessors):
            if issubclass(cls, (ExecutePreprocessor, VerifyGrades)):
                if self.fill not in steps:
                    steps.append(self.fill)
                continue
            steps.append(cls(config=self.config))
        if self.fill not in steps:
            steps.insert(0, self.fill)
        self.autograde = steps

    def _copy_files(self, source: Path, dest: Path, exclude: set[str]) -> None:
        from nbgrader.utils import find_all_files  # noqa: PLC0415

        for filename in find_all_files(str(source), self.coursedir.ignore + ["*.ipynb"]):
            if filename in exclude or os.path.islink(filename):
                continue
            target = dest / os.path.relpath(filename, source)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                target.unlink()
            shutil.copy(filename, target)

    def student(self, gradebook, assignment, student: str, grade: SubmissionGrade, report: WriteReport) -> None:
        submitted = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment.name))
        dest = Path(self.coursedir.format_path(self.coursedir.autograded_directory, student, assignment.name))
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        self._copy_files(submitted, dest, set())
        gradebook.update_or_create_student(student)
        timestamp = self.coursedir.get_existing_timestamp(str(submitted))
        if timestamp:
            gradebook.update_or_create_submission(assignment.name, student, timestamp=timestamp)
        else:
            gradebook.update_or_create_submission(assignment.name, student)
        gradebook.db.really_commit()
        source = Path(self.coursedir.format_path(self.coursedir.source_directory, ".", assignment.name))
        excluded = {str(source / x) for x in self.exclude_overwriting.get(assignment.name, [])}
        self._copy_files(source, dest, excluded)
        self.fill.grade = grade
        self.borrowed.forget_student()
        for notebook in assignment.notebooks:
            path = submitted / f"{notebook.name}.ipynb"
            if not path.is_file() or path.is_symlink():
                submission = gradebook.find_submission_notebook(notebook.name, assignment.name, student)
                for cell_grade in submission.grades:
                    cell_grade.auto_score = 0
                    cell_grade.needs_manual_grade = False
                gradebook.db.really_commit()
                continue
            try:
                nb = nbformat.read(str(path), as_version=4)
            except Exception as exc:  # noqa: BLE001 - nbgrader fails on it too; say so, grade nothing
                report.problems.append(f"{student}/{assignment.name}/{notebook.name}.ipynb : illisible ({exc})")
                continue
            resources = {"nbgrader": {"student": student, "assignment": assignment.name, "notebook": notebook.name,
                                      "db_url": self.coursedir.db_url},
                         "metadata": {"path": str(dest)}}
            try:
                for step in self.sanitize + self.autograde:
                    nb, resources = step(nb, resources)
            except Exception as exc:  # noqa: BLE001 - nbgrader's own steps failed: nbgrader would fail too
                gradebook.db.rollback()
                report.problems.append(f"{student}/{assignment.name}/{notebook.name}.ipynb : nbgrader n'a pas pu "
                                       f"le préparer ({type(exc).__name__}: {exc}) : à corriger à la main")
                continue
            gradebook.db.really_commit()
            # The steps above validated every cell; nbformat.write would validate the whole notebook again.
            (dest / f"{notebook.name}.ipynb").write_text(nbformat.v4.nbjson.writes(nb) + "\n", encoding="utf-8")
        for folder, _, names in os.walk(dest):
            for name in names:
                os.chmod(os.path.join(folder, name), self.permissions)
        report.written.append((student, assignment.name))


def write(root: Path, grades: list[SubmissionGrade], assignments: list[str] | None = None) -> WriteReport:
    """Record `grades` (students of nbgrader's submitted/) in the nbgrader course at `root`."""
    # Thousands of short-lived ORM and notebook objects: the cycle collector would walk them all
    # again and again (a sixth of the time); they are freed when the session closes.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _write(root, grades, assignments)
    finally:
        if collecting:
            gc.enable()


def _write(root: Path, grades: list[SubmissionGrade], assignments: list[str] | None) -> WriteReport:
    from nbgrader.api import Gradebook, MissingEntry  # noqa: PLC0415

    writer = Writer(root)
    report = WriteReport(writer.root)
    submitted = Path(writer.coursedir.submitted_directory)
    submitted = submitted if submitted.is_absolute() else writer.root / submitted
    with Gradebook(writer.coursedir.db_url, writer.coursedir.course_id) as gradebook, \
            shared_gradebook(gradebook) as writer.borrowed, warnings.catch_warnings():
        # nbgrader's own submission code trips SQLAlchemy's autoflush warnings; `nbgrader autograde`
        # prints them too. They say nothing to a teacher.
        warnings.simplefilter("ignore", category=_sa_warning())
        gradebook.db = _Deferred(gradebook.db)
        # This process is the only writer while it runs: what it read stays true after a commit.
        gradebook.db.session().expire_on_commit = False
        for grade in grades:
            folder = submitted / grade.student
            if not folder.is_dir():
                continue
            for entry in sorted(folder.iterdir()):
                if not entry.is_dir() or entry.is_symlink() or (assignments and entry.name not in assignments):
                    continue
                try:
                    assignment = gradebook.find_assignment(entry.name)
                except MissingEntry:
                    report.problems.append(f"devoir {entry.name} absent du carnet de notes nbgrader "
                                           "(lancez nbgrader generate_assignment)")
                    continue
                writer.student(gradebook, assignment, grade.student, grade, report)
    report.problems = list(dict.fromkeys(report.problems))
    return report


def write_all(root: Path, course: Course, grades: list[SubmissionGrade],
              assignments: list[str] | None = None) -> dict[str, Path]:
    """The `after` hook of the nbgrader input kind: what `trous grade` lists among its reports."""
    report = write(root, grades, assignments)
    for problem in report.problems:
        print(f"nbgrader : {problem}")
    print(f"carnet de notes nbgrader : {len(report.written)} copie(s) enregistrée(s) dans {report.root / 'gradebook.db'}")
    return {"nbgrader_gradebook": Path(report.root) / "gradebook.db",
            "nbgrader_autograded": Path(report.root) / "autograded"}
