"""Which exercise a file is, from its name as students really upload it.

Browsers, Moodle, file managers and JupyterLab rename files (`_SUFFIXES`, `Copie de 01_moyenne.py`,
`01_moyenne.py.txt`, `01_Moyenne.PY`): a name is an exercise's when, those decorations taken off,
what remains is its id, whatever the case. Ids (`NN_lowercase_and_digits`) never hold a space, a
parenthesis or a hyphen, so this never turns one exercise's name into another's; other words after
an id (`01_moyenne_final.py`) are not guessed (« nom proche », left ungraded).

A `.ipynb` is graded as its paired percent-format `.py` (`to_python`); without jupytext, every
notebook left ungraded says so (`unavailable()`). Its JSON is untrusted: nothing in it runs, the
caller bounds its size, and any failure of the parser is a French reason, never a crash.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

PY, NOTEBOOK = ".py", ".ipynb"
OTHER_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".rar", ".7z", ".gz", ".bz2", ".xz")

_COPY = r"(?:copie|copy|kopie|copia)"
_PREFIX = re.compile(rf"^{_COPY}(?:\s*\(\d+\))?\s+(?:de|of|von|di)\s+")
_SUFFIXES = [re.compile(p + "$") for p in (
    r"\s*\(\s*\d+\s*\)",  # « (1) »: Chrome, Edge, Firefox, Moodle, Windows, Google Drive
    r"\s*\[\s*\d+\s*\]",  # « [1] »: older browsers
    r"\s*-\s*" + _COPY + r"(?:\s*\(\s*\d+\s*\))?",  # « - Copie », « - Copy (2) »: Windows Explorer
    r"\s*\((?:[^()]*\s)?(?:" + _COPY + r"|conflit|conflicted)(?:\s[^()]*)?\)",  # « (copie) », « (3e copie) », Dropbox
    r"[\s_-]*" + _COPY + r"\s*\d*",  # « copie », « copy 2 » (macOS), « -Copy1 » (JupyterLab)
    r"-\d+",  # « -1 »: Safari, wget
    r"\s+\d+",  # « 2 »: macOS Finder
)]


@dataclass(frozen=True)
class Match:
    exercise: str
    notebook: bool  # a .ipynb, graded through its .py
    exact: bool  # exactly `<id>.py` or `<id>.ipynb`
    how: str = ""  # French, when not exact: what differs from the expected name


def _normal(name: str) -> str:
    # NFKC: full-width digits and letters, non-breaking spaces and the like become plain ones.
    return unicodedata.normalize("NFKC", name).strip()


def split_extension(name: str) -> tuple[str, str, str, bool] | None:
    """(stem, extension as written, extension, a `.txt` was added) for a .py or .ipynb name in any
    case, after Unicode normalisation; None for any other name."""
    text = _normal(name)
    folded = text.casefold()
    added_txt = False
    if folded.endswith((".py.txt", ".ipynb.txt")):
        text, folded, added_txt = text[:-4], folded[:-4], True
    for extension in (PY, NOTEBOOK):
        if folded.endswith(extension) and len(folded) > len(extension):
            return text[: -len(extension)], text[-len(extension):], extension, added_txt
    return None


class Matcher:
    """Names of one course's exercises, and how the files a student uploads map onto them."""

    def __init__(self, exercise_ids: Iterable[str]):
        self.ids = {i.casefold(): i for i in exercise_ids}
        self.checks = {f"test_{i}.py" for i in self.ids}
        # Longest first: « nom proche » names the most specific id a name starts with.
        self._by_length = sorted(self.ids, key=len, reverse=True)
        # A class's copies hold the same few names over and over; bounded against hostile ones.
        self.match = functools.lru_cache(maxsize=4096)(self._match)

    def _match(self, name: str) -> Match | None:
        split = split_extension(name)
        if split is None:
            return None
        stem, written, extension, added_txt = split
        notebook = extension == NOTEBOOK
        folded = stem.casefold()
        prefix: list[str] = []
        suffixes: list[str] = []
        found = _PREFIX.match(folded) if folded not in self.ids else None
        if found:
            prefix.append(stem[: found.end()].strip())
            stem, folded = stem[found.end():], folded[found.end():]
        for _ in range(8):  # « 01_moyenne (1) (2) - Copie »: a few decorations at most
            if folded in self.ids:
                break
            for suffix in _SUFFIXES:
                found = suffix.search(folded)
                if found and found.start() > 0:
                    suffixes.insert(0, stem[found.start():].strip())
                    stem, folded = stem[: found.start()], folded[: found.start()]
                    break
            else:
                break
        if folded not in self.ids:
            return None
        exercise = self.ids[folded]
        if name == exercise + extension:
            return Match(exercise, notebook, True)
        differences = []
        if prefix or suffixes:
            differences.append("renommé : « " + " », « ".join(prefix + suffixes) + " » en plus du nom attendu")
        if stem != exercise or written != extension:
            differences.append("majuscules différentes")
        if added_txt:
            differences.append("extension .txt ajoutée")
        if not differences:  # only Unicode normalisation differs (full-width letters, odd spaces)
            differences.append("caractères différents du nom attendu")
        return Match(exercise, notebook, False, " ; ".join(differences))

    def near(self, name: str) -> str | None:
        """The exercise a .py/.ipynb name begins with when it is no recognised renaming of it
        (`01_moyenne_final.py`): worth telling the student, who may have meant it."""
        split = split_extension(name)
        if split is None:
            return None
        folded = split[0].casefold()
        for exercise in self._by_length:
            if folded.startswith(exercise) and folded != exercise:
                return self.ids[exercise]
        return None

    def is_public_check(self, name: str) -> bool:
        return name.casefold() in self.checks


