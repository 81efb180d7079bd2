"""`trous nouveau-cours` and `trous nouvel-exercice`: a course, or one more exercise, that `trous doctor`
passes as written, so that an author starts from something that works. The example is in the
one-source format (derive.py), on a neutral subject. course.yaml is appended to as text, after the
assignment's last exercise, so that the author's comments and layout stay; it is restored if invalid.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import yaml

from ..core.course import Course, CourseError
from ..core.errors import COURSE_FILE
from . import derive


class ScaffoldError(Exception):
    """What cannot be created, in French."""


# -- the example course ------------------------------------------------------------------------
COURSE_YAML = '''\
# Description du cours, lue par trous (trous doctor vérifie qu'elle s'accorde avec les fichiers).
course:
  id: {course_id}
  title: "{title}"
  language: fr
  version: "1"

assignments:
  - id: devoir1                # un devoir : un lot d'exercices rendus ensemble
    title: "Devoir 1 — Décrire une série de notes"
    source: "Chapitre 1"       # d'où vient le devoir (chapitre, séance) : pour l'auteur et les rapports
    exercises:
'''

EXERCISE_YAML = '''\
{dash}id: {exercise_id}
{pad}title: "{title}"
{pad}file: exercises/{exercise_id}.py
{pad}source: "{source}"
{pad}blanks:                    # dans l'ordre des « # ___ » de solutions/{exercise_id}.py
{blanks}'''

BLANK_YAML = '''\
{pad}  - id: {blank_id}
{pad}    hint:                     # du plus vague au plus précis ; le dernier donne la réponse
{hints}'''

EXAMPLE_ID = "01_ecart_type"
EXAMPLE_TITLE = "Moyenne, variance, écart-type"
EXAMPLE_HINTS = {
    "moyenne": ["La moyenne : la somme des notes divisée par leur nombre (n).",
                "sum(notes) additionne les notes."],
    "variance": ["La variance : la moyenne des carrés des écarts (e * e pour chaque écart e de la liste ecarts).",
                 "sum(e * e for e in ecarts) / n"],
    "ecart_type": ["L'écart-type est la racine carrée de la variance.",
                   "math.sqrt(variance)"],
}

EXAMPLE_SOLUTION = '''\
# %% [markdown]
# # Exercice 1 — Moyenne, variance, écart-type
#
# Les notes d'un contrôle : 12, 15, 9 et 14. Autour de quelle valeur se groupent-elles (la
# **moyenne**), et de combien s'en écartent-elles d'habitude (l'**écart-type**) ?
#
# 1. **moyenne** : la somme des notes divisée par leur nombre ;
# 2. **variance** : la moyenne des carrés des écarts à la moyenne (les écarts x − moyenne sont donnés) ;
# 3. **écart-type** : la racine carrée de la variance.
#
# **À toi de coder** : complète les trois trous `___`. Attendu : 12.5, 5.25 et 2.29 (arrondi).
# Vérifie avec `pytest exercises/ -k 01_ecart_type` : les vérifications essaient aussi d'autres notes.

# %%
import math

notes = [12, 15, 9, 14]
n = len(notes)
moyenne = sum(notes) / n  # ___
ecarts = [x - moyenne for x in notes]
variance = sum(e * e for e in ecarts) / n  # ___
ecart_type = math.sqrt(variance)  # ___
print(moyenne, variance, round(ecart_type, 2))
'''

EXAMPLE_CHECKS = '''\
"""Vérifications publiques de l'exercice 1 (lance `pytest exercises/ -k 01_ecart_type`).

Chaque trou est vérifié sur les notes de l'énoncé, puis sur d'autres notes, montrées à l'élève :
les valeurs attendues sont calculées à la main, dans les commentaires.
"""

from trous.spec import blank, expect, variant

# À la main : moyenne 40 / 8 = 5 ; écarts −3, −1, −1, −1, 0, 0, 2, 4 ; carrés 9 + 1 + 1 + 1 + 0 + 0 + 4 + 16 = 32 ;
# variance 32 / 8 = 4 ; écart-type 2.
AUTRES_NOTES = variant("huit autres notes", shown=True, notes="[2, 4, 4, 4, 5, 5, 7, 9]")

moyenne = blank(
    "moyenne",
    expect("moyenne", 12.5, message="(12 + 15 + 9 + 14) / 4 = 50 / 4 = 12,5."),
    expect("moyenne", 5, variant=AUTRES_NOTES,
           message="Huit notes de somme 40 : 40 / 8 = 5 ; on divise par le nombre de notes, n, quel qu'il soit."),
)

# À la main : écarts −0,5 ; 2,5 ; −3,5 ; 1,5 ; carrés 0,25 + 6,25 + 12,25 + 2,25 = 21 ; 21 / 4 = 5,25.
variance = blank(
    "variance",
    expect("variance", 5.25, message="Les carrés des écarts à 12,5 font 21 en tout ; divisés par 4 : 5,25."),
    expect("variance", 4, variant=AUTRES_NOTES, message="Les carrés des écarts à 5 font 32 ; divisés par 8 : 4."),
)

ecart_type = blank(
    "ecart_type",
    # À la main : 2,2913² = 5,2500 (à 10⁻⁴ près) ; l'arrondi à 2,29 est refusé, c'est print qui arrondit.
    expect("ecart_type", 2.2913, atol=1e-4, message="La racine carrée de 5,25 : environ 2,2913 (pas arrondie)."),
    expect("ecart_type", 2, variant=AUTRES_NOTES, message="La racine carrée de 4 : 2."),
)
'''

EXAMPLE_GRADER = '''\
"""Le correcteur caché de l'exercice 1, jamais distribué aux élèves.

