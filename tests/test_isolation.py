"""Isolation of students' code in every mode of `trous grade` (issue 10, parts 1 and 2).

A hostile class is graded for real (`trous grade` in a subprocess) in each mode: bubblewrap as root
and as an unprivileged user, and `--sans-isolation` as an unprivileged user (run under `setpriv` with a uid leased for the test, so that nothing else on the
machine shares it). Its copies try to rewrite their own results through a daemon, to set a
classmate's grade through SQLite, to read the graders, the solutions and a classmate's copy, to
kill `trous grade` itself, to leave 1 GiB of System V shared memory and to fill /tmp. In the
isolated modes every attempt fails and changes nothing; `--sans-isolation` keeps no such promise:
there, the tests state what the README says (the code can read and stop the grader) and that every
page of results says so. Then the refusals: no isolation at all (inside `bwrap --disable-userns`,
bubblewrap off PATH) refuses with the French message before any copy is read, and root never grades
without isolation. Then the runner's own bounds, measured from inside real sandboxes: tmpfs sizes,
System V IPC and files removed between jobs, no capability, an ordinary user's sandbox never host
root, and uids leased per runner so that one pool's fork bomb never starves another pool.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml

from trous.sandbox import uids
from trous.sandbox.zygote import join_cgroup
from trous.sandbox.pool import Runner, RunnerPool
from trous.core.protocol import Job, Limits, Probe, Unit
from trous.sandbox.backend import BWRAP, UNISOLATED, SandboxRefused, bwrap_available, choose, tmpfs_bytes

from grading_support import ROOT, snapshot

ROOT_USER = os.geteuid() == 0
HAVE_BWRAP = bwrap_available()
TAG = uuid.uuid4().hex[:10]  # in every name the copies leave on the host, to find (and remove) them
SHM_KEY = 0x7400_0000 + int(TAG[:4], 16)
MEMORY_MB = 256
LIMITS = {"wall": 3, "memory_mb": MEMORY_MB, "processes": 8, "output_kb": 64, "files": 40}
SECRETS = {"graders/test_01_toux.py": f"SECRET-CORRECTEUR-{TAG}", "solutions/01_toux.py": f"SECRET-SOLUTION-{TAG}"}
ALICE_SECRET = f"SECRET-ALICE-{TAG}"


# -- who runs the grader ---------------------------------------------------------------------------
class User:
    """Runs commands as root (uid None) or as an unprivileged uid, with a Python that uid can use."""

    def __init__(self, uid: int | None, python: str):
        self.uid, self.python = uid, python

    @property
    def name(self) -> str:
        return "root" if self.uid is None and ROOT_USER else "utilisateur"

    def argv(self, args: list[str]) -> list[str]:
        if self.uid is None:
            return args
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--", *args]

    def chown(self, path: Path) -> None:
        if self.uid is not None:
            for folder, dirs, files in os.walk(path):
                for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                    os.lchown(name, self.uid, self.uid)

    def run(self, args: list[str], cwd: Path, timeout: float = 600, env: dict | None = None):
        full = {**os.environ, "COLUMNS": "200", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        if self.uid is not None:
            full["HOME"] = str(cwd)
        return subprocess.run(self.argv(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full)


def _layered_venv(dest: Path) -> str | None:
    """A venv of a system interpreter that sees this venv's packages (and trous): what an unprivileged
    uid can run when this venv's interpreter sits in root's home."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if base is None:
        return None
    subprocess.run([base, "-m", "venv", "--without-pip", str(dest)], check=True, capture_output=True)
    site_dirs = [p for p in sys.path if os.path.basename(p) == "site-packages" and os.path.isdir(p)]
    [target] = (dest / "lib").glob("python*/site-packages")
    (target / "zz-trous-tests.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in site_dirs), encoding="utf-8")
    for folder, dirs, files in os.walk(dest):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            if not os.path.islink(name):
                os.chmod(name, os.stat(name).st_mode | 0o555 if os.path.isdir(name) else os.stat(name).st_mode | 0o444)
    return str(dest / "bin" / "python")


@pytest.fixture(scope="module")
def unprivileged(tmp_path_factory):
    if not ROOT_USER:
        return User(None, sys.executable)
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) absent")
    lease = uids.Lease()  # a uid nobody else on this machine uses while the tests run
    folder = Path(tempfile.mkdtemp(prefix="trous-venv-"))
    os.chmod(folder, 0o755)
    python = _layered_venv(folder / "venv")
    if python is None:
        pytest.skip("no system interpreter an unprivileged uid can run")
    user = User(lease.uids[0], python)
    probe = user.run([python, "-I", "-c", "import trous, numpy, sqlalchemy, jinja2, rich"], cwd=folder)
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged uid cannot run trous: {probe.stderr[-300:]}")
    yield user
    shutil.rmtree(folder, ignore_errors=True)
    lease.release()


@pytest.fixture(scope="module")
def root_user():
    if not ROOT_USER:
        pytest.skip("needs root")
    return User(None, sys.executable)


