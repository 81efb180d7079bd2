"""Intake: folders of students and Moodle archives become submissions, safely, and every copy and
every file is accounted for (graded, or named with why)."""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from trous.core import Course
from trous.core.submission import Submission
from trous.inputs import filenames, intake, kinds
from trous.inputs.intake import IntakeError, IntakeLimits

from grading_support import mini_course, snapshot, zip_of

EX1, EX2 = "01_toux", "02_places"
A = b"# copie A\nx = 1\n"
B = b"# copie B\nx = 2\n"
OLD, NEW = 1_700_000_000, 1_700_003_600  # an hour apart


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    return Course.load(mini_course(tmp_path_factory.mktemp("cours"), (EX1, EX2)))


def write(path: Path, data: bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def by_student(result: intake.Intake) -> dict:
    return {s.student: s for s in result.submissions}


def said(submission) -> list[str]:
    """Everything a submission tells about itself: its notes, and each file not graded with why."""
    return list(submission.warnings) + [f"{i.path} : {i.reason}" for i in submission.ignored]


def why(submission, path: str) -> str:
    found = [i.reason for i in submission.ignored if i.path == path]
    assert found, (path, said(submission))
    return found[0]


def listed(result: intake.Intake) -> dict[str, str]:
    return {i.path: i.reason for i in result.ignored}


def zip_dated(files: dict[str, tuple[bytes, tuple]]) -> bytes:
    """A zip whose entries carry the given dates (Moodle keeps each file's date in its archive)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (data, date) in files.items():
            info = zipfile.ZipInfo(name, date_time=date)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


# -- folders --------------------------------------------------------------------------------------
def test_folder_layouts(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A)  # a git clone
    write(root / "alice" / ".git" / f"{EX2}.py", B)  # version control data is not the copy
    write(root / "bob" / f"{EX2}.py", B)  # an unpacked archive: files at the top
    write(root / "carole" / "projet-main" / "exercises" / f"{EX1}.py", A)  # a zip of the repository, unpacked
    write(root / "notes.txt", b"liste")
    result = kinds.load(root, course)
    assert result.kind == "dossier"
    students = by_student(result)
    assert sorted(students) == ["alice", "bob", "carole"]
    assert students["alice"].files == {EX1: A, EX2: None}
    assert students["bob"].files == {EX1: None, EX2: B}
    assert students["carole"].files[EX1] == A
    assert "pas une copie" in listed(result)["notes.txt"]
    assert "gestion de versions" in why(students["alice"], ".git/")
    assert students["alice"].origins == {EX1: f"exercises/{EX1}.py"}


def test_duplicates_at_the_same_date_prefer_the_exercises_folder_and_are_named(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", B, OLD)
    write(root / "alice" / "exercises" / f"{EX1}.py", A, OLD)
    write(root / "alice" / "vieux" / "exercises" / "brouillon.py", b"", OLD)
    write(root / "bob" / f"{EX1.upper()}.PY", A)  # another case: taken, and said
    students = by_student(kinds.load(root, course))
    alice, bob = students["alice"], students["bob"]
    assert alice.files[EX1] == A
    assert why(alice, f"{EX1}.py") == f"même date que exercises/{EX1}.py, corrigé à sa place (dans exercises/)"
    assert [i.exercise for i in alice.ignored if i.path == f"{EX1}.py"] == [EX1]
    assert "pas un exercice du cours" in why(alice, "vieux/exercises/brouillon.py")
    assert bob.files[EX1] == A
    assert any("majuscules différentes" in w and f"{EX1.upper()}.PY" in w for w in bob.warnings)
    assert bob.origins[EX1] == f"{EX1.upper()}.PY"


def test_symlinks_are_never_followed(course, tmp_path):
    outside = write(tmp_path / "ailleurs" / "exercises" / f"{EX2}.py", B)
    root = tmp_path / "copies"
    (root / "eve" / "exercises").mkdir(parents=True)
    os.symlink("/etc/passwd", root / "eve" / "exercises" / f"{EX1}.py")
    os.symlink(outside.parent.parent, root / "eve" / "lien")  # a linked folder holding an exercise
    os.symlink(outside.parent.parent, root / "mallory")  # a whole student that is a link
    write(root / "bob" / f"{EX1}.py", A)
    result = kinds.load(root, course)
    students = by_student(result)
    assert "mallory" not in students and "lien symbolique" in listed(result)["mallory"]
    eve = students["eve"]
    assert eve.files == {EX1: None, EX2: None}
    link = [i for i in eve.ignored if i.path == f"exercises/{EX1}.py"]
    assert link and "/etc/passwd" in link[0].reason and "jamais suivi" in link[0].reason
    assert link[0].exercise == EX1  # shown under its exercise in the page
    assert "jamais suivi" in why(eve, "lien")
    assert students["bob"].files[EX1] == A


def test_a_component_swapped_for_a_link_after_listing_is_not_followed(course, tmp_path):
    # Reading reopens each folder with O_NOFOLLOW: a folder replaced by a link between the listing and
    # the read (a race) is refused, not followed.
    root = tmp_path / "copies"
    write(root / "eve" / "exercises" / f"{EX1}.py", A)
    ledger = intake.Ledger(IntakeLimits())
    entries = intake.walk(root / "eve", IntakeLimits(), ledger, intake.Sorter(course))
    [entry] = [e for e in entries if e.parts[-1] == f"{EX1}.py"]
    (root / "eve" / "exercises").rename(root / "eve" / "vrai")
    write(tmp_path / "secret" / f"{EX1}.py", b"SECRET")
    os.symlink(tmp_path / "secret", root / "eve" / "exercises")
    with pytest.raises(OSError):
        entry.read(100)


def test_special_files_do_not_block(course, tmp_path):
    root = tmp_path / "copies"
    (root / "eve" / "exercises").mkdir(parents=True)
    os.mkfifo(root / "eve" / "exercises" / f"{EX1}.py")  # opening it for reading would wait forever
    [eve] = kinds.load(root, course).submissions
    assert eve.files[EX1] is None
    assert "pas un fichier ordinaire" in why(eve, f"exercises/{EX1}.py")


def test_files_are_left_untouched(course, tmp_path):
    root = tmp_path / "copies"
    path = write(root / "alice" / "exercises" / f"{EX1}.py", A)
    os.chmod(path, 0o444)
    write(root / "bob.zip", zip_of({f"bob/exercises/{EX1}.py": B}))
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = snapshot(root)
    atime = path.stat().st_atime_ns
    students = by_student(kinds.load(root, course))
    assert students["alice"].files[EX1] == A and students["bob"].files[EX1] == B
    assert snapshot(root) == before
    if os.geteuid() == 0 or path.stat().st_uid == os.getuid():  # O_NOATIME is allowed to the owner
        assert path.stat().st_atime_ns == atime


def test_file_size_is_bounded(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", b"#" * 5000)
    limits = IntakeLimits(file_bytes=1000)
    [alice] = kinds.load(root, course, limits=limits).submissions
    # One byte more than the limit is read, so that the engine can say « trop gros », never the rest.
    assert alice.files[EX1] == b"#" * 1001


def test_student_archive_in_the_folder(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "rose.zip", zip_of({f"rose/exercises/{EX1}.py": A, f"rose/{EX2}.py": B}))
    write(root / "paul" / "rendu.zip", zip_of({f"exercises/{EX1}.py": B}))
    students = by_student(kinds.load(root, course))
    assert students["rose"].files == {EX1: A, EX2: B}
    assert students["paul"].files == {EX1: B, EX2: None}
    assert students["paul"].origins == {EX1: f"rendu.zip/exercises/{EX1}.py"}


def test_a_tool_folder_in_a_students_archive_is_named_once(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "eve.zip", zip_of({f"exercises/{EX1}.py": A, ".git/HEAD": b"ref", ".git/objects/ab/cd": b"x",
                                    "src/__pycache__/a.pyc": b"", "src/__pycache__/b.pyc": b""}))
    [eve] = kinds.load(root, course).submissions
    assert [i.path for i in eve.ignored] == [".git/", "src/__pycache__/"]
    assert not eve.unlisted


def test_macos_metadata_in_the_class_folder_is_not_a_copy(course, tmp_path):
    """A zip made on a Mac and unpacked leaves « ._rendu.zip » (AppleDouble) and __MACOSX/ beside the
    copies: metadata, listed as such, never a student « ._rendu »."""
    root = tmp_path / "copies"
    write(root / "rendu.zip", zip_of({f"exercises/{EX1}.py": A}))
    write(root / "._rendu.zip", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    write(root / "__MACOSX" / "._rendu.zip", b"")
    result = kinds.load(root, course)
    assert sorted(by_student(result)) == ["rendu"]
    assert listed(result) == {"._rendu.zip": intake.RESOURCE_FORK, "__MACOSX/": intake.SKIPPED_DIRS["__MACOSX"]}


def test_empty_or_missing_input_is_refused_in_french(course, tmp_path):
    with pytest.raises(IntakeError, match="introuvable"):
        kinds.load(tmp_path / "rien", course)
    # No copy at all: one check, the same words for every kind (nbgrader's only warned, before).
    write(tmp_path / "vide" / "LISEZMOI.txt", b"")
    write(tmp_path / "vide.zip", zip_of({"LISEZMOI.txt": b""}))
    write(tmp_path / "cours-nbgrader" / "nbgrader_config.py", b"")
    write(tmp_path / "cours-nbgrader" / "submitted" / "LISEZMOI.txt", b"")
    for empty in ("vide", "vide.zip", "cours-nbgrader"):
        with pytest.raises(IntakeError, match=r" : aucune copie d'étudiant \(attendu : ") as refused:
            kinds.load(tmp_path / empty, course)
        assert "LISEZMOI.txt : " in str(refused.value)  # what was there instead, with why
    write(tmp_path / "faux.zip", b"pas une archive")
    with pytest.raises(IntakeError, match="illisible"):
        kinds.load(tmp_path / "faux.zip", course)


# -- every folder is a copy or is listed with why --------------------------------------------------
def test_a_students_own_results_files_do_not_drop_the_copy(course, tmp_path):
    # A student who keeps a grades.csv (or a whole `trous grade` output of their own) is still graded.
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A)
    write(root / "alice" / "grades.csv", b"etudiant,total\nalice,46\n")
    write(root / "alice" / "gradebook.db", b"")
    write(root / "bob" / f"{EX1}.py", B)
    students = by_student(kinds.load(root, course))
    assert sorted(students) == ["alice", "bob"]
    assert students["alice"].files[EX1] == A
    assert any("ressemble à des résultats" in w and "grades.csv" in w for w in students["alice"].warnings)


def test_folders_starting_with_a_dot_are_graded(course, tmp_path):
    root = tmp_path / "copies"
    write(root / ".eve" / "exercises" / f"{EX1}.py", A)
    write(root / "bob" / f"{EX1}.py", B)
    write(root / ".git" / "HEAD", b"ref: refs/heads/main\n")  # the teacher's repository: listed, not a copy
    write(root / ".DS_Store", b"\x00")
    result = kinds.load(root, course)
    students = by_student(result)
    assert sorted(students) == [".eve", "bob"] and students[".eve"].files[EX1] == A
    assert "gestion de versions" in listed(result)[".git/"]
    assert "pas une copie" in listed(result)[".DS_Store"]


def test_trous_results_folder_is_recognised_by_its_mark_only(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", A)
    results = root / "resultats"
    write(results / "grades.csv", b"etudiant\n")
    intake.stamp(results)
    # A student who copies the mark into their folder (or ran trous at home): the mark names another folder.
    write(root / "mallory" / f"{EX1}.py", B)
    shutil.copy(results / intake.MARK, root / "mallory" / intake.MARK)
    write(root / "mallory" / "grades.csv", b"")
    result = kinds.load(root, course)
    students = by_student(result)
    assert sorted(students) == ["alice", "mallory"]
    assert "marque" in listed(result)["resultats/"]
    assert students["mallory"].files[EX1] == B
    assert any("désigne un autre dossier" in w for w in students["mallory"].warnings)
    # Moved within its file system, the folder keeps its identity and its mark holds.
    results.rename(root / "anciens-resultats")
    assert sorted(by_student(kinds.load(root, course))) == ["alice", "mallory"]


def test_this_runs_results_folder_is_listed_even_without_a_mark(course, tmp_path):
    # Results written by an older trous (no mark yet), kept among the copies: not a student.
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", A)
    write(root / "res" / "gradebook.db", b"")
    result = kinds.load(root, course, results=root / "res")
    assert [s.student for s in result.submissions] == ["alice"]
    assert listed(result) == {"res/": intake.OUR_RESULTS}


def test_a_class_of_51_folders_gives_51_copies(course, tmp_path):
    # Whatever the folders hold, each one is graded: 51 folders, 51 copies, nothing dropped.
    root = tmp_path / "copies"
    for i in range(51):
        folder = root / (f".cache{i}" if i % 10 == 0 else f"eleve{i:02d}")
        write(folder / f"{EX1}.py", A)
        if i % 7 == 0:
            write(folder / "grades.csv", b"")
        if i % 5 == 0:
            write(folder / "results.schema.json", b"{}")
    result = kinds.load(root, course)
    assert len(result.submissions) == 51 and result.ignored == []
    assert all(s.files[EX1] == A for s in result.submissions)


# -- the exercises are found first -----------------------------------------------------------------
def ignored_total(submission) -> int:
    """Every file of the copy not graded: named, or only counted."""
    return len(submission.ignored) + sum(n for _, n in submission.unlisted)


def test_21000_files_in_a_copy_still_find_the_exercises(course, tmp_path):
    root = tmp_path / "copies"
    junk = root / "alice" / "donnees"
    junk.mkdir(parents=True)
    for i in range(21_000):
        (junk / f"f{i:05d}.txt").touch()
    write(root / "alice" / "zzz" / "exercises" / f"{EX1}.py", A)  # walked after the junk alphabetically
    limits = IntakeLimits()
    [alice] = kinds.load(root, course, limits=limits).submissions
    assert alice.files[EX1] == A
    named = [i for i in alice.ignored if i.reason == intake.NOT_EXERCISE]
    assert len(named) == limits.listed  # the bound limits what is named…
    assert dict(alice.unlisted)[intake.NOT_EXERCISE] == 21_000 - limits.listed  # …and everything is counted
    assert ignored_total(alice) == 21_000


def test_21000_entries_in_a_students_zip_inside_moodles_still_find_the_exercises(course, tmp_path):
    inner = {f"donnees/m{i:05d}.csv": b"" for i in range(21_000)}
    inner.update({f"venv/lib/m{i}.py": b"" for i in range(500)})  # a whole folder skipped: named once
    inner[f"tp/exercises/{EX1}.py"] = A
    data = zip_of({"Alice Martin_101_assignsubmission_file_/rendu.zip": zip_of(inner)})
    [alice] = kinds.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert alice.files[EX1] == A
    assert ignored_total(alice) == 21_000 + 1
    assert [i.path for i in alice.ignored if i.path.endswith("/")] == ["rendu.zip/venv/"]


def test_exercises_folders_are_walked_first_when_the_ceiling_is_reached(course, tmp_path):
    root = tmp_path / "copies"
    for i in range(300):
        write(root / "alice" / "aaa" / f"f{i}.txt", b"")
    write(root / "alice" / "exercises" / f"{EX1}.py", A)
    [alice] = kinds.load(root, course, limits=IntakeLimits(scan=150)).submissions
    assert alice.files[EX1] == A
    assert any("plus de 150 entrées" in w and "exploration arrêtée" in w for w in alice.warnings)


def test_an_archive_directory_beyond_the_ceiling_is_refused_before_it_is_read(course, tmp_path):
    inner = zip_of({f"f{i}.txt": b"" for i in range(60)})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": inner,
                   f"Bob_102_assignsubmission_file_/{EX1}.py": A})
    result = kinds.load(write(tmp_path / "moodle.zip", data), course, limits=IntakeLimits(scan=50))
    alice, bob = result.submissions
    assert "archive refusée : 60 entrées" in why(alice, "rendu.zip")
    assert bob.files[EX1] == A
    with pytest.raises(IntakeError, match="entrées"):  # the whole input, when it is the one too big
        kinds.load(write(tmp_path / "gros.zip", inner), course, limits=IntakeLimits(scan=50))


# -- files as students upload them -----------------------------------------------------------------
@pytest.mark.parametrize("name", [
    f"{EX1} (1).py", f"{EX1}(1).py", f"{EX1}-1.py", f"{EX1} 2.py", f"{EX1} copie.py", f"{EX1} - Copie.py",
    f"{EX1} - Copie (2).py", f"{EX1} (copie).py", f"{EX1} (autre copie).py", f"Copie de {EX1}.py",
    f"{EX1} (conflicted copy 2026-01-02).py", f"{EX1}.py.txt", "01_Toux.py", "01_TOUX (3).PY",
])
def test_renamed_copies_and_case_variants_are_recognised(course, tmp_path, name):
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / name, A)
    [alice] = kinds.load(root, course).submissions
    assert alice.files[EX1] == A
    assert alice.origins[EX1] == f"exercises/{name}"
    assert any(f"exercises/{name} corrigé comme {EX1}.py" in w for w in alice.warnings), alice.warnings


@pytest.mark.parametrize("name", [f"{EX1}_final.py", f"{EX1}-ancien.py", f"toux.py", f"{EX1}.pyc", f"{EX1}"])
def test_other_names_are_not_guessed_and_are_named(course, tmp_path, name):
    root = tmp_path / "copies"
    write(root / "alice" / name, A)
    [alice] = kinds.load(root, course).submissions
    assert alice.files[EX1] is None
    reason = why(alice, name)
    if name.endswith(".py") and name.startswith(EX1):
        assert reason.startswith(f"nom proche de {EX1}.py")
    else:
        assert "pas un exercice" in reason


def test_the_newest_file_wins_in_a_folder(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A, OLD)
    write(root / "alice" / "exercises" / f"{EX1} (1).py", B, NEW)  # downloaded again, fixed
    write(root / "bob" / "exercises" / f"{EX1}.py", A, NEW)
    write(root / "bob" / "exercises" / f"{EX1} (1).py", B, OLD)  # an old download lying around
    students = by_student(kinds.load(root, course))
    alice, bob = students["alice"], students["bob"]
    assert alice.files[EX1] == B and alice.origins[EX1] == f"exercises/{EX1} (1).py"
    assert why(alice, f"exercises/{EX1}.py").startswith(f"version plus ancienne : exercises/{EX1} (1).py")
    assert bob.files[EX1] == A and bob.origins[EX1] == f"exercises/{EX1}.py"
    assert why(bob, f"exercises/{EX1} (1).py").startswith(f"version plus ancienne : exercises/{EX1}.py")


def test_the_newest_entry_wins_in_a_moodle_zip_by_entry_date(course, tmp_path):
    early, late = (2026, 3, 1, 9, 0, 0), (2026, 3, 2, 18, 30, 0)
    data = zip_dated({
        f"Alice Martin_101_assignsubmission_file_/{EX1}.py": (A, early),
        f"Alice Martin_101_assignsubmission_file_/{EX1} (1).py": (B, late),
        f"Bob Durand_102_assignsubmission_file_/{EX1}.py": (A, late),
        f"Bob Durand_102_assignsubmission_file_/{EX1} (1).py": (B, early),
    })
    students = by_student(kinds.load(write(tmp_path / "moodle.zip", data), course))
    assert students["101"].files[EX1] == B
    assert "02/03/2026 18:30" in why(students["101"], f"{EX1}.py")
    assert students["102"].files[EX1] == A


@pytest.fixture(scope="module")
def notebooks(course, tmp_path_factory):
    """A notebook as `trous lab` writes it, filled with the solution, and that solution."""
    pytest.importorskip("jupytext")
    import nbformat

    from trous.publish.notebooks.build import exercise_notebook

    filled = tmp_path_factory.mktemp("rempli") / "cours"
    shutil.copytree(course.root, filled)
    shutil.copy(filled / "solutions" / f"{EX1}.py", filled / "exercises" / f"{EX1}.py")
    notebook = exercise_notebook(Course.load(filled).exercise(EX1))
    return nbformat.writes(notebook).encode("utf-8"), (filled / "solutions" / f"{EX1}.py").read_text(encoding="utf-8")


def code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_a_notebook_is_graded_through_its_py(course, tmp_path, notebooks):
    ipynb, solution = notebooks
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.ipynb", ipynb)
    write(root / "bob" / f"{EX1}-Copy1.ipynb", ipynb)  # JupyterLab's « Duplicate »
    students = by_student(kinds.load(root, course))
    for student in ("alice", "bob"):
        text = students[student].files[EX1].decode("utf-8")
        assert code_lines(text) == code_lines(solution)  # the program, without the lab's own cells
        assert "check(" not in text.replace("# check(", "")
    assert any("carnet Jupyter" in w and "jupytext" in w for w in students["alice"].warnings)


def test_a_notebook_paired_with_its_py_gives_the_py_at_the_same_date(course, tmp_path, notebooks):
    ipynb, _ = notebooks
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A, NEW)
    write(root / "alice" / "exercises" / f"{EX1}.ipynb", ipynb, NEW)
    [alice] = kinds.load(root, course).submissions
    assert alice.files[EX1] == A
    assert "un .py plutôt qu'un carnet" in why(alice, f"exercises/{EX1}.ipynb")


def test_a_broken_notebook_is_named_and_the_older_py_is_graded(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", A, OLD)
    write(root / "alice" / f"{EX1}.ipynb", b'{"cells": "pas une liste"}', NEW)
    write(root / "bob" / f"{EX1}.ipynb", b"\xff\xfe pas du JSON", NEW)
    students = by_student(kinds.load(root, course))
    assert students["alice"].files[EX1] == A
    assert why(students["alice"], f"{EX1}.ipynb").startswith("carnet illisible")
    assert students["bob"].files[EX1] is None
    assert why(students["bob"], f"{EX1}.ipynb").startswith("carnet illisible")


def test_without_jupytext_notebooks_are_named_and_the_teacher_told(course, tmp_path, monkeypatch, notebooks):
    ipynb, _ = notebooks
    real = filenames.importlib.util.find_spec
    monkeypatch.setattr(filenames.importlib.util, "find_spec",
                        lambda name, *a: None if name == "jupytext" else real(name, *a))
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.ipynb", ipynb, NEW)
    write(root / "alice" / f"{EX1}.py", A, OLD)
    write(root / "bob" / f"{EX1}.ipynb", ipynb)
    result = kinds.load(root, course)
    students = by_student(result)
    assert students["alice"].files[EX1] == A  # the older .py rather than nothing
    assert students["bob"].files[EX1] is None
    for student in ("alice", "bob"):
        assert "jupytext n'est pas installé" in why(students[student], f"{EX1}.ipynb")
    assert any(w.startswith("2 carnets Jupyter (.ipynb) non corrigés : jupytext n'est pas installé")
               and "pip install 'trous[notebooks]'" in w for w in result.warnings), result.warnings


def test_every_file_not_graded_is_named_with_why(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A)
    write(root / "alice" / "exercises" / f"test_{EX1}.py", b"")
    write(root / "alice" / "course.yaml", b"")
    write(root / "alice" / "README.md", b"")
    write(root / "alice" / "notes.py", b"")
    write(root / "alice" / "rendu.tar.gz", b"\x1f\x8b")
    write(root / "alice" / "__pycache__" / "x.pyc", b"")
    write(root / "alice" / ".trous" / "modeles" / f"{EX1}.py", B)  # the edition's pristine copy: not the work
    [alice] = kinds.load(root, course).submissions
    assert alice.files[EX1] == A
    reasons = {i.path: i.reason for i in alice.ignored}
    assert reasons == {
        "notes.py": intake.PYTHON_EXTRA,
        "rendu.tar.gz": intake.OTHER_ARCHIVE,
        "README.md": intake.NOT_EXERCISE,
        "course.yaml": intake.COURSE_FILE,
        f"exercises/test_{EX1}.py": intake.PUBLIC_CHECK,
        "__pycache__/": intake.SKIPPED_DIRS["__pycache__"],
        ".trous/": intake.SKIPPED_DIRS[".trous"],
    }
    # What matters first: the stray .py and the archive before the course's own files and caches.
    order = [i.path for i in alice.ignored]
    assert order.index("notes.py") < order.index("course.yaml") < order.index("__pycache__/")
    assert {i.path for i in alice.ignored if i.notable} == {"notes.py", "rendu.tar.gz"}


def test_names_with_terminal_escapes_get_a_printable_identifier(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "\x1b[31mrouge\x1b[0m" / f"{EX1}.py", A)
    write(root / "ligne\nsuivante" / f"{EX1}.py", B)
    write(root / "rouge" / f"{EX1}.py", B)  # the cleaned name of another folder: no collision
    write(root / "eve" / "\x1b]8;;http://x\x07lien\x1b]8;;\x07.txt", b"")
    result = kinds.load(root, course)
    ids = [s.student for s in result.submissions]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert all(i.isprintable() for i in ids)
    assert "rouge" in ids and any(i.startswith("rouge-") for i in ids) and any(i.startswith("ligne suivante-") for i in ids)
    eve = by_student(result)["eve"]
    assert [i.path for i in eve.ignored] == ["lien.txt"]


# -- Moodle ---------------------------------------------------------------------------------------
def moodle_zip(path: Path) -> Path:
    files = {
        f"Alice Martin_101_assignsubmission_file_/exercises/{EX1}.py": A,
        "Bob Durand_102_assignsubmission_file_/rendu.zip": zip_of({f"tp/exercises/{EX2}.py": B}),
        "Bob Durand_102_assignsubmission_onlinetext_/onlinetext.html": b"<p>voir le zip</p>",
        f"Chloé Lefèvre_103_assignsubmission_file_{EX1}.py": B,  # « dans des dossiers » unchecked
        "__MACOSX/._rendu.zip": b"\x00",
        "__MACOSX/Bob/._x": b"\x00",
    }
    return write(path, zip_of(files))


def test_moodle_archive(course, tmp_path):
    result = kinds.load(moodle_zip(tmp_path / "moodle.zip"), course)
    assert result.kind == "moodle"
    students = by_student(result)
    assert sorted(students) == ["101", "102", "103"]
    assert (students["101"].name, students["101"].files) == ("Alice Martin", {EX1: A, EX2: None})
    assert (students["102"].name, students["102"].files) == ("Bob Durand", {EX1: None, EX2: B})
    assert "texte en ligne" in why(students["102"], "onlinetext.html")
    assert (students["103"].name, students["103"].files[EX1]) == ("Chloé Lefèvre", B)
    assert students["101"].source.endswith("Alice Martin_101_assignsubmission_file_")
    assert listed(result) == {"__MACOSX/": intake.SKIPPED_DIRS["__MACOSX"]}  # named once


def test_moodle_names_are_made_printable(course, tmp_path):
    data = zip_of({f"=cmd|' -C calc'!A0 \x1b[2J\n_104_assignsubmission_file_/{EX1}.py": A})
    [student] = kinds.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert student.student == "104" and student.name == "=cmd|' -C calc'!A0"  # the CSV writers guard the rest


def test_archive_of_student_folders(course, tmp_path):
    path = write(tmp_path / "classe.zip", zip_of({f"alice/exercises/{EX1}.py": A, f"bob/{EX2}.py": B,
                                                  "LISEZMOI.txt": b""}))
    result = kinds.load(path, course)
    assert result.kind == "zip"
    students = by_student(result)
    assert students["alice"].files[EX1] == A and students["bob"].files[EX2] == B
    assert listed(result) == {"LISEZMOI.txt": intake.OUTSIDE}


@pytest.mark.parametrize("name", ["../../evil/01_toux.py", "/etc/01_toux.py", "C:\\Windows\\01_toux.py",
                                  "..\\..\\01_toux.py", "Alice_101_assignsubmission_file_/../../01_toux.py",
                                  "Alice_101_assignsubmission_file_/exercises/../../../01_toux.py"])
def test_path_traversal_is_refused(course, tmp_path, name):
    path = write(tmp_path / "moodle.zip", zip_of({name: b"HOSTILE", "Bob_102_assignsubmission_file_/01_toux.py": A}))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = kinds.load(path, course)
    reasons = [i.reason for i in result.ignored] + [i.reason for s in result.submissions for i in s.ignored]
    assert any("chemin dangereux refusé" in r for r in reasons)
    assert all(data != b"HOSTILE" for s in result.submissions for data in s.files.values())
    assert by_student(result)["102"].files[EX1] == A
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing extracted, anywhere
    assert not Path("/etc/01_toux.py").exists()


def test_symlink_entries_are_refused(course, tmp_path):
    data = zip_of({"Bob_102_assignsubmission_file_/01_toux.py": A},
                  links={f"Alice_101_assignsubmission_file_/exercises/{EX1}.py": "/etc/passwd"})
    result = kinds.load(write(tmp_path / "moodle.zip", data), course)
    alice = by_student(result)["101"]
    assert alice.files[EX1] is None
    assert "lien symbolique refusé" in why(alice, f"exercises/{EX1}.py")
    # Shown under its exercise in the page, as a link in a folder is.
    assert [i.exercise for i in alice.ignored if i.path == f"exercises/{EX1}.py"] == [EX1]
    assert by_student(result)["102"].files[EX1] == A


def test_zip_bomb_is_refused_and_the_others_are_graded(course, tmp_path):
    zeros = bytes(64 << 20)  # 64 Mio of zeros: about 64 Kio once deflated
    data = zip_of({f"Alice_101_assignsubmission_file_/exercises/{EX1}.py": zeros,
                   f"Bob_102_assignsubmission_file_/exercises/{EX1}.py": A})
    assert len(data) < 1 << 20
    result = kinds.load(write(tmp_path / "moodle.zip", data), course)
    alice, bob = result.submissions
    assert alice.files[EX1] is None
    reason = why(alice, f"exercises/{EX1}.py")
    assert "bombe de décompression" in reason and "64 Mio" in reason
    assert bob.files[EX1] == A


def test_nested_zip_bomb_is_refused(course, tmp_path):
    inner = zip_of({f"{EX1}.py": bytes(32 << 20)})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": inner})
    [alice] = kinds.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert alice.files[EX1] is None
    assert "bombe de décompression" in why(alice, f"rendu.zip/{EX1}.py")


def test_header_that_lies_about_size_is_not_trusted(course, tmp_path):
    # The central directory claims 100 bytes for an entry that inflates to 8 Mio: the ratio check is
    # fooled, but reading stops at the claimed size and the CRC check refuses the entry.
    data = bytearray(zip_of({f"Alice_101_assignsubmission_file_/{EX1}.py": bytes(8 << 20)}))
    central = data.index(b"PK\x01\x02")
    data[central + 24: central + 28] = struct.pack("<I", 100)
    result = kinds.load(write(tmp_path / "moodle.zip", bytes(data)), course)
    [alice] = result.submissions
    assert alice.files[EX1] is None
    reason = why(alice, f"{EX1}.py")
    assert "lecture impossible" in reason and "CRC" in reason


def test_archive_depth_is_bounded(course, tmp_path):
    third = zip_of({f"{EX2}.py": B})
    second = zip_of({f"{EX1}.py": A, "encore.zip": third})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": second})
    [alice] = kinds.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert alice.files == {EX1: A, EX2: None}  # Moodle's zip, then the student's: no deeper
    assert why(alice, "rendu.zip/encore.zip") == intake.TOO_DEEP


def test_total_decompressed_size_is_bounded(course, tmp_path):
    # Each file stays under the ratio check (random-looking data barely compresses), but together
    # they exceed the student's budget.
    chunk = os.urandom(300_000)
    inner = zip_of({f"d{i}/{EX1}.py": chunk for i in range(8)})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": inner})
    limits = IntakeLimits(total_bytes=1_000_000, file_bytes=400_000)
    [alice] = kinds.load(write(tmp_path / "moodle.zip", data), course, limits=limits).submissions
    assert alice.files[EX1] is None
    reason = why(alice, "rendu.zip")
    assert "977 Kio décompressés" in reason and "bombe de décompression" in reason


def test_budget_is_per_student(course, tmp_path):
    # Many students with big archives: each has its own budget, none is blamed for the others.
    chunk = os.urandom(300_000)
    files = {f"E{i}_{100 + i}_assignsubmission_file_/rendu.zip": zip_of({f"{EX1}.py": chunk[:1000] + bytes([i]),
                                                                        "gros.bin": chunk}) for i in range(6)}
    limits = IntakeLimits(total_bytes=700_000)
    result = kinds.load(write(tmp_path / "moodle.zip", zip_of(files)), course, limits=limits)
    assert len(result.submissions) == 6
    assert all(s.files[EX1] == chunk[:1000] + bytes([i]) for i, s in enumerate(result.submissions))


def test_other_archive_formats_are_reported(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "rendu.tar.gz", b"\x1f\x8b")
    [alice] = kinds.load(root, course).submissions
    assert "format d'archive non pris en charge" in why(alice, "rendu.tar.gz")


def test_input_kinds_are_one_table_known_without_importing_them(tmp_path):
    """The kinds are a fixed table, the most specific first: an nbgrader course (also a folder) is read
    as nbgrader's, in a process that imported nothing but the table (no kind registers itself)."""
    root = tmp_path / "cours-nbgrader"
    write(root / "nbgrader_config.py", b"")
    (root / "submitted").mkdir()
    write(tmp_path / "moodle.zip", zip_of({f"Alice Martin_12_assignsubmission_file_/{EX1}.py": A}))
    probe = ("import sys; from pathlib import Path; from trous.inputs import kinds; "
             "print([next(n for n, k in kinds.KINDS.items() if k is kinds.detected(Path(p))) for p in sys.argv[1:]])")
    done = subprocess.run([sys.executable, "-c", probe, str(root), str(root / "submitted"), str(tmp_path / "moodle.zip"),
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[0] == "['nbgrader', 'nbgrader', 'moodle', 'dossier']", done.stderr[-2000:]
    assert kinds.detected(root, "dossier") is kinds.KINDS["dossier"] and kinds.detected(root, "essai") is None
    with pytest.raises(IntakeError, match="type d'entrée inconnu « essai »"):
        kinds.load(root, None, kind="essai")
    # --format naming a kind the input is not, or a kind's loader called on it: one check, the same
    # words (each loader had its own; nbgrader's failed with a TypeError)
    for kind, path in (("nbgrader", tmp_path), ("dossier", tmp_path / "moodle.zip"), ("moodle", tmp_path)):
        not_of_kind = f"^{re.escape(str(path))} : ce n'est pas {re.escape(kinds.KINDS[kind].description)}$"
        with pytest.raises(IntakeError, match=not_of_kind):
            kinds.load(path, None, kind=kind)
        with pytest.raises(IntakeError, match=not_of_kind):
            kinds.KINDS[kind].load(path, None, intake.IntakeLimits())


def test_zip_symlink_helper_really_marks_links():
    # Guard for the tests above: the helper must produce what a real `zip --symlinks` produces.
    data = zip_of({}, links={"a": "/etc/passwd"})
    [info] = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert stat.S_ISLNK(info.external_attr >> 16)


def test_zip_dated_helper_keeps_the_dates():
    data = zip_dated({"a": (b"", (2026, 3, 2, 18, 30, 0))})
    [info] = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert info.date_time == (2026, 3, 2, 18, 30, 0)
    assert time.localtime(intake._zip_time(info))[:5] == (2026, 3, 2, 18, 30)


# -- nbgrader's submitted/ -------------------------------------------------------------------------
def test_nbgrader_submitted_names_every_file_it_does_not_grade(course, tmp_path):
    pytest.importorskip("nbgrader")
    from trous.inputs import standalone as nb_intake
    from trous.publish.nbgrader.notebooks import notebook_bytes, source_notebook

    exercise = course.exercise(EX1)
    assignment = exercise.assignment.id
    root = tmp_path / "cours-nbgrader"
    write(root / "nbgrader_config.py", b"")
    folder = root / "submitted" / "alice" / assignment
    data = notebook_bytes(source_notebook(exercise))
    write(folder / f"{EX1}.ipynb", data)
    write(folder / f"{EX1} (1).ipynb", data)  # downloaded twice: nbgrader grades only the exact name
    write(folder / f"{EX1}.py", b"")
    write(folder / "donnees.csv", b"")
    write(folder / "timestamp.txt", b"2026-01-01 00:00:00")  # nbgrader's own
    write(folder / "brouillons" / f"{EX1}.ipynb", data)
    write(folder / ".ipynb_checkpoints" / f"{EX1}-checkpoint.ipynb", data)
    write(root / "submitted" / "alice" / "partie99" / "x.ipynb", b"")
    write(root / "submitted" / ".bob" / assignment / f"{EX1}.ipynb", data)
    write(root / "submitted" / "LISEZMOI.txt", b"")
    result = nb_intake.load_submitted(root, course)
    students = by_student(result)
    assert sorted(students) == ["alice"]
    assert listed(result) == {".bob/": nb_intake.HIDDEN_STUDENT,  # nbgrader's « * » never matches it
                              "LISEZMOI.txt": "pas un dossier d'élève de nbgrader : pas une copie"}
    alice = students["alice"]
    assert alice.files[EX1] == exercise.solution_path.read_bytes()
    assert alice.origins == {EX1: f"{assignment}/{EX1}.ipynb"}
    reasons = {i.path: i.reason for i in alice.ignored}
    assert reasons[f"{assignment}/{EX1} (1).ipynb"].startswith(f"nom différent de {EX1}.ipynb")
    assert reasons[f"{assignment}/{EX1}.py"] == f"fichier .py : nbgrader ne corrige que le carnet {EX1}.ipynb"
    assert reasons[f"{assignment}/donnees.csv"] == f"pas un carnet du devoir {assignment}"
    assert reasons[f"{assignment}/brouillons/{EX1}.ipynb"].startswith("pas à la racine du devoir")
    assert reasons[f"{assignment}/.ipynb_checkpoints/"] == intake.SKIPPED_DIRS[".ipynb_checkpoints"]
    assert reasons["partie99/"] == "devoir inconnu du cours : non corrigé"
    assert not any("timestamp" in p for p in reasons)


# -- bytes read when graded, not kept -------------------------------------------------------------
def test_a_copy_s_bytes_are_read_when_asked_for_and_its_digest_follows_what_is_read(course, tmp_path):
    """The intake reads each file once (to choose it, and know its digest), keeps none of its bytes,
    and reads it again when the copy is graded: a file changed since is graded as it is now, under the
    digest of what is graded, never under the one the intake saw."""
    root = tmp_path / "copies"
    path = write(root / "alice" / "exercises" / f"{EX1}.py", A)
    archive = write(tmp_path / "moodle.zip", zip_of({f"Alice Martin_12_assignsubmission_file_/{EX1}.py": A}))
    [alice] = kinds.load(root, course).submissions
    [moodle] = kinds.load(archive, course).submissions
    seen = alice.digest
    assert seen == Submission("alice", {EX1: A, EX2: None}).digest == moodle.digest
    path.write_bytes(B)
    assert alice.digest == seen  # nothing read again yet
    assert alice.files[EX1] == B and alice.files[EX2] is None
    assert alice.digest == Submission("alice", {EX1: B, EX2: None}).digest
    path.unlink()
    assert alice.files[EX1] is None  # gone since: graded as absent, and recorded so
    assert alice.digest == Submission("alice", {EX1: None, EX2: None}).digest
    assert moodle.files[EX1] == A


def test_a_file_of_the_student_s_own_archive_is_kept_until_the_copy_is_released(course, tmp_path):
    """A member of the student's own .zip cannot be read again but through the whole archive: its bytes
    stay until the copy is graded, then only its digest."""
    root = tmp_path / "copies"
    write(root / "bob.zip", zip_of({f"exercises/{EX1}.py": A}))
    [bob] = kinds.load(root, course).submissions
    digest = bob.digest
    assert bob.files[EX1] == A and bob.files[EX1] == A
    bob.release()
    assert bob.digest == digest
