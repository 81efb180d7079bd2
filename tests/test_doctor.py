"""`trous doctor` on the real course, and on copies broken in the ways authors break courses."""

from __future__ import annotations

import ast
import re

import pytest

from conftest import ROOT, copy_course, run_trous
from trous.author import doctor
from trous.core import Course


def test_the_real_course_is_healthy():
    result = run_trous(ROOT, "doctor", timeout=900)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 erreur(s)" in result.stdout
    course = Course.load(ROOT)
    n = len(course.exercises)
    assert f"{n} exercices vérifiés" in result.stdout
    # The public-versus-hidden table: one row per blank, and no mutant refused in secret but « juste » in public.
    table = result.stdout[result.stdout.index("Mutants générés, trou par trou"):]
    for exercise in course.exercises:
        for blank in exercise.blanks:
            assert re.search(rf"^  {exercise.id} +{blank.id} +\d+ +\d+ +\d+ +0$", table, re.M), (exercise.id, blank.id)
    assert re.search(r"\d+ mutants, 0 refusé\(s\) en secret mais accepté\(s\) en public", table)


@pytest.fixture
def broken(tmp_path):
    """A writable copy of the course, limited to exercise 1 (fast to check)."""
    return copy_course(tmp_path / "cours")


def findings(folder, *only, graders=True):
    report = doctor.run(Course.load(folder), only=list(only) or ["01_toux"], graders=graders)
    return [str(f) for f in report.findings]


def test_solution_changed_outside_the_blanks_is_located(broken):
    path = broken / "solutions" / "01_toux.py"
    lines = path.read_text(encoding="utf-8").split("\n")
    where = next(i for i, line in enumerate(lines) if line.startswith("poids = "))
    lines[where] = lines[where].replace("softmax(scores)", "softmax(list(scores))")
    path.write_text("\n".join(lines), encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("ne correspond pas à l'exercice" in f and f"solutions/01_toux.py:{where + 1}" in f for f in found), found


def test_blank_count_must_match_course_yaml(broken):
    path = broken / "exercises" / "01_toux.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nbonus = ___\n", encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("4 trous « ___ » dans le fichier" in f and "3 déclarés" in f for f in found), found


def replace_check(text: str, name: str, new: str) -> str:
    """A check module with the check assigned to `name` replaced by `new` (Python source)."""
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == name)
    lines = text.split("\n")
    return "\n".join(lines[:node.lineno - 1] + [new] + lines[node.end_lineno:])