# -- the course and the class ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def workspace():
    """A world-readable folder holding the course (01_toux and 03_masque, tight bounds, secret lines in
    its graders and solutions) and the classes."""
    base = Path(tempfile.mkdtemp(prefix="trous-isolation-"))
    os.chmod(base, 0o755)
    course = base / "cours"
    data = yaml.safe_load((ROOT / "course.yaml").read_text(encoding="utf-8"))
    for assignment in data["assignments"]:
        assignment["exercises"] = [e for e in assignment["exercises"] if e["id"] in ("01_toux", "03_masque")]
    data["assignments"] = [a for a in data["assignments"] if a["exercises"]]
    data["limits"] = LIMITS
    course.mkdir()
    (course / "course.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for exercise_id in ("01_toux", "03_masque"):
        for rel in (f"exercises/{exercise_id}.py", f"exercises/test_{exercise_id}.py",
                    f"solutions/{exercise_id}.py", f"graders/test_{exercise_id}.py"):
            (course / rel).parent.mkdir(exist_ok=True)
            text = (ROOT / rel).read_text(encoding="utf-8")
            if rel in SECRETS:
                text = f"# {SECRETS[rel]}\n" + text
            (course / rel).write_text(text, encoding="utf-8")
    for folder, dirs, files in os.walk(base):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def source(workspace: Path, kind: str, exercise_id: str = "01_toux") -> str:
    folder = {"solution": "solutions", "template": "exercises"}[kind]
    text = (workspace / "cours" / folder / f"{exercise_id}.py").read_text(encoding="utf-8")
    return "\n".join(line for line in text.split("\n") if "SECRET-" not in line)


def before(text: str, line_start: str, code: str) -> str:
    """`code` inserted before the first line starting with `line_start` (outside the blanks)."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(line_start))
    return "\n".join(lines[:at] + textwrap.dedent(code).strip("\n").split("\n") + lines[at:])


def daemon(results: Path) -> str:
    """A daemon that escapes its run (double fork, new session, signals ignored) and, for 25 s,
    rewrites its own results JSON, grades.csv and gradebook row to full marks, and alice's to 0."""
    return f"""
    import json as _json, os as _os, signal as _signal, sqlite3 as _sqlite3, time as _time
    _RES = {str(results)!r}
    def _rewrite():
        try:
            _p = _RES + "/results/demon.json"
            _d = _json.load(open(_p)); _d["score"] = 99
            open(_p, "w").write(_json.dumps(_d))
        except Exception:
            pass
        try:
            open(_RES + "/grades.csv", "a").write("demon;99\\n")
        except Exception:
            pass
        try:
            _c = _sqlite3.connect(_RES + "/gradebook.db", timeout=1)
            _c.execute("UPDATE gradings SET score = 99 WHERE id IN (SELECT g.id FROM gradings g JOIN submissions s "
                       "ON g.submission_id = s.id JOIN students t ON s.student_id = t.id WHERE t.key = 'demon')")
            _c.execute("UPDATE gradings SET score = 0, result = json_set(result, '$.score', 0) WHERE id IN "
                       "(SELECT g.id FROM gradings g JOIN submissions s ON g.submission_id = s.id JOIN students t "
                       "ON s.student_id = t.id WHERE t.key = 'alice')")
            _c.commit(); _c.close()
        except Exception:
            pass
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            for _s in (_signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT, _signal.SIGUSR1):
                _signal.signal(_s, _signal.SIG_IGN)
            _end = _time.time() + 25
            while _time.time() < _end:
                _rewrite()
                _time.sleep(0.1)
            _os._exit(0)
        _os._exit(0)
    """


def spy_fills(workspace: Path) -> dict[str, str]:
    """Fills that earn their blank's point only by reading what the sandbox must hide."""
    course, copies = workspace / "cours", workspace / "copies"
    grader, solution = course / "graders" / "test_01_toux.py", course / "solutions" / "01_toux.py"
    classmate = copies / "alice" / "exercises" / "01_toux.py"

    def stolen(path: Path, pattern: str, fallback: str) -> str:
        return (f"(eval(__import__('re').search(r'{pattern}', open({str(path)!r}).read()).group(1), "
                "{**globals(), **locals()}) "
                f"if __import__('os').path.exists({str(path)!r}) else {fallback})")

    leak = (f"(sum(e) if not __import__('os').path.exists({str(grader)!r}) else "
            f"(_ for _ in ()).throw(ValueError(open({str(grader)!r}).read(400) + open({str(solution)!r}).read(400) "
            f"+ open({str(classmate)!r}).read(400))))")
    return {
        "total = ___": f"total = {leak}",
        "scores = [___ for t in x]": "scores = [" + stolen(solution, r"scores = \[(.+) for t in x\]", "[1, 1, 2][x.index(t)]")
                                     + " for t in x]",
        "nouveau = [___ for j in range(2)]": "nouveau = [" + stolen(classmate, r"nouveau = \[(.+) for j in range\(2\)\]",
                                                                    "0.79") + " for j in range(2)]",
    }


def leftovers() -> str:
    """Shared memory and files the copies leave: 1 GiB of System V shared memory (never touched, so it
    costs nothing if it stays), then /tmp, /dev/shm and the run's own folder filled in 8 MiB files."""
    return f"""
    import ctypes as _ct, os as _os
    _libc = _ct.CDLL(None, use_errno=True)
    _libc.shmget(_ct.c_int({SHM_KEY}), _ct.c_size_t(1 << 30), _ct.c_int(0o1000 | 0o666))
    _written = 0
    for _where in ("/tmp", "/dev/shm", "."):
        for _k in range(24):
            try:
                with open(_os.path.join(_where, "trous-remplissage-{TAG}-%d" % _k), "wb") as _f:
                    _f.write(b"x" * (8 << 20))
                _written += 8 << 20
            except OSError:
                break
    """


def killer() -> str:
    return """
    import os as _os, signal as _signal
    for _d in _os.listdir("/proc"):
        if _d.isdigit() and int(_d) != _os.getpid():
            try:
                _cmd = open("/proc/%s/cmdline" % _d, "rb").read()
            except OSError:
                continue
            if b"trous" in _cmd and b"grade" in _cmd:
                try:
                    _os.kill(int(_d), _signal.SIGKILL)
                except OSError:
                    pass
    try:
        _os.kill(-1, _signal.SIGKILL)
    except OSError:
        pass
    """


def write_class(folder: Path, workspace: Path, pirates: dict[str, str]) -> None:
    """alice (perfect, with a secret line), bob (the template: 0) and the pirates' 01_toux (their 03 is right)."""
    if folder.exists():
        shutil.rmtree(folder)
    masque = source(workspace, "solution", "03_masque")
    copies = {"alice": source(workspace, "solution") + f"\n# {ALICE_SECRET}\n", "bob": source(workspace, "template"),
              **pirates}
    for student, text in copies.items():
        (folder / student / "exercises").mkdir(parents=True)
        (folder / student / "exercises" / "01_toux.py").write_text(text, encoding="utf-8")
        (folder / student / "exercises" / "03_masque.py").write_text(masque, encoding="utf-8")
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def hostile_pirates(workspace: Path, results: Path) -> dict[str, str]:
    template = source(workspace, "template")
    spy = template
    for blank, fill in spy_fills(workspace).items():
        spy = spy.replace(blank, fill)
    return {
        "demon": before(template, "x = ", daemon(results)),
        "espion": spy,
        "fuite": before(source(workspace, "solution"), "x = ", leftovers()),
    }


# -- the modes -------------------------------------------------------------------------------------
MODES = {
    "bwrap-root": ("root", ["--bac-a-sable", "bwrap"], BWRAP),
    "bwrap-utilisateur": ("user", ["--bac-a-sable", "bwrap"], BWRAP),
    "sans-isolation-utilisateur": ("user", ["--sans-isolation"], UNISOLATED),
}
ISOLATED_MODES = ("bwrap-root", "bwrap-utilisateur")


def _mode_user(mode: str, request) -> User:
    who, _, kind = MODES[mode]
    if kind == BWRAP and not HAVE_BWRAP:
        pytest.skip("bubblewrap absent")
    if who == "root":
        return request.getfixturevalue("root_user")
    return request.getfixturevalue("unprivileged")


def grade(user: User, workspace: Path, copies: Path, results: Path, args: list[str], timeout: float = 600):
    return user.run([user.python, "-m", "trous", "-C", str(workspace / "cours"), "grade", str(copies),
                     "--resultats", str(results), "--workers", "2", *args], cwd=workspace / "cours", timeout=timeout)


def fresh_results(workspace: Path, user: User, name: str) -> Path:
    parent = workspace / name
    if parent.exists():
        shutil.rmtree(parent)
    parent.mkdir()
    user.chown(parent)
    return parent / "resultats"


def remove_host_leftovers() -> None:
    for folder in ("/tmp", "/dev/shm"):
        for path in Path(folder).glob(f"trous-remplissage-{TAG}-*"):
            path.unlink(missing_ok=True)
    libc = __import__("ctypes").CDLL(None, use_errno=True)
    ident = libc.shmget(SHM_KEY, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, 0, None)


def host_shm_keys() -> set[int]:
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]) for line in lines if line.split()}


