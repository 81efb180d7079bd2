"""Issue 12: plain pytest test functions in hidden graders, as `trous grade` grades with them.

A small course cut from the real one (exercises 1 and 4), whose graders hold test functions next to
declarations. Each copy below is the reference solution with one blank changed, graded by the real
engine in the real sandbox; what a student reads is checked for what it must say and must not show.
"""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from grading_support import mini_course
from trous.core import Course
from trous.core import blanks as blanks_mod
from trous.grade.engine import Grader, GraderError
from trous.core.grades import FAILED
from trous.core.judge import Verdict, judge_test
from trous.sandbox.pool import RunnerPool

HEADER = "import math\n\nimport pytest\n\nfrom trous.spec import SOLUTION, StudentError, blank, expect, variant\n\n"

GRADER_01 = HEADER + '''
scores = blank("scores", expect("scores", SOLUTION, label="les scores"))
nouveau = blank("nouveau", expect("nouveau", SOLUTION, label="le nouveau vecteur"))


@pytest.mark.trou("somme_exp")
@pytest.mark.parametrize("s", [[3.0, 1.0, 0.2], [0.5, -2.0, 4.0, 1.5]])
def test_les_poids_font_un(eleve, s):
    """les poids font 1 et gardent l'ordre des scores"""
    poids = eleve.call("softmax", s)
    assert sum(poids) == pytest.approx(1)
    assert sorted(range(len(s)), key=lambda i: poids[i]) == sorted(range(len(s)), key=lambda i: s[i])


@pytest.mark.trou("somme_exp")
def test_les_poids_du_programme(eleve):
    """les poids que calcule le programme"""
    e = [math.exp(v) for v in (1, 1, 2)]
    assert eleve("poids") == pytest.approx([v / sum(e) for v in e])


@pytest.mark.trou("scores")
def test_le_score_de_toux_est_le_plus_grand(eleve):
    """le score de « toux » face à elle-même est le plus grand"""
    scores = eleve("scores")
    assert scores[2] >= max(scores[0], scores[1])
'''

GRADER_04 = HEADER + '''
rnn = blank("rnn", expect("reste", SOLUTION, label="ce qui reste de « Pas »"))


@pytest.mark.trou("poids")
def test_un_mot_absent_est_refuse(eleve):
    """un mot absent de la phrase est refusé"""
    with pytest.raises(StudentError):
        eleve('poids_de("zèbre", phrase)')


@pytest.mark.trou("poids")
def test_un_mot_absent_leve_une_exception(eleve):
    """un mot absent lève une exception"""
    with pytest.raises(Exception):  # broader: neither a hang nor a bound reached is one
        eleve('poids_de("zèbre", phrase)')
'''

HIDDEN_INPUTS = ("3.0", "0.2", "0.5", "-2.0", "1.5", "zèbre", "[3", "approx")
# Conditions true inside softmax only for the hidden tests' scores (never for the public checks'
# [1, 1, 2] and [4, 1, 5, 3]): a fill can then be wrong where the tests alone look.
CASE_1 = "len(e) == 3 and e[0] > 20"  # [3.0, 1.0, 0.2]
CASE_2 = "len(e) == 4 and e[0] < 2"  # [0.5, -2.0, 4.0, 1.5]


def write(course: Path, relative: str, text: str) -> None:
    (course / relative).write_text(text, encoding="utf-8")


def splice(course: Course, exercise_id: str, blank_id: str, fill: str) -> bytes:
    """The reference solution with one blank's fill replaced."""
    exercise = course.exercise(exercise_id)
    template = exercise.template_path.read_text(encoding="utf-8")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    fills = blanks_mod.align(template, solution)
    return blanks_mod.splice(solution, fills, {exercise.blank_index(blank_id): fill}).encode()


@pytest.fixture(scope="module")
def course_dir(tmp_path_factory) -> Path:
    root = mini_course(tmp_path_factory.mktemp("cours") / "cours", ("01_toux", "04_distance"))
    write(root, "graders/test_01_toux.py", GRADER_01)
    write(root, "graders/test_04_distance.py", GRADER_04)
    return root


@pytest.fixture(scope="module")
def pool():
    with RunnerPool(2, mode="auto") as pool:
        yield pool


@pytest.fixture(scope="module")
def grader(course_dir, pool):
    grader = Grader(Course.load(course_dir), pool)
    grader.compute_references()
    yield grader
    grader.close()


