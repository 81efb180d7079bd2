"""Starting JupyterLab on a student edition, from this Python environment (its kernels too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ...core.course import Course


def first_notebook(course: Course) -> str:
    exercise = course.exercises[0]
    return exercise.path.with_suffix(".ipynb").relative_to(course.root).as_posix()


def command(course: Course, *, port: int | None = None, open_browser: bool = True, token: str | None = None,
            extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """`python -m jupyterlab …` rooted at the course, opening the first exercise's notebook."""
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={course.root}",
            f"--ServerApp.default_url=/lab/tree/{first_notebook(course)}"]
    if port is not None:
        argv.append(f"--ServerApp.port={port}")
    if not open_browser:
        argv.append("--no-browser")
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers often run as root; Jupyter refuses without it
    return argv + list(extra)


def run(argv: list[str], cwd: Path) -> int:
    if os.name == "posix":
        os.chdir(cwd)
        os.execv(argv[0], argv)  # JupyterLab takes over the terminal: Ctrl+C goes straight to it
    return subprocess.call(argv, cwd=cwd)
