"""`trous nbgrader build`: the course as an nbgrader course (`trous grade DIR` grades it)."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path

from ...core import options
from ...core.course import course_for
from . import DEFAULT_EXCHANGE


def cmd_build(args) -> int:
    from ...inputs.nbgrader_dir import without_iri_grammars  # noqa: PLC0415

    without_iri_grammars()  # before jupytext imports nbformat (nbgrader_dir.py says why)
    from .build import BuildRefused, build, students_setting  # noqa: PLC0415
    from .notebooks import BuildError  # noqa: PLC0415

    course = course_for(args.cours)
    dest = Path(args.dossier or (course.root / "_build" / "nbgrader"))
    try:
        report = build(course, dest, exchange=args.echange, only=args.exercice or None, force=args.force)
    except (BuildRefused, BuildError) as exc:
        print(f"{'refusé' if isinstance(exc, BuildRefused) else 'erreur'} : {exc}")
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
    exchange_note = students_setting(args.echange)
    if exchange_note:
        print(f"  échange {args.echange} : {exchange_note}")
    elif not os.access(args.echange, os.W_OK | os.X_OK):
        print(f"  échange {args.echange} (celui de nbgrader, les élèves n'ont rien à régler) : à créer, inscriptible "
              f"par tous, avant release_assignment : sudo mkdir -p {args.echange} && sudo chmod ugo+rw {args.echange}")
    print(f"ensuite : cd {report.root} && nbgrader generate_assignment <devoir> && nbgrader release_assignment <devoir>")
    return 0


# `trous nbgrader grade` graded with a pool of its own; `trous grade DIR` does the same with the one
# engine, and writes trous's results besides. The old command says what to type instead.
def instead(typed: list[str]) -> str:
    """The `trous grade` command that does what `trous nbgrader grade <typed>` did."""
    folder, kept, tokens = None, [], iter(typed)
    for token in tokens:
        if token.startswith("-"):
            name = token.split("=")[0]
            if name in ("-h", "--help", "--aide"):
                continue
            flag = "=" in token or name.startswith(("--sans", "--no")) or (name.startswith("-j") and len(name) > 2)
            value = [] if flag else [next(tokens, "")]
            if not (len(name) > 3 and ("--etudiant".startswith(name) or "--student".startswith(name))):
                kept += [token, *value]  # --etudiant has no use: trous grade regrades only what changed
        elif folder is None:
            folder = token
        else:
            kept += ["--devoir", token]  # the positional assignment of the first versions
    if not any(t.startswith(("--dev", "--ass")) for t in kept):
        kept += ["--devoir", "DEVOIR"]
    return shlex.join(["trous", "grade", folder or "."] + kept)


def cmd_grade_gone(args) -> int:
    print(f"« trous nbgrader grade » n'existe plus : lancez « {instead(args.reste)} » (le même moteur, les mêmes "
          "notes dans le carnet de notes de nbgrader et autograded/, et les retours de trous en plus ; seules les "
          "copies qui ont changé sont recorrigées)")
    return 2


def register(sub) -> None:
    parser = sub.add_parser("nbgrader", help="(enseignants) le cours comme cours nbgrader (à corriger avec "
                                             "« trous grade DOSSIER »)")
    inner = parser.add_subparsers(dest="nbgrader_command", metavar="ACTION")
    p = inner.add_parser("build", help="écrire nbgrader_config.py et source/<devoir>/<exercice>.ipynb")
    p.add_argument("dossier", nargs="?", help="dossier du cours nbgrader (par défaut : _build/nbgrader)")
    p.add_argument("--echange", "--exchange", dest="echange", default=DEFAULT_EXCHANGE,
                   help=f"dossier d'échange nbgrader (défaut : {DEFAULT_EXCHANGE})")
    options.add_exercise(p, "seulement cet exercice ou ce devoir (répétable)")
    options.add_force(p, "écraser aussi les fichiers modifiés depuis la dernière construction (sinon : refus, avec "
                         "la liste de ce qui diffère)")
    p.set_defaults(func=cmd_build)
    # Every word after `grade` is taken as it comes (no option of its own): the refusal quotes them.
    p = inner.add_parser("grade", help="(remplacé par « trous grade DOSSIER --devoir DEVOIR »)", prefix_chars="\0",
                         add_help=False)
    p.add_argument("reste", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_grade_gone)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
