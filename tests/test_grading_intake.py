"""Intake: folders of students and Moodle archives become submissions, safely."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from trous.course import Course
from trous.grading import intake
from trous.grading.intake import IntakeError, IntakeLimits

from grading_support import mini_course, snapshot, zip_of

EX1, EX2 = "01_toux", "02_places"
A = b"# copie A\nx = 1\n"
B = b"# copie B\nx = 2\n"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    return Course.load(mini_course(tmp_path_factory.mktemp("cours"), (EX1, EX2)))


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def by_student(result: intake.Intake) -> dict:
    return {s.student: s for s in result.submissions}


# -- folders --------------------------------------------------------------------------------------
def test_folder_layouts(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "exercises" / f"{EX1}.py", A)  # a git clone
    write(root / "alice" / ".git" / f"{EX2}.py", B)  # version control data is not the copy
    write(root / "bob" / f"{EX2}.py", B)  # an unpacked archive: files at the top
    write(root / "carole" / "projet-main" / "exercises" / f"{EX1}.py", A)  # a zip of the repository, unpacked
    write(root / "notes.txt", b"liste")
    result = intake.load(root, course)
    assert result.kind == "dossier"
    students = by_student(result)
    assert sorted(students) == ["alice", "bob", "carole"]
    assert students["alice"].files == {EX1: A, EX2: None}
    assert students["bob"].files == {EX1: None, EX2: B}
    assert students["carole"].files[EX1] == A
    assert any("notes.txt" in w for w in result.warnings)


def test_duplicates_prefer_exercises_folder_and_are_reported(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", B)
    write(root / "alice" / "exercises" / f"{EX1}.py", A)
    write(root / "alice" / "vieux" / "exercises" / "brouillon.py", b"")
    write(root / "bob" / f"{EX1.upper()}.PY", A)  # another case: taken, and said
    [alice, bob] = intake.load(root, course).submissions
    assert alice.files[EX1] == A
    assert any("plusieurs fichiers" in w and f"exercises/{EX1}.py retenu" in w for w in alice.warnings)
    assert any("brouillon.py" in w for w in alice.warnings)
    assert bob.files[EX1] == A
    assert any("majuscules" in w for w in bob.warnings)


def test_symlinks_are_never_followed(course, tmp_path):
    outside = write(tmp_path / "ailleurs" / "exercises" / f"{EX2}.py", B)
    root = tmp_path / "copies"
    (root / "eve" / "exercises").mkdir(parents=True)
    os.symlink("/etc/passwd", root / "eve" / "exercises" / f"{EX1}.py")
    os.symlink(outside.parent.parent, root / "eve" / "lien")  # a linked folder holding an exercise
    os.symlink(outside.parent.parent, root / "mallory")  # a whole student that is a link
    write(root / "bob" / f"{EX1}.py", A)
    result = intake.load(root, course)
    students = by_student(result)
    assert "mallory" not in students and any("mallory" in w and "lien symbolique" in w for w in result.warnings)
    eve = students["eve"]
    assert eve.files == {EX1: None, EX2: None}
    assert any("/etc/passwd" in w and "jamais suivi" in w for w in eve.warnings)
    assert any("lien" in w and "jamais suivi" in w for w in eve.warnings if "/etc/passwd" not in w)
    assert students["bob"].files[EX1] == A


def test_a_component_swapped_for_a_link_after_listing_is_not_followed(course, tmp_path):
    # Reading reopens each folder with O_NOFOLLOW: a folder replaced by a link between the listing and
    # the read (a race) is refused, not followed.
    root = tmp_path / "copies"
    write(root / "eve" / "exercises" / f"{EX1}.py", A)
    notes: list[str] = []
    entries = intake.walk(root / "eve", IntakeLimits(), notes)
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
    [eve] = intake.load(root, course).submissions
    assert eve.files[EX1] is None
    assert any("pas un fichier ordinaire" in w for w in eve.warnings)


def test_files_are_left_untouched(course, tmp_path):
    root = tmp_path / "copies"
    path = write(root / "alice" / "exercises" / f"{EX1}.py", A)
    os.chmod(path, 0o444)
    write(root / "bob.zip", zip_of({f"bob/exercises/{EX1}.py": B}))
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = snapshot(root)
    atime = path.stat().st_atime_ns
    students = by_student(intake.load(root, course))
    assert students["alice"].files[EX1] == A and students["bob"].files[EX1] == B
    assert snapshot(root) == before
    if os.geteuid() == 0 or path.stat().st_uid == os.getuid():  # O_NOATIME is allowed to the owner
        assert path.stat().st_atime_ns == atime


def test_file_size_is_bounded(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", b"#" * 5000)
    limits = IntakeLimits(file_bytes=1000)
    [alice] = intake.load(root, course, limits=limits).submissions
    # One byte more than the limit is read, so that the engine can say « trop gros », never the rest.
    assert alice.files[EX1] == b"#" * 1001


def test_student_archive_in_the_folder(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "rose.zip", zip_of({f"rose/exercises/{EX1}.py": A, f"rose/{EX2}.py": B}))
    write(root / "paul" / "rendu.zip", zip_of({f"exercises/{EX1}.py": B}))
    students = by_student(intake.load(root, course))
    assert students["rose"].files == {EX1: A, EX2: B}
    assert students["paul"].files == {EX1: B, EX2: None}


def test_results_folder_inside_the_submissions_is_not_a_student(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / f"{EX1}.py", A)
    write(root / "resultats" / "gradebook.db", b"")
    assert [s.student for s in intake.load(root, course).submissions] == ["alice"]


def test_empty_or_missing_input_is_refused_in_french(course, tmp_path):
    with pytest.raises(IntakeError, match="introuvable"):
        intake.load(tmp_path / "rien", course)
    (tmp_path / "vide").mkdir()
    with pytest.raises(IntakeError, match="aucun sous-dossier"):
        intake.load(tmp_path / "vide", course)
    write(tmp_path / "faux.zip", b"pas une archive")
    with pytest.raises(IntakeError, match="illisible"):
        intake.load(tmp_path / "faux.zip", course)


# -- Moodle ---------------------------------------------------------------------------------------
def moodle_zip(path: Path) -> Path:
    files = {
        f"Alice Martin_101_assignsubmission_file_/exercises/{EX1}.py": A,
        "Bob Durand_102_assignsubmission_file_/rendu.zip": zip_of({f"tp/exercises/{EX2}.py": B}),
        "Bob Durand_102_assignsubmission_onlinetext_/onlinetext.html": b"<p>voir le zip</p>",
        f"Chloé Lefèvre_103_assignsubmission_file_{EX1}.py": B,  # « dans des dossiers » unchecked
        "__MACOSX/._rendu.zip": b"\x00",
    }
    return write(path, zip_of(files))


def test_moodle_archive(course, tmp_path):
    result = intake.load(moodle_zip(tmp_path / "moodle.zip"), course)
    assert result.kind == "moodle"
    students = by_student(result)
    assert sorted(students) == ["101", "102", "103"]
    assert (students["101"].name, students["101"].files) == ("Alice Martin", {EX1: A, EX2: None})
    assert (students["102"].name, students["102"].files) == ("Bob Durand", {EX1: None, EX2: B})
    assert any("onlinetext" in w for w in students["102"].warnings)
    assert (students["103"].name, students["103"].files[EX1]) == ("Chloé Lefèvre", B)
    assert students["101"].source.endswith("Alice Martin_101_assignsubmission_file_")


def test_archive_of_student_folders(course, tmp_path):
    path = write(tmp_path / "classe.zip", zip_of({f"alice/exercises/{EX1}.py": A, f"bob/{EX2}.py": B,
                                                  "LISEZMOI.txt": b""}))
    result = intake.load(path, course)
    assert result.kind == "zip"
    students = by_student(result)
    assert students["alice"].files[EX1] == A and students["bob"].files[EX2] == B
    assert any("LISEZMOI" in w for w in result.warnings)


@pytest.mark.parametrize("name", ["../../evil/01_toux.py", "/etc/01_toux.py", "C:\\Windows\\01_toux.py",
                                  "..\\..\\01_toux.py", "Alice_101_assignsubmission_file_/../../01_toux.py",
                                  "Alice_101_assignsubmission_file_/exercises/../../../01_toux.py"])
def test_path_traversal_is_refused(course, tmp_path, name):
    path = write(tmp_path / "moodle.zip", zip_of({name: b"HOSTILE", "Bob_102_assignsubmission_file_/01_toux.py": A}))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = intake.load(path, course)
    notes = list(result.warnings) + [w for s in result.submissions for w in s.warnings]
    assert any("chemin dangereux refusé" in w for w in notes)
    assert all(data != b"HOSTILE" for s in result.submissions for data in s.files.values())
    assert by_student(result)["102"].files[EX1] == A
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing extracted, anywhere
    assert not Path("/etc/01_toux.py").exists()


def test_symlink_entries_are_refused(course, tmp_path):
    data = zip_of({"Bob_102_assignsubmission_file_/01_toux.py": A},
                  links={f"Alice_101_assignsubmission_file_/exercises/{EX1}.py": "/etc/passwd"})
    result = intake.load(write(tmp_path / "moodle.zip", data), course)
    alice = by_student(result)["101"]
    assert alice.files[EX1] is None
    assert any("lien symbolique refusé" in w for w in alice.warnings)
    assert by_student(result)["102"].files[EX1] == A


def test_zip_bomb_is_refused_and_the_others_are_graded(course, tmp_path):
    zeros = bytes(64 << 20)  # 64 Mio of zeros: about 64 Kio once deflated
    data = zip_of({f"Alice_101_assignsubmission_file_/exercises/{EX1}.py": zeros,
                   f"Bob_102_assignsubmission_file_/exercises/{EX1}.py": A})
    assert len(data) < 1 << 20
    result = intake.load(write(tmp_path / "moodle.zip", data), course)
    alice, bob = result.submissions
    assert alice.files[EX1] is None
    assert any("bombe de décompression" in w and "64 Mio" in w for w in alice.warnings)
    assert bob.files[EX1] == A


def test_nested_zip_bomb_is_refused(course, tmp_path):
    inner = zip_of({f"{EX1}.py": bytes(32 << 20)})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": inner})
    [alice] = intake.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert alice.files[EX1] is None
    assert any("bombe de décompression" in w for w in alice.warnings)


def test_header_that_lies_about_size_is_not_trusted(course, tmp_path):
    # The central directory claims 100 bytes for an entry that inflates to 8 Mio: the ratio check is
    # fooled, but reading stops at the claimed size and the CRC check refuses the entry.
    data = bytearray(zip_of({f"Alice_101_assignsubmission_file_/{EX1}.py": bytes(8 << 20)}))
    central = data.index(b"PK\x01\x02")
    data[central + 24: central + 28] = struct.pack("<I", 100)
    result = intake.load(write(tmp_path / "moodle.zip", bytes(data)), course)
    [alice] = result.submissions
    assert alice.files[EX1] is None
    assert any("lecture impossible" in w and "CRC" in w for w in alice.warnings)


def test_archive_depth_is_bounded(course, tmp_path):
    third = zip_of({f"{EX2}.py": B})
    second = zip_of({f"{EX1}.py": A, "encore.zip": third})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": second})
    [alice] = intake.load(write(tmp_path / "moodle.zip", data), course).submissions
    assert alice.files == {EX1: A, EX2: None}  # Moodle's zip, then the student's: no deeper
    assert any("archive dans une archive dans une archive" in w for w in alice.warnings)


def test_too_many_entries_refuses_the_archive(course, tmp_path):
    data = zip_of({f"Alice_101_assignsubmission_file_/f{i}.txt": b"" for i in range(60)})
    with pytest.raises(IntakeError, match="entrées"):
        intake.load(write(tmp_path / "moodle.zip", data), course, limits=IntakeLimits(entries=50))


def test_total_decompressed_size_is_bounded(course, tmp_path):
    # Each file stays under the ratio check (random-looking data barely compresses), but together
    # they exceed the student's budget.
    chunk = os.urandom(300_000)
    inner = zip_of({f"d{i}/{EX1}.py": chunk for i in range(8)})
    data = zip_of({"Alice_101_assignsubmission_file_/rendu.zip": inner})
    limits = IntakeLimits(total_bytes=1_000_000, file_bytes=400_000)
    [alice] = intake.load(write(tmp_path / "moodle.zip", data), course, limits=limits).submissions
    assert alice.files[EX1] is None
    assert any("977 Kio décompressés" in w and "bombe de décompression" in w for w in alice.warnings)


def test_budget_is_per_student(course, tmp_path):
    # Many students with big archives: each has its own budget, none is blamed for the others.
    chunk = os.urandom(300_000)
    files = {f"E{i}_{100 + i}_assignsubmission_file_/rendu.zip": zip_of({f"{EX1}.py": chunk[:1000] + bytes([i]),
                                                                        "gros.bin": chunk}) for i in range(6)}
    limits = IntakeLimits(total_bytes=700_000)
    result = intake.load(write(tmp_path / "moodle.zip", zip_of(files)), course, limits=limits)
    assert len(result.submissions) == 6
    assert all(s.files[EX1] == chunk[:1000] + bytes([i]) for i, s in enumerate(result.submissions))


def test_other_archive_formats_are_reported(course, tmp_path):
    root = tmp_path / "copies"
    write(root / "alice" / "rendu.tar.gz", b"\x1f\x8b")
    [alice] = intake.load(root, course).submissions
    assert any("format d'archive non pris en charge" in w for w in alice.warnings)


def test_input_kinds_are_pluggable(course, tmp_path):
    from trous.grading.submissions import Submission

    seen = []

    def load(path, course_, limits):
        seen.append(path)
        return intake.Intake("essai", path, [Submission("x", {EX1: A, EX2: None})])

    intake.register(intake.Kind("essai", "pour le test", lambda p: p.suffix == ".essai", load))
    try:
        write(tmp_path / "lot.essai", b"")
        result = intake.load(tmp_path / "lot.essai", course)
        assert result.kind == "essai" and seen == [tmp_path / "lot.essai"]
        (tmp_path / "dossier").mkdir()
        assert intake.load(tmp_path / "dossier", course, kind="essai").kind == "essai"
    finally:
        intake.KINDS.pop("essai")


def test_zip_symlink_helper_really_marks_links():
    # Guard for the tests above: the helper must produce what a real `zip --symlinks` produces.
    import io

    data = zip_of({}, links={"a": "/etc/passwd"})
    [info] = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert stat.S_ISLNK(info.external_attr >> 16)