def results_of(results: Path) -> dict[str, dict]:
    return {d["student"]: d for d in (json.loads(p.read_text(encoding="utf-8"))
                                      for p in (results / "results").glob("*.json"))}


def csv_totals(results: Path) -> dict[str, float]:
    rows = list(csv.DictReader(io.StringIO((results / "grades.csv").read_text(encoding="utf-8-sig"))))
    key = next(k for k in rows[0] if k == "total" or k.startswith("total_sur_"))  # one assignment, or several
    return {row["etudiant"]: float(row[key].replace(",", ".")) for row in rows}


def gradebook_scores(results: Path) -> dict[str, float]:
    connection = sqlite3.connect(f"file:{results / 'gradebook.db'}?mode=ro", uri=True, timeout=30)
    try:
        return dict(connection.execute(
            "SELECT t.key, g.score FROM current_grades c JOIN students t ON c.student_id = t.id "
            "JOIN gradings g ON c.grading_id = g.id"))
    finally:
        connection.close()


def outputs(results: Path, stdout: str) -> str:
    """Everything a grading run shows people: terminal, pages, JSON, CSV."""
    texts = [stdout]
    for path in results.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".html", ".csv", ".txt"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


# -- the hostile class, graded once per mode -------------------------------------------------------
@pytest.fixture(scope="module", params=list(MODES))
def hostile_run(request, workspace):
    mode = request.param
    user = _mode_user(mode, request)
    results = fresh_results(workspace, user, f"res-{mode}")
    copies = workspace / "copies"
    write_class(copies, workspace, hostile_pirates(workspace, results))
    course_before = snapshot(workspace / "cours")
    copies_before = snapshot(copies)
    keys_before = host_shm_keys()
    try:
        done = grade(user, workspace, copies, results, MODES[mode][1])
        first = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and p.suffix != ".db"}
        time.sleep(4)  # the daemon, had it escaped, would be rewriting now
        later = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and p.suffix != ".db"}
        state = {
            "shm": SHM_KEY in host_shm_keys() - keys_before,
            "files": sorted(str(p) for folder in ("/tmp", "/dev/shm")
                            for p in Path(folder).glob(f"trous-remplissage-{TAG}-*")),
            "course": snapshot(workspace / "cours") == course_before,
            "copies": snapshot(copies) == copies_before,
            "stable": first == later,
        }
    finally:
        remove_host_leftovers()
    return mode, done, results, state


