"""The nbgrader course with real, separate Unix accounts: a teacher and students who have no
configuration of their own, each running nbgrader's command line exactly as README.md writes it.

The accounts are made for the test (useradd) and removed after. nbgrader's default exchange
(/usr/local/share/nbgrader/exchange, which the course uses, so that students need to set nothing)
is created as nbgrader's documentation has an administrator do it (mkdir, chmod ugo+rw), inside a
mount namespace of the test's own where /usr/local/share is a private tmpfs: the machine's real
/usr/local/share is never touched, and two runs of this test cannot meet. Every command runs in
that namespace under the account's own uid, with an environment holding only HOME, USER, PATH (the
virtual environment's bin/, as a hub image has nbgrader on PATH) and LANG.

The teacher (not root) builds, generates, releases, collects, grades with `nbgrader autograde`
(its kernel in bubblewrap, unprivileged) and with `trous grade .` on a copy, then releases feedback,
which each student fetches. Needs root (to make accounts); skipped otherwise, with the reason.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from conftest import BIN, ROOT  # noqa: E402
from nbgrader_support import SOLUTION, Author, blank_scores, grade_id  # noqa: E402

from trous.sandbox.backend import bwrap_available  # noqa: E402

pytestmark = pytest.mark.slow

EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's own default (exchange/default/exchange.py)
ASSIGNMENT, COURSE_ID, EXERCISE = "partie5", "attention", "01_toux"
TOOLS = ("useradd", "userdel", "unshare", "nsenter", "setpriv", "mount")
S, N = SOLUTION, None


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "créer des comptes Unix jetables (useradd) demande d'être root"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"outils absents : {', '.join(missing)}"
    if not bwrap_available():
        return "bubblewrap absent : nbgrader autograde ne démarre pas le noyau sans lui"
    return None


def _loop(nb):
    """A `while True` right before `poids = softmax(scores)`, in the answer cell (issue 21, part 1)."""
    cell = next(c for c in nb.cells if grade_id(c) == f"{EXERCISE}-reponse-1")
    cell.source = cell.source.replace("poids = softmax(scores)", "while True:\n    pass\npoids = softmax(scores)")


def _edit_locked(nb):
    cell = next(c for c in nb.cells if grade_id(c) == f"{EXERCISE}-trou-nouveau")
    cell.source = "print('✔ juste')"


# role in the test → (blank choices, notebook edit, points per blank: somme_exp, scores, nouveau)
STUDENTS = {
    "parfait": ({0: S, 1: S, 2: S}, None, (1, 1, 1)),
    "partiel": ({0: S, 1: "sum(a + b for a, b in zip(t, toux))", 2: N}, None, (1, 0, 0)),
    # the program never gets past its loop: no check ever sees a value
    "boucle": ({0: S, 1: S, 2: S}, _loop, (0, 0, 0)),
    # the locked cell is restored: it changes nothing, the wrong « scores » loses its point
    "verrou": ({0: S, 1: "0", 2: S}, _edit_locked, (1, 0, 1)),
}
BLANKS = ("somme_exp", "scores", "nouveau")


class Accounts:
    def __init__(self, base: Path):
        self.base, self.tag = base, secrets.token_hex(3)
        self.made: list[str] = []
        self.holder: subprocess.Popen | None = None

    def name(self, role: str) -> str:
        return f"t{self.tag}{role[:8]}"  # unique on the machine, within useradd's 32 characters

    def home(self, user: str) -> Path:
        return self.base / "home" / user

    def add(self, role: str) -> str:
        user = self.name(role)
        subprocess.run(["useradd", "--create-home", "--home-dir", str(self.home(user)), "--user-group",
                        "--shell", "/bin/sh", user], check=True, capture_output=True)
        self.made.append(user)
        return user

    def namespace(self) -> None:
        self.holder = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "3600"])
        self.root_cmd("mount", "-t", "tmpfs", "-o", "mode=0755,size=64m", "tmpfs", "/usr/local/share")
        self._reachable([Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), ROOT.resolve()])
        self.root_cmd("mkdir", "-p", EXCHANGE)  # what nbgrader's docs ask of the administrator
        self.root_cmd("chmod", "ugo+rw", EXCHANGE)

    def _reachable(self, needed: list[Path]) -> None:
        """Python, the virtual environment and the course, reachable by every account, as on a hub where
        Python is installed for all. A folder on their way that others cannot enter (a pyenv in
        /root, mode 0700) is replaced, in the namespace only, by an empty one holding just them."""
        blocked: dict[Path, list[Path]] = {}
        for path in needed:
            for parent in reversed([path, *path.parents]):
                if not parent.stat().st_mode & 0o001:
                    blocked.setdefault(parent, []).append(path)
                    break
        for number, (folder, inside) in enumerate(blocked.items()):
            stages = []
            for i, path in enumerate(inside):
                stage = self.base / f"etape-{number}-{i}"
                stage.mkdir()
                self.root_cmd("mount", "--bind", str(path), str(stage))
                stages.append((stage, path))
            self.root_cmd("mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", str(folder))
            for stage, path in stages:
                self.root_cmd("mkdir", "-p", str(path))
                self.root_cmd("mount", "--bind", str(stage), str(path))

    def _enter(self) -> list[str]:
        return ["nsenter", f"--target={self.holder.pid}", "--mount", "--"]

    def root_cmd(self, *argv: str) -> None:
        subprocess.run([*self._enter(), *argv], check=True, capture_output=True, timeout=60)

    def run(self, user: str, cwd: Path, *argv: str, timeout: float = 900) -> subprocess.CompletedProcess:
        info = subprocess.run(["id", "-u", user], capture_output=True, text=True, check=True).stdout.strip()
        group = subprocess.run(["id", "-g", user], capture_output=True, text=True, check=True).stdout.strip()
        env = ["env", "-i", "-C", str(cwd), f"HOME={self.home(user)}", f"USER={user}", f"LOGNAME={user}",
               f"PATH={BIN}:/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"]
        return subprocess.run([*self._enter(), "setpriv", f"--reuid={info}", f"--regid={group}", "--init-groups",
                               "--", *env, *argv], capture_output=True, text=True, timeout=timeout)

    def exists(self, path: str) -> bool:
        return subprocess.run([*self._enter(), "test", "-e", path]).returncode == 0

    def close(self) -> None:
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
        for user in self.made:
            subprocess.run(["userdel", "--remove", "--force", user], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)  # the stages' mounts died with the namespace


def _readme_student_commands() -> list[str]:
    """The student steps as README.md writes them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"nbgrader (?:fetch_assignment|submit|fetch_feedback) \S+ --course \S+", text)
    assert any(c.startswith("nbgrader fetch_assignment") for c in found) and any(
        c.startswith("nbgrader submit") for c in found), found
    return found


