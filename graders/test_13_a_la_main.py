"""Correcteur caché de l'exercice 13 (jamais distribué aux élèves).

D'autres requêtes, clés et valeurs (dont une dimension 3 et de grands scores, qui font déborder une
exponentielle sans décalage) : la valeur attendue est celle de la solution de référence (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

# Un produit scalaire n'existe que si q et k ont autant de composantes : len(k) vaut toujours len(q).
EQUIVALENT_MUTANTS = {"scores": ["sum((a * b for a, b in zip(q, k))) / sqrt(len(k))"]}

AUTRES = [
    variant("quatre tokens", q="[0.5, -1.0]", keys="[[2, 1], [0, 3], [1, -1], [-2, 0]]",
            values="[[1, 0], [0, 1], [3, 3], [-1, 2]]", autres_values="[[5, 0], [0, 5], [1, 1], [2, 2]]"),
    variant("dimension 3", q="[1.0, 2.0, 0.5]", keys="[[1, 0, 2], [0, 1, 1], [2, 2, 0]]",
            values="[[1, 2, 3], [0, 0, 1], [4, 0, 0]]", autres_values="[[0, 0, 0], [1, 1, 1], [2, 0, 2]]"),
    variant("grands scores", q="[30.0, 40.0]", keys="[[30, 40], [40, 30], [-30, 0]]",
            values="[[1, 1], [2, 0], [0, 5]]", autres_values="[[0, 1], [1, 0], [3, 3]]"),
]

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES),
)

shift = blank(
    "shift",
    expect("softmax([0.5, 0.25])", SOLUTION),
    expect("softmax([-1000.0, 0.0, 1000.0])", SOLUTION),
    expect("softmax([800.0, 0.0, 799.0])", SOLUTION),
    expect("weights", SOLUTION, variants=AUTRES),
)

normalisation = blank(
    "normalisation",
    expect("softmax([3.0, 1.0, 0.0, -2.0])", SOLUTION),
    expect("weights", SOLUTION, variants=AUTRES),
)

sortie = blank(
    "sortie",
    expect("melange([0.1, 0.2, 0.7], [[1, 2, 3], [4, 5, 6], [7, 8, 9]])", SOLUTION),
    expect("output", SOLUTION, variants=AUTRES),
)

x10 = blank(
    "x10",
    expect("weights_x10", SOLUTION, variants=AUTRES),
)

valeurs = blank(
    "valeurs",
    expect("weights_2", SOLUTION, variants=AUTRES),
    expect("output_2", SOLUTION, variants=AUTRES),
)
