"""An nbgrader course directory seen before nbgrader or nbformat is imported: where it is (`course_root`,
which `trous grade` runs before importing anything), and what to do before nbformat is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path


def course_root(path: Path | str) -> Path | None:
    """The nbgrader course at `path`, or whose submitted/ `path` is; None otherwise."""
    path = Path(path)
    root = path.parent if path.name == "submitted" else path
    submitted = root / "submitted"
    if submitted.is_dir() and not submitted.is_symlink() and (
            (root / "nbgrader_config.py").is_file() or (root / "gradebook.db").is_file()):
        return root
    return None


def without_iri_grammars() -> None:
    """jsonschema (imported by nbformat) compiles some forty grammars at import, seconds, when
    rfc3987_syntax is installed, for the "iri" format no notebook schema uses; it skips them when
    that module cannot be imported."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)