def blank_grade(grader: Grader, files: dict[str, bytes], exercise_id: str, blank_id: str, student="eleve"):
    grade = grader.grade(student, files)
    return next(b for b in grade.exercise(exercise_id).blanks if b.id == blank_id)


def test_the_reference_gets_every_point(grader, course_dir):
    course = grader.course
    files = {e.id: e.solution_path.read_bytes() for e in course.exercises}
    grade = grader.grade("reference", files)
    assert grade.score == grade.max_score == 5


def test_a_fill_only_a_test_function_catches_loses_its_point(grader):
    # Wrong on the second case of a parametrized test only: no declaration of this grader looks there.
    fill = f"2 * sum(e) if {CASE_2} else sum(e)"
    result = blank_grade(grader, {"01_toux": splice(grader.course, "01_toux", "somme_exp", fill)}, "01_toux",
                         "somme_exp")
    assert result.score == 0
    assert "vérification cachée « les poids font 1 et gardent l'ordre des scores (cas 2 sur 2) » : ne passe pas" \
        in result.message
    # A hidden test is named by its docstring: neither its parameters nor what its asserts compared.
    for hidden in HIDDEN_INPUTS:
        assert hidden not in result.message


def test_per_blank_isolation_holds_for_test_functions(grader):
    # A wrong `scores` makes `poids` wrong in the student's own file; the test of `somme_exp` runs
    # on the reference with only `somme_exp` replaced, so this copy's right somme_exp keeps its point.
    files = {"01_toux": splice(grader.course, "01_toux", "scores", "sum(a + b for a, b in zip(t, toux))")}
    grade = grader.grade("eleve", files).exercise("01_toux")
    by_id = {b.id: b for b in grade.blanks}
    assert by_id["somme_exp"].score == 1
    assert by_id["scores"].score == 0


def test_the_students_exception_is_named_by_its_type_only(grader):
    fill = f"1 / (len(e) - 3) if {CASE_1} else sum(e)"
    result = blank_grade(grader, {"01_toux": splice(grader.course, "01_toux", "somme_exp", fill)}, "01_toux",
                         "somme_exp")
    assert result.score == 0
    assert "ton code lève ZeroDivisionError" in result.message
    assert "division by zero" not in result.message  # a spliced program's messages are never shown


def test_a_value_the_test_cannot_read_is_the_copys_failure(grader):
    # A score that lies in its __eq__ comes back as its type name: the test's `>=` cannot compare it.
    fill = "type('Menteur', (), {'__eq__': lambda s, o: True, '__ge__': lambda s, o: True})()"
    seen = []
    grader.observe = lambda student, outcome: seen.append(outcome)
    try:
        result = blank_grade(grader, {"01_toux": splice(grader.course, "01_toux", "scores", fill)}, "01_toux",
                             "scores")
    finally:
        grader.observe = None
    assert result.score == 0
    [outcome] = [o for o in seen if o.test.blank == "scores"]
    assert (outcome.outcome, outcome.cause) == ("failed", "reading")  # the student's, not a bug of the grader
    assert judge_test(outcome).reason == ("vérification cachée « le score de « toux » face à elle-même est le plus "
                                        "grand » : ce que donne ton code ne permet pas de la vérifier (TypeError)")


def poids_grade(grader, otherwise: str):
    """The grade of « poids » when `poids_de` does `otherwise` on a word absent from the sentence, and
    what each of its two tests says (by description)."""
    fill = f"e[mots.index(mot)] / sum(e) if mot in mots else {otherwise}"
    seen = []
    grader.observe = lambda student, outcome: seen.append(outcome)
    try:
        result = blank_grade(grader, {"04_distance": splice(grader.course, "04_distance", "poids", fill)},
                             "04_distance", "poids")
    finally:
        grader.observe = None
    said = {o.test.description: judge_test(o).reason for o in seen if o.test.blank == "poids"}
    return result, said


REFUSED, RAISES = "un mot absent de la phrase est refusé", "un mot absent lève une exception"


def test_a_hang_is_never_taken_for_a_refusal(grader):
    result, said = poids_grade(grader, "next(x for x in iter(int, 1) if x)")  # loops without allocating
    assert result.score == 0
    assert f"« {REFUSED} » : temps dépassé" in result.message
    assert "temps dépassé" in said[RAISES]  # pytest.raises(Exception) does not take it either


def test_memory_spent_is_never_taken_for_a_refusal(grader):
    # Far past any memory bound: MemoryError at once, whatever the machine's speed or load.
    result, said = poids_grade(grader, "bytearray(10**13)")
    assert result.score == 0
    assert f"« {REFUSED} » : mémoire épuisée (MemoryError)" in result.message
    assert "mémoire épuisée (MemoryError)" in said[RAISES]


