"""`trous notebooks` and `trous lab` (registered by trous.cli when this package is present)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from ...core import options
from ...core.course import Course, course_for

EXIT_OK, EXIT_FAILED = 0, 1
NEEDED = ("jupyterlab", "jupytext", "ipykernel", "ipywidgets", "anywidget")
INSTALL = 'python -m pip install "jupyterlab>=4.2,<5" "jupytext>=1.16" "ipywidgets>=8.1" "anywidget>=0.9"'


def command(course: Course, *, port: int | None = None, open_browser: bool = True) -> list[str]:
    """JupyterLab from this Python environment (its kernels too), opening the first exercise."""
    first = course.exercises[0].path.with_suffix(".ipynb").relative_to(course.root).as_posix()
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={course.root}",
            f"--ServerApp.default_url=/lab/tree/{first}"]
    if port is not None:
        argv.append(f"--ServerApp.port={port}")
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers often run as root; Jupyter refuses without it
    return argv


def run(argv: list[str], cwd: Path) -> int:
    if os.name == "posix":
        os.chdir(cwd)
        os.execv(argv[0], argv)  # JupyterLab takes over the terminal: Ctrl+C goes straight to it
    return subprocess.call(argv, cwd=cwd)


def _on_notebooks(then):
    """`then(args, course, built)` once the notebooks are written; what is missing for JupyterLab (an
    edition installs trous alone), or a NotebookError, said instead."""
    def run_command(args) -> int:
        missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
        if missing:
            print(f"erreur : il manque {', '.join(missing)} pour JupyterLab ; installe-les avec :\n    {INSTALL}")
            return EXIT_FAILED
        from .build import NotebookError, build, folder_for  # noqa: PLC0415 - it needs jupytext

        try:
            course = folder_for(course_for(args.cours), args.destination)
            built = build(course, force=args.force)
        except NotebookError as exc:
            print(f"erreur : {exc}")
            return EXIT_FAILED
        return then(args, course, built)
    return run_command


@_on_notebooks
def cmd_notebooks(args, course: Course, built) -> int:
    for path in built.written:
        print(f"écrit : {path.relative_to(course.root)}")
    for path in built.kept:
        print(f"gardé : {path.relative_to(course.root)} (déjà là ; --force pour le réécrire depuis le .py)")
    print(f"notebooks prêts dans {course.root}")
    print(f"pour les ouvrir : trous -C {course.root} lab")
    return EXIT_OK


@_on_notebooks
def cmd_lab(args, course: Course, built) -> int:
    if built.written:
        print(f"notebooks écrits dans {course.root} : {len(built.written)}")
    argv = command(course, port=args.port, open_browser=not args.sans_navigateur)
    print("JupyterLab : " + " ".join(argv[1:]), flush=True)
    print("(pour l'arrêter : Ctrl+C dans ce terminal)", flush=True)
    return run(argv, course.root)


def register(sub) -> None:
    p = sub.add_parser("notebooks", help="(JupyterLab) les notebooks des exercices, liés à leurs .py, et le carnet "
                                         "propre au cours s'il en déclare un")
    p.add_argument("destination", nargs="?",
                   help="édition élève à écrire (par défaut : ce dossier s'il en est une, sinon _build/<cours>-eleves)")
    options.add_force(p, "réécrire les notebooks existants depuis les .py")
    p.set_defaults(func=cmd_notebooks)
    p = sub.add_parser("lab", help="ouvrir le cours dans JupyterLab : notebooks des exercices, vérification")
    p.add_argument("destination", nargs="?", help="comme pour « trous notebooks »")
    options.add_force(p, "réécrire les notebooks existants depuis les .py")
    p.add_argument("--port", type=int, help="port du serveur (par défaut : le premier libre à partir de 8888)")
    options.add_without(p, "navigateur", "browser", "ne pas ouvrir de navigateur")
    p.set_defaults(func=cmd_lab)