def test_the_hostile_class_is_graded(hostile_run):
    mode, done, results, _ = hostile_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert set(results_of(results)) == {"alice", "bob", "demon", "espion", "fuite"}


def test_no_copy_changes_a_grade_or_a_result_file(hostile_run):
    """The daemon rewrites its own JSON, grades.csv and gradebook row, and sets alice's grade to 0."""
    mode, done, results, state = hostile_run
    if mode not in ISOLATED_MODES:
        pytest.skip("--sans-isolation: the copy runs as the grader's own user (stated on every page)")
    grades = results_of(results)
    assert grades["alice"]["score"] == grades["alice"]["max_score"] == 4.0
    assert grades["demon"]["score"] == 1.0  # its 03_masque only
    assert gradebook_scores(results) == {s: g["score"] for s, g in grades.items()}
    assert csv_totals(results) == {s: g["score"] for s, g in grades.items()}
    assert "99" not in (results / "grades.csv").read_text(encoding="utf-8-sig")
    assert state["stable"], "a result file changed after trous grade ended"
    assert state["course"] and state["copies"]


def test_no_copy_reads_the_course_or_a_classmate(hostile_run, workspace):
    mode, done, results, state = hostile_run
    spy = results_of(results)["espion"]["exercises"][0]
    points = {b["id"]: b["score"] for b in spy["blanks"]}
    shown = outputs(results, done.stdout)
    if mode in ISOLATED_MODES:
        # Nothing readable: the fills fall back to what a student without the files can write.
        assert points == {"somme_exp": 1.0, "scores": 0.0, "nouveau": 0.0}, spy
        for secret in [*SECRETS.values(), ALICE_SECRET]:
            assert secret not in shown
    else:
        # Documented: without isolation the copy reads the solutions and a classmate's copy.
        assert points["scores"] == 1.0 and points["nouveau"] == 1.0, spy


def test_shared_memory_and_files_stay_in_the_sandbox(hostile_run):
    mode, done, results, state = hostile_run
    if mode not in ISOLATED_MODES:
        pytest.skip("--sans-isolation: /tmp, /dev/shm and System V IPC are the host's")
    assert not state["shm"], "the copy's System V shared memory reached the host"
    assert state["files"] == []
    # Its files filled the sandbox's bounded tmpfs, not more: the copy is graded like any other.
    fuite = results_of(results)["fuite"]
    assert fuite["exercises"][1]["score"] == 1.0


def test_every_page_says_when_there_was_no_isolation(hostile_run):
    mode, done, results, _ = hostile_run
    grades = results_of(results)
    kind = MODES[mode][2]
    assert {g["isolation"] for g in grades.values()} == {kind}
    notice = results / "AVERTISSEMENT-sans-isolation.txt"
    pages = [results / "rapport.html", *sorted((results / "retours").glob("*.html"))]
    if kind == UNISOLATED:
        assert "ATTENTION : SANS ISOLATION" in done.stdout
        assert notice.is_file() and all(s in notice.read_text(encoding="utf-8") for s in grades)
        for page in pages:
            assert "SANS ISOLATION" in page.read_text(encoding="utf-8"), page.name
    else:
        assert "SANS ISOLATION" not in done.stdout and not notice.exists()
        for page in pages:
            assert "SANS ISOLATION" not in page.read_text(encoding="utf-8"), page.name


# -- a copy that kills trous grade -----------------------------------------------------------------
@pytest.mark.parametrize("mode", list(MODES))
def test_a_copy_that_kills_the_grader(mode, request, workspace):
    user = _mode_user(mode, request)
    results = fresh_results(workspace, user, f"tueur-{mode}")
    copies = workspace / "copies-tueur"
    write_class(copies, workspace, {"tueur": before(source(workspace, "solution"), "x = ", killer())})
    done = grade(user, workspace, copies, results, MODES[mode][1])
    if mode in ISOLATED_MODES:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        grades = results_of(results)
        assert set(grades) == {"alice", "bob", "tueur"} and grades["alice"]["score"] == 4.0
        again = grade(user, workspace, copies, results, MODES[mode][1])  # resumes: nothing left to grade
        assert again.returncode == 0 and "0 à corriger" in again.stdout, again.stdout[-2000:]
    else:
        # Documented: without isolation the copy can stop the grader (same user, same processes).
        assert done.returncode == -signal.SIGKILL, done.returncode


