"""The `trous` command. Messages in French; each subcommand is a small function below."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from .check.checker import Checker
from .core import options
from .core.course import COURSE_FILE, TEMPLATES_DIR, Course, CourseError, course_for
from .core.wording import translated
from .inputs.nbgrader_dir import course_root

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


# -- argparse, in French -------------------------------------------------------------------------
# argparse writes its words through gettext, for which no French catalogue ships with Python. Its
# headings and prefixes are set here; its error messages are translated as they reach error().
_TYPES = {"float": "un nombre", "int": "un nombre entier"}
_ERRORS = [
    (r"^the following arguments are required: (.*)$", r"il manque : \1"),
    (r"^unrecognized arguments: (.*)$", r"arguments inconnus : \1"),
    (r"^ambiguous option: (\S+) could match (.*)$", r"option ambiguë : \1 peut désigner \2"),
    (r"^one of the arguments (.*) is required$", r"l'un de ces arguments est obligatoire : \1"),
    (r"^unexpected option string: (.*)$", r"option inattendue : \1"),
    (r"^expected one argument$", "une valeur est attendue"),
    (r"^expected at most one argument$", "une valeur au plus est attendue"),
    (r"^expected at least one argument$", "au moins une valeur est attendue"),
    (r"^expected (\d+) arguments?$", r"\1 valeurs attendues"),
    (r"^not allowed with argument (.*)$", r"impossible avec \1"),
    (r"^ignored explicit argument (.*)$", r"valeur en trop : \1"),
]


def french_error(message: str) -> str:
    """argparse's English error message, said in French (unknown ones pass through)."""
    found = re.match(r"^argument (\S+?): (.*)$", message, re.DOTALL)
    if found:
        return f"argument {found.group(1)} : {french_error(found.group(2))}"
    found = re.match(r"^invalid choice: '?(.*?)'? \(choose from (.*)\)$", message)
    if found:
        value, choices = found.group(1), [c.strip(" '") for c in found.group(2).split(",")]
        close = difflib.get_close_matches(value, choices, n=1)
        hint = f" ; vouliez-vous dire « {close[0]} » ?" if close else ""
        return f"« {value} » inconnu (possibles : {', '.join(choices)}){hint}"
    found = re.match(r"^invalid (\w+) value: '?(.*?)'?$", message)
    if found:
        wanted = _TYPES.get(found.group(1), f"du type {found.group(1)}")
        return f"« {found.group(2)} » n'est pas une valeur valide ({wanted} attendu)"
    return translated(_ERRORS, message) or message


class FrenchFormatter(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "utilisation : " if prefix is None else prefix)

    def start_section(self, heading):
        # argparse writes « heading: »; French puts a space before the colon.
        super().start_section(f"{heading} " if heading else heading)


class FrenchParser(argparse.ArgumentParser):
    """An ArgumentParser that speaks French; the subcommands' parsers are of the same class."""

    def __init__(self, *args, add_help: bool = True, **kwargs):
        kwargs.setdefault("formatter_class", FrenchFormatter)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = "arguments"
        self._optionals.title = "options"
        if add_help:
            self.add_argument("-h", "--help", "--aide", action="help", default=argparse.SUPPRESS,
                              help="afficher cette aide et quitter")

    def _get_option_tuples(self, option_string):
        # An abbreviation of two names of one option (--res: --resultats and its alias --results) is
        # that option, as it was before the alias existed.
        unique = {}
        for found in super()._get_option_tuples(option_string):
            unique.setdefault(id(found[0]), found)
        return list(unique.values())

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog} : erreur : {french_error(message)}\n")


# -- students ------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from .check.feedback import SYMBOL, exercise_state, progress_line  # noqa: PLC0415

    course = course_for(args.cours)
    table = Table(title=course.title, show_lines=False)
    for column in ("n°", "exercice", "trous", "remplis", "état"):
        table.add_column(column)
    results = []
    with Checker() as checker:
        for exercise in course.exercises:
            result = checker.check(exercise)
            results.append(result)
            state = exercise_state(result)
            table.add_row(str(exercise.number), f"{exercise.id} — {exercise.title}",
                          "".join(SYMBOL[b.status] for b in result.blanks),
                          f"{result.filled}/{len(result.blanks)}",
                          {"réussi": "[green]réussi[/]", "en cours": "[yellow]en cours[/]"}.get(state, state))
    console = Console(highlight=False)
    console.print(table)
    console.print(progress_line(results))
    return EXIT_OK