D'autres séries de notes : la valeur attendue est celle que donne la solution de référence
(SOLUTION). L'élève lit les étiquettes (label=) et les descriptions des variantes, jamais leurs notes.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("une seule note", notes="[7]"),
    variant("des notes à virgule", notes="[8.5, 11, 13.5, 20, 4]"),
    variant("des notes toutes égales", notes="[10, 10, 10]"),
]

moyenne = blank("moyenne", expect("moyenne", SOLUTION, variants=AUTRES, label="la moyenne des notes"))
variance = blank("variance", expect("variance", SOLUTION, variants=AUTRES, label="la variance des notes"))
ecart_type = blank("ecart_type", expect("ecart_type", SOLUTION, variants=AUTRES, label="l'écart-type des notes"))
'''

README = '''\
# {title}

Un cours d'exercices Python à trous, corrigés par [trous](https://pypi.org/project/trous/).

## Ce qu'il contient

- `course.yaml` : le cours, ses devoirs, ses exercices, et pour chaque trou ses indices ;
- `solutions/NN_nom.py` : **la source de chaque exercice** : la solution complète, où un commentaire
  `# ___` en bout de ligne dit que la valeur de cette ligne est un trou (`# ___ id` pour lui donner
  un autre id que le nom de la variable, `# ___ : [___ for x in l]` pour n'en cacher qu'une partie) ;
- `exercises/NN_nom.py` : le fichier de l'élève, **écrit par `trous exercices`** depuis la solution ;
- `exercises/test_NN_nom.py` : les vérifications publiques, données aux élèves ;
- `graders/test_NN_nom.py` : le correcteur caché, jamais distribué.

## Au travail

    trous exercices                   # réécrit exercises/NN_nom.py depuis les solutions
    trous doctor                      # tout s'accorde-t-il ? (solutions, vérifications, correcteurs)
    trous nouvel-exercice variance    # ajoute un exercice au dernier devoir
    trous edition                     # l'édition élève, dans _build/
    trous grade COPIES/               # corrige les copies d'une classe
'''

NEW_SOLUTION = '''\
# %% [markdown]
# # Exercice {number} — {title}
#
# L'énoncé, en Markdown : ce que l'élève doit calculer, et ce qui est attendu.
# Vérifie avec `pytest exercises/ -k {exercise_id}`.

# %%
donnees = [3, 1, 2]
resultat = sorted(donnees)  # ___
print(resultat)
'''

NEW_CHECKS = '''\
"""Vérifications publiques de l'exercice {number} (lance `pytest exercises/ -k {exercise_id}`).

Les valeurs attendues sont calculées à la main : l'élève les lit quand son calcul diffère.
"""

from trous.spec import blank, expect, variant

AUTRE = variant("une autre liste", shown=True, donnees="[9, 0, 7, 1, 4]")

resultat = blank(
    "resultat",
    expect("resultat", [1, 2, 3], message="[3, 1, 2] dans l'ordre croissant : [1, 2, 3]."),
    expect("resultat", [0, 1, 4, 7, 9], variant=AUTRE, message="[9, 0, 7, 1, 4] dans l'ordre croissant : [0, 1, 4, 7, 9]."),
)
'''

NEW_GRADER = '''\
"""Le correcteur caché de l'exercice {number}, jamais distribué aux élèves."""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("une liste déjà triée", donnees="[1, 2, 8]"),
    variant("des valeurs répétées", donnees="[2, 9, 2, 0]"),
]