def is_zip(name: str) -> bool:
    return name.casefold().endswith(".zip")


def is_other_archive(name: str) -> bool:
    return name.casefold().endswith(OTHER_ARCHIVES)


# -- a notebook as its .py --------------------------------------------------------------------------
FORMAT = "py:percent"  # the course's exercise files (jupytext's percent format)
INSTALL = "pip install 'trous[notebooks]'"
OUR_TAG = "trous-"  # cells `trous lab` adds (preparation, check): not part of the exercise


class NotebookError(ValueError):
    """Not a notebook jupytext can read; the message is French."""


def unavailable() -> str | None:
    """Why notebooks cannot be graded on this machine (French), or None when they can."""
    if importlib.util.find_spec("jupytext") is None:
        return f"carnet Jupyter non corrigé : jupytext n'est pas installé sur la machine de correction ({INSTALL})"
    return None


def to_python(data: bytes) -> bytes:
    """The notebook's program, as saving it paired with a .py would write it (UTF-8)."""
    try:
        text = data.decode("utf-8-sig")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise NotebookError("ce n'est pas un fichier .ipynb (JSON illisible)") from exc
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("ce n'est pas un carnet Jupyter (pas de liste de cellules)")
    import jupytext  # noqa: PLC0415 - seconds to import: only when a copy holds a notebook

    try:
        notebook = jupytext.reads(text, fmt="ipynb")
        notebook.cells = [c for c in notebook.cells if not _ours(c)]
        # No metadata header (the course's .py files have none), and the student's own jupytext
        # settings do not change what is graded.
        notebook.metadata["jupytext"] = {"notebook_metadata_filter": "-all"}
        program = jupytext.writes(notebook, fmt=FORMAT)
    except Exception as exc:  # noqa: BLE001 - untrusted input into a third-party parser: any failure is « illisible »
        raise NotebookError(f"jupytext ne peut pas le lire ({type(exc).__name__})") from exc
    return program.encode("utf-8", "surrogatepass")


def _ours(cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return isinstance(tags, list) and any(str(t).startswith(OUR_TAG) for t in tags)
