"""Correcteur caché de l'exercice 2 (jamais distribué aux élèves).

Les deux trous sont aussi vérifiés avec d'autres tokens, d'autres vecteurs de place et une phrase
plus longue : la valeur attendue est celle que donne la solution de référence (SOLUTION). Les
descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("d'autres vecteurs de place", places="[[0, 1], [1, 1], [2, -1]]"),
    variant("d'autres tokens", x="[[0.5, -1], [2, 0], [1, 3]]", x2="[[1, 3], [2, 0], [0.5, -1]]"),
    variant("une phrase plus longue", places="[[1, 0], [0, 0], [0, 1], [1, 1]]",
            x="[[1, 0], [0, 1], [1, 1], [2, 0]]", x2="[[1, 1], [2, 0], [0, 1], [1, 0]]"),
]

xp = blank(
    "xp",
    expect("xp", SOLUTION, variants=AUTRES, label="les vecteurs additionnés (xp)"),
    expect("sortie", SOLUTION, variants=AUTRES, label="le nouveau vecteur de « toux » (sortie)"),
)

xp2 = blank(
    "xp2",
    expect("xp2", SOLUTION, variants=AUTRES, label="les vecteurs additionnés (xp2)"),
    expect("sortie_autre", SOLUTION, variants=AUTRES, label="le nouveau vecteur de « toux » (sortie_autre)"),
)
