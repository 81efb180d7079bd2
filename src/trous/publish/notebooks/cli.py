"""`trous notebooks` and `trous lab` (registered by trous.cli when this package is present)."""

from __future__ import annotations

from ...core import options

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _prepare(args):
    """The edition's course and its notebooks; None after saying why not."""
    from ...core.course import course_for  # noqa: PLC0415
    from .build import NotebookError, build, folder_for, require_modules  # noqa: PLC0415

    try:
        require_modules()
        course = folder_for(course_for(args.cours), args.destination)
        return course, build(course, force=args.force)
    except NotebookError as exc:
        print(f"erreur : {exc}")
        return None


def cmd_notebooks(args) -> int:
    prepared = _prepare(args)
    if prepared is None:
        return EXIT_FAILED
    course, built = prepared
    for path in built.written:
        print(f"écrit : {path.relative_to(course.root)}")
    for path in built.kept:
        print(f"gardé : {path.relative_to(course.root)} (déjà là ; --force pour le réécrire depuis le .py)")
    print(f"notebooks prêts dans {course.root}")
    print(f"pour les ouvrir : trous -C {course.root} lab")
    return EXIT_OK


def cmd_lab(args) -> int:
    from .lab import command, run  # noqa: PLC0415

    prepared = _prepare(args)
    if prepared is None:
        return EXIT_FAILED
    course, built = prepared
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
