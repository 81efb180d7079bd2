"""The `course.yaml` reference (docs/course-yaml.md) says what the schema checks, and cannot drift.

The page is written from core/schema.py by `python -m trous.author.reference`; these tests fail when
the committed page differs from what the schema gives now, when a field of the schema is missing from
its table, and when the page's minimal example is not a valid course (or speaks of the repository's).
"""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT

from trous.core import CourseError, schema

PAGE = ROOT / "docs" / "course-yaml.md"


def test_the_committed_page_is_what_the_schema_gives():
    done = subprocess.run([sys.executable, "-m", "trous.author.reference", "--check", str(PAGE)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_fails_on_a_stale_page(tmp_path):
    stale = tmp_path / "course-yaml.md"
    stale.write_text(PAGE.read_text(encoding="utf-8").replace("| `points` |", "| `point` |"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "trous.author.reference", "--check", str(stale)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "python -m trous.author.reference" in done.stdout


def _tables(text: str) -> dict[str, set[str]]:
    """Section title → the field names of its table (first column)."""
    tables, current = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            current = line[4:].strip().strip("`")
            tables[current] = set()
        elif current is not None and line.startswith("| `"):
            tables[current].add(line.split("`")[1])
    return tables


def test_every_field_of_every_block_is_in_its_table():
    tables = _tables(PAGE.read_text(encoding="utf-8"))
    where = {"Le fichier": schema.CourseSchema, "course": schema.CourseInfoSchema, "limits": schema.LimitsSchema,
             "explorer": schema.ExplorerSchema, "assignments[]": schema.AssignmentSchema,
             "assignments[].exercises[]": schema.ExerciseSchema,
             "assignments[].exercises[].blanks[]": schema.BlankSchema}
    assert set(tables) == set(where)
    for title, model in where.items():
        assert tables[title] == set(model.model_fields), title


def test_the_page_says_the_defaults_an_author_relies_on():
    text = PAGE.read_text(encoding="utf-8")
    rows = {(m.group(1), m.group(2)): m.group(0) for m in re.finditer(r"\| `(\w+)` \| ([^|]+) \|.*", text)}
    points = next(row for (name, _), row in rows.items() if name == "points")
    assert "| non | `1` |" in points  # points default to 1
    hint = next(row for (name, _), row in rows.items() if name == "hint")
    assert "| oui | — |" in hint  # a hint is required
    timeout = next(row for (name, _), row in rows.items() if name == "timeout")
    assert "| non | `8` |" in timeout


def test_the_minimal_example_is_a_valid_course_of_no_particular_subject():
    text = PAGE.read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    course = schema.validate(example, "exemple")
    assert course["assignments"][0]["exercises"][0]["blanks"][0]["points"] == 1.0  # left to its default
    assert not re.search(r"(?i)toux|softmax|attention|partie5", example)
    try:
        schema.validate(example.replace("hint:", "indice:", 1), "exemple")
    except CourseError as exc:
        assert "indice" in str(exc)
    else:
        raise AssertionError("a misspelt key must be refused")
