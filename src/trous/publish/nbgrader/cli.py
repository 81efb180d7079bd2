"""`trous nbgrader …`: build the nbgrader course, grade nbgrader's submissions with the engine."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ...core import options

# Kept here rather than imported from .build: `trous --help` must not load jupytext and nbformat.
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's: students need no configuration


def _course(args):
    from ...core.course import Course  # noqa: PLC0415

    return Course.load(args.cours) if args.cours else Course.find(Path.cwd())


def cmd_build(args) -> int:
    from ...inputs.nbgrader_dir import without_iri_grammars  # noqa: PLC0415

    without_iri_grammars()  # before jupytext imports nbformat (session.py says why)
    from .build import BuildRefused, build  # noqa: PLC0415
    from .notebooks import BuildError  # noqa: PLC0415

    course = _course(args)
    dest = Path(args.dossier or (course.root / "_build" / "nbgrader"))
    try:
        report = build(course, dest, exchange=args.echange, only=args.exercice or None, force=args.force)
    except BuildRefused as exc:
        print(f"refusé : {exc}")
        return 1
    except BuildError as exc:
        print(f"erreur : {exc}")
        return 1
    notebooks = [p for p in report.written if p.suffix == ".ipynb"]
    print(f"cours nbgrader : {report.root}")
    print(f"  nbgrader_config.py, trous-cours.json, {len(notebooks)} carnet(s) dans source/")
    for exercise_id, why in report.skipped:
        print(f"  exercice {exercise_id} ignoré : {why}")
    for rel in report.replaced:
        print(f"  écrasé (--force) : {rel}, modifié depuis la dernière construction")
    for note in report.notes:
        print(f"  remarque : {note}")
    from .build import students_setting  # noqa: PLC0415

    exchange_note = students_setting(args.echange)
    if exchange_note:
        print(f"  échange {args.echange} : {exchange_note}")
    elif not os.access(args.echange, os.W_OK | os.X_OK):
        print(f"  échange {args.echange} (celui de nbgrader, les élèves n'ont rien à régler) : à créer, inscriptible "
              f"par tous, avant release_assignment : sudo mkdir -p {args.echange} && sudo chmod ugo+rw {args.echange}")
    print(f"ensuite : cd {report.root} && nbgrader generate_assignment <devoir> && nbgrader release_assignment <devoir>")
    return 0


def _carried(args, root: Path):
    """The course an nbgrader course directory carries (checked against -C COURS when given)."""
    from ...inputs.standalone import StandaloneError, load  # noqa: PLC0415

    try:
        return load(root, args.cours)
    except StandaloneError as exc:
        print(f"erreur : {exc}")
        return None


def cmd_grade(args) -> int:
    from .grade import run  # noqa: PLC0415

    try:
        sandbox = options.sandbox_mode(args)
    except ValueError as exc:
        print(f"erreur : {exc}")
        return 2
    assignments = list(dict.fromkeys(args.devoir or []))
    if not assignments:
        print("erreur : quel devoir corriger ? --devoir DEVOIR (son id dans course.yaml, ex. chapitre1)")
        return 2
    course = _carried(args, Path(args.dossier))
    if course is None:
        return 2
    status = 0
    for assignment in assignments:
        status = max(status, run(course, Path(args.dossier), assignment, students=args.etudiant or None,
                                 sandbox=sandbox, jobs=args.parallele))
    return status


class _AlsoAssignment(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.devoir = [*(namespace.devoir or []), values]


def register(sub) -> None:
    parser = sub.add_parser("nbgrader", help="(enseignants) le cours comme cours nbgrader : construire, corriger")
    inner = parser.add_subparsers(dest="nbgrader_command", metavar="ACTION")
    p = inner.add_parser("build", help="écrire nbgrader_config.py et source/<devoir>/<exercice>.ipynb")
    p.add_argument("dossier", nargs="?", help="dossier du cours nbgrader (par défaut : _build/nbgrader)")
    p.add_argument("--echange", "--exchange", dest="echange", default=DEFAULT_EXCHANGE,
                   help=f"dossier d'échange nbgrader (défaut : {DEFAULT_EXCHANGE})")
    options.add_exercise(p, "seulement cet exercice ou ce devoir (répétable)")
    options.add_force(p, "écraser aussi les fichiers modifiés depuis la dernière construction (sinon : refus, avec "
                         "la liste de ce qui diffère)")
    p.set_defaults(func=cmd_build)
    p = inner.add_parser("grade", help="corriger submitted/<élève>/<devoir> avec le moteur de trous et remplir "
                                       "le carnet de notes de nbgrader (au lieu de nbgrader autograde)")
    p.add_argument("dossier", help="dossier du cours nbgrader")
    # The positional of earlier versions, read as one more --devoir.
    p.add_argument("devoir_positionnel", nargs="?", metavar="DEVOIR", action=_AlsoAssignment, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)
    options.add_assignment(p, "le devoir à corriger (son id dans course.yaml, ex. chapitre1 ; répétable)")
    options.add_student(p)
    options.add_sandbox(p, "dans chaque cellule notée")
    options.add_parallel(p)
    p.set_defaults(func=cmd_grade)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
