"""French glosses for the usual beginner's mistakes, added under the error or the wrong value: Python's
own message stays (it is what a search engine knows), the gloss says what usually causes it and what
to write instead. Nothing here sees the expected value of a hidden check.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .compare import Array, is_number, leaves
from .wording import translated

NONE = ("None : une fonction sans « return » renvoie None. « print » affiche une valeur, il ne la renvoie "
        "pas : écris « return … » à la fin de la fonction.")
_LIST_METHODS = {
    "sum": "sum(liste)", "max": "max(liste)", "min": "min(liste)", "mean": "sum(liste) / len(liste)",
    "shape": "len(liste)", "T": "np.array(liste).T", "std": "np.std(liste)", "argmax": "np.argmax(liste)",
    "reshape": "np.array(liste).reshape(…)", "dot": "np.dot(a, b)", "exp": "np.exp(liste)",
    "astype": "np.array(liste).astype(…)", "transpose": "np.array(liste).T", "ndim": "np.ndim(liste)",
}
_SEQUENCE = ("list", "tuple")


def _list_method(attribute: str, owner: str) -> str:
    instead = _LIST_METHODS.get(attribute)
    what = "une liste" if owner == "list" else "un tuple"
    text = (f"{what} Python n'a pas « .{attribute} » : c'est un attribut des tableaux NumPy. "
            "Fais-en un tableau avec np.array(…)")
    if instead and not instead.startswith("np.array"):
        text += f", ou écris {instead}"
    return text + "."


def _shape(text: str) -> str:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return " × ".join(parts) if parts else "scalaire"


def error_gloss(type_name: str, message: str) -> str | None:
    message = message or ""
    if "NoneType" in message:
        return NONE
    if type_name == "AttributeError":
        found = re.match(r"'(\w+)' object has no attribute '(\w+)'", message)
        if found:
            owner, attribute = found.groups()
            if owner in _SEQUENCE:
                return _list_method(attribute, owner)
            if owner in ("int", "float") and attribute in _LIST_METHODS:
                return (f"un nombre n'a pas « .{attribute} » : ici, un seul nombre est arrivé là où un tableau "
                        "était attendu.")
        return None
    if type_name == "TypeError":
        found = re.search(r"can't multiply sequence by non-int of type '([\w.]+)'", message)
        if found:
            other = found.group(1)
            if other in _SEQUENCE:
                return ("deux listes ne se multiplient pas avec * : multiplie-les élément par élément (une boucle, "
                        "zip) ou fais-en des tableaux NumPy (np.array).")
            return ("* sur une liste la répète (liste * 3), il ne multiplie pas ses éléments : multiplie chaque "
                    "élément (une boucle) ou fais-en un tableau NumPy (np.array).")
        found = re.search(r"unsupported operand type\(s\) for ([^:]+): '(\w+)' and '(\w+)'", message)
        if found and (found.group(2) in _SEQUENCE or found.group(3) in _SEQUENCE):
            return (f"les listes Python ne calculent pas élément par élément ({found.group(1).strip()}) : "
                    "utilise une boucle, ou des tableaux NumPy (np.array).")
        if re.search(r'can only concatenate (list|tuple) \(not "(int|float)"\)', message):
            return ("+ sur une liste l'allonge, il n'ajoute pas un nombre à chaque élément : une boucle, ou un "
                    "tableau NumPy (np.array).")
        return None
    if type_name == "ValueError":
        if "could not be broadcast together" in message:
            shapes = re.findall(r"\(([0-9, ]*)\)", message.split("shapes", 1)[-1])
            shown = " et ".join(_shape(s) for s in shapes[:2])
            return (f"formes incompatibles ({shown}) : NumPy ne combine élément par élément que des formes "
                    "égales, ou égales à 1 sur un axe. Un axe oublié (keepdims=True) ? une transposée (.T) ? "
                    "ou fallait-il un produit matriciel (@) ?")
        if "mismatch in its core dimension" in message or "not aligned" in message:
            return _matmul(message)
        return None
    if type_name == "NameError":
        found = re.match(r"name '(\w+)' is not defined", message)
        if found and found.group(1) == "___":
            return "un trou pas encore rempli : remplace ___ par une expression Python."
        if found:
            return (f"« {found.group(1)} » n'existe pas à cet endroit du programme : une faute de frappe (majuscules "
                    "comprises) ? une variable définie plus bas, ou seulement à l'intérieur d'une autre fonction ?")
        return None
    if type_name == "IndexError":
        found = re.match(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)", message)
        if found:
            index, axis, size = found.groups()
            return (f"l'indice {index} sort du tableau : sur l'axe {axis}, il n'a que {size} éléments, d'indices 0 à "
                    f"{int(size) - 1}. Une taille écrite en dur, ou un axe confondu avec un autre ?")
        found = re.match(r"(list|tuple|string) index out of range", message)
        if found:
            what = {"list": "la liste", "tuple": "le tuple", "string": "le texte"}[found.group(1)]
            return (f"un indice qui sort de {what}, trop court pour lui : le premier élément est [0], le dernier "
                    "[len(…) - 1]. Une longueur écrite en dur, ou un indice décalé de un ?")
        return None
    if type_name == "ZeroDivisionError":
        return "une division par zéro : le dénominateur vaut 0 (une somme vide ? une division entière // ?)."
    return None


def _matmul(message: str) -> str:
    """@ between shapes that do not fit: NumPy names the right operand's rows first (matmul), or the
    left operand's columns first (dot)."""
    matmul = re.search(r"operand 1 has a mismatch in its core dimension 0.*size (\d+) is different from (\d+)",
                       message)
    dot = re.search(r"(\d+) \(dim \d+\) != (\d+) \(dim \d+\)", message)
    columns, rows = dot.groups() if dot else matmul.groups()[::-1] if matmul else (None, None)
    detail = f" (ici {columns} colonnes à gauche, {rows} lignes à droite)" if rows else ""
    return ("produit matriciel @ impossible : le nombre de colonnes à gauche doit égaler le nombre de "
            f"lignes à droite{detail}. Une transposée (.T) de trop ou en moins ?")


