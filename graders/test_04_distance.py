"""Correcteur caché de l'exercice 4 (jamais distribué aux élèves).

D'autres w, une autre distance, d'autres embeddings, et le poids de chaque mot de la phrase (pas
seulement « Pas ») : la valeur attendue est celle que donne la solution de référence (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("w = 0,9", w="0.9"),
    variant("w = 0,3 et « Pas » à 2 mots", w="0.3", phrase='"Pas de toux".split()'),
    variant("autres embeddings", vec='{"Pas": [1, 2], "de": [0.5, 0], "ni": [0, -1], "fièvre": [2, 0], '
                                     '"frissons": [1, 1], "toux": [1, -0.5]}'),
]

rnn = blank(
    "rnn",
    expect("reste", SOLUTION, variants=AUTRES),
    expect("[reste_rnn(w, d) for w in (0.9, 0.3) for d in (1, 3, 10)]", SOLUTION),
)

poids = blank(
    "poids",
    expect("[loin, pres]", SOLUTION, variants=AUTRES),
    expect("[poids_de(m, phrase) for m in phrase]", SOLUTION, variants=AUTRES),
    expect("[poids_de(m, proche) for m in proche]", SOLUTION),
)