def _ok(result: subprocess.CompletedProcess, what: str) -> str:
    said = result.stdout + result.stderr
    assert result.returncode == 0, f"{what} :\n{said[-4000:]}"
    return said


@pytest.fixture(scope="module")
def classroom():
    why = _why_not()
    if why:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="trous-comptes-"))
    base.chmod(0o755)  # the accounts' homes are inside
    (base / "home").mkdir(mode=0o755)
    accounts = Accounts(base)
    try:
        yield _classroom(accounts)
    finally:
        accounts.close()
        assert not base.exists()
        for user in accounts.made:
            assert subprocess.run(["id", user], capture_output=True).returncode != 0, user


def _classroom(accounts: Accounts) -> dict:
    log: dict = {"accounts": accounts}
    accounts.namespace()
    teacher = accounts.add("prof")
    students = {role: accounts.add(role) for role in STUDENTS}
    log["teacher"], log["students"] = teacher, students
    home = accounts.home(teacher)
    course = home / "cours-nbgrader"
    log["course"] = course

    # The teacher, as README.md has it (one exercise here, to keep the test short).
    log["build"] = _ok(accounts.run(teacher, home, "trous", "-C", str(ROOT), "nbgrader", "build", str(course),
                                    "--exercice", EXERCISE), "trous nbgrader build")
    for step in (("generate_assignment", ASSIGNMENT), ("release_assignment", ASSIGNMENT)):
        log[step[0]] = _ok(accounts.run(teacher, course, "nbgrader", *step), f"nbgrader {step[0]}")

    source = nbformat.read(course / "source" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{EXERCISE}.ipynb", 4)
    author = Author(source, release)
    commands = _readme_student_commands()
    fetch = next(c for c in commands if c.startswith("nbgrader fetch_assignment")).split()
    submit = next(c for c in commands if c.startswith("nbgrader submit")).split()
    log["fresh"] = {}
    for role, user in students.items():
        student_home = accounts.home(user)
        log["fresh"][role] = sorted(p.name for p in student_home.iterdir() if p.name.startswith(".jupyter"))
        log[f"fetch-{role}"] = _ok(accounts.run(user, student_home, *fetch), f"{role} : {' '.join(fetch)}")
        fetched = student_home / ASSIGNMENT / f"{EXERCISE}.ipynb"
        assert nbformat.writes(nbformat.read(fetched, 4)) == nbformat.writes(release), role
        choices, edit, _ = STUDENTS[role]
        with open(fetched, "w", encoding="utf-8") as f:  # the student's own file, saved in place
            nbformat.write(author.notebook(choices, edit=edit), f)
        log[f"submit-{role}"] = _ok(accounts.run(user, student_home, *submit), f"{role} : {' '.join(submit)}")

    log["collect"] = _ok(accounts.run(teacher, course, "nbgrader", "collect", ASSIGNMENT), "nbgrader collect")
    copy = home / "copie-pour-trous"
    _ok(accounts.run(teacher, home, "cp", "-a", str(course), str(copy)), "cp")
    log["copy"] = copy
    log["autograde"] = _ok(accounts.run(teacher, course, "nbgrader", "autograde", ASSIGNMENT), "nbgrader autograde")
    log["trous_grade"] = _ok(accounts.run(teacher, copy, "trous", "grade", "."), "trous grade .")
    log["feedback"] = _ok(accounts.run(teacher, course, "nbgrader", "generate_feedback", ASSIGNMENT),
                          "nbgrader generate_feedback")
    log["release_feedback"] = _ok(accounts.run(teacher, course, "nbgrader", "release_feedback", ASSIGNMENT),
                                  "nbgrader release_feedback")
    fetch_feedback = next((c for c in commands if c.startswith("nbgrader fetch_feedback")),
                          f"nbgrader fetch_feedback {ASSIGNMENT} --course {COURSE_ID}").split()
    log["pages"] = {}
    for role, user in students.items():
        student_home = accounts.home(user)
        _ok(accounts.run(user, student_home, *fetch_feedback), f"{role} : {' '.join(fetch_feedback)}")
        log["pages"][role] = sorted(p.name for p in student_home.glob(f"{ASSIGNMENT}/feedback/*/*.html"))
    log["nbgrader_grades"] = blank_scores(course, COURSE_ID)
    log["trous_grades"] = blank_scores(copy, COURSE_ID)
    return log


def test_students_without_configuration_fetch_and_submit_with_the_readme_commands(classroom):
    commands = _readme_student_commands()
    assert f"nbgrader fetch_assignment {ASSIGNMENT} --course {COURSE_ID}" in commands
    assert f"nbgrader submit {ASSIGNMENT} --course {COURSE_ID}" in commands
    assert all(found == [] for found in classroom["fresh"].values())  # no ~/.jupyter of their own
    for role in STUDENTS:
        said = classroom[f"fetch-{role}"] + classroom[f"submit-{role}"]
        assert "Unwritable directory" not in said and "Traceback" not in said, said
    course = classroom["course"]
    submitted = {p.name for p in (course / "submitted").iterdir()}
    assert submitted == set(classroom["students"].values())  # nbgrader's student ids: the accounts' names
    assert EXCHANGE in (course / "nbgrader_config.py").read_text()


def test_the_build_says_the_exchange_is_nbgrader_s_own(classroom):
    # nothing for students to set; the teacher is told only what the administrator must have made
    assert "les élèves doivent avoir" not in classroom["build"]


def test_every_student_of_the_exchange_gets_their_feedback(classroom):
    assert classroom["pages"] == {role: [f"{EXERCISE}.html"] for role in STUDENTS}


def test_autograde_and_trous_grade_give_each_blank_the_points_worked_out_by_hand(classroom):
    said = classroom["autograde"]
    assert "Removing failed assignment" not in said, said[-3000:]
    for grades in (classroom["nbgrader_grades"], classroom["trous_grades"]):
        for role, user in classroom["students"].items():
            got = tuple(grades[user][f"{EXERCISE}-trou-{b}"] for b in BLANKS)
            assert got == STUDENTS[role][2], (role, got)
    assert classroom["nbgrader_grades"] == classroom["trous_grades"]
