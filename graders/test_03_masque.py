"""Correcteur caché de l'exercice 3 (jamais distribué aux élèves).

D'autres phrases et d'autres masques (deux <rempl>, un token masqué au milieu) : la valeur attendue
est celle que donne la solution de référence (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("deux remplissages", xr="[[1, 0], [0, 1], [0, 0], [0, 0]]", masque="[1, 1, 0, 0]"),
    variant("autre phrase", xr="[[2, 1], [1, -1], [0.5, 2], [0, 0]]", masque="[1, 1, 1, 0]"),
    variant("masque au milieu", xr="[[1, 1], [3, 3], [2, 0]]", masque="[1, 0, 1]"),
]

masque = blank(
    "masque",
    expect("poids_f", SOLUTION, variants=AUTRES),
)
