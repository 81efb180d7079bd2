"""The public checks agree with the grade on the common mistakes (issue 9, parts 3 and 4).

Each wrong fill of the issue goes into a copy of the solution, in a student's edition, and the real
`pytest exercises/NN.py` runs in a subprocess: that blank must be « faux », with a French reason.
Then the course's own texts: one rule for masked scores, hints that point at what students have,
shown variants on every computed blank, hidden variants different from the shown ones.
"""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import run_pytest
from trous.core import blanks as blanks_mod
from trous.core.checks import load_checks

# (exercise, blank, wrong fill): ✔ in `pytest exercises/` and refused at grading before this change.
WRONG_FILLS = [
    ("01_toux", "scores", "sum(t)"),
    ("01_toux", "somme_exp", "e[0] + e[1] + e[2]"),
    ("04_distance", "rnn", "0.5 ** 8"),
    ("05_qkv", "nb_poids", "24"),
    ("05_qkv", "racine", "2"),
    ("07_requete_cle", "scores", "k[:, 0]"),
    ("07_requete_cle", "requete_lieu", "softmax(k[:, 1])"),
    ("08_masque_causal", "masque", "np.tril(np.ones((5, 5), dtype=bool))"),
    ("10_tete", "masque", "np.tril(np.ones((5, 5), dtype=bool))"),
    ("09_racine_d", "echelle", "scores / scores.std()"),
    ("11_cout", "rapport", "apres // avant"),
    ("11_cout", "pente", "math.log2(rapports(durees)[0])"),
    ("12_autotest", "echelle", "math.isqrt(d)"),
    ("13_a_la_main", "scores", "sum(a * b for a, b in zip(q, k)) / sqrt(2)"),
    ("13_a_la_main", "shift", "scores[0]"),
    # `range(3)` where the course counts its tokens: in the ×10 experiment and in the mixture.
    ("13_a_la_main", "x10", "[10 * scores[i] for i in range(3)]"),
    ("13_a_la_main", "sortie", "sum(weights[i] * values[i][d] for i in range(3))"),
]

# One rule for the whole course: a masked score is −∞, never a big finite number (part 4).
MASK_RULE = [
    ("03_masque", "masque", "-20"),
    ("03_masque", "masque", "-100"),
    ("03_masque", "masque", "-1e9"),
    ("08_masque_causal", "scores_masques", "np.where(masque, scores, -1e9)"),
    ("12_autotest", "score_futur", "-1e9"),
]

# 09: a « ligne » runs along the last axis, for arrays of two dimensions as of three (part 4).
ROWS = [
    ("09_racine_d", "max_moyen", "softmax(scores).max(axis=0).mean()"),
    ("09_racine_d", "max_moyen", "softmax(scores).max(axis=2).mean()"),
]


def with_fill(exercise, blank_id: str, fill: str) -> str:
    """The solution, with only this blank's fill replaced."""
    template = exercise.template_path.read_text(encoding="utf-8")
    solution = exercise.solution_path.read_text(encoding="utf-8")
    fills = blanks_mod.align(template, solution)
    return blanks_mod.splice(solution, fills, {exercise.blank_index(blank_id): fill})


CASES = WRONG_FILLS + MASK_RULE + ROWS


def blank_section(out: str, file_name: str, blank_id: str) -> str:
    """The lines pytest prints for one blank of one exercise: its title and the indented reasons under it."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if file_name in line and f"« {blank_id} » :" in line
                 and "trou" in line)
    section = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        section.append(line)
    return "\n".join(section)


@pytest.fixture(scope="module")
def outputs(course, edition_template, tmp_path_factory) -> dict[tuple, str]:
    """Each case's `pytest -v exercises/…` output. Cases run in rounds, at most one wrong fill per
    exercise in a round, the round's exercises in one pytest run (a subprocess costs a second)."""
    rounds: list[dict[str, tuple]] = []
    for case in CASES:
        target = next((r for r in rounds if case[0] not in r), None)
        if target is None:
            target = {}
            rounds.append(target)
        target[case[0]] = case
    found = {}
    for n, round_ in enumerate(rounds):
        folder = tmp_path_factory.mktemp(f"tour{n}") / "eleve"
        shutil.copytree(edition_template, folder, symlinks=True)
        for exercise_id, blank_id, fill in round_.values():
            exercise = course.exercise(exercise_id)
            (folder / "exercises" / exercise.path.name).write_text(with_fill(exercise, blank_id, fill), encoding="utf-8")
        files = [f"exercises/{course.exercise(e).path.name}" for e in round_]
        result = run_pytest(folder, "-v", *files)
        for case in round_.values():
            found[case] = result.stdout
    return found


@pytest.mark.parametrize("case", CASES, ids=[f"{e}-{b}-{f}" for e, b, f in CASES])
def test_wrong_fill_fails_its_blank_in_pytest_exercises(course, outputs, case):
    exercise_id, blank_id, fill = case
    out = outputs[case]
    file_name = course.exercise(exercise_id).path.name
    assert re.search(rf"{re.escape(file_name)}\S* .*« {blank_id} » : faux", out), out[-3000:]
    section = blank_section(out, file_name, blank_id)
    # A reason the student can act on: what was expected against what came out, or the error and its line.
    assert re.search(r"attendu .+, obtenu|erreur ligne \d+", section), section
    assert "indice :" in section
    assert "Traceback" not in out and "src/trous" not in out


