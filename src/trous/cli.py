"""The `trous` command. Messages in French; each subcommand is a small function below."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course.definition import Course, CourseError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _course(args) -> Course:
    return Course.load(args.cours) if args.cours else Course.find(Path.cwd())


def _console():
    from rich.console import Console  # noqa: PLC0415

    return Console(highlight=False)


# -- students ------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    from rich.table import Table  # noqa: PLC0415

    from .student.checking import Checker  # noqa: PLC0415
    from .student.feedback import SYMBOL, progress_line  # noqa: PLC0415

    course = _course(args)
    table = Table(title=course.title, show_lines=False)
    for column in ("n°", "exercice", "trous", "remplis", "état"):
        table.add_column(column)
    results = []
    with Checker() as checker:
        for exercise in course.exercises:
            result = checker.check(exercise)
            results.append(result)
            state = "[green]réussi[/]" if result.passed else (
                "à commencer" if result.filled == 0 else "[yellow]en cours[/]")
            table.add_row(str(exercise.number), f"{exercise.id} — {exercise.title}",
                          "".join(SYMBOL[b.status] for b in result.blanks),
                          f"{result.filled}/{len(result.blanks)}", state)
    console = _console()
    console.print(table)
    console.print(progress_line(results))
    return EXIT_OK


def _current(course: Course, checker) -> object | None:
    for exercise in course.exercises:
        if not checker.check(exercise).passed:
            return exercise
    return None


def cmd_check(args) -> int:
    from .student.checking import Checker  # noqa: PLC0415
    from .student.feedback import exercise_report  # noqa: PLC0415

    course = _course(args)
    with Checker() as checker:
        exercise = course.exercise(args.exercice) if args.exercice else _current(course, checker)
        if exercise is None:
            print("Tous les exercices sont réussis. Bravo !")
            return EXIT_OK
        result = checker.check(exercise)
    print(exercise_report(result))
    return EXIT_OK if result.passed else EXIT_FAILED


def cmd_hint(args) -> int:
    from .student.checking import Checker  # noqa: PLC0415
    from .student.hints import next_hint  # noqa: PLC0415

    course = _course(args)
    exercise = course.exercise(args.exercice)
    if args.blank is not None:
        try:
            index = exercise.blank_index(exercise.blank(args.blank).id)
        except (KeyError, IndexError):
            print(f"trou « {args.blank} » inconnu ; trous de {exercise.id} : "
                  + ", ".join(f"{i + 1} ({b.id})" for i, b in enumerate(exercise.blanks)))
            return EXIT_USAGE
    else:
        with Checker() as checker:
            result = checker.check(exercise)
        pending = [b for b in result.blanks if not b.passed]
        if not pending:
            print(f"{exercise.id} est réussi : plus besoin d'indice.")
            return EXIT_OK
        index = pending[0].index
    text, number, total = next_hint(exercise, index)
    blank = exercise.blanks[index]
    print(f"{exercise.id} — trou {index + 1} « {blank.id} » — indice {number}/{total} :")
    print(f"  {text}")
    if number < total:
        print(f"  (relance « trous hint {exercise.id} --blank {index + 1} » pour l'indice suivant)")
    return EXIT_OK


def cmd_watch(args) -> int:
    from .student.checking import Checker  # noqa: PLC0415
    from .student.feedback import exercise_report, progress_line  # noqa: PLC0415
    from .student.watch import FileWatcher, signature  # noqa: PLC0415

    course = _course(args)
    with Checker() as checker:
        exercise = course.exercise(args.exercice) if args.exercice else _current(course, checker)
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
            watcher = FileWatcher(exercise.path, interval=args.interval, use_events=not args.polling)
            try:
                watcher.wait(since=seen)
            except KeyboardInterrupt:
                return EXIT_OK
            finally:
                watcher.close()
        print(progress_line([checker.check(e) for e in course.exercises]))
        print("Tous les exercices sont réussis. Bravo !", flush=True)
    return EXIT_OK


# -- course authors ------------------------------------------------------------------------------
def cmd_doctor(args) -> int:
    from . import doctor  # noqa: PLC0415

    course = _course(args)
    report = doctor.run(course, only=args.exercice or None, graders=not args.sans_correcteurs)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_FAILED


def cmd_edition(args) -> int:
    from .edition import build  # noqa: PLC0415

    course = _course(args)
    dest = Path(args.destination or (course.root / "_build" / f"{course.id}-eleves"))
    folder = build(course, dest, make_zip=not args.sans_zip)
    print(f"édition élève : {folder}")
    if not args.sans_zip:
        print(f"archive : {folder.with_suffix('.zip')}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trous", description="Exercices Python à trous, corrigés automatiquement.")
    parser.add_argument("-C", "--cours", help="dossier du cours (par défaut : celui qui contient course.yaml)")
    sub = parser.add_subparsers(dest="command", metavar="COMMANDE")

    p = sub.add_parser("list", help="ta progression, exercice par exercice")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("check", help="vérifier un exercice (par défaut : le premier pas encore réussi)")
    p.add_argument("exercice", nargs="?", help="id, numéro ou partie du nom (ex. 3, masque)")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("hint", help="un indice de plus pour un trou")
    p.add_argument("exercice")
    p.add_argument("--blank", "--trou", dest="blank", help="numéro ou id du trou (par défaut : le premier pas juste)")
    p.set_defaults(func=cmd_hint)
    p = sub.add_parser("watch", help="revérifier à chaque enregistrement, puis passer au suivant")
    p.add_argument("exercice", nargs="?")
    p.add_argument("--interval", type=float, default=0.5, help="secondes entre deux regards au fichier")
    p.add_argument("--polling", action="store_true", help="n'utiliser que la scrutation (WSL, lecteurs réseau)")
    p.set_defaults(func=cmd_watch)
    p = sub.add_parser("doctor", help="(auteurs) le cours, les solutions et les vérifications s'accordent-ils ?")
    p.add_argument("exercice", nargs="*")
    p.add_argument("--sans-correcteurs", action="store_true", help="ne pas examiner graders/")
    p.set_defaults(func=cmd_doctor)
    p = sub.add_parser("edition", help="(enseignants) écrire l'édition élève : dossier et .zip")
    p.add_argument("destination", nargs="?")
    p.add_argument("--sans-zip", action="store_true")
    p.set_defaults(func=cmd_edition)
    _add_optional(sub)
    return parser


def _add_optional(sub) -> None:
    """Subcommands whose modules may be absent in a student's install (grading, nbgrader…)."""
    for module in ("trous.grading.cli", "trous.nbgrader_course.cli", "trous.notebooks.cli"):
        try:
            register = __import__(module, fromlist=["register"]).register
        except ImportError:
            continue
        register(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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


if __name__ == "__main__":
    sys.exit(main())
