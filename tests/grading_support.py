"""Helpers for the grading tests: a small course cut from the real one, classes of copies, zips."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TROUS = [sys.executable, "-m", "trous"]


def mini_course(dest: Path, ids: tuple[str, ...] = ("01_toux",)) -> Path:
    """A course with only some exercises of the repository's (its four files each, same course.yaml)."""
    dest.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((ROOT / "course.yaml").read_text(encoding="utf-8"))
    for assignment in data["assignments"]:
        assignment["exercises"] = [e for e in assignment["exercises"] if e["id"] in ids]
    data["assignments"] = [a for a in data["assignments"] if a["exercises"]]
    (dest / "course.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for exercise_id in ids:
        for folder, name in (("exercises", f"{exercise_id}.py"), ("exercises", f"test_{exercise_id}.py"),
                             ("solutions", f"{exercise_id}.py"), ("graders", f"test_{exercise_id}.py")):
            (dest / folder).mkdir(exist_ok=True)
            shutil.copy(ROOT / folder / name, dest / folder / name)
    return dest


def make_classe():
    """examples/make_classe.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("make_classe", ROOT / "examples" / "make_classe.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_classe", module)
    spec.loader.exec_module(module)
    return module


def zip_of(files: dict[str, bytes], *, links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.create_system = 3  # Unix: external_attr holds the mode
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under folder: kind, bytes (or link target), mode and mtime, without following links."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                content = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                content = path.read_bytes()
            else:
                content = None
            state[str(path.relative_to(folder))] = (stat.S_IFMT(st.st_mode), content, st.st_mode, st.st_mtime_ns)
    return state


def run_trous(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*TROUS, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def gradebook_counts(db: Path) -> dict[str, int]:
    """Row counts read through a separate, read-only SQLite connection (as another process would)."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("students", "submissions", "gradings", "blank_grades", "current_grades", "runs")}
    finally:
        connection.close()