def test_other_spellings_of_minus_infinity_are_right(course, student_copy):
    """The rule refuses finite numbers, not a spelling: −∞ written otherwise is the same value."""
    cases = [("03_masque", "masque", "-math.inf"),
             ("08_masque_causal", "scores_masques", "np.where(masque, scores, float('-inf'))"),
             ("12_autotest", "score_futur", "-math.inf")]
    for exercise_id, blank_id, fill in cases:
        exercise = course.exercise(exercise_id)
        (student_copy / "exercises" / exercise.path.name).write_text(with_fill(exercise, blank_id, fill),
                                                                     encoding="utf-8")
    result = run_pytest(student_copy, "-v", *[f"exercises/{course.exercise(e).path.name}" for e, _, _ in cases])
    assert result.returncode == 0, result.stdout[-3000:]
    assert "3/3 exercices réussis" in result.stdout


# -- the course's texts --------------------------------------------------------------------------
def _statement(exercise) -> str:
    """The exercise's instructions: its first cell, a Markdown comment block."""
    lines = exercise.template_path.read_text(encoding="utf-8").splitlines()
    end = next(i for i, line in enumerate(lines) if i > 0 and line.startswith("# %%"))
    return "\n".join(lines[1:end])


def _code(exercise) -> str:
    return "\n".join(line.split("#")[0] for line in exercise.solution_path.read_text(encoding="utf-8").splitlines())


def test_one_rule_for_masked_scores(course):
    """Stated once in 03, referred to where students mask (08, 10) or are asked about it (12), and no
    solution masks with a big finite number."""
    rule = _statement(course.exercise("03_masque"))
    assert "La règle, pour tout le cours" in rule and "-1e9" in rule and "moins l'infini" in rule
    for exercise_id in ("08_masque_causal", "10_tete", "12_autotest"):
        assert "la règle de l'exercice 3" in _statement(course.exercise(exercise_id)).lower(), exercise_id
    for exercise in course.exercises:
        assert not re.search(r"-\s*1e\d|-\s*10{3,}\b", _code(exercise)), exercise.id


def test_stability_is_announced_where_it_is_given_and_graded_where_it_is_asked(course):
    for exercise_id in ("07_requete_cle", "10_tete"):
        assert "exercice 13" in _statement(course.exercise(exercise_id))
    # 13 asks for it, and its public checks show large scores whose maximum is not the first.
    expressions = [x.expr for c in load_checks(course.exercise("13_a_la_main").checks_path) for x in c.expects]
    assert "softmax([0.0, 1000.0, 999.0])" in expressions
    # 07's grader has no large-score check the student never saw.
    hidden = [x.expr for c in load_checks(course.exercise("07_requete_cle").grader_path) for x in c.expects]
    assert not any("1000" in expr for expr in hidden)


def test_hints_point_at_what_the_student_edition_contains(course, edition_template):
    """A hint that says « Relis … » names a title or a phrase that a file of the student edition holds."""
    texts = "\n".join(p.read_text(encoding="utf-8") for p in (edition_template / "exercises").glob("*.py"))
    pointed = 0
    for exercise in course.exercises:
        for blank in exercise.blanks:
            for hint in blank.hints:
                if "Relis" not in hint:
                    continue
                for quoted in re.findall(r"« ([^«»]+) »", hint):
                    pointed += 1
                    assert quoted in texts, (exercise.id, blank.id, quoted)
    assert pointed >= 5


# Blanks with no variant of the program's inputs: the check gives the inputs in its own expression.
NO_VARIANT = {
    # Functions called by the checks with other arguments, shown in the expression.
    ("11_cout", "duree"), ("11_cout", "rapport"), ("11_cout", "pente"), ("12_autotest", "echelle"),
    # Answers to questions: no input to vary.
    ("12_autotest", "reponse_1"), ("12_autotest", "score_futur"), ("12_autotest", "reponse_2"),
    ("12_autotest", "reponse_3"),
}


def test_every_computed_blank_has_a_shown_variant(course):
    missing = []
    for exercise in course.exercises:
        checks = load_checks(exercise.checks_path)
        for blank in exercise.blanks:
            shown = any(x.variant is not None and not x.variant.hidden
                        for c in checks if c.blank == blank.id for x in c.expects)
            if not shown and (exercise.id, blank.id) not in NO_VARIANT:
                missing.append(f"{exercise.id}/{blank.id}")
    assert not missing, missing


def test_hidden_variants_are_not_the_shown_ones(course):
    for exercise in course.exercises:
        shown = {x.variant.overrides for c in load_checks(exercise.checks_path) for x in c.expects if x.variant}
        hidden = {x.variant.overrides for c in load_checks(exercise.grader_path) for x in c.expects if x.variant}
        assert not shown & hidden, exercise.id
        assert all(x.variant.hidden for c in load_checks(exercise.grader_path) for x in c.expects if x.variant)


def test_a_check_of_an_unknown_blank_costs_only_its_own_item(course, student_copy):
    """An author's public check naming a blank course.yaml lacks is said as such; the exercise's other
    blanks are still checked (before, each of them failed with a raw ValueError)."""
    exercise = course.exercise("01_toux")
    copy_solution = (course.root / "solutions" / exercise.path.name).read_text(encoding="utf-8")
    (student_copy / "exercises" / exercise.path.name).write_text(copy_solution, encoding="utf-8")
    checks = student_copy / "exercises" / exercise.checks_path.name
    checks.write_text(checks.read_text(encoding="utf-8") + '\ninconnu = blank("inconnu", expect("poids", [1.0]))\n',
                      encoding="utf-8")
    result = run_pytest(student_copy, "-v", f"exercises/{exercise.path.name}")
    assert "le trou « inconnu » n'existe pas dans course.yaml" in result.stdout, result.stdout[-3000:]
    assert "ValueError" not in result.stdout and "Traceback" not in result.stdout, result.stdout[-3000:]
    assert "3/3 trous justes" in result.stdout, result.stdout[-3000:]
    assert result.returncode != 0  # the course itself is at fault: not a clean pass
