"""Grading on a Dask cluster: `trous grade COPIES --ordonnanceur tcp://host:8786`.

One Dask task per submission does on a worker what a local grading does (the same `Grader`, sandbox
and bounds) and sends back the grade as JSON; only this process writes the gradebook. The course
travels as one deterministic `.tar.gz`; each worker process unpacks it once and checks the teacher's
fingerprint, and a grade of another grader version is refused: one gradebook never mixes two. A task
has no side effect outside its worker's memory, so the scheduler may give a dead worker's tasks to
another one. Dask (`trous[distributed]`) is imported only when a cluster is asked for.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import trous

from ..core.course import COURSE_FILE, TEMPLATES_DIR, Course, memory_bound
from ..core.grades import SubmissionGrade
from ..core.submission import Submission
from ..sandbox import backend as sandbox_mod
from ..sandbox.pool import RunnerPool
from .engine import Grader, GraderError, fingerprint

ENV_ADDRESS = "TROUS_SCHEDULER"  # default of --ordonnanceur (a site setting, not a course one)
COURSE_DIRS = ("exercises", "solutions", "graders", str(TEMPLATES_DIR))
SKIPPED = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
MAX_ARCHIVE = 64 << 20
# Seconds to reach the scheduler, then to see a first worker, before giving up.
TIMEOUT = float(os.environ.get("TROUS_DASK_TIMEOUT", "60"))


class DistributedError(GraderError):
    """The cluster cannot grade this course (a worker refuses it, a grade of another version)."""


class ClusterUnavailable(Exception):
    """No cluster to grade on: Dask not installed, no address, scheduler unreachable, no worker."""


@dataclass(frozen=True)
class CourseArchive:
    version: str  # the engine's fingerprint of the course (the grader version)
    data: bytes  # a deterministic .tar.gz: the same course always gives the same bytes

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def key(self) -> str:
        return f"trous-cours-{self.version[:16]}-{self.sha[:16]}"


def course_files(course: Course) -> dict[str, Path]:
    """Archive name → file."""
    root = course.root
    files: dict[str, Path] = {COURSE_FILE: root / COURSE_FILE}
    for path in (p for folder in COURSE_DIRS for p in (root / folder).rglob("*")):
        skipped = SKIPPED.intersection(path.relative_to(root).parts[:-1])
        if path.is_file() and not skipped and not path.name.endswith((".pyc", ".pyo")):
            files[path.relative_to(root).as_posix()] = path
    for exercise in course.exercises:  # an exercise file may live elsewhere (course.yaml's `file:`)
        for path in (exercise.path, exercise.template_path, exercise.checks_path, exercise.solution_path,
                     exercise.grader_path):
            if path.is_file():
                try:
                    files.setdefault(path.resolve().relative_to(root).as_posix(), path)
                except ValueError:
                    raise DistributedError(f"{path} est hors du dossier du cours : les travailleurs ne "
                                           "pourraient pas le recevoir") from None
    return dict(sorted(files.items()))


def pack(course: Course) -> CourseArchive:
    buffer = io.BytesIO()
    # Fixed dates, owners and modes, sorted names, no gzip timestamp: same course, same bytes, same key.
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=6) as zipped:
        with tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, path in course_files(course).items():
                data = path.read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    if len(data) > MAX_ARCHIVE:
        raise DistributedError(f"le cours fait {len(data) >> 20} Mio compressé : trop gros pour être envoyé "
                               f"aux travailleurs (au plus {MAX_ARCHIVE >> 20} Mio)")
    return CourseArchive(fingerprint(course), data)


def unpack(data: bytes, dest: Path) -> None:
    """Regular files only, each inside `dest`: the archive comes over the network."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or not parts or member.name.startswith("/") or ".." in parts:
                raise DistributedError(f"archive du cours invalide : entrée « {member.name} » refusée")
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            with open(target, "wb") as out:
                shutil.copyfileobj(source, out)


