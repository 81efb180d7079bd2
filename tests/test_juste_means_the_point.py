"""« juste » in the student's own `pytest exercises/` means the point in the grade (issue 22, §2).

Student mistakes of the families the issue names — a wrong blank and a value written in after it,
a blank that crashes on a shown variant, a fill that raises, an unfilled blank before independent
ones, a wrong line after right ones, the right numbers in a list — each in a copy of the student
edition: the copy's own `pytest exercises/ -v` says each blank's verdict, and `trous grade` grades
all the copies at once. Every blank « juste » must have its point; and the verdicts the issue
lists are asserted by name. Each copy is the reference solution with some fills changed.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import run_pytest, run_trous
from student_support import solution_with, statuses

MISTAKES = {
    # 01: a wrong `scores`, then a total written in that is right only on the course's scores
    "total_en_dur": ("01_toux", ("total = sum(e)", "total = math.exp(1) * 2 + math.exp(2)"),
                     ("sum(a * b for a, b in zip(t, toux))", "sum(t)")),
    # 01: `scores` crashes on the shown four-token inputs; `nouveau` is the course's value written in
    "nouveau_en_dur": ("01_toux", ("sum(poids[i] * x[i][j] for i in range(len(x)))", "0.79"),
                       ("sum(a * b for a, b in zip(t, toux))", "[1, 1, 2][x.index(t)]")),
    # 01: an unfilled total, and a `nouveau` written in
    "total_vide": ("01_toux", ("total = sum(e)", "total = ___"),
                   ("sum(poids[i] * x[i][j] for i in range(len(x)))", "[0.79, 0.79][j]")),
    # 03: a fill that raises
    "log_zero": ("03_masque", ('float("-inf") for s, m', "math.log(0) for s, m")),
    # 04: a crash in the first function, the second one written in
    "poids_en_dur": ("04_distance", ("w ** distance", "1 / 0"), ("e[mots.index(mot)] / sum(e)", "math.exp(1) / sum(e)")),
    # 05: a dimension taken from the wrong matrix
    "racine_x": ("05_qkv", ("/ math.sqrt(d) for k in K]", "/ math.sqrt(len(x[0])) for k in K]")),
    # 06: a size written in, and the product in the wrong order
    "sortie_x_poids": ("06_moyenne", ("np.ones((T, T))", "np.ones((5, 5))"),
                       ("sortie = poids @ x", "sortie = x @ poids")),
    # 06: the right triangle, as a list of lists
    "triangle_liste": ("06_moyenne", ("triangle = np.tril(np.ones((T, T)))",
                                      "triangle = [[1.0 if j <= i else 0.0 for j in range(T)] for i in range(T)]")),
    # 07: an unfilled `scores`, and the lieu's scores taken as a column
    "scores_vide": ("07_requete_cle", ("scores = k @ q_guang", "scores = ___"),
                    ("poids_lieu = softmax(k @ q_lieu)", "poids_lieu = softmax(k[:, 1])")),
    # 08: q times k (not its transpose): the program stops before the mask
    "q_fois_k": ("08_masque_causal", ("q @ k.T / math.sqrt(d)", "q @ k / math.sqrt(d)")),
    # 10: the key taken for the value
    "k_pour_v": ("10_tete", ("q, k, v = x @ W_q, x @ W_k, x @ W_v", "q, k, v = x @ W_q, x @ W_q, x @ W_v")),
    # 10: one sum for the whole table
    "somme_totale": ("10_tete", ("return e / e.sum(axis=-1, keepdims=True)", "return e / e.sum()")),
    # 12: an unfilled score before three constant answers
    "score_futur_vide": ("12_autotest", ('score_futur = float("-inf")', "score_futur = ___")),
    # 13: a shift that is not the maximum, and a dimension written in
    "shift_premier": ("13_a_la_main", ("shift = max(scores)", "shift = scores[0]"),
                      ("/ sqrt(len(q)) for k in keys]", "/ sqrt(2) for k in keys]")),
    # 01: a formula that gives the course's value on its example only (a `>` that should be `>=`
    # compares to nothing here), and the same value written in
    "formule_qui_coincide": ("01_toux", ("sum(poids[i] * x[i][j] for i in range(len(x)))",
                                         "sum(poids[i] * x[i][j] for i in range(len(x)) if poids[i] > 0.2)")),
    "valeur_ecrite": ("01_toux", ("sum(poids[i] * x[i][j] for i in range(len(x)))", "[0.79, 0.79][j]")),
    # 13: the second experiment's weights written in
    "weights_2_en_dur": ("13_a_la_main", ("/ sqrt(len(q)) for k in keys]", "/ sqrt(2) for k in keys]"),
                         ("weights_2 = softmax(scores_de(q, keys))", "weights_2 = [0.401, 0.198, 0.401]")),
}


@pytest.fixture(scope="module")
def checked(course, edition_template, tmp_path_factory):
    """{name: (exercise, {blank: status}, pytest's output)} and the grades of every copy."""
    root = tmp_path_factory.mktemp("promesse")
    copies = root / "copies"
    seen = {}
    for name, (exercise_id, *changes) in MISTAKES.items():
        folder = root / "eleves" / name
        shutil.copytree(edition_template, folder, symlinks=True)
        exercise = course.exercise(exercise_id)
        solution_with(folder, exercise, *changes)
        out = run_pytest(folder, f"exercises/{exercise.path.name}", "-v", "--tout").stdout
        seen[name] = (exercise, statuses(out, exercise), out)
        (copies / name / "exercises").mkdir(parents=True)
        shutil.copyfile(folder / "exercises" / exercise.path.name, copies / name / "exercises" / exercise.path.name)
    results = root / "resultats"
    done = run_trous(course.root, "grade", str(copies), "--resultats", str(results))
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    grades = {}
    for name in MISTAKES:
        data = json.loads((results / "results" / f"{name}.json").read_text(encoding="utf-8"))
        grades[name] = {(e["id"], b["id"]): b for e in data["exercises"] for b in e["blanks"]}
    return seen, grades


def test_every_blank_right_in_the_self_check_has_its_point(checked):
    seen, grades = checked
    wrong = []
    for name, (exercise, found, _out) in seen.items():
        assert len(found) == len(exercise.blanks), (name, found)
        for blank, status in found.items():
            grade = grades[name][(exercise.id, blank)]
            if status == "passed" and grade["score"] < grade["max_score"]:
                wrong.append((name, blank, grade["message"]))
    assert wrong == []


def test_a_check_that_could_not_run_right_is_not_right(checked):
    seen, _ = checked
    # 01: the total written in is right on the course's scores only, which its check of the program's
    # own weights replaces by others: it is wrong, not right.
    assert seen["total_en_dur"][1]["somme_exp"] == "failed"
    # `nouveau` written in: on the shown inputs, the program stops on `scores` before computing it.
    # Its checks read no other blank: it is not reached, it does not depend on `scores`.
    exercise, found, out = seen["nouveau_en_dur"]
    assert found["scores"] == "failed" and found["nouveau"] == "not_reached"
    assert "« nouveau » : pas encore vérifié (le programme s'arrête avant, sur « scores »)" in out
    # With the total unfilled, the program stops in softmax; the shown weights replace its result, so
    # `nouveau` written in is still caught, and `scores`, computed before, is right.
    assert seen["total_vide"][1] == {"somme_exp": "unfilled", "scores": "passed", "nouveau": "failed"}


def test_a_value_never_computed_is_never_shown_as_obtained(checked):
    _, found, out = seen_of(checked, "log_zero")
    assert found == {"masque": "failed"}
    assert "obtenu" not in out  # the program stopped on the fill: scores_f still held the unmasked scores
    assert "non vérifié : le programme s'arrête ligne" in out and "ValueError: math domain error" in out


def test_a_blank_whose_line_reads_no_other_blank_depends_on_none(checked):
    exercise, found, out = seen_of(checked, "score_futur_vide")
    assert found == {"reponse_1": "passed", "score_futur": "unfilled", "reponse_2": "not_reached",
                     "echelle": "not_reached", "reponse_3": "not_reached"}
    assert "dépend de « score_futur »" not in out
    _, found, out = seen_of(checked, "q_fois_k")
    assert found == {"scores": "failed", "masque": "not_reached", "scores_masques": "depends"}


def test_the_wrong_line_is_blamed_not_the_right_ones_before_it(checked):
    _, found, out = seen_of(checked, "racine_x")
    assert found == {"couche": "passed", "nb_poids": "passed", "racine": "failed", "sortie": "depends"}
    # 06: on T = 5, triangle and poids are right (their checks pass there): `x @ poids` is sortie's fault
    _, found, out = seen_of(checked, "sortie_x_poids")
    assert found == {"triangle": "failed", "poids": "depends", "sortie": "failed"}
    # 10: k for v is qkv's; the head's output depends on it
    _, found, _ = seen_of(checked, "k_pour_v")
    assert found["qkv"] == "failed" and found["sortie"] == "depends" and found["sans_masque"] == "depends"


def test_a_list_of_the_right_numbers_is_told_its_kind_not_a_size_written_in(checked):
    _, found, out = seen_of(checked, "triangle_liste")
    assert found == {"triangle": "failed", "poids": "depends", "sortie": "depends"}
    assert "triangle : les bonnes valeurs, mais une liste de 5 listes" in out
    assert "au lieu d'un tableau NumPy de forme (5, 5)" in out and "np.array" in out
    assert "écrite en dur" not in out and "en dur" not in out


def seen_of(checked, name):
    seen, _ = checked
    return seen[name]


# -- another author's course: a value its checks accept, but the rest of the program cannot use -----
COURSE = """\
course: {id: essai, title: "Un cours d'essai", language: fr, version: "1"}
assignments:
  - id: devoir
    title: Devoir
    source: essai
    exercises:
      - id: 01_moyenne
        title: La moyenne
        file: exercises/01_moyenne.py
        source: essai
        blanks:
          - {id: carre, points: 1, hint: ["Le carré de chaque élément.", "[v * v for v in x]"]}
          - {id: total, points: 1, hint: ["Additionne les éléments de x.", "sum(x)"]}
"""
TEMPLATE = """\
# %% [markdown]
# # Exercice 1 — La moyenne

# %%
x = [1, 2, 3]
carres = ___
total = ___
moyenne = total / len(x)
"""
PUBLIC = """\
from trous.spec import blank, expect, variant

QUATRE = variant("quatre nombres", shown=True, x="[1, 2, 3, 4]")
carre = blank("carre", expect("carres", [1, 4, 9]), expect("carres", [1, 4, 9, 16], variant=QUATRE))
total = blank("total", expect("int(total)", 6), expect("int(total)", 10, variant=QUATRE))
"""
HIDDEN = """\
from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [variant("d'autres nombres", x="[2, 5]")]
carre = blank("carre", expect("carres", SOLUTION, variants=AUTRES, label="les carrés"))
total = blank("total", expect("total", SOLUTION, variants=AUTRES, label="le total"))
"""


def test_a_blank_whose_result_stops_the_rest_of_the_program_is_not_right(tmp_path):
    """`total = str(sum(x))` passes its checks (`int(total)`), then `total / len(x)` stops the program:
    graded, the rest of the program must run with it (0 point); in the self-check it is « à revoir »."""
    root = tmp_path / "cours"
    for name, text in {"course.yaml": COURSE, "exercises/01_moyenne.py": TEMPLATE,
                       "exercises/test_01_moyenne.py": PUBLIC, "graders/test_01_moyenne.py": HIDDEN,
                       "solutions/01_moyenne.py": TEMPLATE.replace("carres = ___", "carres = [v * v for v in x]")
                       .replace("total = ___", "total = sum(x)")}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    edition = tmp_path / "edition"
    assert run_trous(root, "edition", str(edition), "--sans-zip").returncode == 0
    copy = (root / "solutions" / "01_moyenne.py").read_text(encoding="utf-8").replace("sum(x)", "str(sum(x))")
    (edition / "exercises" / "01_moyenne.py").write_text(copy, encoding="utf-8")
    out = run_pytest(edition, "exercises/", "-v").stdout
    assert "exercises/01_moyenne.py::carre JUSTE" in out and "exercises/01_moyenne.py::total À REVOIR" in out, out
    assert "le programme s'arrête ligne 8 (l'erreur ci-dessus)" in out and "Bravo" not in out
    copies = tmp_path / "copies" / "eve" / "exercises"
    copies.mkdir(parents=True)
    (copies / "01_moyenne.py").write_text(copy, encoding="utf-8")
    results = tmp_path / "resultats"
    done = run_trous(root, "grade", str(copies.parent.parent), "--resultats", str(results))
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    blanks = {b["id"]: b["score"] for e in json.loads((results / "results" / "eve.json").read_text())["exercises"]
              for b in e["blanks"]}
    assert blanks == {"carre": 1.0, "total": 0.0}


def test_only_a_value_written_in_is_called_written_in(checked):
    """The grade's « écrit en dur ? » is for a fill that gives other inputs the value it gave the
    course's; a formula that coincides with the right one on the example only is told to work for
    all inputs, without that word."""
    _, grades = checked
    formula = grades["formule_qui_coincide"][("01_toux", "nouveau")]
    written = grades["valeur_ecrite"][("01_toux", "nouveau")]
    assert formula["score"] == 0 and written["score"] == 0
    assert formula["message"].startswith("réussit l'exemple du cours mais échoue sur d'autres entrées")
    assert "en dur" not in formula["message"], formula["message"]
    assert "écrit en dur" in written["message"], written["message"]