def _chosen(args, course: Course, checker) -> object | None:
    """The exercise named, else the first one not yet passed (None: all are)."""
    if args.exercice:
        return course.exercise(args.exercice)
    return next((e for e in course.exercises if not checker.check(e).passed), None)


def cmd_check(args) -> int:
    from .check.feedback import exercise_report  # noqa: PLC0415

    course = course_for(args.cours)
    with Checker() as checker:
        exercise = _chosen(args, course, checker)
        if exercise is None:
            print("Tous les exercices sont réussis. Bravo !")
            return EXIT_OK
        result = checker.check(exercise)
    print(exercise_report(result))
    return EXIT_OK if result.passed else EXIT_FAILED


def cmd_hint(args) -> int:
    from .check.selfcheck import NOT_RUN  # noqa: PLC0415
    from .check.feedback import next_step, problem_report  # noqa: PLC0415
    from .check.hints import next_hint  # noqa: PLC0415

    course = course_for(args.cours)
    with Checker() as checker:
        exercise = _chosen(args, course, checker)
        if exercise is None:
            print("Tous les exercices sont réussis : plus besoin d'indice. Bravo !")
            return EXIT_OK
        result = checker.check(exercise) if args.trou is None else None
    if result is None:
        try:
            index = exercise.blank_index(exercise.blank(args.trou).id)
        except (KeyError, IndexError):
            print(f"trou « {args.trou} » inconnu ; trous de {exercise.id} : "
                  + ", ".join(f"{i + 1} ({b.id})" for i, b in enumerate(exercise.blanks)))
            return EXIT_USAGE
    elif result.first_to_fix is None:
        print(f"{exercise.id} est réussi : plus besoin d'indice.")
        return EXIT_OK
    elif result.first_to_fix.status == NOT_RUN and result.problem:
        # No blank is to blame: the file does not run at all. Say where, keep the hints for later.
        print(problem_report(result))
        print(next_step(result))
        return EXIT_FAILED
    else:
        index = result.first_to_fix.index
    hint = next_hint(exercise, index)
    blank = exercise.blanks[index]
    label = " (la réponse)" if hint.gives_answer else ""
    print(f"{exercise.id} — trou {index + 1} « {blank.id} » — indice {hint.number}/{hint.total}{label} :")
    print(f"  {hint.text}")
    again = f"trous hint {exercise.id} --trou {index + 1}"
    if hint.next_gives_answer:
        print(f"  Attention : l'indice suivant ({hint.number + 1}/{hint.total}) donne la réponse. Cherche encore un "
              f"peu avec celui-ci ; si tu bloques, relance « {again} ».")
    elif hint.number < hint.total:
        print(f"  (relance « {again} » pour l'indice suivant)")
    return EXIT_OK


def cmd_watch(args) -> int:
    from .check.feedback import exercise_report, progress_line  # noqa: PLC0415
    from .check.watch import signature, wait_for_save  # noqa: PLC0415

    course = course_for(args.cours)
    with Checker() as checker:
        exercise = _chosen(args, course, checker)
        while exercise is not None:
            seen = signature(exercise.path)  # a save during the check must not be missed
            result = checker.check(exercise, refresh=True)
            print("\n" + "─" * 72)
            print(exercise_report(result), flush=True)
            if result.passed:
                print(f"✔ {exercise.id} réussi !", flush=True)
                following = [e for e in course.exercises if e.number > exercise.number
                             and not checker.check(e, refresh=True).passed]
                exercise = following[0] if following else None
                if exercise is not None:
                    print(f"→ exercice suivant : {exercise.id} ({exercise.path})", flush=True)
                continue
            print(f"(j'attends que tu enregistres {exercise.path.name} — Ctrl+C pour quitter)", flush=True)
            try:
                wait_for_save(exercise.path, seen, interval=args.intervalle, use_events=not args.scrutation)
            except KeyboardInterrupt:
                return EXIT_OK
        print(progress_line([checker.check(e) for e in course.exercises]))
        print("Tous les exercices sont réussis. Bravo !", flush=True)
    return EXIT_OK


# -- course authors ------------------------------------------------------------------------------
def cmd_doctor(args) -> int:
    from .author import doctor  # noqa: PLC0415

    course = course_for(args.cours)
    report = doctor.run(course, only=args.exercice or None, graders=not args.sans_correcteurs)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_FAILED


def cmd_exercises(args) -> int:
    from .author import derive  # noqa: PLC0415

    course = course_for(args.cours)
    only = [course.exercise(key).id for key in args.exercice] or None
    if args.marquer:
        lines, ok = derive.mark_course(course, only)
    else:
        lines, ok = derive.write_exercises(course, only, dry=args.verifier)
    for line in lines:
        print(line)
    return EXIT_OK if ok else EXIT_FAILED


