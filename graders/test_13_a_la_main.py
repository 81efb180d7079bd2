"""Correcteur caché de l'exercice 13 (jamais distribué aux élèves).

D'autres requêtes, clés et valeurs (dont une autre dimension et de grands scores, qui font déborder une
exponentielle sans décalage) : la valeur attendue est celle de la solution de référence (SOLUTION). Les
descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

# Un produit scalaire n'existe que si q et k ont autant de composantes : len(k) vaut toujours len(q).
EQUIVALENT_MUTANTS = {
    "scores": ["sum((a * b for a, b in zip(q, k))) / sqrt(len(k))"],
    # Any shift leaves the softmax unchanged; int(max) or max rounded is within 1 of the max, so no exponential
    # overflows either (each is at most e¹).
    "shift": ["int(max(scores))", "round(max(scores), 2)"],
}

AUTRES = [
    variant("une phrase plus longue", q="[0.5, -1.0]", keys="[[2, 1], [0, 3], [1, -1], [-2, 0]]",
            values="[[1, 0], [0, 1], [3, 3], [-1, 2]]", autres_values="[[5, 0], [0, 5], [1, 1], [2, 2]]"),
    variant("des vecteurs d'une autre dimension", q="[1.0, 2.0, 0.5]", keys="[[1, 0, 2], [0, 1, 1], [2, 2, 0]]",
            values="[[1, 2, 3], [0, 0, 1], [4, 0, 0]]", autres_values="[[0, 0, 0], [1, 1, 1], [2, 0, 2]]"),
    variant("de grands scores", q="[30.0, 40.0]", keys="[[30, 40], [40, 30], [-30, 0]]",
            values="[[1, 1], [2, 0], [0, 5]]", autres_values="[[0, 1], [1, 0], [3, 3]]"),
]

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores"),
)

shift = blank(
    "shift",
    expect("softmax([0.5, 0.25])", SOLUTION, label="softmax de deux petits scores"),
    expect("softmax([-1000.0, 0.0, 1000.0])", SOLUTION, label="softmax de très grands et très petits scores"),
    expect("softmax([800.0, 0.0, 799.0])", SOLUTION, label="softmax d'autres grands scores"),
    expect("softmax([0.0, -5.0, 3.0, 1000.0, 2.0])", SOLUTION, label="softmax de grands scores, le plus grand vers la fin"),
    expect("weights", SOLUTION, variants=AUTRES, label="les poids"),
)

normalisation = blank(
    "normalisation",
    expect("softmax([3.0, 1.0, 0.0, -2.0])", SOLUTION, label="softmax d'autres scores"),
    expect("weights", SOLUTION, variants=AUTRES, label="les poids"),
)

sortie = blank(
    "sortie",
    expect("melange([0.1, 0.2, 0.7], [[1, 2, 3], [4, 5, 6], [7, 8, 9]])", SOLUTION,
           label="melange d'autres poids et d'autres valeurs"),
    expect("output", SOLUTION, variants=AUTRES, label="la sortie"),
)

x10 = blank(
    "x10",
    expect("weights_x10", SOLUTION, variants=AUTRES, label="les poids des scores multipliés par dix"),
)

valeurs = blank(
    "valeurs",
    expect("weights_2", SOLUTION, variants=AUTRES, label="les poids après le changement de valeurs"),
    expect("output_2", SOLUTION, variants=AUTRES, label="la sortie avec les autres valeurs"),
)