resultat = blank("resultat", expect("resultat", SOLUTION, variants=AUTRES, label="la liste triée"))
'''
NEW_HINTS = {"resultat": ["Python a une fonction toute faite qui trie une liste.", "sorted(donnees)"]}


# -- creating --------------------------------------------------------------------------------
def slug(text: str) -> str:
    """`Écart type` → `ecart_type`: what an id may hold (lowercase, digits, « _ »)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", plain.lower()).strip("_")


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _entry(exercise_id: str, title: str, source: str, hints: dict[str, list[str]], dash_col: int) -> str:
    pad = " " * (dash_col + 2)
    blanks = "".join(BLANK_YAML.format(pad=pad, blank_id=blank_id, hints="".join(
        f'{pad}      - "{_quoted(h)}"\n' for h in texts)) for blank_id, texts in hints.items())
    return EXERCISE_YAML.format(dash=" " * dash_col + "- ", pad=pad, exercise_id=exercise_id, title=_quoted(title),
                                source=_quoted(source), blanks=blanks)


def _write_exercise(root: Path, exercise_id: str, solution: str, checks: str, grader: str,
                    others: dict[Path, str] | None = None) -> list[Path]:
    """The exercise's four files, after `others`."""
    files = {**(others or {}), root / "solutions" / f"{exercise_id}.py": solution,
             root / "exercises" / f"test_{exercise_id}.py": checks,
             root / "graders" / f"test_{exercise_id}.py": grader,
             root / "exercises" / f"{exercise_id}.py": derive.derive(solution).student}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def new_course(folder: Path, title: str | None = None) -> list[Path]:
    """A course folder with one example exercise; refuses a folder that already has files."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} existe déjà et n'est pas vide : choisis un dossier nouveau")
    course_id = (slug(folder.resolve().name) or "cours").replace("_", "-")
    title = title or f"Cours {folder.resolve().name}"
    text = COURSE_YAML.format(course_id=course_id, title=_quoted(title))
    text += _entry(EXAMPLE_ID, EXAMPLE_TITLE, "Chapitre 1 — Moyenne et dispersion", EXAMPLE_HINTS, 6)
    written = _write_exercise(folder, EXAMPLE_ID, EXAMPLE_SOLUTION, EXAMPLE_CHECKS, EXAMPLE_GRADER,
                              {folder / COURSE_FILE: text, folder / "README.md": README.format(title=title)})
    Course.load(folder)  # what was written is a valid course
    return written


def _exercises_end(text: str, assignment: str | None) -> tuple[str, int, int]:
    """(assignment id, the line after the last exercise of that assignment — or of the last one —,
    the column of its exercises' « - »), read from course.yaml's YAML nodes."""
    root = yaml.compose(text)
    assignments = next(v for k, v in root.value if k.value == "assignments")
    found = [{k.value: v for k, v in node.value} for node in assignments.value]
    chosen = [f for f in found if assignment is None or f["id"].value == assignment]
    if not chosen:
        ids = ", ".join(f["id"].value for f in found)
        raise ScaffoldError(f"devoir « {assignment} » inconnu ; devoirs : {ids}")
    name, exercises = chosen[-1]["id"].value, chosen[-1]["exercises"]
    last = exercises.value[-1]
    lines = text.splitlines()
    end = last.end_mark.line  # 0-based: where the next token starts, the node's end
    if end < len(lines) and lines[end][:last.end_mark.column].strip():
        end += 1  # the node ends inside this line (the file's last line): insert after it
    while end > last.start_mark.line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # comments and blank lines before the next block belong to it
    return name, end, exercises.start_mark.column


def new_exercise(course: Course, key: str, title: str | None = None,
                 assignment: str | None = None) -> tuple[list[Path], str, str]:
    """One more exercise, at the end of `assignment` (default: the last one): the files written (its
    own and course.yaml), the assignment's id and the exercise's."""
    existing = [e.id for e in course.exercises]
    if re.match(r"^[0-9]{2}_", key):
        exercise_id = key
    else:
        number = max((int(e[:2]) for e in existing if e[:2].isdigit()), default=0) + 1
        exercise_id = f"{number:02d}_{slug(key)}"
    if not re.match(r"^[0-9]{2}_[a-z0-9_]+$", exercise_id):
        raise ScaffoldError(f"« {key} » ne donne pas un id d'exercice (deux chiffres, « _ », minuscules : 02_variance)")
    same = [e for e in existing if e == exercise_id or e[3:] == exercise_id[3:]]
    if same:
        raise ScaffoldError(f"l'exercice « {same[0]} » existe déjà dans course.yaml : choisis un autre nom")
    taken = [p for p in (course.root / "solutions" / f"{exercise_id}.py", course.root / "exercises" / f"{exercise_id}.py")
             if p.exists()]
    if taken:
        raise ScaffoldError(f"{taken[0]} existe déjà : rien n'est écrasé")
    if not title:
        words = exercise_id[3:].replace("_", " ") if re.match(r"^[0-9]{2}_", key) else key.strip()
        title = words[:1].upper() + words[1:]
    path = course.root / COURSE_FILE
    original = path.read_text(encoding="utf-8-sig")
    name, end, column = _exercises_end(original, assignment)
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    entry = _entry(exercise_id, title, "À préciser : d'où vient l'exercice", NEW_HINTS, column)
    path.write_text("".join(lines[:end]) + entry + "".join(lines[end:]), encoding="utf-8")
    try:
        Course.load(course.root)
    except CourseError as exc:
        path.write_text(original, encoding="utf-8")
        raise ScaffoldError(f"course.yaml n'a pas pu être complété ({exc}) : il est resté tel quel") from None
    fill = {"number": len(existing) + 1, "title": title, "exercise_id": exercise_id}
    written = _write_exercise(course.root, exercise_id, NEW_SOLUTION.format(**fill), NEW_CHECKS.format(**fill),
                              NEW_GRADER.format(**fill))
    return [path, *written], name, exercise_id
