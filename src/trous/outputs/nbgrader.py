"""`trous grade`'s results written where `nbgrader autograde` writes its own: nbgrader's gradebook
and `autograded/<student>/<assignment>/`.

nbgrader's own sanitize and autograde preprocessors (nbgrader_config.py) run on each submitted
notebook, in nbgrader's order, except that no kernel runs: the execution step fills each blank's
grade cell with the output the engine's grade calls for (outcome.py), the very output the hidden
cell would print. nbgrader's feedback, export and formgrader then work on it as on their own.

Those preprocessors each open the gradebook anew, commit after every cell and check their schema
again for each cell: for a class, that costs more than grading it. While `shared_gradebook` is
active they borrow one session, the assignment's rows are looked up once, commits wait for the end
of each notebook and the schema is checked once. What they compute and store is unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import json
import os
import shutil
import types
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

from ..inputs.nbgrader_dir import without_iri_grammars

without_iri_grammars()  # before nbformat is imported

import nbformat  # noqa: E402
from sqlalchemy.exc import SAWarning  # noqa: E402
from nbconvert.preprocessors import ExecutePreprocessor, Preprocessor  # noqa: E402
from traitlets import Bool  # noqa: E402
from traitlets.config import Config  # noqa: E402
from traitlets.config.loader import PyFileConfigLoader  # noqa: E402
from traitlets.utils.importstring import import_item  # noqa: E402

from ..core.grades import SubmissionGrade  # noqa: E402
from .outcome import fill  # noqa: E402
from .overrides import Final, WriteReport  # noqa: E402

GRADEBOOK_MODULES = ("overwritecells", "overwritekernelspec", "saveautogrades", "latesubmissions")


class Borrowed:
    """Stands for nbgrader's `Gradebook` class inside its preprocessors: every `Gradebook(url)` is the
    one session opened here, closed by us."""

    FIXED = ("find_notebook", "find_source_cell", "find_graded_cell", "find_assignment")

    def __init__(self, gradebook):
        self._gradebook = gradebook
        for name in self.FIXED:
            setattr(self, name, functools.cache(getattr(gradebook, name)))
        # The student's submitted notebook, looked up once per student (grades, comments, penalty and
        # final scores all start from it).
        self.find_submission_notebook = functools.cache(gradebook.find_submission_notebook)
        self._rows: dict[tuple, dict] = {}

    def forget_student(self) -> None:
        self._rows.clear()
        self.find_submission_notebook.cache_clear()

    def _row(self, kind: str, cell: str, notebook: str, assignment: str, student: str):
        """A student's grade or comment of a cell, from their notebook's rows loaded at once (nbgrader
        runs a five-table join per cell); anything unusual goes to nbgrader's own."""
        key = (kind, notebook, assignment, student)
        if key not in self._rows:
            submission = self.find_submission_notebook(notebook, assignment, student)
            self._rows[key] = {row.name: row for row in (submission.grades if kind == "grade" else submission.comments)}
        row = self._rows[key].get(cell)
        if row is None:
            return getattr(self._gradebook, f"find_{kind}")(cell, notebook, assignment, student)
        return row

    def find_grade(self, cell, notebook, assignment, student):
        return self._row("grade", cell, notebook, assignment, student)

    def find_comment(self, cell, notebook, assignment, student):
        return self._row("comment", cell, notebook, assignment, student)

    def __call__(self, *args, **kwargs):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass

    def __getattr__(self, name):
        return getattr(self._gradebook, name)


def _schema_checked_once():
    """nbgrader's `jsonschema.validate` of each cell checks the schema itself every time (most of a
    notebook's cost): same check, schema checked once."""
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


class Deferred:
    """nbgrader's session, whose `commit()` only flushes (each commit waits for the disk): the writer
    commits for real after each submission and notebook, so an interrupted run leaves whole ones."""

    def __init__(self, session):
        self.session = session

    def commit(self):
        self.session.flush()

    def really_commit(self):
        self.session.commit()

    def __getattr__(self, name):
        return getattr(self.session, name)


@contextlib.contextmanager
def shared_gradebook(gradebook):
    modules = [importlib.import_module(f"nbgrader.preprocessors.{m}") for m in GRADEBOOK_MODULES]
    saved = [m.Gradebook for m in modules]
    borrowed = Borrowed(gradebook)
    common = importlib.import_module("nbgrader.nbgraderformat.common")
    saved_jsonschema = common.jsonschema
    try:
        for module in modules:
            module.Gradebook = borrowed
        # jsonschema as nbgrader's module sees it, `validate` replaced (no other module sees it)
        common.jsonschema = types.SimpleNamespace(**{**vars(saved_jsonschema), "validate": _schema_checked_once()})
        yield borrowed
    finally:
        common.jsonschema = saved_jsonschema
        for module, original in zip(modules, saved):
            module.Gradebook = original


