"""The student edition, as built by `trous edition`: nothing of the solutions or the graders inside
(folder, zip, and the bundled wheel), and `pytest exercises/` working after its own install command.

The install runs offline in a fresh virtual environment: `--system-site-packages`, plus a `.pth`
line that appends this project's .venv site-packages (numpy, pydantic, pytest… are already there, so
pip has nothing to download; PIP_NO_INDEX makes sure of it). A `.pth` *path* line does not run the
editable-install hooks of that folder, so `trous` can only come from the wheel the edition ships.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, complete_exercises
from trous.core import blanks as blanks_mod
from trous.core import Course

BIN = Path(sys.executable).parent
SITE = Path(sysconfig.get_paths()["purelib"])


def _run(argv: list[str], cwd: Path, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env or {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.fixture(scope="module")
def course() -> Course:
    return Course.load(ROOT)


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("edition") / "attention-eleves"
    result = _run([BIN / "trous", "-C", ROOT, "edition", dest], cwd=dest.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert dest.is_dir() and dest.with_suffix(".zip").is_file()
    return dest


# -- what must never be inside -------------------------------------------------------------------
def public_lines() -> set[str]:
    """Lines the course ships on purpose: its templates and public checks. One exercise's template may
    give, as ready-made code, what an earlier or later exercise asks for: that is public by design."""
    lines = set()
    for path in (ROOT / "exercises").glob("*.py"):
        lines |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    return lines


def solution_lines(course: Course) -> dict[str, str]:
    """For each blank, the solution's line(s) carrying its fill, stripped: {line: "exercise/blank"}."""
    public = public_lines()
    found = {}
    for exercise in complete_exercises(course):
        template = exercise.template_path.read_text(encoding="utf-8")
        solution = exercise.solution_path.read_text(encoding="utf-8").replace("\r\n", "\n")
        fills = blanks_mod.align(template, solution)
        assert fills is not None, exercise.id
        lines = solution.split("\n")
        for fill, blank in zip(fills, exercise.blanks):
            for number in range(fill.line, fill.end_line + 1):
                line = lines[number - 1].strip()
                if len(line) >= 6 and line not in public:
                    found[line] = f"{exercise.id}/{blank.id}"
    return found


def grader_lines() -> dict[str, str]:
    """Lines of graders/*.py that say something of their own. Left out: imports, short lines, lines the
    public material has too, and the checking language's common phrasing (a line that two graders or
    more share and that the platform's own source shows, such as `expect("scores", SOLUTION, …)`)."""
    public = public_lines()
    platform = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "trous").rglob("*.py"))
    files_of: dict[str, set[str]] = {}
    for path in sorted((ROOT / "graders").glob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) >= 12 and line not in public and not line.startswith(("import ", "from ", "#")):
                files_of.setdefault(line, set()).add(path.name)
    return {line: sorted(files)[0] for line, files in files_of.items()
            if not (len(files) >= 2 and line in platform)}


def answer_hints(course: Course) -> dict[str, str]:
    """The hints that give the answer, {hint: "exercise/blank"}: by the course's convention the last
    of several hints (the fill, or a multiple-choice answer spelt out), and any hint that writes out
    the solution's fill."""
    found = {}
    for exercise in complete_exercises(course):
        template = exercise.template_path.read_text(encoding="utf-8")
        solution = exercise.solution_path.read_text(encoding="utf-8")
        fills = blanks_mod.align(template, solution)
        for fill, blank in zip(fills, exercise.blanks):
            hints = blank.hints
            squeezed = "".join(fill.text.split())
            for i, hint in enumerate(hints):
                whole = not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9.]+", fill.text.strip())
                if (i == len(hints) - 1 and len(hints) > 1) or (whole and squeezed in "".join(hint.split())):
                    found[hint] = f"{exercise.id}/{blank.id}"
    return found


def without_hints(text: str, course: Course) -> str:
    """course.yaml ships the hints that do not give the answer (`trous hint` works offline): those
    strings are not searched, the rest of the file is — answer-level hints included."""
    answers = answer_hints(course)
    for exercise in course.exercises:
        for blank in exercise.blanks:
            for hint in blank.hints:
                if hint not in answers:
                    text = text.replace(hint, "")
    return text


