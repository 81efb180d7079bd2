"""Reading a Python file the way the interpreter would, with French errors a student can act on."""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    def __init__(self, path: str, message: str, line: int | None = None):
        self.path = path
        self.message = message
        self.line = line
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where} : {message}")


@dataclass(frozen=True)
class Source:
    path: str
    text: str  # decoded, universal newlines ("\n" only), without BOM

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def line(self, number: int) -> str:
        lines = self.lines
        return lines[number - 1] if 1 <= number <= len(lines) else ""


def decode(data: bytes, path: str = "<texte>") -> Source:
    """As Python decodes a file: BOM, PEP 263 coding cookie, else UTF-8."""
    if b"\x00" in data:
        raise SourceError(path, "ce fichier contient des octets nuls : ce n'est pas du texte Python "
                                "(fichier binaire ?). Remplace-le par ton fichier .py.")
    had_bom = data.startswith(codecs.BOM_UTF8)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if b"coding" in b"\n".join(data.splitlines()[:2]):
            raise SourceError(path, f"déclaration d'encodage invalide ({exc.msg}).") from None
        # No declaration, first lines not UTF-8 (a file saved in Latin-1): say so below, in French.
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
        data = data[len(codecs.BOM_UTF8):] if had_bom else data
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        bad = data[getattr(exc, "start", 0): getattr(exc, "start", 0) + 1]
        raise SourceError(
            path,
            f"le fichier n'est pas en UTF-8 (octet 0x{bad.hex().upper()} inattendu). "
            "Enregistre-le en UTF-8 dans ton éditeur (« Enregistrer avec l'encodage » → UTF-8).",
            line,
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return Source(path=path, text=text)


def read(path: str | Path, display: str | None = None) -> Source:
    p = Path(path)
    shown = display or str(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise SourceError(shown, "fichier introuvable.") from None
    except IsADirectoryError:
        raise SourceError(shown, "c'est un dossier, pas un fichier .py.") from None
    except OSError as exc:
        raise SourceError(shown, f"lecture impossible ({exc.strerror}).") from None
    return decode(data, shown)
