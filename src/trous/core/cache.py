"""A student edition keeps its `course.yaml` once validated, so that each `pytest exercises/` does
not import YAML and pydantic again to check a file that has not changed.

The cache (`.trous/cours-valide.json`, only where a `.trous/` folder exists) holds the exact text of
`course.yaml`, what validating it gave, and a fingerprint of the code that validated it; it is used
only when both are the same. Unreadable, damaged or not writable, it is ignored.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path


CACHE = Path(".trous") / "cours-valide.json"
FORMAT = 1
_CODE = ("course.py", "errors.py", "schema.py", "yamlpos.py")  # what decides whether a course.yaml is valid
_fingerprint: str | None = None


def fingerprint() -> str | None:
    """What validated a cached course; None when it cannot be told (then there is no cache)."""
    global _fingerprint
    if _fingerprint is None:
        from importlib import metadata  # noqa: PLC0415

        import trous  # noqa: PLC0415

        here = Path(__file__).parent
        try:
            code = zlib.crc32(b"".join((here / name).read_bytes() for name in _CODE))
            versions = " ".join(f"{name} {metadata.version(name)}" for name in ("pydantic", "pydantic_core", "PyYAML"))
        except (OSError, metadata.PackageNotFoundError):
            return None
        _fingerprint = f"trous {trous.__version__} {code:08x} {versions}"
    return _fingerprint


def _usable(root: Path) -> bool:
    return (root / CACHE).parent.is_dir() and fingerprint() is not None


def read(root: Path, text: str) -> dict | None:
    """The course validated from this very `text` by this very code, as plain data, if the cache has it."""
    if not _usable(root):
        return None
    try:
        stored = json.loads((root / CACHE).read_text(encoding="utf-8"))
        if stored.get("format") != FORMAT or stored.get("source") != text or stored.get("by") != fingerprint():
            return None
        return stored["course"] if isinstance(stored["course"], dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write(root: Path, text: str, course: dict) -> None:
    if not _usable(root):
        return
    path = root / CACHE
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        data = {"format": FORMAT, "by": fingerprint(), "source": text, "course": course}
        partial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, path)  # a run reading it meanwhile sees the old cache or the new one, whole
    except (OSError, ValueError):
        try:
            partial.unlink()
        except OSError:
            pass