def kind_gloss(expected: Any, obtained: Any) -> str | None:
    """The right numbers, but not the kind of value the course builds (both decoded with arrays)."""
    if isinstance(expected, Array) and isinstance(obtained, list):
        return ("le cours construit ici un tableau NumPy, pas une liste Python : fais-en un tableau (np.array(…)) "
                "ou construis-le directement avec NumPy ; la suite du programme s'en sert comme d'un tableau.")
    return None


def value_gloss(expected: Any, obtained: Any) -> str | None:
    """What usually gives this wrong value (both decoded: plain numbers and lists)."""
    got = list(leaves(obtained))
    if obtained is None or (isinstance(obtained, list) and got and all(v is None for v in got)):
        return NONE
    want = list(leaves(expected))
    if len(want) != len(got) or not want or not all(is_number(v) and math.isfinite(v) for v in want + got):
        return None
    # a // b is floor(a / b): whole numbers that are exactly the expected ones rounded down.
    fractional = any(v != math.floor(v) for v in want)
    floored = all(o == math.floor(e) for e, o in zip(want, got))
    if fractional and floored:
        return ("des nombres entiers, là où des nombres à virgule sont attendus : une division entière « // » ? "
                "En Python, « / » donne un nombre à virgule (7 / 2 = 3,5 ; 7 // 2 = 3).")
    return None


_SYNTAX = [
    (r"^'(.)' was never closed$", r"« \1 » ouvert ici n'est jamais refermé"),
    (r"^unmatched '(.)'$", r"« \1 » ferme quelque chose qui n'a pas été ouvert"),
    (r"^closing parenthesis '(.)' does not match opening parenthesis '(.)'.*$", r"« \1 » ne peut pas fermer « \2 »"),
    (r"^expected ':'$", "« : » manquant à la fin de la ligne"),
    (r"^expected an indented block after '(\w+)' statement on line (\d+)$",
     r"après « \1 » (ligne \2), le bloc doit être décalé vers la droite"),
    (r"^expected an indented block.*$", "un bloc décalé vers la droite est attendu ici"),
    (r"^unexpected indent$", "ligne décalée vers la droite sans raison"),
    (r"^unindent does not match any outer indentation level$",
     "ce décalage ne correspond à aucun bloc au-dessus (espaces et tabulations mélangés ?)"),
    (r"^unterminated string literal.*$", "texte entre guillemets jamais refermé"),
    (r"^unterminated triple-quoted string literal.*$", "texte entre triples guillemets jamais refermé"),
    (r"^invalid syntax\. Perhaps you forgot a comma\?$", "syntaxe invalide : une virgule oubliée ?"),
    (r"^invalid syntax\. Maybe you meant '==' or ':=' instead of '='\?$", "syntaxe invalide : « == » pour comparer ?"),
    (r"^cannot assign to .+?\. Maybe you meant '==' instead of '='\?$",
     "à gauche de « = », il faut un nom de variable : « == » pour comparer ?"),
    (r"^cannot assign to .+$", "à gauche de « = », il faut un nom de variable"),
    (r"^invalid syntax$", "syntaxe invalide"),
    (r"^'return' outside function$", "« return » en dehors d'une fonction"),
    (r"^invalid decimal literal$", "nombre mal écrit (une lettre collée à un chiffre ?)"),
    (r"^Missing parentheses in call to '(\w+)'.*$", r"parenthèses manquantes : \1(…)"),
    (r"^expression expected after dictionary key and ':'$", "valeur manquante après « : » dans le dictionnaire"),
    (r"^invalid character '(.)' \((U\+[0-9A-F]+)\)$", r"caractère « \1 » (\2) interdit dans le code"),
    (r"^invalid non-printable character (U\+[0-9A-F]+)$", r"caractère invisible (\1) interdit dans le code"),
    (r"^EOL while scanning string literal$", "texte entre guillemets jamais refermé"),
    (r"^unexpected EOF while parsing$", "le fichier s'arrête au milieu d'une instruction"),
]


def syntax_message(message: str) -> str | None:
    return translated(_SYNTAX, message or "")
