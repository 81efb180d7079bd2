"""Shared fixtures: the repository's course, and throw-away student copies of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trous.core import Course

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# The attention course's own widget (explorateur/, its course.yaml's explorer.files), importable as its
# notebook imports it from the course's folder.
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
# Courses used as fixtures (tests/courses/*): their checks and graders are run by the tests that use
# them, in a copy, never collected as this suite's own tests.
collect_ignore = ["courses"]


@pytest.fixture(scope="session")
def course() -> Course:
    return Course.load(ROOT)


def complete_exercises(course: Course):
    """Exercises whose four files exist (content may be added one exercise at a time)."""
    return [e for e in course.exercises
            if all(p.exists() for p in (e.path, e.checks_path, e.solution_path))]


@pytest.fixture(scope="session")
def edition_template(course, tmp_path_factory) -> Path:
    from trous.publish.edition import build

    return build(course, tmp_path_factory.mktemp("edition") / "cours", make_zip=False)


@pytest.fixture
def student_copy(edition_template, tmp_path) -> Path:
    """A fresh student edition to scribble in."""
    dest = tmp_path / "eleve"
    shutil.copytree(edition_template, dest, symlinks=True)
    return dest


def copy_course(dest: Path) -> Path:
    """A writable copy of the repository's course at `dest`: course.yaml, exercises, solutions, graders."""
    dest.mkdir()
    shutil.copyfile(ROOT / "course.yaml", dest / "course.yaml")
    for name in ("exercises", "solutions", "graders"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def run_pytest(folder: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([str(BIN / "pytest"), "-p", "no:cacheprovider", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_trous(folder: Path, *args: str, timeout: float = 300, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "trous"), *args], cwd=folder, capture_output=True, text=True,
                          timeout=timeout, input=input)
