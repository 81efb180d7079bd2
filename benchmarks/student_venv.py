"""A virtual environment built the way a student builds it, offline.

A student runs, in the edition's folder, `python -m venv .venv` and `pip install -r requirements.txt`:
trous comes from the edition's bundled wheel, its dependencies (numpy, pydantic, pytest, rich,
PyYAML…) from PyPI. Here PyPI is replaced by a folder of wheels repacked from this environment's
installed distributions — the dependency closure of trous's requirements and nothing else, at the
versions CI pins — so pip installs them as it would from PyPI (console scripts written for the new
venv, bytecode compiled), with no network and without the development plugins (hypothesis,
anyio…) that `--system-site-packages` would bring in.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trous.publish.edition import write_wheel  # noqa: E402

# Written by pip for the installation itself, not part of what a wheel ships.
INSTALL_ONLY = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(requirements: list[str]) -> list[metadata.Distribution]:
    """The installed distributions these requirements pull in (markers and extras honoured)."""
    found: dict[str, metadata.Distribution] = {}
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({**default_environment(),
                                                                               "extra": extra}):
            continue
        key = _key(requirement.name)
        if key in found:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"{requirement.name} n'est pas installé ici : impossible de préparer le venv élève")
        if (dist.read_text("direct_url.json") or "").find('"editable": true') >= 0:
            raise SystemExit(f"{requirement.name} est installé en mode éditable : impossible d'en faire une roue")
        found[key] = dist
        for extra_name in requirement.extras or {""}:
            todo += [(Requirement(r), extra_name) for r in dist.requires or []]
    return list(found.values())


def repack(dist: metadata.Distribution, out_dir: Path) -> Path:
    """The wheel this installed distribution came from, near enough for pip: its files as RECORD lists
    them, without bytecode (pip compiles it again) and without scripts (pip writes them again from
    entry_points.txt, for the new interpreter)."""
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    if not tags:
        raise SystemExit(f"{dist.metadata['Name']} : pas d'étiquette de roue (WHEEL) : impossible d'en refaire une")
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    info = f"{name}-{dist.version}.dist-info"
    files: dict[str, bytes] = {}
    for entry in dist.files or []:
        path = entry.as_posix()
        parts = entry.parts
        if parts[0] == ".." or "__pycache__" in parts or path.endswith((".pyc", ".pyo")):
            continue
        if parts[0].endswith(".dist-info"):
            if parts[-1] in INSTALL_ONLY:
                continue
            path = f"{info}/{'/'.join(parts[1:])}"
        files[path] = Path(dist.locate_file(entry)).read_bytes()
    # Stored, not compressed: pip unpacks it at once, and compressing numpy would cost more than the benchmark.
    return write_wheel(out_dir / f"{name}-{dist.version}-{tags[0]}.whl", info, files, zipfile.ZIP_STORED)


def clean_env(venv: Path | None = None) -> dict[str, str]:
    """A student's shell: nothing of this environment's Python, pip or venv settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV", "PYTEST_"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, env=clean_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"échec de {' '.join(argv)} :\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def build(edition: Path, venv: Path, wheelhouse: Path) -> Path:
    """`python -m venv` then `pip install -r requirements.txt` in `edition`; the venv's bin folder."""
    requires = [r for r in (metadata.requires("trous") or []) if "extra ==" not in r]
    if not wheelhouse.is_dir():  # made once, then kept: the dependencies do not change between runs
        partial = wheelhouse.with_name(wheelhouse.name + ".partiel")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        for dist in closure(requires):
            repack(dist, partial)
        partial.rename(wheelhouse)
    run([sys.executable, "-m", "venv", str(venv)], edition)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--find-links", str(wheelhouse),
         "-r", "requirements.txt"], edition)
    return venv / "bin"
