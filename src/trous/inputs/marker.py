"""trous's own results folder, recognised by a mark that only trous can make true.

A results folder kept among the copies must not be graded as a student, and a student's folder
must never be dropped for looking like one: a file name proves nothing. So `trous grade` writes
`.trous-resultats` in its results folder, holding that folder's device and inode numbers, which a
student cannot predict for their folder once unpacked on the teacher's disk; a copied mark names
another folder and does not count. A results folder copied elsewhere is graded like any folder,
and says why.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import trous

MARK = ".trous-resultats"
KIND = "trous/resultats"
OURS, FOREIGN, NONE = "ours", "foreign", "none"
_MAX = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino]


def stamp(folder: Path) -> Path:
    """Mark `folder` as trous's results folder (idempotent: an unchanged mark is not rewritten)."""
    folder = Path(folder)
    path = folder / MARK
    content = json.dumps({"marque": KIND, "version": 1, "dossier": _identity(os.stat(folder)),
                          "ecrit_par": f"trous {trous.__version__}",
                          "explication": "dossier de résultats de trous : jamais corrigé comme une copie"},
                         ensure_ascii=False) + "\n"
    try:
        if path.read_text(encoding="utf-8") == content:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    temporary = folder / f".{MARK}.tmp{os.getpid()}"
    temporary.write_text(content, encoding="utf-8")
    os.replace(temporary, path)
    return path


def check(folder: Path) -> str:
    """OURS when `folder` holds a mark naming itself, FOREIGN when it holds a mark naming another
    folder (copied), NONE otherwise. Never follows a symbolic link, reads at most 4 Kio."""
    try:
        fd = os.open(folder, os.O_RDONLY | _NOFOLLOW | _DIRECTORY)
    except OSError:
        return NONE
    try:
        here = os.fstat(fd)
        try:
            mark = os.open(MARK, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except (OSError, NotImplementedError):
            return NONE
        try:
            if not stat.S_ISREG(os.fstat(mark).st_mode):
                return NONE
            data = os.read(mark, _MAX)
        finally:
            os.close(mark)
    finally:
        os.close(fd)
    try:
        content = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return FOREIGN
    if not isinstance(content, dict) or content.get("marque") != KIND:
        return FOREIGN
    return OURS if content.get("dossier") == _identity(here) else FOREIGN