def test_a_public_check_that_ignores_its_blank_is_caught(broken):
    checks = broken / "exercises" / "test_01_toux.py"
    # The `scores` check now looks at something the blank does not compute.
    checks.write_text(replace_check(checks.read_text(encoding="utf-8"), "scores",
                                    'scores = blank("scores", expect("x[2]", [1, 1]))'), encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("passe même quand ce trou vaut ___" in f and "scores" in f for f in found), found


def test_a_solution_failing_its_public_check_is_caught(broken):
    checks = broken / "exercises" / "test_01_toux.py"
    checks.write_text(checks.read_text(encoding="utf-8").replace("[0.79, 0.79]", "[0.8, 0.7]"), encoding="utf-8")
    found = findings(broken, graders=False)
    assert any("la solution échoue à la vérification du trou « nouveau »" in f for f in found), found


def test_a_weak_grader_lets_mutants_survive(broken):
    grader = broken / "graders" / "test_01_toux.py"
    # Without variants, hidden or shown, hard-coding `scores` is not caught: the doctor must say so.
    (broken / "exercises" / "test_01_toux.py").write_text(COURSE_VALUES_ONLY, encoding="utf-8")
    grader.write_text(
        "from trous.spec import SOLUTION, blank, expect\n"
        "somme_exp = blank('somme_exp', expect('softmax([0.5, 2.0, -1.0])', SOLUTION))\n"
        "scores = blank('scores', expect('scores', SOLUTION))\n"
        "nouveau = blank('nouveau', expect('nouveau', SOLUTION))\n", encoding="utf-8")
    found = findings(broken)
    assert any("mutant survivant au trou « scores »" in f and "écrit en dur" in f for f in found), found
    assert not any("somme_exp" in f and "mutant survivant" in f and "valeur écrite en dur" in f for f in found)


def test_a_grader_checking_an_unknown_blank_is_refused(broken):
    grader = broken / "graders" / "test_01_toux.py"
    grader.write_text(grader.read_text(encoding="utf-8") + "\nautre = blank('inconnu', expect('x', SOLUTION))\n",
                      encoding="utf-8")
    found = findings(broken)
    assert any("inconnu" in f for f in found), found


# -- public checks against the hidden grader ---------------------------------------------------
COURSE_VALUES_ONLY = """
from trous.spec import blank, expect

somme_exp = blank("somme_exp", expect("softmax([1, 1, 2])", [0.21, 0.21, 0.58], decimals=2))
scores = blank("scores", expect("scores", [1, 1, 2]))
nouveau = blank("nouveau", expect("nouveau", [0.79, 0.79], decimals=2))
"""


def test_public_checks_on_the_course_values_only_fail_the_course(broken):
    """Checks that only try the course's own example let hard-coded answers through: the doctor says
    which, blank by blank, and fails the course."""
    (broken / "exercises" / "test_01_toux.py").write_text(COURSE_VALUES_ONLY, encoding="utf-8")
    report = doctor.run(Course.load(broken), only=["01_toux"])
    assert not report.ok
    failing = [str(f) for f in report.findings if "passe les vérifications publiques" in f.message]
    # The statement `scores = [1, 1, 2]` written out, and `nouveau` hard-coded or shifted by one.
    assert any("« scores »" in f and "scores = [1, 1, 2]" in f and "écrit en dur" in f for f in failing), failing
    assert any("« nouveau »" in f and "décalé de un" in f for f in failing), failing
    assert all(f.startswith("[erreur] 01_toux — exercises/test_01_toux.py") for f in failing)
    # Every failing one is also in the table, with the hidden grader refusing it.
    escaped = {(e.blank_id, e.mutant.fill) for e in report.escapes}
    assert ("scores", "scores = [1, 1, 2]") in escaped
    lines = report.lines()
    table = "\n".join(lines[lines.index(next(ln for ln in lines if ln.startswith("Mutants générés"))):])
    assert re.search(r"^  01_toux +scores +\d+ +\d+ +\d+ +[1-9]\d*$", table, re.M), table
    assert "✘ écrit en dur, résultat écrit en dur : scores = [1, 1, 2]" in table


def test_a_formula_that_coincides_on_the_shown_inputs_fails_the_course(broken):
    """Whatever its family, a mutant the hidden grader refuses but the public checks accept fails the
    course: here a name swapped, right on shown inputs where every token equals « toux »."""
    checks = broken / "exercises" / "test_01_toux.py"
    # Only the course's example for `scores`, but the shown variants kept for the other blanks,
    # and one shown variant whose tokens are all equal to « toux »: hard-coding still fails it…
    checks.write_text(replace_check(checks.read_text(encoding="utf-8"), "scores",
                                    'scores = blank("scores", expect("scores", [1, 1, 2]), expect("scores", [2, 2, 2], '
                                    'variant=variant("trois fois « toux »", shown=True, x="[[1, 1], [1, 1], [1, 1]]")))'),
                      encoding="utf-8")
    report = doctor.run(Course.load(broken), only=["01_toux"])
    escapes = [e for e in report.escapes if e.blank_id == "scores"]
    # …but swapping `toux` for `t` gives the same products on these inputs: refused by the grader only.
    assert any(e.mutant.fill == "sum((a * b for a, b in zip(t, t)))" for e in escapes), escapes
    assert not report.ok
    assert any("« scores »" in f.message and "passe les vérifications publiques" in f.message
               and "zip(t, t)" in f.message for f in report.findings), [str(f) for f in report.findings]


def generated(course_root_pool, exercise_id: str) -> tuple:
    """The exercise, its solution and its mutants, generated as the doctor generates them: from what
    its solution is seen to be on every check and every test function."""
    from trous.author import quality

    course, pool, grader = course_root_pool
    exercise, reference = course.exercise(exercise_id), grader.refs[exercise_id]
    observations, printed = quality.observe_all([exercise], grader, pool)[exercise_id]
    return exercise, reference.solution, quality.generate(exercise, reference.solution, reference.fills,
                                                           observations, printed)


def test_generated_mutants_of_the_new_kinds(course_root_pool):
    """A list where the course builds an array, an int where it builds a float, a big number where it
    writes −∞, and hard-coded arrays written back as arrays."""
    from trous.author import mutants

    def of(exercise_id):
        exercise, _, found = generated(course_root_pool, exercise_id)
        return {(exercise.blanks[m.blank].id, m.label): m for m in found}

    moyenne = of("06_moyenne")
    assert moyenne[("triangle", mutants.AS_LIST)].fill == "(np.tril(np.ones((T, T)))).tolist()"
    assert moyenne[("triangle", mutants.AS_LIST)].family == mutants.KIND
    assert moyenne[("triangle", mutants.HARD_CODED_LABELS[0])].fill.startswith("__import__('numpy').array([[1.0, 0.0")
    qkv = of("05_qkv")
    assert qkv[("racine", mutants.AS_INT)].fill == "int(math.sqrt(d))"
    assert ("nb_poids", mutants.AS_INT) not in qkv  # an int already: nothing to change
    masque = of("03_masque")
    assert masque[("masque", "grand nombre au lieu de l'infini")].fill == "-1000000000.0"
    causal = of("08_masque_causal")
    assert causal[("scores_masques", "grand nombre au lieu de l'infini")].fill == "np.where(masque, scores, -1000000000.0)"
    # The right answer written as a literal is not a mutant (12's −∞, a letter).
    autotest = of("12_autotest")
    assert all(m.fill not in ('float("-inf")', "float('-inf')", "'C'") for m in autotest.values())


def test_a_fill_that_breaks_a_later_line_is_located(course_root_pool):
    """The public run of a mutant says where the rest of the program broke (06: `triangle.sum` on a list)."""
    from trous.author import mutants, quality

    exercise, solution, found = generated(course_root_pool, "06_moyenne")
    found = [m for m in found if m.label == mutants.AS_LIST and exercise.blanks[m.blank].id == "triangle"]
    [verdict] = quality.public_verdicts(course_root_pool[0], found, course_root_pool[1])
    line = next(i for i, text in enumerate(solution.split("\n"), 1) if text.startswith("poids = "))
    assert verdict.broken == f"ligne {line} : AttributeError"


@pytest.fixture(scope="module")
def course_root_pool():
    from trous.grade.engine import Grader
    from trous.sandbox.pool import RunnerPool

    with RunnerPool(size=1, mode="auto") as pool:
        course = Course.load(ROOT)
        grader = Grader(course, pool)
        try:
            yield course, pool, grader
        finally:
            grader.close()


# -- what a student may read of a hidden grader -----------------------------------------------
def test_hidden_texts_need_labels_and_must_not_show_inputs(broken):
    grader = broken / "graders" / "test_01_toux.py"
    grader.write_text(
        "from trous.spec import SOLUTION, blank, expect, variant\n"
        "V = variant(\"quatre tokens, x = [[2, 1], ...]\", x=\"[[2, 1], [0, 3], [1, -1], [4, 4]]\")\n"
        "W = variant(\"une phrase plus longue\", x=\"[[0.5, 1], [2, 2], [1, 0], [3, 1]]\")\n"
        "somme_exp = blank('somme_exp', expect('poids', SOLUTION, variants=[V, W], label='les poids'))\n"
        "scores = blank('scores', expect('scores', SOLUTION, variant=W))\n"
        "nouveau = blank('nouveau', expect('nouveau', SOLUTION, variant=W, label='le nouveau vecteur'))\n",
        encoding="utf-8")
    found = findings(broken)
    assert any("la variante cachée « quatre tokens, x = [[2, 1], ...] » montre une de ses entrées" in f for f in found), found
    assert not any("« une phrase plus longue »" in f for f in found), found
    assert any("« scores »" in f and "n'a pas d'étiquette (label=)" in f for f in found), found
    assert not any("« nouveau »" in f and "étiquette" in f for f in found), found


def test_a_solution_opening_with_a_future_import_keeps_its_hard_coded_mutants(tmp_path):
    """The run that keeps each blank's value (for the « écrit en dur » mutants) puts its prelude after
    `from __future__`, which must come first: before, that run was a syntax error and the doctor
    generated no hard-coded answer at all for such a solution."""
    import shutil

    from trous.author.mutants import HARD_CODED

    course = shutil.copytree(ROOT / "tests" / "courses" / "meteo", tmp_path / "meteo")
    for path in (course / "solutions" / "01_moyenne.py", course / "exercises" / "01_moyenne.py"):
        path.write_text("from __future__ import annotations\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    report = doctor.run(Course.load(course), only=["01_moyenne"])
    assert report.ok, [str(f) for f in report.findings]
    assert [f.mutants > 0 for f in report.families if f.family == HARD_CODED] == [True]


@pytest.mark.parametrize("value", [float("-inf"), [float("-inf"), 1.0, float("inf")], "banana", "infini",
                                   {"inf": float("inf"), "nan": 2.5}, [0.5, float("nan")]])
def test_a_hard_coded_value_is_written_as_source_that_gives_it_back(value):
    """The "hard-coded" mutant writes the value seen at run time as Python: infinities and NaN spelt
    out, a string that holds « nan » or « inf » left as it is."""
    from trous.author import mutants
    from trous.core.encode import encode

    back = eval(mutants.literal(encode(value)), {})  # noqa: S307 - our own literal, the oracle is repr
    assert repr(back) == repr(value)