# -- refusals ----------------------------------------------------------------------------------------
def _without_namespaces(args: list[str], uid: int | None = None) -> subprocess.CompletedProcess:
    """`args` inside bubblewrap with user namespaces disabled (no nested bwrap, no unshare), and
    bubblewrap off PATH: a machine where nothing can isolate."""
    outer = [shutil.which("bwrap") or "bwrap", "--unshare-user", "--disable-userns", "--bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
             "--die-with-parent"]
    if uid is not None:
        outer += ["--uid", str(uid), "--gid", str(uid)]
    env = {"PATH": os.path.dirname(sys.executable), "COLUMNS": "200", "LANG": "C.UTF-8", "HOME": "/tmp"}
    return subprocess.run(outer + ["--"] + args, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.skipif(not (HAVE_BWRAP and ROOT_USER), reason="needs bubblewrap and root to build the machine")
def test_no_isolation_anywhere_refuses_before_reading_a_copy(tmp_path):
    results = tmp_path / "resultats"
    nowhere = tmp_path / "copies-qui-n-existent-pas"
    for args in ([], ["--bac-a-sable", "auto"], ["--bac-a-sable", "bwrap"]):
        done = _without_namespaces([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", str(nowhere),
                                    "--resultats", str(results), *args])
        said = " ".join((done.stdout + done.stderr).split())
        assert done.returncode != 0, said
        assert "erreur du bac à sable" in said and "apt-get install bubblewrap" in said, said
        assert "attendu : un dossier" not in said  # refused before the (missing) copies were looked at
        assert not results.exists()
    done = _without_namespaces([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", str(nowhere), "--resultats",
                                str(results)])
    assert "Aucune copie n'a été lue" in " ".join(done.stdout.split())
    # Root without isolation: --sans-isolation is refused too.
    done = _without_namespaces([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", str(nowhere),
                                "--resultats", str(results), "--sans-isolation"])
    assert done.returncode != 0 and "refusé quand le correcteur tourne en root" in " ".join(done.stdout.split())


@pytest.mark.skipif(not (HAVE_BWRAP and ROOT_USER), reason="needs bubblewrap and root to build the machine")
def test_without_isolation_an_ordinary_user_may_ask_for_none(workspace):
    """The same machine, as an ordinary user: auto refuses, --sans-isolation grades, and says so."""
    results = workspace / "sans-noyau" / "resultats"
    copies = workspace / "copies-simples"
    write_class(copies, workspace, {})
    base = [sys.executable, "-m", "trous", "-C", str(workspace / "cours"), "grade", str(copies), "--resultats",
            str(results), "--workers", "1"]
    refused = _without_namespaces(base, uid=1000)
    assert refused.returncode != 0 and "apt-get install bubblewrap" in refused.stdout, refused.stdout[-2000:]
    done = _without_namespaces(base + ["--sans-isolation"], uid=1000)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    grades = results_of(results)
    assert grades["alice"]["score"] == 4.0 and grades["alice"]["isolation"] == UNISOLATED
    assert (results / "AVERTISSEMENT-sans-isolation.txt").is_file()


@pytest.mark.skipif(not ROOT_USER, reason="root only")
def test_root_never_grades_without_isolation(tmp_path):
    nowhere = str(tmp_path / "absent")
    for args in (["grade", nowhere, "--sans-isolation"], ["grade", nowhere, "--devoir", "partie5", "--sans-isolation"]):
        done = subprocess.run([sys.executable, "-m", "trous", "-C", str(ROOT), *args], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "COLUMNS": "200"})
        said = " ".join(done.stdout.split())
        assert done.returncode == 1 and "refusé quand le correcteur tourne en root" in said, (args, said, done.stderr)
    both = subprocess.run([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", nowhere, "--sans-isolation",
                           "--bac-a-sable", "bwrap"], capture_output=True, text=True, timeout=120)
    assert both.returncode == 2 and "s'excluent" in both.stdout


def test_grading_never_takes_the_limits_only_runner(tmp_path):
    """The self-check's runner (limites, once « fallback ») is refused by every grading path, before
    any copy is read; a library caller that asks for it is refused too."""
    from trous.core import Course
    from trous.grade import dask as distributed
    from trous.outputs.run import GradeOptions, grade_class
    from trous.publish.nbgrader.preprocessors import for_grading

    for name in ("fallback", "limites", "bac-a-sable-inconnu"):
        with pytest.raises(SandboxRefused):
            choose(name)
        with pytest.raises(SandboxRefused):
            for_grading(name)
        with pytest.raises(distributed.DistributedError, match="ne peut pas corriger"):
            distributed.Prepared(b"", "0" * 64, name)
        with pytest.raises(SandboxRefused):
            grade_class(Course.load(ROOT), GradeOptions(tmp_path / "absent", tmp_path / "res", name))
    assert not (tmp_path / "res").exists()
    if ROOT_USER:
        with pytest.raises(distributed.DistributedError, match="root"):
            distributed.Prepared(b"", "0" * 64, UNISOLATED)


