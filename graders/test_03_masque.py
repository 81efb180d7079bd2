"""Correcteur caché de l'exercice 3 (jamais distribué aux élèves).

D'autres phrases et d'autres masques (deux <rempl>, un token masqué au milieu) : la valeur attendue
est celle que donne la solution de référence (SOLUTION). La règle du cours est vérifiée telle quelle :
un score masqué vaut −∞ (un grand nombre négatif donne d'autres scores, donc est refusé).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("deux remplissages", xr="[[1, 0], [0, 1], [0, 0], [0, 0]]", masque="[1, 1, 0, 0]"),
    variant("une autre phrase", xr="[[2, 1], [1, -1], [0.5, 2], [0, 0]]", masque="[1, 1, 1, 0]"),
    variant("un autre masque au milieu", xr="[[1, 1], [3, 3], [2, 0]]", masque="[1, 0, 1]"),
]

masque = blank(
    "masque",
    expect("scores_f", SOLUTION, variants=AUTRES, label="les scores après le masque (−∞ là où le masque vaut 0)"),
    expect("poids_f", SOLUTION, variants=AUTRES, label="les poids après la softmax"),
)
