"""Correcteur caché de l'exercice 8 (jamais distribué aux élèves).

Chaque trou est aussi vérifié pour d'autres longueurs T, d'autres dimensions d et d'autres tirages : la
valeur attendue est celle que donne la solution de référence sur les mêmes entrées (SOLUTION). Les
descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("une séquence plus courte, une autre dimension", T="3", d="4"),
    variant("une séquence plus longue, une autre dimension, un autre tirage", T="7", d="16", graine="5"),
    variant("la séquence la plus courte possible", T="1"),
]

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores"),
)

masque = blank(
    "masque",
    expect("masque", SOLUTION, variants=AUTRES, label="le masque"),
)

scores_masques = blank(
    "scores_masques",
    expect("np.isneginf(scores_masques)", SOLUTION, variants=AUTRES, label="où les scores masqués valent −∞"),
    expect("poids", SOLUTION, variants=AUTRES, label="les poids après la softmax"),
)