def test_an_endless_recursion_is_never_taken_for_a_refusal(grader):
    result, said = poids_grade(grader, "(lambda f: f(f))(lambda f: f(f))")
    assert result.score == 0
    assert f"« {REFUSED} » : erreur ligne 46 — RecursionError" in result.message
    assert "RecursionError" in said[RAISES]


def test_any_other_error_is_a_refusal(grader):
    assert poids_grade(grader, "1 / 0")[0].score == 1  # ZeroDivisionError: a refusal too
    invented, said = poids_grade(grader, "0.0")
    assert invented.score == 0 and f"« {REFUSED} » : ne passe pas" in invented.message
    assert said[RAISES].endswith(" : ne passe pas")


def test_identical_programs_are_not_run_again(grader, monkeypatch):
    sessions = []
    original = grader.pool.session

    def counting(*args, **kwargs):
        sessions.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(grader.pool, "session", counting)
    fill = "sum(e) * 1.0"
    files = {"01_toux": splice(grader.course, "01_toux", "somme_exp", fill)}
    first = grader.grade("a", files)
    opened = len(sessions)
    second = grader.grade("b", files)
    assert opened >= 1 and len(sessions) == opened  # the second copy's test outcomes were known
    assert first.score == second.score == 3


def test_the_copys_budget_bounds_the_tests(course_dir, pool, tmp_path):
    root = mini_course(tmp_path / "budget", ("01_toux",))
    write(root, "graders/test_01_toux.py", GRADER_01)
    data = yaml.safe_load((root / "course.yaml").read_text(encoding="utf-8"))
    data["limits"] = {**(data.get("limits") or {}), "copy_wall": 2.5}
    (root / "course.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    course = Course.load(root)
    grader = Grader(course, pool)
    try:
        # Hangs on the tests' inputs only: its declared units pass, each test waits for its clock.
        fill = f"[0 for _ in iter(int, 1)] if ({CASE_1}) or ({CASE_2}) else sum(e)"
        grade = grader.grade("lent", {"01_toux": splice(course, "01_toux", "somme_exp", fill)})
        result = next(b for b in grade.exercise("01_toux").blanks if b.id == "somme_exp")
        assert result.score == 0
        assert "temps accordé à la copie" in result.message or "temps dépassé" in result.message
        others = [b for b in grade.exercise("01_toux").blanks if b.id != "somme_exp"]
        assert all(b.score == 1 or "temps accordé à la copie" in b.message for b in others)
    finally:
        grader.close()


# -- graders that cannot grade are refused, before any copy ----------------------------------------
BROKEN = {
    "sans marqueur": ('''
def test_sans_trou(eleve):
    assert eleve("scores") == [1, 1, 2]
''', "ce test ne dit pas quel trou il note : ajoutez @pytest.mark.trou"),
    "trou inconnu": ('''
@pytest.mark.trou("somme")
def test_trou_inconnu(eleve):
    assert eleve("scores") == [1, 1, 2]
''', "le trou « somme » n'existe pas dans 01_toux"),
    "points contraires": ('''
@pytest.mark.trou("scores", points=2)
def test_points(eleve):
    assert eleve("scores") == [1, 1, 2]
''', "points=2, mais course.yaml donne 1 point(s) au trou « scores »"),
    "sans eleve": ('''
@pytest.mark.trou("scores")
def test_sans_eleve():
    assert True
''', "n'utilise pas la fixture eleve"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_test_function_grading_cannot_use_is_refused(case, pool, tmp_path):
    body, said = BROKEN[case]
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "graders/test_01_toux.py", (root / "graders/test_01_toux.py").read_text(encoding="utf-8")
          + "\n\nimport pytest\n" + body)
    with pytest.raises(GraderError) as refused:
        Grader(Course.load(root), pool)
    assert said in str(refused.value)
    assert "graders/test_01_toux.py::" in str(refused.value)


@pytest.mark.parametrize("body, said", [
    ('''
@pytest.mark.trou("scores")
def test_faux_sur_la_reference(eleve):
    assert eleve("scores") == [1, 1, 3]
''', "échoue sur la solution de référence"),
    ('''
@pytest.mark.trou("scores")
def test_ne_demande_rien(eleve):
    if False:
        eleve("scores")
''', "ne demande rien au programme"),
])
def test_a_test_that_the_reference_does_not_pass_is_refused(body, said, pool, tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "graders/test_01_toux.py", (root / "graders/test_01_toux.py").read_text(encoding="utf-8")
          + "\n\nimport pytest\n" + body)
    grader = Grader(Course.load(root), pool)
    try:
        with pytest.raises(GraderError) as refused:
            grader.compute_references()
        assert said in str(refused.value)
        with pytest.raises(GraderError):  # and again, for whoever asks again: nothing is graded
            grader.grade("eleve", {"01_toux": b"x = 1\n"})
    finally:
        grader.close()


def test_a_test_that_errs_only_on_one_copys_values_costs_that_copy_the_test_and_tells_the_teacher(pool, tmp_path):
    # The test passes on the reference (checked before any copy): whatever it does on a copy, it does
    # on that copy's values. The copy loses the test, the class goes on, the teacher is told.
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "graders/test_01_toux.py", (root / "graders/test_01_toux.py").read_text(encoding="utf-8") + '''

import pytest


@pytest.mark.trou("scores")
def test_avec_une_branche_boguee(eleve):
    """les scores"""
    scores = eleve("scores")
    if scores[0] > 100:
        assert scores == reference_inconnue  # a name that exists nowhere: the grader's own bug
    assert len(scores) == 3
''')
    course = Course.load(root)
    grader = Grader(course, pool)
    try:
        grader.compute_references()  # the reference never takes that branch
        odd = grader.grade("alice", {"01_toux": splice(course, "01_toux", "scores", "1000 + t[0]")})
        honest = grader.grade("bruno", {"01_toux": course.exercise("01_toux").solution_path.read_bytes()})
    finally:
        grader.close()
    scores = next(b for b in odd.exercise("01_toux").blanks if b.id == "scores")
    assert scores.status == FAILED, scores.message
    assert "NameError" not in scores.message and "reference_inconnue" not in scores.message  # the test's, not hers
    assert len(odd.incidents) == 1, odd.incidents
    assert "test_avec_une_branche_boguee" in odd.incidents[0] and "NameError" in odd.incidents[0], odd.incidents
    assert honest.score == honest.max_score and not honest.incidents


def test_a_test_past_its_own_bounds_on_a_copy_costs_that_copy_the_test_and_the_class_goes_on(pool, tmp_path):
    # Each test passes on the reference; on a copy's values one computes without end, one asks for
    # more memory than the worker has, one kills its worker. Each costs that copy its test, said as
    # such; the teacher is told; the worker is replaced and the next copy is graded as if nothing was.
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "graders/test_01_toux.py", (root / "graders/test_01_toux.py").read_text(encoding="utf-8") + '''

import os

import pytest


@pytest.mark.trou("scores")
def test_qui_calcule_sans_fin(eleve):
    """les scores"""
    scores = eleve("scores")
    while scores[0] > 100:
        pass
    assert len(scores) == 3


@pytest.mark.trou("nouveau")
def test_qui_gonfle(eleve):
    """le nouveau vecteur"""
    nouveau = eleve("nouveau")
    if nouveau[0] > 100:
        bytearray(64 * 2**30)
    assert len(nouveau) == 2


@pytest.mark.trou("somme_exp")
def test_qui_tue_son_processus(eleve):
    """les poids"""
    poids = eleve.call("softmax", [1.0, 2.0])
    if poids[0] > 100:
        os._exit(3)
    assert sum(poids) == pytest.approx(1)
''')
    course = Course.load(root)
    grader = Grader(course, pool)
    seen: dict[tuple[str, str], str] = {}
    grader.observe = lambda student, outcome: seen.setdefault(
        (student, outcome.test.name), (judge_test(outcome) or Verdict(True)).reason)
    started = time.monotonic()
    try:
        grader.compute_references()
        copies = {"calcule": splice(course, "01_toux", "scores", "1000 + sum(a * b for a, b in zip(t, toux))"),
                  "gonfle": splice(course, "01_toux", "nouveau", "1000 + sum(poids[i] * x[i][j] for i in range(len(x)))"),
                  "tue": splice(course, "01_toux", "somme_exp", "sum(e) / 1000")}
        grades = {name: grader.grade(name, {"01_toux": data}) for name, data in copies.items()}
        honest = grader.grade("honnete", {"01_toux": course.exercise("01_toux").solution_path.read_bytes()})
    finally:
        grader.close()
    assert time.monotonic() - started < 120
    said = {"calcule": ("scores", "test_qui_calcule_sans_fin",
                        "le test n'a pas fini sur ce que donne ton code (plus de 5 s de calcul)", "calcul"),
            "gonfle": ("nouveau", "test_qui_gonfle", "le test a manqué de mémoire sur ce que donne ton code", "mémoire"),
            "tue": ("somme_exp", "test_qui_tue_son_processus",
                    "le test n'a pas fini sur ce que donne ton code (son processus a dû être arrêté)",
                    "s'est arrêté (code de sortie 3)")}
    for name, (blank_id, test_name, remark, incident) in said.items():
        blank = next(b for b in grades[name].exercise("01_toux").blanks if b.id == blank_id)
        assert blank.status == FAILED, (name, blank)
        found = [i for i in grades[name].incidents if test_name in i]
        assert len(found) == 1 and incident in found[0], (name, grades[name].incidents)
        assert remark in seen[(name, test_name)], (name, seen)
    assert honest.score == honest.max_score and not honest.incidents


