"""`trous nbgrader …`: build the nbgrader course, grade nbgrader's submissions with the engine."""

from __future__ import annotations

import os
from pathlib import Path

# Kept here rather than imported from .build: `trous --help` must not load jupytext and nbformat.
DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's: students need no configuration


def _course(args):
    from ...core.course import Course  # noqa: PLC0415

    return Course.load(args.cours) if args.cours else Course.find(Path.cwd())


def cmd_build(args) -> int:
    from ...outputs.nbgrader_session import without_iri_grammars  # noqa: PLC0415

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

    if args.sans_isolation and args.bac_a_sable not in (None, "auto"):
        print(f"erreur : --sans-isolation et --bac-a-sable {args.bac_a_sable} s'excluent : choisissez l'un ou l'autre")
        return 2
    sandbox = "sans-isolation" if args.sans_isolation else (args.bac_a_sable or "auto")
    course = _carried(args, Path(args.dossier))
    if course is None:
        return 2
    return run(course, Path(args.dossier), args.devoir, students=args.etudiant or None, sandbox=sandbox,
               jobs=args.jobs)


def register(sub) -> None:
    parser = sub.add_parser("nbgrader", help="(enseignants) le cours comme cours nbgrader : construire, corriger")
    inner = parser.add_subparsers(dest="nbgrader_command", metavar="ACTION")
    p = inner.add_parser("build", help="écrire nbgrader_config.py et source/<devoir>/<exercice>.ipynb")
    p.add_argument("dossier", nargs="?", help="dossier du cours nbgrader (par défaut : _build/nbgrader)")
    p.add_argument("--echange", default=DEFAULT_EXCHANGE, help=f"dossier d'échange nbgrader (défaut : {DEFAULT_EXCHANGE})")
    p.add_argument("--exercice", action="append", help="seulement cet exercice ou ce devoir (répétable)")
    p.add_argument("--force", action="store_true",
                   help="écraser aussi les fichiers modifiés depuis la dernière construction (sinon : refus, avec la "
                        "liste de ce qui diffère)")
    p.set_defaults(func=cmd_build)
    p = inner.add_parser("grade", help="corriger submitted/<élève>/<devoir> avec le moteur de trous et remplir "
                                       "le carnet de notes de nbgrader (au lieu de nbgrader autograde)")
    p.add_argument("dossier", help="dossier du cours nbgrader")
    p.add_argument("devoir", help="id du devoir (ex. partie5)")
    p.add_argument("--etudiant", action="append", help="seulement cet élève (répétable)")
    p.add_argument("--bac-a-sable", dest="bac_a_sable", default=None, choices=["auto", "bwrap"],
                   help="isolation du code des élèves (auto : bubblewrap s'il démarre, sinon la correction "
                        "est refusée)")
    p.add_argument("--sans-isolation", dest="sans_isolation", action="store_true",
                   help="sans bac à sable, limites de ressources seules : pour du code de confiance sur votre "
                        "propre machine ; refusé en root, signalé dans chaque cellule notée")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processus de correction (défaut : un par cœur)")
    p.set_defaults(func=cmd_grade)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
