"""Correcteur caché de l'exercice 6 (jamais distribué aux élèves).

Chaque trou est aussi vérifié pour d'autres longueurs T et d'autres vecteurs : la valeur attendue est
celle que donne la solution de référence sur les mêmes entrées (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("trois caractères", T="3"),
    variant("huit caractères, autres vecteurs", T="8", graine="11"),
    variant("un seul caractère", T="1"),
]

triangle = blank(
    "triangle",
    expect("np.asarray(triangle, dtype=float)", SOLUTION, variants=AUTRES),
)

poids = blank(
    "poids",
    expect("poids", SOLUTION, variants=AUTRES),
)

sortie = blank(
    "sortie",
    expect("sortie", SOLUTION, variants=AUTRES),
    expect("sortie", SOLUTION, variant=variant("vecteurs à 6 composantes", x="np.arange(30.0).reshape(T, 6) % 7")),
)
