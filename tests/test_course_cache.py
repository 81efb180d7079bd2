"""Reading course.yaml fast without reading it differently.

The course's records are plain dataclasses built from what pydantic validated (schema.py); a student
edition keeps that validation in `.trous/cours-valide.json` (course.py), used only for the very same
text validated by the very same code. These tests check that the records say what the schema says,
that the cache is used (a run then imports neither pydantic nor YAML), and that it is never trusted
beyond its text and its fingerprint.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from trous.core import Course, CourseError, course as definition, parse, schema

PAIRS = [(definition.CourseSpec, schema.CourseSchema), (definition.CourseInfo, schema.CourseInfoSchema),
         (definition.LimitsSpec, schema.LimitsSchema), (definition.AssignmentSpec, schema.AssignmentSchema),
         (definition.ExerciseSpec, schema.ExerciseSchema), (definition.BlankSpec, schema.BlankSchema),
         (definition.ExplorerSpec, schema.ExplorerSchema)]


@pytest.mark.parametrize("record, model", PAIRS, ids=[r.__name__ for r, _ in PAIRS])
def test_each_record_has_its_schema_fields_in_order(record, model):
    assert [f.name for f in dataclasses.fields(record)] == list(model.model_fields)


def test_records_dump_as_the_schema_does():
    # nbgrader's bundle writes these dumps into notebooks: same keys, same order, same values.
    text = (ROOT / "course.yaml").read_text(encoding="utf-8")
    data, _ = schema.load(text, "course.yaml")
    validated = schema.CourseSchema.model_validate(data)
    spec = parse(text)
    for mode in ("python", "json"):
        for exclude_none in (False, True):
            ours = spec.model_dump(mode=mode, exclude_none=exclude_none)
            theirs = validated.model_dump(mode=mode, exclude_none=exclude_none)
            assert ours == theirs
            assert json.dumps(ours) == json.dumps(theirs)  # key order included
    assert spec.assignments[0].exercises[0].blanks[0].hints


def test_libyaml_and_pure_python_read_the_same(tmp_path):
    for text in ((ROOT / "course.yaml").read_text(encoding="utf-8"), "a: 1\nb: [x, {c: 2}]\n"):
        assert schema.load(text, "course.yaml") == schema.load(text, "course.yaml", (schema._Loader,))


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


PROBE = """
import json, sys
from trous.core import Course
course = Course.load(".")
print(json.dumps({"pydantic": "pydantic" in sys.modules, "yaml": "yaml" in sys.modules,
                  "course": course.spec.model_dump()}))
"""


def test_an_edition_is_shipped_validated(student_copy):
    # trous edition loads what it wrote (edition.py): the student's first run needs no pydantic.
    first = _run(PROBE, student_copy)
    assert first.returncode == 0, first.stderr
    assert not json.loads(first.stdout)["pydantic"] and not json.loads(first.stdout)["yaml"]


def test_an_edition_validated_once_is_read_without_pydantic_or_yaml(student_copy):
    (student_copy / definition.CACHE).unlink(missing_ok=True)  # the edition ships one: start without it
    first = _run(PROBE, student_copy)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["pydantic"]  # nothing cached yet: validated
    assert (student_copy / definition.CACHE).is_file()
    second = _run(PROBE, student_copy)
    assert second.returncode == 0, second.stderr
    seen = json.loads(second.stdout)
    assert not seen["pydantic"] and not seen["yaml"]
    assert seen["course"] == json.loads(first.stdout)["course"]
    assert seen["course"] == parse((student_copy / "course.yaml").read_text(encoding="utf-8")).model_dump()


def test_a_changed_course_yaml_is_validated_again(student_copy):
    Course.load(student_copy)
    path = student_copy / "course.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("points: 1", "points: beaucoup", 1), encoding="utf-8")
    with pytest.raises(CourseError) as info:
        Course.load(student_copy)
    with pytest.raises(CourseError) as direct:
        parse(path.read_text(encoding="utf-8"), str(path))
    assert (info.value.line, info.value.message) == (direct.value.line, direct.value.message)
    assert "nombre" in info.value.message
    title = Course.load(ROOT).title
    path.write_text(text.replace(title, "Un autre titre", 1), encoding="utf-8")
    assert Course.load(student_copy).title == "Un autre titre"


def _forged(student_copy: Path, **changes) -> None:
    """The cache as written, with some of its fields replaced (the course's title always)."""
    Course.load(student_copy)
    stored = json.loads((student_copy / definition.CACHE).read_text(encoding="utf-8"))
    stored["course"]["course"]["title"] = "titre venu du cache"
    stored.update(changes)
    (student_copy / definition.CACHE).write_text(json.dumps(stored), encoding="utf-8")


def test_the_cache_is_what_is_read(student_copy):
    # The forgery below is only meaningful if an untouched one is read: this shows it is.
    _forged(student_copy)
    assert Course.load(student_copy).title == "titre venu du cache"


@pytest.mark.parametrize("changes", [{"by": "trous 0.0.0 00000000 pydantic 1.0"}, {"format": 0},
                                     {"source": "course:\n  id: autre\n"}],
                         ids=["other code", "other format", "other text"])
def test_a_cache_from_other_code_or_text_is_not_trusted(student_copy, changes):
    _forged(student_copy, **changes)
    course = Course.load(student_copy)
    assert course.title == Course.load(ROOT).title
    assert json.loads((student_copy / definition.CACHE).read_text(encoding="utf-8"))["course"]["course"]["title"] \
        == course.title  # written again, from the validation


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"format": 1, "by": null}', "\udcff"])
def test_a_damaged_cache_is_ignored(student_copy, damage):
    Course.load(student_copy)
    (student_copy / definition.CACHE).write_text(damage, encoding="utf-8", errors="surrogateescape")
    # As validated from the edition's own text (its course.yaml holds back the answers' hints).
    assert Course.load(student_copy).spec.model_dump() == parse(
        (student_copy / "course.yaml").read_text(encoding="utf-8")).model_dump()


def test_no_cache_where_there_is_no_trous_folder(tmp_path):
    (tmp_path / "course.yaml").write_bytes((ROOT / "course.yaml").read_bytes())
    Course.load(tmp_path)
    assert not (tmp_path / ".trous").exists()
