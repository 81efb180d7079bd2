"""One exercise as an nbgrader source notebook (the teacher's version: solutions and hidden tests in).

Cells, in order:
- the cells of `exercises/<id>.py`, converted with jupytext: markdown cells read-only (locked), their
  words said for a notebook user (wording.py: the check cell, not `pytest exercises/`); code cells
  with blanks become autograded answer cells, holding the solution here and the template's `___`
  blanks in the release (`preprocessors.ClearBlanks`), each announced by a short locked line
  (« Cellule de réponse 1 »: messages name the cells so); code cells without blanks are locked;
- before the first code cell, a locked preparation cell (`%load_ext trous.publish.nbgrader`): an
  answer cell run before its blanks are filled then says « trou pas encore rempli » in French, at
  the blank's line, instead of IPython's `___` output cache failing far away;
- right after each answer cell, one grade cell per blank it holds, worth that blank's points: its
  hidden-test block grades the blank with the engine (restored by nbgrader at autograde), its
  visible part runs the public check of the blank (what nbgrader's Validate button runs), so that a
  release notebook fails its tests until the blank is right;
- at the end, a short read-only explanation, then one locked check cell, a short call
  (`verifier("01_moyenne")`) whose public bundle rides in the cell's metadata (`trous.verification`),
  giving the same French report as `pytest exercises/`, located in the notebook's cells.

Everything is deterministic: cell ids derive from the exercise and blank ids, and no timestamp or
tool version is written.
"""

from __future__ import annotations

import pprint

import jupytext
import nbformat

from ...core.blanks import find_blanks
from ...core.course import Exercise
from ...core.wording import count
from ...inputs import bundle as bundle_mod
from ...inputs.bundle import TROUS_KEY, answer_cells, grade_id
from .wording import for_notebook, left_over

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
INCELL = "trous.publish.nbgrader.incell"


class BuildError(Exception):
    pass


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


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


def check_source(exercise: Exercise) -> str:
    return (f"# Vérification de l'exercice {exercise.number} (cellule verrouillée) : exécute-la (Maj+Entrée) après "
            "avoir rempli les trous ___.\n"
            "# Elle relance ton code depuis le début, dans un processus à part, et dit trou par trou ce qui est "
            "juste.\n"
            f"from {INCELL} import verifier\n"
            f"verifier({exercise.id!r})")


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


def _markdown(exercise: Exercise, source: str) -> str:
    text = for_notebook(source)
    found = left_over(text)
    if found:
        raise BuildError(f"{exercise.template_path} : la consigne parle encore du terminal ({', '.join(found)}) ; "
                         "le carnet ne peut pas le dire ainsi (voir publish/nbgrader/wording.py)")
    return text


def source_notebook(exercise: Exercise) -> nbformat.NotebookNode:
    """The teacher's notebook. Each blank's grade cell comes right after the answer cell holding the
    blank: nbgrader puts a deleted grade cell back after the solution or grade cell that preceded it,
    and fails when that one is a plain locked cell."""
    pairs = _code_cells(exercise)
    answers = answer_cells(exercise)
    public = bundle_mod.of(exercise, answers, hidden=False)
    hidden = bundle_mod.of(exercise, answers, hidden=True)
    cells = []
    counters = {"consigne": 0, "reponse": 0, "code": 0}
    template_text = exercise.template_path.read_text(encoding="utf-8")
    position, next_blank = 0, 0

    def prepare_once() -> None:
        if not any(c.metadata["nbgrader"]["grade_id"] == grade_id(exercise, "code", "preparation") for c in cells):
            gid = grade_id(exercise, "code", "preparation")
            cells.append(nbformat.v4.new_code_cell(PREPARATION, id=gid, metadata=_meta(gid, locked=True)))

    for template_cell, solution_cell in pairs:
        if template_cell.cell_type == "markdown":
            counters["consigne"] += 1
            gid = grade_id(exercise, "consigne", counters["consigne"])
            cells.append(nbformat.v4.new_markdown_cell(_markdown(exercise, template_cell.source), id=gid,
                                                       metadata=_meta(gid, locked=True)))
        elif template_cell.cell_type == "code" and find_blanks(template_cell.source):
            prepare_once()
            counters["reponse"] += 1
            number = counters["reponse"]
            start = template_text.find(template_cell.source, position)
            if start < 0:
                raise BuildError(f"{exercise.template_path} : cellule de code introuvable telle quelle dans le "
                                 "fichier (commande magique ?)")
            position = start + len(template_cell.source)
            held = len(find_blanks(template_cell.source))
            gid = grade_id(exercise, "consigne", f"reponse-{number}")
            cells.append(nbformat.v4.new_markdown_cell(answer_label(number, next_blank + 1, next_blank + held),
                                                       id=gid, metadata=_meta(gid, locked=True)))
            gid = grade_id(exercise, "reponse", number)
            metadata = _meta(gid, solution=True)
            metadata[TROUS_KEY] = {"modele": template_cell.source}
            cells.append(nbformat.v4.new_code_cell(solution_cell.source, id=gid, metadata=metadata))
            for _ in range(held):
                if next_blank >= len(exercise.blanks):
                    raise BuildError(f"{exercise.template_path} : plus de trous ___ que dans course.yaml")
                blank = exercise.blanks[next_blank]
                gid = grade_id(exercise, "trou", blank.id)
                cells.append(nbformat.v4.new_code_cell(
                    grade_source(exercise, next_blank, hidden, number), id=gid,
                    metadata=_meta(gid, grade=True, locked=True, points=blank.points)))
                next_blank += 1
        elif template_cell.cell_type == "code":
            if template_cell.source != solution_cell.source:
                raise BuildError(f"{exercise.solution_path} : une cellule sans trou diffère de l'exercice")
            prepare_once()
            counters["code"] += 1
            gid = grade_id(exercise, "code", counters["code"])
            cells.append(nbformat.v4.new_code_cell(template_cell.source, id=gid, metadata=_meta(gid, locked=True)))
        else:
            raise BuildError(f"{exercise.template_path} : cellule de type {template_cell.cell_type} non prise en charge")
    if next_blank != len(exercise.blanks):
        raise BuildError(f"{exercise.template_path} : {next_blank} trous ___, {len(exercise.blanks)} dans course.yaml")
    gid = grade_id(exercise, "consigne", "verifier")
    cells.append(nbformat.v4.new_markdown_cell(EXPLAIN, id=gid, metadata=_meta(gid, locked=True)))
    gid = grade_id(exercise, "verification", "publique")
    metadata = _meta(gid, locked=True)
    metadata[TROUS_KEY] = {"verification": public.to_dict()}
    cells.append(nbformat.v4.new_code_cell(check_source(exercise), id=gid, metadata=metadata))
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": dict(KERNELSPEC),
                                                         "language_info": {"name": "python"}})
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


def notebook_bytes(nb: nbformat.NotebookNode) -> bytes:
    return (nbformat.writes(nb) + "\n").encode("utf-8")