def test_public_test_functions_count_and_are_named_as_public(pool, tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "exercises/test_01_toux.py", (root / "exercises/test_01_toux.py").read_text(encoding="utf-8") + '''

import pytest


@pytest.mark.trou("nouveau")
def test_le_nouveau_vecteur_du_cours(eleve):
    """le nouveau vecteur vaut [0,79 ; 0,79]"""
    assert eleve("nouveau") == pytest.approx([0.79, 0.79], abs=0.005)
''')
    write(root, "graders/test_01_toux.py", GRADER_01 + '''

@pytest.mark.trou("nouveau")
def test_cache_du_nouveau_vecteur(eleve):
    """le nouveau vecteur sur une autre phrase"""
    assert len(eleve("nouveau", x=[[1, 0], [0, 1], [1, 1], [2, 2]])) == 2
''')
    course = Course.load(root)
    grader = Grader(course, pool)
    seen = []
    grader.observe = lambda student, outcome: seen.append(outcome)
    try:
        tests = grader.tests.of("01_toux", "nouveau")
        assert [t.hidden for t in tests] == [False, True]  # public tests run first, then hidden ones
        grade = grader.grade("eleve", {"01_toux": splice(course, "01_toux", "nouveau", "0")})
        assert next(b for b in grade.exercise("01_toux").blanks if b.id == "nouveau").score == 0
        public = next(o for o in seen if not o.test.hidden)
        assert judge_test(public).reason == "vérification « le nouveau vecteur vaut [0,79 ; 0,79] » : ne passe pas"
        assert next(o for o in seen if o.test.blank == "nouveau" and o.test.hidden).outcome == "passed"
    finally:
        grader.close()