def shipped_texts(edition: Path) -> dict[str, str]:
    """Every file of the edition as text: the folder, the zip, and the wheels found in either."""
    texts: dict[str, str] = {}

    def add(name: str, data: bytes) -> None:
        texts[name] = data.decode("utf-8", "replace")
        if name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(io.BytesIO(data)) as inner:
                for entry in inner.namelist():
                    add(f"{name}!{entry}", inner.read(entry))

    for path in sorted(edition.rglob("*")):
        if path.is_file():
            add(f"dossier:{path.relative_to(edition)}", path.read_bytes())
    add(f"archive:{edition.name}.zip", edition.with_suffix(".zip").read_bytes())
    return texts


def test_the_secrets_are_real(course):
    # The checks below would pass vacuously on empty sets.
    exercises = complete_exercises(course)
    assert len(solution_lines(course)) >= sum(len(e.blanks) for e in exercises) // 2
    assert len(grader_lines()) >= len(list((ROOT / "graders").glob("test_*.py")))


def test_no_solution_or_grader_inside(edition, course):
    texts = shipped_texts(edition)
    names = list(texts)
    assert any(n.startswith("archive:") and n.endswith(".whl") for n in names), "no wheel inside the zip"
    assert any(".whl!trous/" in n for n in names), "the wheel was not opened"
    texts = {name: without_hints(text, course) if name.endswith("course.yaml") else text
             for name, text in texts.items()}
    leaks = []
    for secrets, kind in ((solution_lines(course), "solution"), (grader_lines(), "correcteur")):
        for line, origin in secrets.items():
            leaks += [(kind, origin, name, line) for name, text in texts.items() if line in text]
    assert not leaks, leaks[:5]
    for name in names:
        parts = re.split(r"[/!:]", name)
        assert "solutions" not in parts and "graders" not in parts, name


def test_no_hint_that_gives_the_answer_is_readable_inside(edition, course):
    answers = answer_hints(course)
    # The issue's examples, and 12's multiple-choice answer spelt out: all held back.
    for example in ("total = sum(e)", "w ** distance", "math.sqrt(d)"):
        assert example in answers
    assert course.exercise("12_autotest").blank("reponse_1").hints[-1] in answers
    shipped = Course.load(edition)
    kept = {h for e in shipped.exercises for b in e.blanks for h in b.hints}
    assert not kept & set(answers), sorted(kept & set(answers))[:3]
    # Nowhere else either (folder, zip, wheel), unless the course's public files show it anyway (one
    # exercise's given code can be another's answer) or trous's own code happens to hold it.
    # The files the course's own notebook imports (explorer.files: its widget) are public as well.
    public = "\n".join(p.read_text(encoding="utf-8") for p in [*(ROOT / "exercises").glob("*.py"),
                                                             *(ROOT / "explorateur").glob("*.py")])
    platform = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "trous").rglob("*.py"))
    secret = {h: where for h, where in answers.items() if h not in public and h not in platform}
    assert len(secret) >= len(answers) // 2  # the check below looks for something
    leaks = [(where, name) for name, text in shipped_texts(edition).items() for h, where in secret.items() if h in text]
    assert not leaks, leaks[:5]
    # Every blank keeps at least its first hint readable, for the self-check's feedback.
    for exercise in shipped.exercises:
        for blank in exercise.blanks:
            assert blank.hints and all(h.strip() for h in blank.hints)


def test_zip_holds_the_folder(edition):
    with zipfile.ZipFile(edition.with_suffix(".zip")) as archive:
        entries = {n for n in archive.namelist() if not n.endswith("/")}
        for entry in entries:
            assert entry.startswith(f"{edition.name}/") and ".." not in entry.split("/"), entry
        folder = {f"{edition.name}/{p.relative_to(edition).as_posix()}" for p in edition.rglob("*") if p.is_file()}
        assert entries == folder
        for entry in entries:
            assert archive.read(entry) == (edition.parent / entry).read_bytes(), entry