class Prepared:
    """One course on one worker process: unpacked, loaded, and graded by its own runners."""

    def __init__(self, data: bytes, version: str, sandbox: str):
        where, threads = _dask_worker()
        _sweep_orphans()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{UNPACKED}{os.getpid()}-"))
        self.pool = self.grader = None
        self.users = 0  # tasks grading with it right now (guarded by _LOCK): never closed under them
        try:
            kind = sandbox_mod.choose(sandbox)  # the rules of `trous grade`, applied on this worker's machine
            unpack(data, self.folder)
            course = Course.load(self.folder)
            found = fingerprint(course)
            if found != version:
                raise DistributedError(
                    f"le travailleur {where} ne corrige pas avec la même version des correcteurs "
                    f"({found[:12]} au lieu de {version[:12]}) : même trous ({trous.__version__} ici) et même cours "
                    "partout, sinon les notes mélangeraient deux correcteurs")
            self.pool = RunnerPool(threads, mode=kind, memory_mb=memory_bound(course.exercises))
            self.grader = Grader(course, self.pool)
            self.grader.compute_references()  # once, before the worker's threads grade in parallel
            spec = self.pool.runners[0].spec
            self.kind = self.pool.kind
            self.description = spec.description if spec else self.kind
        except BaseException as exc:
            self.close()
            if isinstance(exc, Exception) and not isinstance(exc, GraderError):
                # A sandbox refused or that cannot start here: a GraderError, so that the run stops with
                # the reason instead of failing every copy one by one.
                raise DistributedError(f"le travailleur {where} ne peut pas corriger : {exc}") from None
            raise

    def close(self) -> None:
        if self.grader is not None:  # its graders' test worker processes, else they outlive the course
            self.grader.close()
        if self.pool is not None:
            self.pool.close()
        shutil.rmtree(self.folder, ignore_errors=True)


UNPACKED = "trous-cours-"  # + the worker's pid: a killed worker's course is found and removed later


def _sweep_orphans() -> None:
    """Remove the courses unpacked by killed worker processes of this machine (no atexit)."""
    for path in Path(tempfile.gettempdir()).glob(f"{UNPACKED}*-*"):
        pid = path.name[len(UNPACKED):].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


_PREPARED: dict[tuple[str, str, str], Prepared] = {}
_LOCK = threading.Lock()
KEEP = 2  # course versions a worker keeps ready (a re-grade after a grader change needs a second one)


def _dask_worker() -> tuple[str, int]:
    """This Dask worker's address and threads (outside a worker: this process's pid, 1)."""
    try:
        from distributed import get_worker  # noqa: PLC0415 - Dask only on a cluster

        worker = get_worker()
    except (ImportError, ValueError):
        return f"pid {os.getpid()}", 1
    return worker.address, max(1, int(getattr(getattr(worker, "state", worker), "nthreads", 1)))


@contextlib.contextmanager
def _prepared(data: bytes, version: str, sandbox: str) -> Iterator[Prepared]:
    key = (hashlib.sha256(data).hexdigest(), version, sandbox)  # a claimed version is always checked
    with _LOCK:  # the worker's other threads wait for the one that unpacks and starts the runners
        ready = _PREPARED.get(key)
        if ready is None:
            ready = Prepared(data, version, sandbox)
            _PREPARED[key] = ready
            for old in [k for k, p in _PREPARED.items() if k != key and p.users == 0][:max(0, len(_PREPARED) - KEEP)]:
                _PREPARED.pop(old).close()
        ready.users += 1
    try:
        yield ready
    finally:
        with _LOCK:
            ready.users -= 1


@atexit.register
def _close_all() -> None:
    with _LOCK:
        while _PREPARED:
            _PREPARED.popitem()[1].close()


def grade_task(course_data: bytes, version: str, sandbox: str, student: str,
               files: dict[str, bytes | None]) -> dict:
    with _prepared(course_data, version, sandbox) as ready:
        grade = ready.grader.grade(student, files)  # its memo bounded in bytes, across the worker's runs
    # The incidents are the teacher's, not the copy's: beside the grade, never in it.
    return {"grade": grade.to_json(), "sandbox": ready.kind, "description": ready.description,
            "incidents": list(grade.incidents)}


def course_task(data: bytes) -> bytes:
    """The course, as a task every grading task depends on (not scattered data): computed again if
    the worker holding it dies."""
    return data


def task_key(submission: Submission, archive: CourseArchive, sandbox: str) -> str:
    # The same copy, course and sandbox give the same key: two teachers grading it at once on one
    # cluster share the computation.
    settings = hashlib.sha256(f"{archive.version}\0{archive.sha}\0{sandbox}\0{submission.student}".encode()).hexdigest()
    return f"trous-note-{submission.digest[:16]}-{settings[:16]}"


