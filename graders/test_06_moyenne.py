"""Correcteur caché de l'exercice 6 (jamais distribué aux élèves).

Chaque trou est aussi vérifié pour d'autres longueurs T et d'autres vecteurs : la valeur attendue est
celle que donne la solution de référence sur les mêmes entrées (SOLUTION). Les descriptions et les
étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("une séquence plus courte", T="3"),
    variant("une séquence plus longue, d'autres vecteurs", T="8", graine="11"),
    variant("la séquence la plus courte possible", T="1"),
]

triangle = blank(
    "triangle",
    expect("triangle", SOLUTION, variants=AUTRES, label="le triangle de 1"),
)

poids = blank(
    "poids",
    expect("poids", SOLUTION, variants=AUTRES, label="les poids de la moyenne"),
)

sortie = blank(
    "sortie",
    expect("sortie", SOLUTION, variants=AUTRES, label="la sortie (les moyennes)"),
    expect("sortie", SOLUTION, variant=variant("des vecteurs d'une autre taille", x="np.arange(30.0).reshape(T, 6) % 7"),
           label="la sortie (les moyennes)"),
)