# The build's preprocessor that grades again outside the kernel (publish/nbgrader/preprocessors.py): its
# work is the engine's grade here, so it is replaced by the filling step, as nbgrader's execution is.
REGRADING = "VerifyGrades"


def load_config(root: Path) -> Config:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    return config


class FillGrades(Preprocessor):
    """Where Execute was: the grade cells of trous's blanks get the engine's outputs (as VerifyGrades
    gives them under `nbgrader autograde`), naming the cells of the text the intake graded."""

    enabled = Bool(True)
    grade: SubmissionGrade | None = None

    def preprocess(self, nb, resources):
        fill(nb, self._exercise, self.grade.unisolated, "trous grade")
        return nb, resources

    def _exercise(self, bundle, where):
        try:
            return self.grade.exercise(bundle.exercise_id)
        except KeyError:
            return None


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
        self.borrowed: Borrowed | None = None  # set while writing (shared_gradebook)
        self.sanitize = [c(config=self.config) for c in _classes(reference.sanitize_preprocessors)]
        steps = []
        for cls in _classes(reference.autograde_preprocessors):
            if issubclass(cls, ExecutePreprocessor) or cls.__name__ == REGRADING:
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

    @staticmethod
    def _final(gradebook, notebook: str, assignment: str, student: str) -> Final:
        """What nbgrader's gradebook adds to the autograder's scores for this notebook: formgrader's
        manual scores, extra credit, late penalty."""
        submitted = gradebook.find_submission_notebook(notebook, assignment, student)
        final = Final(penalty=float(submitted.late_submission_penalty or 0.0))
        for grade in submitted.grades:
            if grade.manual_score is not None:
                final.manual[grade.name] = float(grade.manual_score)
            final.extra += float(grade.extra_credit or 0.0)
        return final

    def student(self, gradebook, assignment, student: str, grade: SubmissionGrade, report: WriteReport) -> None:
        submitted = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment.name))
        dest = Path(self.coursedir.format_path(self.coursedir.autograded_directory, student, assignment.name))
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        self._copy_files(submitted, dest, set())
        gradebook.update_or_create_student(student)
        timestamp = self.coursedir.get_existing_timestamp(str(submitted))
        when = {"timestamp": timestamp} if timestamp else {}
        gradebook.update_or_create_submission(assignment.name, student, **when)
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
            report.final[(student, notebook.name)] = self._final(self.borrowed, notebook.name, assignment.name, student)
            # The steps above validated every cell; nbformat.write would validate the whole notebook again.
            (dest / f"{notebook.name}.ipynb").write_text(nbformat.v4.nbjson.writes(nb) + "\n", encoding="utf-8")
        for folder, _, names in os.walk(dest):
            for name in names:
                os.chmod(os.path.join(folder, name), self.permissions)
        report.written.append((student, assignment.name))


def write(root: Path, grades: Iterable[SubmissionGrade],
          assignments_of: Callable[[SubmissionGrade], list[str] | None]) -> WriteReport:
    """Record `grades` (students of nbgrader's submitted/) in the nbgrader course at `root`: of each
    student's assignment folders, those in `assignments_of(grade)`, all when None. `grades` may be a
    stream (writing.py): each is written as it comes."""
    from nbgrader.api import Gradebook, MissingEntry  # noqa: PLC0415

    # Thousands of short-lived ORM and notebook objects, freed when the session closes: the cycle
    # collector walking them again and again took a sixth of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        writer = Writer(root)
        report = WriteReport(writer.root)
        submitted = Path(writer.coursedir.submitted_directory)
        submitted = submitted if submitted.is_absolute() else writer.root / submitted
        with Gradebook(writer.coursedir.db_url, writer.coursedir.course_id) as gradebook, \
                shared_gradebook(gradebook) as writer.borrowed, warnings.catch_warnings():
            # nbgrader's own submission code trips SQLAlchemy's autoflush warnings; `nbgrader autograde`
            # prints them too. They say nothing to a teacher.
            warnings.simplefilter("ignore", category=SAWarning)
            gradebook.db = Deferred(gradebook.db)
            # This process is the only writer while it runs: what it read stays true after a commit.
            gradebook.db.session().expire_on_commit = False
            for grade in grades:
                folder = submitted / grade.student
                if not folder.is_dir():
                    continue
                assignments = assignments_of(grade)
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
    finally:
        if collecting:
            gc.enable()
    report.problems = list(dict.fromkeys(report.problems))
    report.written = list(dict.fromkeys(report.written))  # a stream may bring a student again
    return report