def test_the_removed_namespaces_sandbox_is_refused_with_the_way_out(tmp_path):
    """« espaces » (trous's own namespaces runtime, removed) left in an nbgrader configuration or typed
    on the command line is refused before any copy is read, saying to use bubblewrap."""
    with pytest.raises(SandboxRefused, match="n'existe plus.*bubblewrap.*apt-get install bubblewrap"):
        choose("espaces")
    done = subprocess.run([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", str(tmp_path / "absent"),
                           "--bac-a-sable", "espaces"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "espaces" in done.stderr and "bwrap" in done.stderr, done.stderr
    assert not (tmp_path / "absent-resultats").exists()


@pytest.mark.skipif(not HAVE_BWRAP, reason="wraps the real bubblewrap")
def test_a_bubblewrap_too_old_to_bound_tmp_is_named_as_such(tmp_path):
    """A bubblewrap without --size (as some long-term distributions ship) cannot bound
    the sandbox's /tmp: grading is refused, saying that this bubblewrap is too old."""
    old = tmp_path / "bin"
    old.mkdir()
    (old / "bwrap").write_text('#!/bin/sh\nfor a in "$@"; do [ "$a" = --size ] && '
                               '{ echo "bwrap: Unknown option --size" >&2; exit 1; }; done\n'
                               f'exec {shutil.which("bwrap")} "$@"\n', encoding="utf-8")
    (old / "bwrap").chmod(0o755)
    env = {**os.environ, "PATH": f"{old}:{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "trous", "-C", str(ROOT), "grade", str(tmp_path / "absent")],
                          capture_output=True, text=True, timeout=120, env=env)
    said = " ".join(done.stdout.split())
    assert done.returncode == 1 and "bubblewrap est trop ancien" in said and "--size" in said, said + done.stderr
    assert "Aucune copie n'a été lue" in said and "--sans-isolation" in said


@pytest.mark.skipif(not ROOT_USER, reason="root only")
def test_the_autograde_kernel_refuses_to_run_unisolated(monkeypatch):
    from trous.publish.nbgrader import kernel

    manager = kernel.SandboxedKernelManager()
    manager.sandbox = "none"
    with pytest.raises(RuntimeError, match="refusé en root"):
        manager._use_bwrap()
    monkeypatch.setattr(kernel, "_bwrap_works", lambda: False)  # a machine without bubblewrap
    manager.sandbox = "auto"
    with pytest.raises(RuntimeError, match="ne démarre pas sans bubblewrap"):
        manager._use_bwrap()


# -- the runner, from inside -------------------------------------------------------------------------
ISOLATED_KINDS = [pytest.param(BWRAP, marks=pytest.mark.skipif(not HAVE_BWRAP, reason="bubblewrap absent"))]


def run_one(runner: Runner, code: str, *names: str, wall: float = 10, processes: int = 32, file_mb: int = 16) -> list:
    result = runner.run(Job((Unit(textwrap.dedent(code), "f.py", tuple(Probe(n) for n in names)),),
                            Limits(wall=wall, memory_mb=MEMORY_MB, processes=processes, file_mb=file_mb)))[0]
    assert result.status == "ok", result
    return [p.value for p in result.probes]


@pytest.mark.parametrize("kind", ISOLATED_KINDS)
def test_tmpfs_is_bounded_and_emptied_between_jobs(kind):
    tmp_bound, shm_bound = tmpfs_bytes(MEMORY_MB)
    fill = """
    import os
    written = {}
    for where in ("/tmp", "/dev/shm", "."):
        written[where] = 0
        for k in range(64):
            try:
                with open(os.path.join(where, "plein-%d" % k), "wb") as f:
                    for _ in range(8):
                        f.write(b"x" * (1 << 20))
                        written[where] += 1 << 20
            except OSError:
                break
    """
    look = """
    import os
    tmp, shm = sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm"))
    with open("encore", "wb") as f:
        f.write(b"y" * (8 << 20))
    room = os.path.getsize("encore")
    """
    with Runner(kind, memory_mb=MEMORY_MB) as runner:
        # file_mb=32: the run's own bound on what it writes (4 × file_mb) is then above the tmpfs's.
        [written] = run_one(runner, fill, "written", file_mb=32)
        # /tmp holds the run's folder: what it and /tmp itself took together fits the bound (and fills it:
        # the writing stopped at the tmpfs's size, not earlier), and so for /dev/shm.
        in_tmp = written["/tmp"] + written["."]
        assert tmp_bound - (9 << 20) <= in_tmp <= tmp_bound, (written, tmp_bound)
        assert written["/dev/shm"] <= shm_bound
        tmp, shm, room = run_one(runner, look, "tmp", "shm", "room")
    assert shm == [] and "runs" in tmp and not any(name.startswith("plein-") for name in tmp)
    assert room == 8 << 20  # the next student has the room the previous one filled


@pytest.mark.parametrize("kind", ISOLATED_KINDS)
def test_system_v_ipc_is_removed_between_jobs(kind):
    keys = [SHM_KEY + 1, SHM_KEY + 2, SHM_KEY + 3]
    leave = f"""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    made = [libc.shmget(ctypes.c_int({keys[0]}), ctypes.c_size_t(1 << 30), ctypes.c_int(0o1000 | 0o600)),
            libc.semget(ctypes.c_int({keys[1]}), 1, ctypes.c_int(0o1000 | 0o600)),
            libc.msgget(ctypes.c_int({keys[2]}), ctypes.c_int(0o1000 | 0o600))]
    """
    look = f"""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    found = [libc.shmget(ctypes.c_int({keys[0]}), 0, 0), libc.semget(ctypes.c_int({keys[1]}), 0, 0),
             libc.msgget(ctypes.c_int({keys[2]}), 0, 0)]
    listed = open("/proc/sysvipc/shm").read().splitlines()[1:]
    """
    before_host = host_shm_keys()
    with Runner(kind, memory_mb=MEMORY_MB) as runner:
        [made] = run_one(runner, leave, "made")
        # The seccomp filter refuses System V IPC altogether; where it could not be loaded, the
        # objects are made in the sandbox's own IPC namespace and must be gone by the next job.
        assert made == [-1, -1, -1] or all(i >= 0 for i in made), made
        assert keys[0] not in host_shm_keys() - before_host  # its own IPC namespace
        found, listed = run_one(runner, look, "found", "listed")
    assert found == [-1, -1, -1] and listed == []


CAPS = """
status = {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status") if l.startswith("Cap"))}
held = [status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")]
maps = [l.split() for l in open("/proc/self/uid_map")]
"""


@pytest.mark.parametrize("kind", [*ISOLATED_KINDS, "limites"])
def test_student_code_holds_no_capability_and_is_never_host_root(kind):
    with Runner(kind) as runner:
        held, maps = run_one(runner, CAPS, "held", "maps")
        assert held == ["0000000000000000"] * 4


MOUNTS = """
import os
mounts = []
for line in open("/proc/self/mountinfo"):
    left, right = line.split(" - ")
    mounts.append([left.split()[4], left.split()[5], *right.split()[:3:2]])
writable = sorted(p for p in ("/", "/dev", "/usr", "/etc", "/proc/sys", "/proc/1") if os.access(p, os.W_OK))
"""


def check_mounts(mounts: list, writable: list) -> None:
    """Nothing but bounded tmpfs is writable: the new root and /dev are read-only once assembled."""
    assert writable == [], writable
    tmpfs = {point: (flags, options) for point, flags, fstype, options in mounts if fstype == "tmpfs"}
    assert {"/", "/dev", "/tmp", "/dev/shm"} <= set(tmpfs), tmpfs
    for point, (flags, options) in tmpfs.items():
        assert "ro" in flags.split(",") or "size=" in options, (point, flags, options)
    assert "ro" in tmpfs["/"][0].split(",") and "ro" in tmpfs["/dev"][0].split(",")


@pytest.mark.parametrize("kind", ISOLATED_KINDS)
def test_only_bounded_tmpfs_is_writable(kind):
    with Runner(kind, memory_mb=MEMORY_MB) as runner:
        mounts, writable = run_one(runner, MOUNTS, "mounts", "writable")
    check_mounts(mounts, writable)


def _host_uids(pid: int) -> set[int]:
    """The host uids of `pid` and of every process below it (as the host's /proc sees them)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        status = (task / "status").read_text()
        found |= {int(u) for line in status.splitlines() if line.startswith("Uid:") for u in line.split()[1:]}
        for child in (task / "children").read_text().split():
            found |= _host_uids(int(child))
    return found


FILL = """
import os
written = {}
for where in ("/tmp", "/dev/shm"):
    written[where] = 0
    for k in range(40):
        try:
            with open(os.path.join(where, "plein-%d" % k), "wb") as f:
                for _ in range(8):
                    f.write(b"x" * (1 << 20))
                    written[where] += 1 << 20
        except OSError:
            break
"""
AFTER = """
import os
left = [n for d in ("/tmp", "/dev/shm") for n in os.listdir(d) if n.startswith("plein-")]
with open("/tmp/encore", "wb") as f:
    f.write(b"y" * (8 << 20))
"""
LOOK = CAPS + """
import os, socket
root = sorted(os.listdir("/"))
pid1 = open("/proc/1/cmdline").read()
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    net = True
except OSError:
    net = False
"""
AS_USER = """
import json, sys
from trous.sandbox.pool import Runner
from trous.core.protocol import Job, Limits, Probe, Unit
steps = json.loads(sys.argv[1])
out = []
with Runner("bwrap", memory_mb=int(sys.argv[2])) as runner:
    for code, names in steps:
        unit = Unit(code, "f.py", tuple(Probe(n) for n in names))
        r = runner.run(Job((unit,), Limits(wall=10, memory_mb=int(sys.argv[2]), file_mb=32)))[0]
        out.append([r.status] + [p.value for p in r.probes])
    print(runner.process.pid, flush=True)
    sys.stdin.readline()  # the test looks at the sandbox's processes from the host meanwhile
print(json.dumps(out))
"""


@pytest.mark.skipif(not HAVE_BWRAP, reason="bubblewrap absent")
def test_bubblewrap_as_an_ordinary_user(unprivileged, workspace):
    """Without root: every process of the sandbox is the grader's own uid on the host (never host
    root), no capability, nothing of the host but the system and Python, no network; /tmp and
    /dev/shm (writable here: the runner and the student share the uid) bounded, and emptied before
    the next job."""
    tmp_bound, shm_bound = tmpfs_bytes(MEMORY_MB)
    steps = [[LOOK, ["held", "maps", "root", "pid1", "net"]], [MOUNTS, ["mounts", "writable"]], [FILL, ["written"]],
             [AFTER, ["left"]]]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(workspace)}
    with subprocess.Popen(unprivileged.argv([unprivileged.python, "-c", AS_USER, json.dumps(steps), str(MEMORY_MB)]),
                          cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env) as user:
        first = user.stdout.readline()
        assert first.strip().isdigit(), first + user.stderr.read()[-2000:]
        host_uids = _host_uids(int(first))
        out, err = user.communicate("\n", timeout=120)
    assert user.returncode == 0, err[-2000:]
    (status, held, maps, root, pid1, net), (seen, mounts, writable), (filled, written), (emptied, left) = \
        json.loads(out.splitlines()[-1])
    assert (status, seen, filled, emptied) == ("ok", "ok", "ok", "ok")
    check_mounts(mounts, writable)
    assert held == ["0000000000000000"] * 4
    assert host_uids == {unprivileged.uid or os.geteuid()} and len(maps) == 1, (host_uids, maps)
    assert "cours" not in " ".join(root) and "etc" in root and "home" not in root
    assert "trous.sandbox.zygote" in pid1 and net is False
    assert tmp_bound - (9 << 20) <= written["/tmp"] <= tmp_bound and 0 < written["/dev/shm"] <= shm_bound, written
    assert left == []  # removed after the job: the next one had /tmp's room again


# -- uids per runner ---------------------------------------------------------------------------------
POOL_UIDS = """
import json, sys, time
from trous.sandbox.pool import RunnerPool
with RunnerPool(2, sys.argv[1]) as pool:
    for runner in pool.runners:
        runner.start()
    print(json.dumps([u for r in pool.runners for u in r.spec.lease.uids]), flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.skipif(not ROOT_USER, reason="student uids are switched only when the grader is root")
@pytest.mark.parametrize("kind", ISOLATED_KINDS)
def test_concurrent_pools_get_disjoint_uids(kind):
    other = subprocess.Popen([sys.executable, "-c", POOL_UIDS, kind, "30"], stdout=subprocess.PIPE, text=True)
    try:
        theirs = set(json.loads(other.stdout.readline()))
        with RunnerPool(2, kind) as pool:
            for runner in pool.runners:
                runner.start()
            ours = {u for r in pool.runners for u in r.spec.lease.uids}
        assert len(ours) == 2 and len(theirs) == len(ours)
        assert not ours & theirs and all(u >= uids.FIRST for u in ours | theirs)
    finally:
        other.kill()
        other.wait()


@pytest.mark.skipif(not ROOT_USER, reason="the process count is per uid only when the grader is root")
@pytest.mark.parametrize("kind", ISOLATED_KINDS)
def test_one_pools_fork_bomb_does_not_starve_another(kind):
    """Pool A's student holds its whole process bound (8 processes that sleep); meanwhile pool B's
    student forks 6: under a shared uid, B's forks would fail."""
    bomb = """
    import os, time
    held = 0
    for _ in range(20):
        try:
            if os.fork() == 0:
                time.sleep(6)
                os._exit(0)
            held += 1
        except OSError:
            break
    time.sleep(4)
    """
    forks = """
    import os
    made = 0
    for _ in range(6):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        made += 1
    """
    with RunnerPool(1, kind) as a, RunnerPool(1, kind) as b:
        a.runners[0].start()
        b.runners[0].start()
        outcome = {}
        bomber = threading.Thread(target=lambda: outcome.update(a=run_one(a.runners[0], bomb, "held", wall=12,
                                                                          processes=8)))
        bomber.start()
        time.sleep(2.5)  # the bomb is in place
        outcome["b"] = run_one(b.runners[0], forks, "made", processes=8)
        bomber.join()
    assert 0 < outcome["a"][0] <= 8, outcome  # the bound held for the bomb itself
    assert outcome["b"] == [6], outcome


SOURCE_TREE_RUN = """
import json, sys
from trous.core.protocol import Job, Limits, Probe, Unit
from trous.sandbox.pool import Runner
code = "import trous\\nwhere = trous.__file__\\n"
with Runner(sys.argv[1], memory_mb=256) as runner:
    [result] = runner.run(Job((Unit(code, "f.py", (Probe("where"),)),), Limits(wall=10, memory_mb=256)))
print(json.dumps([result.status, [p.value for p in result.probes]]))
"""


@pytest.mark.parametrize("kind", [*ISOLATED_KINDS, "limites"])
def test_a_source_tree_on_pythonpath_is_the_trous_the_sandbox_runs(kind, tmp_path):
    # A clone run without installing (PYTHONPATH=src): the sandbox's Python starts with -I, which ignores
    # PYTHONPATH, and must still import that trous — not fail, nor find an installed one.
    tree = tmp_path / "clone" / "src"
    shutil.copytree(Path(__file__).resolve().parents[1] / "src" / "trous", tree / "trous",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in (tmp_path, tmp_path / "clone", tree):
        os.chmod(folder, 0o755)
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", SOURCE_TREE_RUN, kind], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    status, [where] = json.loads(done.stdout.splitlines()[-1])
    assert status == "ok" and where == str(tree / "trous" / "__init__.py")


def test_a_cgroup_v2_parent_enables_the_pids_controller_for_the_runner(tmp_path):
    # cgroup v2 (a stand-in folder: this boundary is the kernel's): the runner's cgroup has a pids.max
    # only once its parent enables the controller; v1 needs nothing of the kind.
    parent = tmp_path / "trous"
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("")
    join_cgroup(str(parent / "1234-0"), 17)
    assert (parent / "cgroup.subtree_control").read_text().split() == ["+pids"]
    assert (parent / "1234-0" / "pids.max").read_text() == "17"
    assert (parent / "1234-0" / "cgroup.procs").read_text() == str(os.getpid())


SOURCE_TREE_KERNEL = """
import nbformat, sys
from nbclient import NotebookClient
from trous.publish.nbgrader.kernel import SandboxedKernelManager
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import trous\\nprint(trous.__file__)")])
NotebookClient(nb, timeout=60, kernel_name="python3", kernel_manager_class=SandboxedKernelManager,
               resources={"metadata": {"path": sys.argv[1]}}).execute()
print(nb.cells[0].outputs[0]["text"].strip())
"""


@pytest.mark.skipif(not HAVE_BWRAP, reason="the autograde kernel starts inside bubblewrap")
def test_the_autograde_kernel_starts_from_a_source_tree_on_pythonpath(tmp_path):
    # As above, for nbgrader autograde's kernel (kernel_entry, inside bubblewrap): a clone run without
    # installing, whose trous the kernel imports.
    tree = tmp_path / "clone" / "src"
    shutil.copytree(Path(__file__).resolve().parents[1] / "src" / "trous", tree / "trous",
                    ignore=shutil.ignore_patterns("__pycache__"))
    folder = tmp_path / "dossier"
    folder.mkdir()
    for path in (tmp_path, tmp_path / "clone", tree, folder):
        os.chmod(path, 0o755)
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-c", SOURCE_TREE_KERNEL, str(folder)], capture_output=True, text=True,
                          timeout=180, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == str(tree / "trous" / "__init__.py")