def cmd_new_course(args) -> int:
    from .author import scaffold  # noqa: PLC0415

    folder = Path(args.dossier)
    try:
        written = scaffold.new_course(folder, args.titre)
    except scaffold.ScaffoldError as exc:
        print(f"erreur : {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"cours créé dans {folder} : " + ", ".join(str(p.relative_to(folder)) for p in written))
    print(f"étape suivante : cd {folder} && trous doctor ; puis change l'exemple (solutions/{scaffold.EXAMPLE_ID}.py "
          "est sa source : « trous exercices » en réécrit le fichier de l'élève) ou ajoute un exercice avec "
          "« trous nouvel-exercice NOM »")
    return EXIT_OK


def cmd_new_exercise(args) -> int:
    from .author import scaffold  # noqa: PLC0415

    course = course_for(args.cours)
    try:
        if args.devoir and len(args.devoir) > 1:
            print(f"un seul --devoir pour un exercice (donnés : {', '.join(args.devoir)})", file=sys.stderr)
            return 2
        written, assignment, exercise_id = scaffold.new_exercise(course, args.id, args.titre,
                                                                 args.devoir[0] if args.devoir else None)
    except scaffold.ScaffoldError as exc:
        print(f"erreur : {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"exercice {exercise_id} ajouté au devoir {assignment} : "
          + ", ".join(str(p.relative_to(course.root)) for p in written))
    print(f"étape suivante : écris l'énoncé et la solution dans solutions/{exercise_id}.py (« # ___ » au bout de chaque "
          f"ligne dont la valeur est un trou), ses indices dans course.yaml, ses vérifications dans "
          f"exercises/test_{exercise_id}.py et graders/test_{exercise_id}.py ; puis « trous exercices » et "
          f"« trous doctor {exercise_id} »")
    return EXIT_OK


def cmd_edition(args) -> int:
    from .publish.edition import ShippedError, build  # noqa: PLC0415

    course = course_for(args.cours)
    dest = Path(args.destination or (course.root / "_build" / f"{course.id}-eleves"))
    try:
        folder = build(course, dest, make_zip=not args.sans_zip)
    except ShippedError as exc:
        print(f"erreur : {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"édition élève : {folder}")
    if not args.sans_zip:
        print(f"archive : {folder.with_suffix('.zip')}")
    return EXIT_OK


def in_student_edition(argv: list[str], here: Path | None = None) -> bool:
    """Is the course this command runs on (-C, else the current folder's) a student edition?"""
    folder = here or Path.cwd()
    for i, arg in enumerate(argv):
        if arg in ("-C", "--cours", "--course") and i + 1 < len(argv):
            folder = Path(argv[i + 1])
        elif arg.startswith(("--cours=", "--course=")):
            folder = Path(arg.split("=", 1)[1])
    folder = folder.resolve()
    courses = (c for c in [folder, *folder.parents] if (c / COURSE_FILE).is_file())
    return next(((c / TEMPLATES_DIR).is_dir() for c in courses), False)


def build_parser(student: bool = False) -> argparse.ArgumentParser:
    """`student`: the commands of a student edition only (no doctor, edition, grade, nbgrader)."""
    parser = FrenchParser(prog="trous", description="Exercices Python à trous, corrigés automatiquement.")
    parser.add_argument("-C", "--cours", "--course", dest="cours",
                        help="dossier du cours (par défaut : celui qui contient course.yaml)")
    sub = parser.add_subparsers(dest="command", metavar="COMMANDE")

    _command(sub, cmd_list, "list", help="ta progression, exercice par exercice")
    p = _command(sub, cmd_check, "check",
                 help="vérifier un exercice (par défaut : le premier pas encore réussi)")
    p.add_argument("exercice", nargs="?", help="id, numéro ou partie du nom (ex. 3, masque)")
    p = _command(sub, cmd_hint, "hint",
                 help="un indice de plus pour un trou (par défaut : de l'exercice en cours)")
    p.add_argument("exercice", nargs="?", help="id, numéro ou partie du nom (ex. 3, masque ; par défaut : le premier "
                                               "pas encore réussi)")
    p.add_argument("--trou", "--blank", dest="trou", metavar="TROU",
                   help="numéro ou id du trou (par défaut : le premier à remplir ou à corriger)")
    p = _command(sub, cmd_watch, "watch", help="revérifier à chaque enregistrement, puis passer au suivant")
    p.add_argument("exercice", nargs="?", help="id, numéro ou partie du nom (par défaut : le premier pas encore réussi)")
    p.add_argument("--intervalle", "--interval", dest="intervalle", type=float, default=0.5, metavar="SECONDES",
                   help="secondes entre deux regards au fichier")
    p.add_argument("--scrutation", "--polling", dest="scrutation", action="store_true",
                   help="n'utiliser que la scrutation (WSL, lecteurs réseau)")
    if student:
        _add_optional(sub, ("trous.publish.notebooks.cli",))
        return parser
    p = _command(sub, cmd_doctor, "doctor",
                 help="(auteurs) le cours, les solutions et les vérifications s'accordent-ils ?")
    p.add_argument("exercice", nargs="*", help="les exercices à examiner (par défaut : tous)")
    options.add_without(p, "correcteurs", "graders", "ne pas examiner graders/")
    p = _command(sub, cmd_new_course, "nouveau-cours", aliases=["new-course"],
                 help="(auteurs) créer un dossier de cours, avec un exercice d'exemple")
    p.add_argument("dossier", metavar="DOSSIER", help="le dossier à créer (nouveau ou vide)")
    p.add_argument("--titre", "--title", dest="titre", help="le titre du cours")
    p = _command(sub, cmd_new_exercise, "nouvel-exercice", aliases=["new-exercise"],
                 help="(auteurs) ajouter un exercice au cours : ses fichiers et son entrée de course.yaml")
    p.add_argument("id", metavar="ID", help="son nom (variance) ou son id complet (02_variance)")
    p.add_argument("--titre", "--title", dest="titre", help="son titre")
    options.add_assignment(p, "le devoir où l'ajouter (par défaut : le dernier)")
    p = _command(sub, cmd_exercises, "exercices", aliases=["exercises"],
                 help="(auteurs) écrire exercises/NN.py depuis les solutions marquées « # ___ »")
    p.add_argument("exercice", nargs="*", help="les exercices à écrire (par défaut : tous)")
    p.add_argument("--verifier", "--check", dest="verifier", action="store_true",
                   help="ne rien écrire : dire seulement ce qui n'est pas à jour")
    p.add_argument("--marquer", "--mark", dest="marquer", action="store_true",
                   help="convertir les exercices d'aujourd'hui : ajouter à chaque solution ses marqueurs « # ___ »")
    p = _command(sub, cmd_edition, "edition", help="(enseignants) écrire l'édition élève : dossier et .zip")
    p.add_argument("destination", nargs="?", help="dossier à écrire (par défaut : _build/<cours>-eleves)")
    options.add_without(p, "zip", "zip", "ne pas écrire l'archive .zip")
    _add_optional(sub)
    return parser


def _command(sub, func, *names_and_help, **kwargs) -> argparse.ArgumentParser:
    parser = sub.add_parser(*names_and_help, **kwargs)
    parser.set_defaults(func=func)
    return parser


def _add_optional(sub, modules=("trous.outputs.run", "trous.publish.nbgrader.cli",
                                "trous.publish.notebooks.cli")) -> None:
    """Subcommands whose modules may be absent in a student's install (grading, nbgrader…)."""
    for module in modules:
        try:
            register = __import__(module, fromlist=["register"]).register
        except ImportError:
            continue
        register(sub)


def _prestart(argv: list[str]) -> None:
    """`trous grade` on an nbgrader course: the process that writes nbgrader's gradebook (outputs/writing.py)
    first imports nbgrader, a second of CPU: started before anything else, it is ready with the first grades."""
    if argv[:1] != ["grade"] or any(a in ("-h", "--help") for a in argv):
        return
    # The folder graded: a folder named on the command line (`trous grade COPIES`), else the current one.
    folders = [a for a in argv[1:] if not a.startswith("-") and Path(a).is_dir()] or ["."]
    for candidate in folders:
        root = course_root(candidate)
        if root is not None:
            try:
                from .outputs import writing  # noqa: PLC0415 - only to grade an nbgrader course
            except ImportError:  # a student's install: no grading
                return
            writing.prestart(root)
            return


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        _prestart(argv)
        parser = build_parser(student=in_student_edition(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        try:
            return args.func(args)
        except CourseError as exc:
            print(f"erreur : {exc}", file=sys.stderr)
            return EXIT_USAGE
        except KeyError as exc:
            print(f"erreur : {exc.args[0] if exc.args else exc}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return EXIT_FAILED
    finally:
        writing = sys.modules.get("trous.outputs.writing")
        if writing is not None:
            writing.release()


if __name__ == "__main__":
    sys.exit(main())
