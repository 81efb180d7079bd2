"""Definitions taken out of an exercise file, so that the course's own notebook computes with the
course's own code: only the imports and the requested top-level statements run (refused if they hold
a `___`), in a fresh namespace.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from ...core.blanks import defined_name, defines, has_blank
from ...core.course import Course


class DefinitionError(Exception):
    """French: what is missing, and in which file."""


def load(path: Path, names: Iterable[str]) -> dict:
    names = list(names)
    text = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(text, str(path))
    body: list[ast.stmt] = []
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        name = defined_name(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif name in names:
            if has_blank(node):
                raise DefinitionError(f"{path} : « {name} » contient un trou (___) ; "
                                      "le carnet du cours a besoin de la version sans trou")
            found[name] = node  # a later definition replaces an earlier one, as when Python runs
    missing = [n for n in names if n not in found]
    if missing:
        raise DefinitionError(f"{path} : introuvable au premier niveau du fichier : {', '.join(missing)}")
    body += sorted(found.values(), key=lambda n: n.lineno)
    namespace: dict = {"__name__": "trous_carnet", "__builtins__": __builtins__}
    # Compiled under the exercise's own file name: a traceback points at the course's line.
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    return {n: namespace[n] for n in names} | {"__namespace__": namespace}


def locate(course: Course, names: Iterable[str]) -> tuple[Path, dict, str | None]:
    """(path, definitions, why not the student's): the student's own file when its definitions load,
    else the pristine template, and why (the caption says it)."""
    names = list(names)
    template = find(course, names)
    exercise = next(e for e in course.exercises if e.template_path == template)
    own = exercise.path
    why = None
    if own.resolve() != template.resolve() and own.exists():
        try:
            return own, load(own, names), None
        except DefinitionError as exc:
            why = str(exc).split(" : ", 1)[-1]
        except Exception as exc:  # noqa: BLE001 - the student's file: any error is theirs, said in French
            why = f"{type(exc).__name__} : {exc}"
    return template, load(template, names), why


def find(course: Course, names: Iterable[str]) -> Path:
    """The first exercise template of the course that defines every name without a blank."""
    names = list(names)
    for exercise in course.exercises:
        path = exercise.template_path
        if path.exists() and defines(path, names):
            return path
    raise DefinitionError(f"aucun exercice du cours ({course.root}) ne définit sans trou : {', '.join(names)}")