def test_the_grader_files_are_part_of_the_version(course_dir):
    from trous.grade.engine import fingerprint

    course = Course.load(course_dir)
    before = fingerprint(course)
    conftest = course_dir / "graders" / "conftest.py"
    conftest.write_text(textwrap.dedent('''
        import pytest

        @pytest.fixture
        def graine():
            return 3
    '''), encoding="utf-8")
    try:
        assert fingerprint(Course.load(course_dir)) != before  # a fixture changed: grades must be redone
    finally:
        conftest.unlink()


def test_fixtures_classes_and_tests_of_several_blanks_work_as_in_pytest(pool, tmp_path):
    root = mini_course(tmp_path / "cours", ("01_toux",))
    write(root, "graders/conftest.py", """
import pytest


@pytest.fixture
def phrase():
    return [[2, 0], [0, 2], [1, 1], [3, 3]]


@pytest.fixture
def poids(eleve, phrase):  # a fixture may ask the student's program too
    return eleve("poids", x=phrase)
""")
    write(root, "graders/test_01_toux.py", HEADER + """
@pytest.mark.trou("scores", "nouveau")
def test_une_autre_phrase(eleve, phrase):
    \"\"\"une autre phrase\"\"\"
    assert len(eleve("scores", x=phrase)) == 4
    assert len(eleve("nouveau", x=phrase)) == 2


@pytest.mark.trou("somme_exp")
class TestLesPoids:
    def test_font_un(self, poids):
        assert sum(poids) == pytest.approx(1)

    def test_sont_positifs(self, poids):
        assert min(poids) > 0
""")
    course = Course.load(root)
    grader = Grader(course, pool)
    try:
        names = {b: [t.name for t in grader.tests.of("01_toux", b)] for b in ("somme_exp", "scores", "nouveau")}
        assert names == {"somme_exp": ["test_font_un", "test_sont_positifs"],
                         "scores": ["test_une_autre_phrase[scores]"], "nouveau": ["test_une_autre_phrase[nouveau]"]}
        grader.compute_references()  # they all pass on the reference
        seen = []
        grader.observe = lambda student, outcome: seen.append((outcome.test.name, outcome.outcome, outcome.cause))
        # A scores fill that breaks on four tokens: the « scores » run of the test fails; the
        # « nouveau » run, on the program with only nouveau replaced (the reference's), passes.
        grade = grader.grade("eleve", {"01_toux": splice(course, "01_toux", "scores",
                                                        "sum(a * b for a, b in zip(t, toux)) if len(x) == 3 else 1 / 0")})
        by_id = {b.id: b for b in grade.exercise("01_toux").blanks}
        assert by_id["scores"].score == 0 and by_id["nouveau"].score == 1 and by_id["somme_exp"].score == 1
        assert sorted(seen) == [("test_font_un", "passed", ""), ("test_sont_positifs", "passed", ""),
                                ("test_une_autre_phrase[nouveau]", "passed", ""),
                                ("test_une_autre_phrase[scores]", "failed", "student")]
        # The student's error met in a fixture is the student's, not a bug of the grader.
        wrong = grader.grade("eleve", {"01_toux": splice(course, "01_toux", "somme_exp",
                                                        "sum(e) if len(e) != 4 else 1 / 0")})
        result = next(b for b in wrong.exercise("01_toux").blanks if b.id == "somme_exp")
        assert result.score == 0
        assert ("test_font_un", "failed", "student") in seen
    finally:
        grader.close()


