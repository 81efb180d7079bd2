"""Correcteur caché de l'exercice 8 (jamais distribué aux élèves).

Chaque trou est aussi vérifié pour d'autres longueurs T, d'autres dimensions d et d'autres tirages : la
valeur attendue est celle que donne la solution de référence sur les mêmes entrées (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("trois caractères de dimension 4", T="3", d="4"),
    variant("sept caractères de dimension 16, autre tirage", T="7", d="16", graine="5"),
    variant("un seul caractère", T="1"),
]

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES),
)

masque = blank(
    "masque",
    expect("np.asarray(masque).astype(bool)", SOLUTION, variants=AUTRES),
)

scores_masques = blank(
    "scores_masques",
    expect("np.isneginf(scores_masques)", SOLUTION, variants=AUTRES),
    expect("poids", SOLUTION, variants=AUTRES),
)
