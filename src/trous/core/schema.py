"""What a valid `course.yaml` is, checked by pydantic, with errors in French that name the line. Only
this module imports pydantic and YAML: a course already validated is read from its cache (course.py)
without either."""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import COURSE_FILE, CourseError
from .wording import translated

# What to write instead, shown with every error about that field: neutral words, for any course.
EXAMPLES = {
    "id": "id: 01_moyenne   (exercice : deux chiffres, « _ », minuscules ; trou : minuscules et « _ »)",
    "title": 'title: "La moyenne d\'une liste"',
    "language": "language: fr",
    "version": 'version: "2026.1"',
    "file": "file: exercises/01_moyenne.py",
    "source": 'source: "Chapitre 2 — Les listes"',
    "timeout": "timeout: 8   (secondes, entre 1 et 60)",
    "points": "points: 1   (nombre positif)",
    "hint": 'hint: "Additionne toutes les valeurs de la liste."',
    "requires": "requires: [numpy]",
    "blanks": "blanks:\n  - id: total\n    points: 1\n    hint: \"…\"",
    "exercises": "exercises:\n  - id: 01_moyenne\n    title: …\n    file: exercises/01_moyenne.py\n    blanks: …",
    "assignments": "assignments:\n  - id: chapitre1\n    title: …\n    exercises: …",
    "course": "course:\n  id: python-debutant\n  title: …\n  language: fr",
    "explorer": "explorer:\n  file: explorer.ipynb\n  title: \"le carnet d'exploration\"\n  text: \"…\"\n  code: \"…\"",
    "needs": "needs: [moyenne]",
}

BLANK_ID = r"^[a-z][a-z0-9_]*$"
EXERCISE_ID = r"^[0-9]{2}_[a-z0-9_]+$"
FOLDER_ID = r"^[a-z0-9][a-z0-9_-]*$"  # an assignment's or the course's id (a folder name, in nbgrader)
NOTEBOOK = r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.ipynb$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlankSchema(_Strict):
    """Un trou : un `___` du fichier de l'exercice, dans l'ordre où ils y apparaissent."""

    id: str = Field(pattern=BLANK_ID, max_length=40, description=(
        "Nom du trou, unique dans l'exercice : une minuscule, puis minuscules, chiffres ou « _ » "
        "(`total`, `somme_2`). Le n-ième trou de `blanks` est le n-ième `___` du fichier."))
    points: float = Field(default=1.0, gt=0, le=100, strict=True, description=(
        "Points du trou dans la note : celle d'un exercice est la somme des points de ses trous justes."))
    hint: str | list[str] = Field(description=(
        "Un indice, ou une liste d'indices du plus vague au plus précis : `trous hint` les donne un "
        "par un. Ceux qui donnent la réponse ne sont pas lisibles dans l'édition élève."))
    title: str | None = Field(default=None, description=(
        "Quelques mots qui disent ce que le trou calcule, pour les rapports (sinon son id)."))

    @field_validator("hint")
    @classmethod
    def _hint_not_empty(cls, value):
        hints = [value] if isinstance(value, str) else value
        if not hints or any(not h.strip() for h in hints):
            raise ValueError("indice vide")
        return value


class LimitsSchema(_Strict):
    """Ce qu'un programme d'élève peut consommer dans le bac à sable, pour tout le cours. Chaque
    limite absente garde la valeur par défaut de trous."""

    wall: float | None = Field(default=None, gt=0, le=600, description=(
        "Secondes de temps réel par programme (sans elle : le `timeout` de chaque exercice ; avec elle, "
        "le plus court des deux)."))
    cpu: int | None = Field(default=None, gt=0, le=3600, description="Secondes de processeur par processus.")
    memory_mb: int | None = Field(default=None, ge=64, le=16384, description=(
        "Mémoire que le programme peut ajouter à celle du correcteur, en Mio."))
    processes: int | None = Field(default=None, ge=1, le=1024, description=(
        "Processus que le programme peut lancer en même temps."))
    output_kb: int | None = Field(default=None, ge=1, le=65536, description=(
        "Sortie (print, erreurs) gardée par processus, en Kio : le reste est compté, pas gardé."))
    file_mb: int | None = Field(default=None, ge=1, le=4096, description=(
        "Taille du plus grand fichier que le programme peut écrire, en Mio."))
    files: int | None = Field(default=None, ge=0, le=100000, description=(
        "Fichiers que le programme peut laisser dans son dossier de travail."))
    value_kb: int | None = Field(default=None, ge=1, le=65536, description=(
        "Taille de la plus grande valeur qu'une vérification relit du programme, en Kio."))
    copy_wall: float | None = Field(default=None, gt=0, le=3600, description=(
        "Secondes de temps réel pour toute une copie (tous ses exercices) : au-delà, le reste n'est pas "
        "exécuté."))