# Public checks on the course's own values only, and declarations that look at the course's own
# sentence only: a `scores` written as a literal passes them all. Only the test function below tries
# another sentence (issue 12: the doctor's mutant check covers test functions).
PUBLIC_COURSE_VALUES_ONLY = """
from trous.spec import blank, expect

somme_exp = blank("somme_exp", expect("softmax([1, 1, 2])", [0.21, 0.21, 0.58], decimals=2))
scores = blank("scores", expect("scores", [1, 1, 2]))
nouveau = blank("nouveau", expect("nouveau", [0.79, 0.79], decimals=2))
"""

WEAK_GRADER = """
import pytest

from trous.spec import SOLUTION, blank, expect

somme_exp = blank("somme_exp", expect("softmax([0.5, 2.0, -1.0])", SOLUTION))
scores = blank("scores", expect("scores", SOLUTION))
nouveau = blank("nouveau", expect("nouveau", SOLUTION))
"""

SCORES_TEST = '''

@pytest.mark.trou("scores")
def test_les_scores_d_une_autre_phrase(eleve):
    """les scores d'une autre phrase"""
    phrase = [[2, 1], [0, 3], [1, -1], [4, 0.5]]
    attendu = [sum(a * b for a, b in zip(t, phrase[2])) for t in phrase]
    assert eleve("scores", x=phrase, toux=phrase[2]) == pytest.approx(attendu)
'''


@pytest.mark.parametrize("with_test", [False, True], ids=["declarations-seules", "avec-fonction-de-test"])
def test_the_doctors_mutants_go_through_test_functions(with_test, tmp_path):
    from trous.author import doctor  # noqa: PLC0415

    root = mini_course(tmp_path / "cours", ("01_toux",))
    (root / "exercises" / "test_01_toux.py").write_text(PUBLIC_COURSE_VALUES_ONLY, encoding="utf-8")
    (root / "graders" / "test_01_toux.py").write_text(WEAK_GRADER + (SCORES_TEST if with_test else ""),
                                                      encoding="utf-8")
    report = doctor.run(Course.load(root), only=["01_toux"])
    found = [str(f) for f in report.findings]
    survives = any("mutant survivant au trou « scores »" in f and "écrit en dur" in f for f in found)
    tallies = {(t.blank, t.name): t for t in report.tests}
    if not with_test:
        assert survives, found  # the weak grader really is weak: the test below is what catches it
        assert not tallies
        return
    assert not survives, found
    tally = tallies[("scores", "test_les_scores_d_une_autre_phrase")]
    assert tally.exercise == "01_toux" and 0 < tally.refused <= tally.mutants
    # The author reads, per test function, how many mutants of its blank it refuses on its own.
    row = next(line for line in report.lines() if line.endswith("test_les_scores_d_une_autre_phrase"))
    assert f"{tally.refused}/{tally.mutants}" in row and "scores" in row


