"""The `course.yaml` reference page (docs/course-yaml.md), written from the schema itself.

Every field's type, default, bounds and meaning come from the pydantic models of core/schema.py, so
the page cannot say something the validator does not do. `python -m trous.author.reference` prints it;
`--check FILE` fails when FILE is not what the schema gives (the tests run it on the committed page).
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ..core import schema
from ..grade.engine import COPY_WALL
from ..core.protocol import Limits

# What an absent limit is: trous's own bound (the sandbox's, the grading's for a whole copy).
LIMIT_DEFAULTS = {**Limits().__dict__, "copy_wall": COPY_WALL}

# One complete course.yaml of one exercise: the page shows it, the test checks that it validates.
MINIMAL = """\
course:
  id: python-debutant
  title: "Python pour débuter"

assignments:
  - id: chapitre1
    title: "Chapitre 1 — Les listes"
    source: "Chapitre 1"
    exercises:
      - id: 01_moyenne
        title: "La moyenne d'une liste"
        file: exercises/01_moyenne.py
        source: "Chapitre 1, section 2"
        blanks:
          - id: total
            hint: "Additionne toutes les notes : sum(notes)."
          - id: moyenne
            points: 2
            hint:
              - "La moyenne est le total divisé par le nombre de notes."
              - "total / len(notes)"
"""

INTRO = """\
# Référence de `course.yaml`

<!-- Écrit par `python -m trous.author.reference` depuis src/trous/core/schema.py : ne pas modifier à la main. -->

`course.yaml`, à la racine du dossier d'un cours, décrit le cours : ses devoirs, leurs exercices, les
trous de chacun avec leurs points et leurs indices. `trous doctor` le valide (chaque erreur donne le
fichier, la ligne et quoi écrire) puis vérifie que les exercices, les solutions, les vérifications
publiques et les correcteurs cachés s'accordent. Une clé inconnue est une erreur (une faute de frappe
ne passe pas inaperçue).

## Exemple minimal complet

Un devoir, un exercice de deux trous. Avec lui, le dossier du cours contient
`exercises/01_moyenne.py` (le fichier de l'élève, deux `___`), `exercises/test_01_moyenne.py` (les
vérifications publiques), `solutions/01_moyenne.py` (le même fichier, trous remplis) et
`graders/test_01_moyenne.py` (le correcteur caché). Un cours complet de deux devoirs :
[tests/courses/meteo](../tests/courses/meteo).

```yaml
{example}```

## Les champs

Les tableaux suivent l'emboîtement du fichier : `assignments[].exercises[]` est la liste
`exercises` de chaque devoir.
"""


_BOUNDS = ((annotated_types.Gt, "plus grand que {0.gt}"), (annotated_types.Ge, "au moins {0.ge}"),
           (annotated_types.Le, "au plus {0.le}"), (annotated_types.MaxLen, "{0.max_length} caractères au plus"))


def _bounds(info: FieldInfo) -> list[str]:
    words = []
    for item in info.metadata:
        if isinstance(item, annotated_types.MinLen):
            words.append("non vide" if item.min_length == 1 else f"au moins {item.min_length} éléments")
        elif getattr(item, "pattern", None):
            words.append(f"forme `{item.pattern}`")
        words += [text.format(item) for kind, text in _BOUNDS if isinstance(item, kind)]
    return words


def _type(annotation) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " ou ".join(_type(a) for a in args if a is not type(None))
    if origin is list:
        return f"liste de {_type(args[0]).replace('texte', 'textes').replace('bloc', 'blocs')}"
    if origin is typing.Literal:
        return " ou ".join(f"`{a}`" for a in args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "bloc"
    return {str: "texte", float: "nombre", int: "nombre entier", bool: "oui/non"}[annotation]


def _default(model: type[BaseModel], name: str, info: FieldInfo) -> str:
    if model is schema.LimitsSchema and name == "wall":
        return "le `timeout` de l'exercice"
    if model is schema.LimitsSchema:
        value = LIMIT_DEFAULTS[name]
        return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"
    if info.is_required():
        return "—"
    if info.default_factory is not None:
        return "`[]`" if info.default_factory() == [] else "aucune"
    if info.default is None:
        return "aucun"
    return f"`{info.default:g}`" if isinstance(info.default, float) else f"`{info.default}`"


def _nested(info: FieldInfo) -> tuple[type[BaseModel], bool] | None:
    """The model a field holds, and whether as a list of them."""
    for candidate in (info.annotation, *typing.get_args(info.annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
        if typing.get_origin(candidate) is list:
            inner = typing.get_args(candidate)[0]
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner, True
    return None


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _section(model: type[BaseModel], path: str, out: list[str], pending: list) -> None:
    out += [f"### `{path}`" if path else "### Le fichier", "", _cell(model.__doc__ or ""), "",
            "| champ | type | obligatoire | défaut | sens |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        nested, bounds, meaning = _nested(info), _bounds(info), info.description or ""
        if bounds:
            meaning += f" ({', '.join(bounds)})"
        if nested:
            child = (f"{path}.{name}" if path else name) + ("[]" if nested[1] else "")
            meaning += f" Voir `{child}`."
            pending.append((nested[0], child))
        out.append(f"| `{name}` | {_type(info.annotation)} | {'oui' if info.is_required() else 'non'} | "
                   f"{_default(model, name, info)} | {_cell(meaning)} |")
    out.append("")


def page() -> str:
    out = [INTRO.format(example=MINIMAL)]
    pending: list = [(schema.CourseSchema, "")]
    while pending:
        model, path = pending.pop(0)
        _section(model, path, out, pending)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--check"] and len(argv) == 2:
        if Path(argv[1]).read_text(encoding="utf-8") != page():
            print(f"{argv[1]} n'est pas ce que donne le schéma : python -m trous.author.reference > {argv[1]}")
            return 1
        return 0
    if argv:
        print("utilisation : python -m trous.author.reference [--check FICHIER]")
        return 2
    sys.stdout.write(page())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