class ExerciseSchema(_Strict):
    """Un exercice : quatre fichiers du même nom, `exercises/ID.py` (ce que l'élève complète),
    `exercises/test_ID.py` (les vérifications publiques), `solutions/ID.py` (la solution) et
    `graders/test_ID.py` (le correcteur caché)."""

    id: str = Field(pattern=EXERCISE_ID, max_length=60, description=(
        "Deux chiffres, « _ », puis minuscules, chiffres ou « _ » (`01_moyenne`) : le nom des fichiers "
        "de l'exercice. Unique dans le cours ; les exercices sont numérotés dans l'ordre du fichier."))
    title: str = Field(min_length=1, description="Titre montré aux élèves (LISEZMOI, carnets, rapports).")
    file: str = Field(description="Le fichier de l'élève : toujours `exercises/ID.py`.")
    source: str = Field(min_length=1, description=(
        "D'où vient l'exercice (la page, la section ou le chapitre du cours) : une référence pour les "
        "auteurs, que trous ne montre pas aux élèves."))
    # Seconds for the program; its checks may use 2 s more, so an endless loop costs at most ~10 s.
    timeout: float = Field(default=8.0, ge=1, le=60, strict=True, description=(
        "Secondes accordées au programme de l'élève (`limits.wall`, s'il est plus court, l'emporte) ; "
        "ses vérifications ont 2 s de plus. Une boucle sans fin est arrêtée là."))
    blanks: list[BlankSchema] = Field(min_length=1, description="Les trous, dans l'ordre des `___` du fichier.")
    requires: list[str] = Field(default_factory=list, description=(
        "Modules Python lents à importer dont l'exercice se sert (`torch`) : quand ils sont installés, "
        "le correcteur les importe une fois pour toutes les copies (numpy l'est toujours)."))

    # Field validators rather than one for the model: each runs even when another field of the same
    # exercise is wrong, so one run names both mistakes.
    @field_validator("file")
    @classmethod
    def _file_is_the_id(cls, value, info):
        expected = f"exercises/{info.data['id']}.py" if "id" in info.data else None
        if expected is not None and value != expected:
            raise ValueError(f"file doit valoir « {expected} » (le nom du fichier est l'id de l'exercice)")
        return value

    @field_validator("blanks")
    @classmethod
    def _unique_blanks(cls, value):
        seen = set()
        for blank in value:
            if blank.id in seen:
                raise ValueError(f"deux trous s'appellent « {blank.id} » : chaque id de trou est unique")
            seen.add(blank.id)
        return value


class AssignmentSchema(_Strict):
    """Un devoir : des exercices rendus et corrigés ensemble (un devoir nbgrader, `--devoir`)."""

    id: str = Field(pattern=FOLDER_ID, max_length=60, description=(
        "Minuscules, chiffres, « _ » ou « - » (`chapitre1`) : le nom du devoir dans nbgrader et pour "
        "`trous grade --devoir`. Unique dans le cours."))
    title: str = Field(min_length=1, description="Titre du devoir.")
    source: str = Field(min_length=1, description=(
        "D'où vient le devoir (le chapitre ou le fichier du cours) : une référence pour les auteurs, "
        "gardée dans les métadonnées des carnets nbgrader."))
    exercises: list[ExerciseSchema] = Field(min_length=1, description="Les exercices du devoir, dans l'ordre.")


class CourseInfoSchema(_Strict):
    """Le cours lui-même."""

    id: str = Field(pattern=FOLDER_ID, description=(
        "Minuscules, chiffres, « _ » ou « - » (`python-debutant`) : le nom du cours dans nbgrader, "
        "les notes et les rapports."))
    title: str = Field(min_length=1, description="Titre du cours (en tête du LISEZMOI des élèves).")
    language: Literal["fr"] = Field(default="fr", description=(
        "Langue de ce que trous écrit aux élèves : seul `fr` est pris en charge."))
    version: str = Field(default="1", description=(
        "Version du texte du cours, choisie par l'auteur (`\"2026.1\"`) : entre guillemets."))