PUBLIC_SCORES_TEST = '''

import pytest


@pytest.mark.trou("scores")
def test_les_scores_d_une_phrase_de_quatre_mots(eleve):
    """les scores de « le chat dort bien » avec x = [[1, 2], [0, 1], [2, 1], [1, 1]]"""
    phrase = [[1, 2], [0, 1], [2, 1], [1, 1]]
    assert eleve("scores", x=phrase, toux=phrase[2]) == [4, 1, 5, 3]
'''


@pytest.mark.parametrize("with_test", [False, True], ids=["declarations-seules", "avec-fonction-de-test"])
def test_a_public_test_function_counts_on_the_doctors_public_side(with_test, tmp_path):
    """A hard-coded `scores` passes public declarations on the course's values only; a public test
    function on another, shown, sentence refuses it: the doctor must count that refusal as public."""
    from trous.author import doctor  # noqa: PLC0415

    root = mini_course(tmp_path / "cours", ("01_toux",))
    (root / "exercises" / "test_01_toux.py").write_text(PUBLIC_COURSE_VALUES_ONLY
                                                        + (PUBLIC_SCORES_TEST if with_test else ""), encoding="utf-8")
    report = doctor.run(Course.load(root), only=["01_toux"])
    failing = [str(f) for f in report.findings if "passe les vérifications publiques" in f.message]
    scores_escapes = {e.mutant.fill for e in report.escapes if e.blank_id == "scores"}
    if not with_test:
        assert any("« scores »" in f and "scores = [1, 1, 2]" in f for f in failing), failing
        assert "scores = [1, 1, 2]" in scores_escapes
    else:
        assert not any("« scores »" in f for f in failing), failing
        assert "scores = [1, 1, 2]" not in scores_escapes
        assert any("« nouveau »" in f for f in failing), failing  # the other blanks' checks are still weak
    tally = next(t for t in report.tallies if t.blank == "scores")
    assert (tally.public == tally.mutants) if with_test else (tally.public < tally.mutants), tally


def test_grading_sandboxes_preload_what_a_check_requires_from_their_first_start(tmp_path, monkeypatch):
    """`trous grade` launches its sandboxes before the Grader reads the checks: a module a check
    requires (torch, when installed) must be in their preload from that first start, not only in a
    zygote started later (every job would import it otherwise)."""
    from trous.outputs.run import GradeOptions, grade_class
    from trous.sandbox.pool import Runner

    root = mini_course(tmp_path / "cours", ("01_toux",))
    checks = root / "exercises" / "test_01_toux.py"
    text = checks.read_text(encoding="utf-8")
    start = text.index("\nscores = blank(\n")
    end = text.index("\n)\n", start)
    checks.write_text(text[:end] + '\n    requires=["decimal"],' + text[end:], encoding="utf-8")
    copies = tmp_path / "copies" / "alice" / "exercises"
    copies.mkdir(parents=True)
    (copies / "01_toux.py").write_text((root / "solutions" / "01_toux.py").read_text(encoding="utf-8"),
                                       encoding="utf-8")
    launched: list[tuple[str, ...]] = []
    launch = Runner.launch

    def spied(self):
        if self.process is None or self.process.poll() is not None:
            launched.append(tuple(self.preload))
        return launch(self)

    monkeypatch.setattr(Runner, "launch", spied)
    outcome = grade_class(Course.load(root), GradeOptions(tmp_path / "copies", tmp_path / "resultats", "auto", 2))
    assert launched, "no sandbox was launched"
    assert all("decimal" in preload for preload in launched), launched
    assert outcome.grades[0].score == outcome.grades[0].max_score


def test_a_thread_without_a_free_worker_waits_for_one_given_back_then_has_one_started():
    """The graders' pytest workers: a start collects the graders (a second of CPU), a test keeps a
    worker for milliseconds. A grading thread that finds none free waits for a busy one to be given
    back, as long as the last start took; only past that is another one started (rent or buy)."""
    from trous.grade.testworker import WorkerFailed, WorkerPool, has_tests

    files = sorted(p for p in (ROOT / "graders").glob("test_*.py") if has_tests(p))
    assert files
    pool = WorkerPool(ROOT, files, size=3)
    try:
        first = pool.take()  # nothing at all: the first start, at once
        assert pool.started == 1 and pool.start_seconds > 0  # measured

        # Given back within the patience: taken again, and no second worker was started for it.
        pool.start_seconds = 60.0
        got = []
        taker = threading.Thread(target=lambda: got.append(pool.take()))
        taker.start()
        time.sleep(0.5)
        assert taker.is_alive() and not pool.starting and pool.started == 1
        pool.give(first)
        taker.join(timeout=60)
        assert got == [first] and pool.started == 1

        # Kept busy past the patience: a new worker is started, and the waiting thread gets it.
        pool.start_seconds = 0.2
        got.clear()
        taker = threading.Thread(target=lambda: got.append(pool.take()))
        taker.start()
        taker.join(timeout=60)
        assert len(got) == 1 and got[0] is not first and got[0].alive
        assert pool.started == 2 and not pool.starting
        pool.give(got[0])
        pool.give(first)
    finally:
        pool.close()
    assert not first.alive and not got[0].alive
    with pytest.raises(WorkerFailed):
        pool.take()