def check(payload: dict, submission: Submission, archive: CourseArchive) -> SubmissionGrade:
    grade = SubmissionGrade.from_json(payload["grade"])
    if grade.grader_version != archive.version:
        raise DistributedError(
            f"{submission.student} : note donnée par une autre version des correcteurs "
            f"({grade.grader_version[:12]} au lieu de {archive.version[:12]}) : refusée, pour ne pas mélanger "
            "deux correcteurs dans le carnet de notes")
    if grade.student != submission.student:
        raise DistributedError(f"la note de {grade.student} est revenue pour la copie de {submission.student}")
    return grade


def dask_scheduler(course: Course, submissions: list[Submission], options, hooks) -> Iterator[SubmissionGrade]:
    """`trous grade`'s scheduler "dask" (see outputs/run.py's SCHEDULERS): grades as they come back."""
    address = getattr(options, "address", None) or os.environ.get(ENV_ADDRESS)
    if not address:
        raise ClusterUnavailable(f"adresse de l'ordonnanceur Dask manquante : --ordonnanceur tcp://hôte:8786 "
                               f"(ou la variable {ENV_ADDRESS})")
    sandbox = options.sandbox
    try:
        import distributed  # noqa: PLC0415
    except ImportError:
        raise ClusterUnavailable("Dask n'est pas installé : installe l'extra distribué : "
                                 "pip install 'trous[distributed]'") from None
    archive = pack(course)
    try:
        client = distributed.Client(address, timeout=TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ClusterUnavailable(f"impossible de joindre l'ordonnanceur Dask {address} : {exc}") from None
    futures: dict[str, tuple] = {}
    try:
        try:
            client.wait_for_workers(1, timeout=TIMEOUT)
        except (TimeoutError, OSError):
            raise ClusterUnavailable(f"aucun travailleur connecté à l'ordonnanceur {address} après "
                                   f"{TIMEOUT:.0f} s") from None
        threads = sum(client.nthreads().values()) or 1
        # Submissions go in a sliding window: a class of 10 000 copies never sits whole in the scheduler.
        window = max(32, 4 * threads)
        course_future = client.submit(course_task, archive.data, key=archive.key, pure=False)
        pending = iter(submissions)
        # with_results: results are fetched in the client's event loop as tasks finish, while this thread
        # records the previous ones, instead of one blocking round trip per copy.
        stream = distributed.as_completed(loop=client.loop, with_results=True, raise_errors=False)
        seen_kinds: set[str] = set()
        failures: list[str] = []

        def submit_next() -> None:
            submission = next(pending, None)
            if submission is None:
                return
            future = client.submit(grade_task, course_future, archive.version, sandbox, submission.student,
                                   submission.files, key=task_key(submission, archive, sandbox), pure=False,
                                   retries=1)
            futures[future.key] = (future, submission)
            stream.add(future)

        for _ in range(window):
            submit_next()
        for future, payload in stream:
            _, submission = futures.pop(future.key)
            submit_next()
            # Released at once: a result already here must not be computed again if the worker that
            # holds it dies now (the future's status can then change under us: trust the payload).
            future.release()
            if not isinstance(payload, dict):
                # An error comes as (type, exception, traceback); a cancelled task as its CancelledError.
                error = payload[1] if isinstance(payload, tuple) else payload
                if isinstance(error, GraderError):  # the course or a worker's setup: every task would fail
                    raise error
                failures.append(f"{submission.student} : {type(error).__name__}: {str(error)[:300]}")
                continue
            grade = check(payload, submission, archive)
            grade.isolation = str(payload.get("sandbox", ""))
            incidents = payload.get("incidents")
            grade.incidents = [str(i)[:2000] for i in incidents[:50]] if isinstance(incidents, list) else []
            if payload["sandbox"] not in seen_kinds:  # each kind once: every worker's isolation is shown
                seen_kinds.add(payload["sandbox"])
                hooks.sandbox(payload["sandbox"], payload["description"])
            yield grade
        if failures:
            raise DistributedError(f"{len(failures)} copie(s) non corrigée(s) par la grappe (les autres sont "
                                   "enregistrées ; relance la commande pour reprendre) :\n" + "\n".join(failures[:10]))
    finally:
        if futures:
            client.cancel([f for f, _ in futures.values()])
        client.close()

