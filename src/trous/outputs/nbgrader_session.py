"""One nbgrader gradebook session for a whole batch of notebooks, for nbgrader.py.

nbgrader's preprocessors each open the gradebook anew, commit after every cell and check their
schema again for each cell: for a class, that costs more than grading it. While `shared_gradebook` is
active they borrow one session, the assignment's rows are looked up once, commits wait for the end
of each notebook and the schema is checked once. What they compute and store is unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import types

from ..inputs.nbgrader_dir import without_iri_grammars

GRADEBOOK_MODULES = ("overwritecells", "overwritekernelspec", "saveautogrades", "latesubmissions")


without_iri_grammars()  # on import: nbgrader.py imports this module before nbformat


class Borrowed:
    """Stands for nbgrader's `Gradebook` class inside its preprocessors: every `Gradebook(url)` is the
    one session opened here, closed by us. The assignment's own rows are looked up once, not once
    per student."""

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