def test_a_worker_started_ahead_is_the_one_the_first_pool_on_the_same_graders_takes():
    """`trous grade` starts collecting the graders before it reads the copies: the pool then takes
    that very process instead of starting one; one started on other graders is never taken, and
    is stopped by drop_ahead."""
    from trous.grade import testworker
    from trous.grade.testworker import test_files

    course = Course.load(ROOT)
    files = test_files(course.exercises)
    fewer = test_files(course.exercises[:1])
    assert files and fewer and fewer != files
    testworker.start_ahead(ROOT, files)
    testworker.start_ahead(ROOT, fewer)
    testworker.start_ahead(ROOT, files)  # asked twice: still one
    assert len(testworker._ahead) == 2
    ahead = testworker._ahead[testworker._key(ROOT, files)].result(timeout=60)
    other = testworker._ahead[testworker._key(ROOT, fewer)]
    pool = testworker.WorkerPool(ROOT, list(files), size=2)
    try:
        taken = pool.take()
        assert taken is ahead and taken.alive and taken.items  # collected, and not started again
        assert pool.start_seconds == ahead.start_seconds > 0
        testworker.drop_ahead()
        assert not testworker._ahead
        stopped = other.result(timeout=60)
        deadline = time.monotonic() + 10
        while stopped.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not stopped.alive  # the one no pool took
        assert taken.alive  # the taken one is the pool's
        pool.give(taken)
    finally:
        pool.close()
    assert not ahead.alive


def test_a_start_ahead_that_failed_is_tried_again_by_the_pool_which_says_why(tmp_path):
    from trous.grade import testworker

    absent = tmp_path / "cours_absent"  # the worker runs in the course's folder: it cannot start
    files = [absent / "graders" / "test_01.py"]
    testworker.start_ahead(absent, files)
    future = testworker._ahead[testworker._key(absent, files)]
    with pytest.raises(FileNotFoundError):
        future.result(timeout=60)
    pool = testworker.WorkerPool(absent, files, size=1)
    try:
        with pytest.raises(testworker.WorkerFailed, match="cours_absent"):
            pool.take()
        assert not testworker._ahead and pool.started == 0
    finally:
        pool.close()


def test_copies_graded_at_once_run_each_program_they_share_once():
    """The first copies of a class all miss the grader's cache at once: a group of units another
    thread is running is waited for, not run a second time; each copy still gets its whole grade."""
    import collections

    course = Course.load(ROOT)
    only = ["02_places", "05_qkv"]
    files = {e: (ROOT / "solutions" / f"{e}.py").read_bytes() for e in only}  # every blank right
    runs: collections.Counter = collections.Counter()
    grades = {}
    with RunnerPool(2, mode="auto") as pool:
        original = pool.run

        def counting(job):
            runs[tuple((u.source, u.overrides, u.wall, u.probes, u.state, u.process) for u in job.units)] += 1
            return original(job)

        pool.run = counting
        grader = Grader(course, pool, only=only)
        try:
            grader.compute_references()
            runs.clear()
            start = threading.Barrier(3)

            def grade(name: str) -> None:
                start.wait()
                grades[name] = grader.grade(name, files)

            threads = [threading.Thread(target=grade, args=(name,)) for name in ("alice", "bob", "chloe")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=300)
        finally:
            grader.close()
    assert sorted(grades) == ["alice", "bob", "chloe"]
    assert runs and max(runs.values()) == 1, [n for n in runs.values() if n > 1]
    for grade in grades.values():
        assert grade.score == grade.max_score > 0
        assert [(b.id, b.status) for e in grade.exercises for b in e.blanks] == \
            [(b.id, b.status) for e in grades["alice"].exercises for b in e.blanks]
