"""The exercise's instructions, said for a notebook user: no course folder nor terminal there (« lance
`pytest exercises/` » becomes the check cell). The exercise file itself, hence the grade, is unchanged.
"""

from __future__ import annotations

import re

CHECK_CELL = "la cellule de vérification, en bas du carnet"
RUN_CELLS = "exécute les cellules du carnet"

# Each rule: (pattern, replacement). Backticked commands first, then the phrases that name running
# the file. Patterns match across line breaks (a command may start at the end of a line).
RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"`trous hint[^`]*`\s+donne\s+des\s+indices(?:,\s+de\s+plus\s+en\s+plus\s+précis)?"),
     "la cellule de vérification donne un indice pour chaque trou"),
    (re.compile(r"`trous (?:hint|check|watch|list)[^`]*`"), CHECK_CELL),
    (re.compile(r"`(?:python -m )?pytest[^`]*`"), CHECK_CELL),
    (re.compile(r"\s*\(\s*`python3? [^`]*exercises/[^`]*`\s*\)"), ""),
    (re.compile(r"\blance\s+`python3? [^`]*`"), RUN_CELLS),
    (re.compile(r"`python3? [^`]*exercises/[^`]*`"), "les cellules du carnet"),
    (re.compile(r"\btu\s+lances\s+le\s+fichier\b"), "tu exécutes les cellules du carnet"),
    (re.compile(r"\blance\s+le\s+fichier\b"), RUN_CELLS),
    (re.compile(r"`exercises/([0-9]{2}_[a-z0-9_]+)\.py`"), r"le carnet `\1.ipynb`"),
]


def for_notebook(markdown: str) -> str:
    """The markdown of an instruction cell, as a notebook user must read it."""
    for pattern, replacement in RULES:
        markdown = pattern.sub(replacement, markdown)
    return markdown


LEFT_OVER = re.compile(r"pytest|exercises/|trous (?:hint|check|watch|list)\b|python3? \S+\.py")


def left_over(markdown: str) -> list[str]:
    """What still speaks of the terminal or the course folder (the build refuses such a notebook)."""
    return LEFT_OVER.findall(markdown)