class ExplorerSchema(_Strict):
    """Un carnet propre au cours, donné aux élèves avec les exercices (par exemple un widget qui calcule
    avec les fonctions des exercices). Un cours qui n'en déclare pas n'en a pas."""

    file: str = Field(pattern=NOTEBOOK, description=(
        "Nom du carnet, écrit à côté de `exercises/` par `trous notebooks` et `trous lab`, et dans le "
        "premier devoir nbgrader qui donne `needs` (`explorer.ipynb`)."))
    title: str = Field(min_length=1, description=(
        "Comment le LISEZMOI des élèves le nomme (« contient … »)."))
    text: str = Field(min_length=1, description="Première cellule du carnet, en Markdown.")
    code: str = Field(min_length=1, description="Cellule de code du carnet, que l'élève exécute.")
    needs: list[str] = Field(default_factory=list, description=(
        "Noms que le code lit dans un exercice, définis sans trou au premier niveau de son fichier : "
        "nbgrader donne le carnet avec le premier devoir qui a un tel exercice (sans `needs`, le "
        "premier devoir construit)."))
    files: list[str] = Field(default_factory=list, description=(
        "Fichiers ou dossiers du cours (chemins depuis sa racine) que le code du carnet importe ou lit : "
        "donnés avec lui, à côté de lui (édition des élèves, devoir nbgrader), par exemple le module "
        "d'un widget (`mon_widget`)."))

    @field_validator("files")
    @classmethod
    def _inside(cls, value: list[str]) -> list[str]:
        for path in value:
            parts = path.replace("\\", "/").split("/")
            if not path or path.startswith("/") or ".." in parts or not re.fullmatch(r"[A-Za-z0-9_./-]+", path):
                raise ValueError(f"« {path} » : un chemin relatif dans le dossier du cours, sans « .. » "
                                 "(mon_widget, outils/widget.py)")
        return value


class CourseSchema(_Strict):
    """Le fichier `course.yaml` à la racine du dossier du cours."""

    course: CourseInfoSchema = Field(description="Le cours : id, titre, langue, version.")
    limits: LimitsSchema = Field(default_factory=LimitsSchema, description=(
        "Limites du bac à sable pour tout le cours (toutes facultatives)."))
    explorer: ExplorerSchema | None = Field(default=None, description=(
        "Un carnet propre au cours, donné avec les exercices (facultatif : sans lui, aucun)."))
    assignments: list[AssignmentSchema] = Field(min_length=1, description="Les devoirs, dans l'ordre.")

    @model_validator(mode="after")
    def _unique(self):
        seen_ex, seen_as = set(), set()
        for assignment in self.assignments:
            if assignment.id in seen_as:
                raise ValueError(f"deux devoirs s'appellent « {assignment.id} »")
            seen_as.add(assignment.id)
            for exercise in assignment.exercises:
                if exercise.id in seen_ex:
                    raise ValueError(f"deux exercices s'appellent « {exercise.id} »")
                seen_ex.add(exercise.id)
        return self


# -- YAML, with the line of every value (so that errors can name it) --------------------------------
class _Loader(yaml.SafeLoader):
    pass


# libyaml's parser when PyYAML has it: the same constructors, a tenth of the time. Its messages are
# worded otherwise: on an error, the pure-Python parser reads the text again, to translate its own.
class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


