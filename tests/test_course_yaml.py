"""course.yaml validation: every error names the file, the line, and what to write instead."""

import textwrap

import pytest

from trous.core import Course, CourseError, parse

VALID = textwrap.dedent("""\
    course:
      id: attention
      title: "Le cours"
      language: fr
    assignments:
      - id: partie5
        title: "Partie 5"
        source: seeds/003.txt
        exercises:
          - id: 01_toux
            title: "Toux"
            file: exercises/01_toux.py
            source: "003 — toux"
            blanks:
              - id: somme_exp
                points: 1
                hint: "Additionne."
              - id: scores
                points: 2
                hint: ["Un produit scalaire.", "sum(a * b for a, b in zip(t, toux))"]
    """)


def error_for(text):
    with pytest.raises(CourseError) as info:
        parse(text, "course.yaml")
    return info.value


def line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_valid_course_parses():
    spec = parse(VALID)
    blanks = spec.assignments[0].exercises[0].blanks
    assert [b.id for b in blanks] == ["somme_exp", "scores"]
    assert blanks[1].hints == ["Un produit scalaire.", "sum(a * b for a, b in zip(t, toux))"]


def test_unknown_key_names_its_line_and_suggests_the_right_one():
    text = VALID.replace('    title: "Partie 5"', '    titel: "Partie 5"')
    error = error_for(text)
    assert error.line == line_of(text, "titel")
    assert "titel" in error.message and "title" in error.message
    assert "course.yaml:" in str(error)


def test_wrong_type_names_the_line_and_gives_an_example():
    text = VALID.replace("points: 2", "points: beaucoup")
    error = error_for(text)
    assert error.line == line_of(text, "beaucoup")
    assert "nombre" in error.message
    assert error.example and "points: 1" in error.example


def test_missing_hint_is_reported_at_its_blank():
    text = VALID.replace('            hint: "Additionne."\n', "")
    error = error_for(text)
    assert "hint" in error.message
    assert error.line == line_of(text, "id: somme_exp")


def test_file_must_follow_the_exercise_id():
    text = VALID.replace("file: exercises/01_toux.py", "file: exercices/toux.py")
    error = error_for(text)
    assert "exercises/01_toux.py" in error.message


def test_duplicate_blank_ids_are_refused():
    text = VALID.replace("id: scores", "id: somme_exp")
    assert "somme_exp" in error_for(text).message


def test_duplicate_yaml_keys_are_refused_with_both_lines():
    text = VALID.replace('  language: fr\n', '  language: fr\n  title: "Encore"\n')
    error = error_for(text)
    assert "deux fois" in error.message
    assert error.line == line_of(text, 'title: "Encore"')


def test_yaml_syntax_error_has_a_line_and_french_words():
    text = VALID.replace('title: "Toux"', 'title: "Toux')
    error = error_for(text)
    assert error.line is not None and "YAML" in error.message


def test_tabs_get_a_french_explanation():
    text = VALID.replace("  id: attention", "\tid: attention")
    error = error_for(text)
    assert "tabulation" in error.message or "YAML" in error.message
    assert error.line == 2


def test_empty_file_is_an_error():
    assert error_for("").message


def test_the_repository_course_is_valid_and_finds_its_files(tmp_path):
    from pathlib import Path

    course = Course.find(Path(__file__).parent)
    assert course.id == "attention"
    first = course.exercises[0]
    assert first.path.name == "01_toux.py" and first.path.exists()
    assert course.exercise("toux") is first and course.exercise("1") is first
    with pytest.raises(KeyError):
        course.exercise("n'existe-pas")


# -- a new author's mistakes, all named in one run ------------------------------------------------
NEW_AUTHOR = textwrap.dedent("""\
    course:
      id: python-debutant
      title: "Python"
    assignments:
      - id: chapitre1
        title: "Chapitre 1"
        source: "Chapitre 1"
        exercises:
          - id: 01_moyenne
            title: "La moyenne"
            file: exercises/01_moyenne.py
            blanks:
              - id: Z
                hint: "Additionne."
              - id: total
                points: beaucoup
                hint: 3
          - id: 02_ecart
            titel: "L'écart"
            file: exercises/02_ecart.py
            blanks:
              - id: ecart
          - id: 03_max
            title: "Le maximum"
            file: exercises/03_max.py
            source: "Chapitre 1"
            timout: 5
            blanks:
              - id: plus_haut
                hint: "max"
    """)


def test_every_independent_mistake_is_named_in_one_run():
    error = error_for(NEW_AUTHOR)
    said = {(e.line, e.message) for e in error.errors}
    line = lambda needle, nth=1: [i for i, ln in enumerate(NEW_AUTHOR.splitlines(), 1) if needle in ln][nth - 1]  # noqa: E731
    wanted = {
        (line("id: 01_moyenne"), "source"),  # missing source, at its exercise
        (line("id: Z"), "minuscules"),
        (line("points: beaucoup"), "nombre"),
        (line("hint: 3"), "liste de textes"),
        (line("id: 02_ecart"), "source"),  # the same mistake in another exercise is named again
        (line("titel:"), "titel"),
        (line("id: ecart"), "hint"),
        (line("timout:"), "timeout"),
    }
    for at, word in wanted:
        assert any(ln == at and word in message for ln, message in said), (at, word, sorted(said))
    assert len(error.errors) == len(wanted), sorted(said)  # « title » is not also said missing: the typo is
    text = str(error)
    assert "exercises[02_ecart].titel" in text and "blanks[total].points" in text  # which exercise, which blank
    assert text.startswith(f"{len(wanted)} erreurs dans course.yaml")
    assert all(f"course.yaml:{at} :" in text for at, _ in wanted)


def test_an_uppercase_blank_id_is_told_to_be_lowercase():
    text = VALID.replace("id: scores", "id: Scores_2")
    error = error_for(text)
    assert error.line == line_of(text, "id: Scores_2")
    assert "minuscules" in error.message and "« scores_2 »" in error.message
    assert error.example == "id: scores_2"
    other = error_for(VALID.replace("id: scores", "id: 2scores"))
    assert "commence par une minuscule" in other.message and "minuscules ; écris" not in other.message


def test_the_cli_names_every_mistake(tmp_path):
    import subprocess
    import sys

    (tmp_path / "course.yaml").write_text(NEW_AUTHOR, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "trous", "-C", str(tmp_path), "doctor"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.count("course.yaml:") == 8, done.stderr
    assert "Traceback" not in done.stderr


def test_a_number_in_quotes_is_refused_and_said_why():
    text = VALID.replace("points: 2", 'points: "2"')
    error = error_for(text)
    assert error.line == line_of(text, 'points: "2"')
    assert "guillemets" in error.message and error.example == "points: 2"
    assert parse(VALID.replace("points: 2", "points: 2.5")).assignments[0].exercises[0].blanks[1].points == 2.5


def test_a_wrong_file_is_named_with_another_mistake_of_the_same_exercise():
    text = VALID.replace("file: exercises/01_toux.py", "file: exercices/toux.py").replace('        source: "003 — toux"\n', "")
    messages = [e.message for e in error_for(text).errors]
    assert any("exercises/01_toux.py" in m for m in messages) and any("source" in m for m in messages), messages
