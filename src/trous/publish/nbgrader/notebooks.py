"""One exercise as an nbgrader source notebook (the teacher's: solutions and hidden tests in).

The cells of `exercises/<id>.py`, markdown reworded for a notebook (RULES); code with blanks as answer
cells (the template's `___` in the release: `preprocessors.ClearBlanks`), each followed by one grade
cell per blank; a preparation cell first, the check cell last. Deterministic: ids derive from the
exercise and blank ids, no timestamp or tool version is written.
"""

from __future__ import annotations

import pprint
import re

import jupytext
import nbformat

from ...core.blanks import find_blanks
from ...core.course import Exercise, ExplorerSpec
from ...core.wording import count
from ...inputs import bundle as bundle_mod
from ...inputs.bundle import TROUS_KEY, answer_cells, grade_id

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
INCELL = "trous.publish.nbgrader.incell"

# The exercise's instructions, said for a notebook user: no course folder nor terminal there (« lance
# `pytest exercises/` » becomes the check cell). The exercise file itself, hence the grade, is unchanged.
CHECK_CELL = "la cellule de vérification, en bas du carnet"
RUN_CELLS = "exécute les cellules du carnet"

# Each rule: (pattern, replacement). Backticked commands first, then the phrases that name running
# the file. Patterns match across line breaks (a command may start at the end of a line).
RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"`trous hint[^`]*`\s+donne\s+des\s+indices(?:,\s+de\s+plus\s+en\s+plus\s+précis)?"),
     "la cellule de vérification donne un indice pour chaque trou"),
    (re.compile(r"`trous (?:hint|check|watch|list)[^`]*`"), CHECK_CELL),
    (re.compile(r"`(?:python -m )?pytest[^`]*`"), CHECK_CELL),
    (re.compile(r"\s*\(\s*`python3? [^`]*exercises/[^`]*`\s*\)"), ""),
    (re.compile(r"\blance\s+`python3? [^`]*`"), RUN_CELLS),
    (re.compile(r"`python3? [^`]*exercises/[^`]*`"), "les cellules du carnet"),
    (re.compile(r"\btu\s+lances\s+le\s+fichier\b"), "tu exécutes les cellules du carnet"),
    (re.compile(r"\blance\s+le\s+fichier\b"), RUN_CELLS),
    (re.compile(r"`exercises/([0-9]{2}_[a-z0-9_]+)\.py`"), r"le carnet `\1.ipynb`"),
]
LEFT_OVER = re.compile(r"pytest|exercises/|trous (?:hint|check|watch|list)\b|python3? \S+\.py")


class BuildError(Exception):
    pass


def _literal(data: dict) -> str:
    # One line: nbgrader's delimiters work on lines, and a one-line literal cannot contain one.
    return pprint.pformat(data, width=10**9, sort_dicts=True)


def _code_cells(exercise: Exercise):
    template = jupytext.reads(exercise.template_path.read_text(encoding="utf-8"), fmt="py:percent")
    solution = jupytext.reads(exercise.solution_path.read_text(encoding="utf-8"), fmt="py:percent")
    kinds = [c.cell_type for c in template.cells]
    if kinds != [c.cell_type for c in solution.cells]:
        raise BuildError(f"{exercise.solution_path} : pas les mêmes cellules que {exercise.template_path}")
    return list(zip(template.cells, solution.cells))


CHECK_SOURCE = ("# Vérification de l'exercice {number} (cellule verrouillée) : exécute-la (Maj+Entrée) après "
                "avoir rempli les trous ___.\n"
                "# Elle relance ton code depuis le début, dans un processus à part, et dit trou par trou ce qui est "
                "juste.\n"
                f"from {INCELL} import verifier\n"
                "verifier({id!r})")


PREPARATION = ("# Préparation (cellule verrouillée) : exécute-la en premier (Maj+Entrée). Un trou ___ pas encore\n"
               "# rempli le dira alors en clair, à sa ligne, quand tu exécuteras sa cellule.\n"
               "%load_ext trous.publish.nbgrader")


def answer_label(number: int, first: int, last: int) -> str:
    blanks = f"trou {first}" if first == last else f"trous {first} à {last}"
    return (f"**Cellule de réponse {number}** ({blanks}) : remplace chaque `___` par une expression Python, "
            "puis exécute la cellule (Maj+Entrée).")


def grade_source(exercise: Exercise, index: int, hidden: bundle_mod.Bundle, answer: int) -> str:
    blank = exercise.blanks[index]
    points = count(blank.points, "point")  # « 0,5 point », « 2 points »
    return (f"{HIDDEN_BEGIN}\n"
            f"from {INCELL} import corriger_trou\n"
            f"corriger_trou({blank.id!r}, {_literal(hidden.to_dict())})\n"
            f"{HIDDEN_END}\n"
            f"# Trou {index + 1}/{len(exercise.blanks)} « {blank.id} » ({points}), cellule de réponse {answer} : "
            "vérification publique, sur les\n"
            "# exemples de l'énoncé (c'est aussi ce que lance le bouton Validate) ; à la correction, d'autres "
            "entrées.\n"
            f"from {INCELL} import verifier_trou\n"
            f"verifier_trou({exercise.id!r}, {blank.id!r})")