def _no_duplicates(loader: _Loader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"la clé « {key} » apparaît deux fois (d'abord ligne {seen[key]})", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


for _loader in (_Loader, _FastLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def load(text: str, path: str, kinds: tuple = (_FastLoader, _Loader)) -> tuple[Any, dict[tuple, int]]:
    """The data, and {path of keys/indexes: line} for every node; a CourseError naming the line."""
    for kind in kinds:
        loader = kind(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                lines: dict[tuple, int] = {}
                _walk(node, (), lines)
                return loader.construct_document(node), lines
        except yaml.MarkedYAMLError as exc:
            if kind is _Loader:  # else said by the parser whose messages are translated
                mark = exc.problem_mark or exc.context_mark
                raise CourseError(path, mark.line + 1 if mark else None, _yaml_french(exc)) from None
        except yaml.YAMLError:
            if kind is _Loader:
                raise
        finally:
            loader.dispose()
    raise CourseError(path, 1, "le fichier est vide")


def _walk(node, where: tuple, lines: dict[tuple, int]) -> None:
    lines[where] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[where + (key, "__key__")] = key_node.start_mark.line + 1
            _walk(value_node, where + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, where + (i,), lines)


def line_of(lines: dict[tuple, int], where: tuple) -> int | None:
    """The line of the deepest known node on `where` (a pydantic error location)."""
    where = tuple(where)
    while where:
        if where in lines:
            return lines[where]
        where = where[:-1]
    return lines.get(())


def _yaml_french(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or ""
    hints = {
        "found character '\\t' that cannot start any token": "tabulation interdite en YAML : indente avec des espaces",
        "mapping values are not allowed here": "« : » inattendu ; mets la valeur entre guillemets si elle contient « : »",
        "could not find expected ':'": "« : » manquant après une clé (ou guillemet non refermé)",
        "found unexpected end of stream": "fin de fichier inattendue (guillemet ou crochet non refermé ?)",
    }
    for english, french in hints.items():
        if english in problem:
            return f"YAML invalide : {french}"
    if "apparaît deux fois" in problem:
        return problem
    return f"YAML invalide : {problem or exc}"


_FRENCH = [
    (r"^Field required$", "champ obligatoire manquant"),
    (r"^Extra inputs are not permitted$", "clé inconnue"),
    (r"^Input should be a valid string$", "doit être un texte"),
    (r"^Input should be a valid number.*$", "doit être un nombre"),
    (r"^Input should be a valid integer.*$", "doit être un nombre entier"),
    (r"^Input should be a valid list$", "doit être une liste (lignes commençant par « - »)"),
    (r"^Input should be a valid dictionary.*$", "doit être un bloc « clé: valeur »"),
    (r"^Input should be greater than (\S+)$", r"doit être plus grand que \1"),
    (r"^Input should be greater than or equal to (\S+)$", r"doit être au moins \1"),
    (r"^Input should be less than or equal to (\S+)$", r"doit être au plus \1"),
    (r"^String should match pattern .*$", "forme invalide"),
    (r"^String should have at least 1 character$", "ne doit pas être vide"),
    (r"^List should have at least 1 item.*$", "la liste ne doit pas être vide"),
    (r"^Input should be 'fr'$", "seule la langue « fr » est prise en charge"),
    (r"^Value error, (.*)$", r"\1"),
]


def _inner_model(annotation) -> type[BaseModel] | None:
    """The model a field holds (itself, in a list, or in `X | None`)."""
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        for inner in (candidate, *getattr(candidate, "__args__", ())):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def _fields_only(loc: tuple) -> tuple[tuple, type[BaseModel] | None]:
    """The location without pydantic's tags for the members of a union (`hint.str`, `hint.list[str]`),
    and the model holding its last key (whose keys an unknown key may be a typo of)."""
    model: type[BaseModel] | None = CourseSchema
    kept, holder = [], model
    for index, part in enumerate(loc):
        if isinstance(part, int):
            kept.append(part)
        elif model is not None and part in model.model_fields:
            kept.append(part)
            holder, model = model, _inner_model(model.model_fields[part].annotation)
        elif model is not None and index == len(loc) - 1:
            kept.append(part)  # an unknown key
            holder = model
    return tuple(kept), holder


def _typo(loc: tuple) -> tuple[list[str], list[str]]:
    """For an unknown key: the key it is likely a typo of (if any), and the keys possible there."""
    model = _fields_only(loc)[1]
    keys = list(model.model_fields) if model is not None else []
    return difflib.get_close_matches(str(loc[-1]), keys, n=1), keys


# What each id's form is, said to an author whose id does not have it.
PATTERN_WORDS = {
    BLANK_ID: "un id de trou commence par une minuscule, suivie de minuscules, chiffres ou « _ » (total, somme_2)",
    EXERCISE_ID: "un id d'exercice s'écrit deux chiffres, « _ », puis minuscules, chiffres ou « _ » (01_moyenne)",
    FOLDER_ID: "un id s'écrit en minuscules, chiffres, « _ » ou « - » (chapitre1)",
    NOTEBOOK: "un nom de carnet finit par « .ipynb », sans espace ni accent (explorer.ipynb)",
}


def _pattern_message(error: dict) -> tuple[str, str | None]:
    """(message, example) for a value that does not have its field's form: lowercase ids say so."""
    value, pattern = error.get("input"), (error.get("ctx") or {}).get("pattern", "")
    if isinstance(value, str) and value != value.lower() and re.match(pattern, value.lower()):
        return (f"« {value} » : les id s'écrivent en minuscules ; écris « {value.lower()} »", f"id: {value.lower()}")
    words = PATTERN_WORDS.get(pattern, "forme invalide")
    return (f"« {value} » ne convient pas : {words}" if isinstance(value, str) else words), None


def _number_text(value) -> bool:
    try:
        return isinstance(value, str) and float(value) == float(value)
    except ValueError:
        return False


def _where(loc: tuple, data) -> str:
    """`assignments[chapitre1].exercises[01_moyenne].source`: a list item named by its id when it has one."""
    parts, node = [], data
    for part in loc:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
            name = node.get("id") if isinstance(node, dict) else None
            if parts and isinstance(name, (str, int)) and not isinstance(name, bool):
                parts[-1] += f"[{name}]"
            continue
        parts.append(str(part))
        node = node.get(part) if isinstance(node, dict) else None
    return ".".join(parts)


def _said(error: dict, lines: dict, path: str, data=None) -> CourseError:
    loc = tuple(error["loc"])
    where_loc = _fields_only(loc)[0]
    field = next((p for p in reversed(where_loc) if isinstance(p, str)), "")
    message, example = translated(_FRENCH, error["msg"]) or error["msg"], None
    if error["type"] == "extra_forbidden":
        close, keys = _typo(loc)
        message = f"clé inconnue « {loc[-1]} »" + (f" : vouliez-vous écrire « {close[0]} » ?" if close else "")
        message += f" (clés possibles : {', '.join(keys)})"
        line = lines.get(loc + ("__key__",)) or line_of(lines, loc)
        field = close[0] if close else field
    elif error["type"] == "missing":
        line = line_of(lines, loc[:-1])
        message = f"« {loc[-1]} » manquant"
    else:
        line = line_of(lines, loc)
        if error["type"] == "string_pattern_mismatch":
            message, example = _pattern_message(error)
        elif error["type"] in ("float_type", "int_type") and _number_text(error.get("input")):
            value = error["input"].strip()
            message = f"« {value} » est entre guillemets, donc un texte : un nombre s'écrit sans guillemets"
            example = f"{field}: {value}"
        elif field == "hint" and len(where_loc) < len(loc) and isinstance(where_loc[-1], str):
            message = "doit être un texte, ou une liste de textes (lignes commençant par « - »)"
    where = _where(where_loc, data)
    return CourseError(path, line, f"{where} : {message}" if where else message, example or EXAMPLES.get(field))


def _independent(errors: list[dict]) -> list[dict]:
    """Each mistake once: a misspelt key also makes the right one "missing" (the typo is the real
    mistake), and a value refused by every member of a union (`hint`) is one mistake, not two."""
    typos = set()
    for error in errors:
        if error["type"] == "extra_forbidden":
            loc = _fields_only(tuple(error["loc"]))[0]
            typos.update(loc[:-1] + (close,) for close in _typo(tuple(error["loc"]))[0])
    kept, seen = [], set()
    for error in errors:
        loc = _fields_only(tuple(error["loc"]))[0]
        if error["type"] == "missing" and loc in typos or loc in seen:
            continue
        seen.add(loc)
        kept.append(error)
    return kept


def validate(text: str, path: str = COURSE_FILE) -> dict:
    """The course as plain data (course.py makes its records); else a CourseError naming every
    independent mistake, each with its line and what to write."""
    data, lines = load(text, path)
    if not isinstance(data, dict):
        raise CourseError(path, 1, "le fichier doit être un bloc « clé: valeur » (course:, assignments:)",
                          EXAMPLES["course"])
    try:
        return CourseSchema.model_validate(data).model_dump()
    except ValidationError as exc:
        said = sorted((_said(e, lines, path, data) for e in _independent(exc.errors())), key=lambda e: e.line or 0)
        first, *others = said
        raise CourseError(first.path, first.line, first.message, first.example, others) from None