# -- installing it as a student would ------------------------------------------------------------
@pytest.fixture(scope="module")
def installed(edition, tmp_path_factory) -> tuple[Path, Path, dict]:
    """A copy of the edition (from the zip, as students get it) installed by its own command."""
    work = tmp_path_factory.mktemp("eleve")
    with zipfile.ZipFile(edition.with_suffix(".zip")) as archive:
        archive.extractall(work)
    folder = work / edition.name
    venv = work / ".venv-eleve"
    made = _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], cwd=work)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=work).stdout.strip())
    (purelib / "trous-projet.pth").write_text(f"{SITE}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}")
    command = (folder / "LISEZMOI.md").read_text(encoding="utf-8")
    assert "python -m pip install -r requirements.txt" in command
    install = _run([python, "-m", "pip", "install", "-r", "requirements.txt"], cwd=folder, env=env)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    return folder, python, env


def test_trous_comes_from_the_installed_wheel(installed):
    folder, python, env = installed
    where = _run([python, "-c", "import trous, trous.check.pytest_plugin; print(trous.__file__)"], cwd=folder, env=env)
    assert where.returncode == 0, where.stderr
    path = Path(where.stdout.strip())
    venv = python.parent.parent
    assert venv in path.parents, path
    assert ROOT / "src" not in path.parents
    assert (venv / "bin" / "trous").is_file()


def test_pytest_reports_the_unfilled_blanks(installed, course):
    folder, python, env = installed
    shipped = [Course.load(folder).exercise(e.id) for e in complete_exercises(course)]
    total = sum(len(e.blanks) for e in shipped)
    result = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "exercises/"], cwd=folder, env=env)
    out = result.stdout
    assert result.returncode == 1, out[-3000:] + result.stderr[-2000:]
    # One item per blank, all to fill; the details are the first exercise's.
    assert f"{len(shipped)} exercices, {total} trous à vérifier" in out and f"{total} à remplir" in out
    assert "test session starts" not in out  # French from the first line
    assert all(f"« {b.id} » : pas encore rempli" in out for b in shipped[0].blanks)
    everything = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "exercises/", "--tout"], cwd=folder, env=env)
    assert everything.stdout.count("pas encore rempli (___)") == total
    for exercise in shipped:
        for blank in exercise.blanks:
            assert f"{exercise.path.name}:" in everything.stdout
            assert f"« {blank.id} » : pas encore rempli" in everything.stdout, (exercise.id, blank.id)
    assert "Traceback (most recent call last)" not in out + everything.stdout


def test_a_copied_solution_passes(installed, course):
    folder, python, env = installed
    exercise = course.exercise("01_toux")
    target = folder / "exercises" / exercise.path.name
    original = target.read_bytes()
    shutil.copyfile(exercise.solution_path, target)
    try:
        result = _run([python, "-m", "pytest", "-p", "no:cacheprovider", f"exercises/{exercise.path.name}"],
                      cwd=folder, env=env)
    finally:
        target.write_bytes(original)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert exercise.id in result.stdout and "réussi" in result.stdout


def test_trous_hint_gives_every_hint_offline_and_warns_before_the_answer(installed, course):
    folder, python, env = installed
    answers = answer_hints(course)
    for exercise_id, blank_id in (("01_toux", "somme_exp"), ("12_autotest", "reponse_1"), ("05_qkv", "racine")):
        blank = course.exercise(exercise_id).blank(blank_id)
        number = course.exercise(exercise_id).blank_index(blank_id) + 1
        outputs = []
        for _ in range(len(blank.hints) + 1):
            run = _run([folder.parent / ".venv-eleve" / "bin" / "trous", "hint", exercise_id, "--trou", str(number)],
                       cwd=folder, env=env)
            assert run.returncode == 0, run.stdout + run.stderr
            outputs.append(run.stdout)
        total = len(blank.hints)
        for level, hint in enumerate(blank.hints):
            out = outputs[level]
            assert hint in out and f"indice {level + 1}/{total}" in out, (exercise_id, level, out)
            gives = hint in answers
            assert ("(la réponse)" in out) == gives
            following = level + 1 < total and blank.hints[level + 1] in answers
            assert ("l'indice suivant" in out and "donne la réponse" in out) == following, out
        assert blank.hints[-1] in outputs[-1]  # past the last one, the last one again
    state = (folder / ".trous" / "etat.json").read_text(encoding="utf-8")
    assert "somme_exp" in state
