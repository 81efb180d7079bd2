"""A throw-away PostgreSQL server for the gradebook tests, started from Debian's binaries.

The server lives in a temporary directory (data, socket, log), listens on a free port of 127.0.0.1 only,
trusts local connections (nobody else can reach it), and is stopped and deleted at the end of the
session. initdb refuses to run as root: as root, the server runs as the `postgres` system user (the
Debian package creates it). Tests that need it are skipped, with the reason, only when the binaries are
not installed (`apt-get install postgresql`, or scripts/install-system-deps.sh).

Each test gets its own database (`postgres_url`), so tests never see each other's rows.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

SERVER_USER = "postgres"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="trous-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_user = SERVER_USER if os.geteuid() == 0 else None
        self._names = itertools.count()
        if self.as_user:
            entry = pwd.getpwnam(self.as_user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    def _run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.as_user:
            command = ["runuser", "-u", self.as_user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=self.root)
        if done.returncode != 0:
            log = self.root / "server.log"
            raise RuntimeError(f"{' '.join(argv[:2])} a échoué ({done.returncode}) :\n{done.stdout}\n{done.stderr}\n"
                               + (log.read_text(errors="replace") if log.exists() else ""))
        return done

    def start(self) -> "PostgresServer":
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                  "--locale=C.UTF-8", "--no-sync")
        # Durability is pointless for a throw-away server: fsync off makes the suite faster.
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "start")
        return self

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its SQLAlchemy URL."""
        import psycopg  # noqa: PLC0415

        name = f"carnet_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server():
    bindir = binaries()
    if bindir is None:
        pytest.skip("PostgreSQL n'est pas installé (/usr/lib/postgresql/*/bin/initdb absent) : "
                    "apt-get install postgresql, ou scripts/install-system-deps.sh")
    pytest.importorskip("psycopg", reason="le pilote psycopg (extra trous[distributed]) n'est pas installé")
    server = PostgresServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    return postgres_server.new_database()


TABLES = ("students", "submissions", "gradings", "blank_grades", "current_grades", "runs")


def row_counts(book) -> dict[str, int]:
    """Row counts of a gradebook, read through a separate connection (as another process would): SQLite's
    read-only file, or a new connection to the PostgreSQL server."""
    if book.engine.url.get_backend_name() == "sqlite":
        from grading_support import gradebook_counts  # noqa: PLC0415

        return gradebook_counts(Path(book.path))
    from sqlalchemy import create_engine, text  # noqa: PLC0415

    engine = create_engine(book.engine.url)
    try:
        with engine.connect() as connection:
            return {table: connection.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
                    for table in TABLES}
    finally:
        engine.dispose()