EXPLAIN = ("**Vérifier ton travail.** La cellule suivante relance ton code depuis le début et dit, trou par "
           "trou, ce qui est juste et ce qui ne l'est pas encore, avec un indice. Les cellules « Trou n » placées "
           "sous tes réponses valent chacune un trou : elles échouent tant que le trou n'est pas juste.\n\n"
           "**Le bouton Validate** de nbgrader ne lance que ces vérifications publiques, sur les exemples de "
           "l'énoncé : « Success! » y veut dire « juste sur ces exemples », pas encore la note. À la correction, "
           "chaque trou est aussi essayé sur d'autres entrées que celles de l'énoncé, et noté à part : un trou "
           "faux ne coûte pas les autres.")


def for_notebook(markdown: str) -> str:
    for pattern, replacement in RULES:
        markdown = pattern.sub(replacement, markdown)
    return markdown


def _markdown(exercise: Exercise, source: str) -> str:
    text = for_notebook(source)
    found = LEFT_OVER.findall(text)  # what still speaks of the terminal or the course folder
    if found:
        raise BuildError(f"{exercise.template_path} : la consigne parle encore du terminal ({', '.join(found)}) ; "
                         "le carnet ne peut pas le dire ainsi (voir RULES dans publish/nbgrader/notebooks.py)")
    return text


def _cell(new, source: str, gid: str, trous: dict | None = None, *, solution=False, grade=False, locked=False,
          points=None):
    nbgrader = {"grade": grade, "grade_id": gid, "locked": locked, "schema_version": 3, "solution": solution,
                "task": False}
    if grade:
        nbgrader["points"] = points
    metadata = {"nbgrader": nbgrader}
    if trous is not None:
        metadata[TROUS_KEY] = trous
    return new(source, id=gid, metadata=metadata)


def source_notebook(exercise: Exercise) -> nbformat.NotebookNode:
    """Each grade cell comes right after its blank's answer cell: nbgrader puts a deleted grade cell
    back after the solution or grade cell before it, and fails when that one is a plain locked cell."""
    markdown, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    answers = answer_cells(exercise)
    public = bundle_mod.of(exercise, answers, hidden=False)
    hidden = bundle_mod.of(exercise, answers, hidden=True)
    cells = []
    counters = {"consigne": 0, "reponse": 0, "code": 0}
    template_text = exercise.template_path.read_text(encoding="utf-8")
    position, next_blank, prepared = 0, 0, False
    for template_cell, solution_cell in _code_cells(exercise):
        kind = template_cell.cell_type
        if kind == "code" and not prepared:
            prepared = True
            cells.append(_cell(code, PREPARATION, grade_id(exercise, "code", "preparation"), locked=True))
        if kind == "markdown":
            counters["consigne"] += 1
            cells.append(_cell(markdown, _markdown(exercise, template_cell.source),
                               grade_id(exercise, "consigne", counters["consigne"]), locked=True))
        elif kind == "code" and find_blanks(template_cell.source):
            counters["reponse"] += 1
            number = counters["reponse"]
            start = template_text.find(template_cell.source, position)
            if start < 0:
                raise BuildError(f"{exercise.template_path} : cellule de code introuvable telle quelle dans le "
                                 "fichier (commande magique ?)")
            position = start + len(template_cell.source)
            held = len(find_blanks(template_cell.source))
            cells.append(_cell(markdown, answer_label(number, next_blank + 1, next_blank + held),
                               grade_id(exercise, "consigne", f"reponse-{number}"), locked=True))
            cells.append(_cell(code, solution_cell.source, grade_id(exercise, "reponse", number),
                               {"modele": template_cell.source}, solution=True))
            for _ in range(held):
                if next_blank >= len(exercise.blanks):
                    raise BuildError(f"{exercise.template_path} : plus de trous ___ que dans course.yaml")
                blank = exercise.blanks[next_blank]
                cells.append(_cell(code, grade_source(exercise, next_blank, hidden, number),
                                   grade_id(exercise, "trou", blank.id), grade=True, locked=True,
                                   points=blank.points))
                next_blank += 1
        elif kind == "code":
            if template_cell.source != solution_cell.source:
                raise BuildError(f"{exercise.solution_path} : une cellule sans trou diffère de l'exercice")
            counters["code"] += 1
            cells.append(_cell(code, template_cell.source, grade_id(exercise, "code", counters["code"]), locked=True))
        else:
            raise BuildError(f"{exercise.template_path} : cellule de type {kind} non prise en charge")
    if next_blank != len(exercise.blanks):
        raise BuildError(f"{exercise.template_path} : {next_blank} trous ___, {len(exercise.blanks)} dans course.yaml")
    cells.append(_cell(markdown, EXPLAIN, grade_id(exercise, "consigne", "verifier"), locked=True))
    check = CHECK_SOURCE.format(number=exercise.number, id=exercise.id)
    cells.append(_cell(code, check, grade_id(exercise, "verification", "publique"), {"verification": public.to_dict()},
                       locked=True))
    return notebook(cells)


def explorer_notebook(explorer: ExplorerSpec, reword: bool = True) -> nbformat.NotebookNode:
    """`reword`: for a notebook user without a terminal (nbgrader's; JupyterLab's student has one)."""
    text = for_notebook(explorer.text) if reword else explorer.text
    return notebook([nbformat.v4.new_markdown_cell(text, id="carnet-du-cours-texte"),
                     nbformat.v4.new_code_cell(explorer.code, id="carnet-du-cours-code")])


def notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": dict(KERNELSPEC),
                                                         "language_info": {"name": "python"}})
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


def notebook_bytes(nb: nbformat.NotebookNode) -> bytes:
    return (nbformat.writes(nb) + "\n").encode("utf-8")
