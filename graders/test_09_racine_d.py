"""Correcteur caché de l'exercice 9 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres dimensions, d'autres tailles et d'autres tirages : la valeur
attendue est celle que donne la solution de référence sur les mêmes entrées (SOLUTION). Les écarts types
sont comparés à 0,1 % près, pour accepter aussi l'écart type « corrigé » (ddof=1) sur 5 000 nombres.
Les descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("d'autres dimensions, un autre tirage", D="[4, 36, 100]", graine="3"),
    variant("des séquences plus longues, d'autres dimensions", D="[9, 2048]", T="8", n="12"),
]
PETIT = variant("une petite expérience", D="[3]", n="2", T="4")

max_moyen = blank(
    "max_moyen",
    expect("poids_max_moyen(np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]))", SOLUTION,
           label="poids_max_moyen sur d'autres scores à deux dimensions"),
    expect("poids_max_moyen(np.array([[[0.0, 9.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 0.5]]]))", SOLUTION,
           label="poids_max_moyen sur d'autres scores à trois dimensions"),
    expect("sans_echelle", SOLUTION, variants=AUTRES, label="le plus grand poids moyen sans mise à l'échelle"),
)

produits = blank(
    "produits",
    expect("scores", SOLUTION, variant=PETIT, label="les produits scalaires"),
    expect("ecarts_types", SOLUTION, variants=AUTRES, rtol=1e-3, label="l'écart type des produits scalaires"),
)

ecart_type = blank(
    "ecart_type",
    expect("ecarts_types", SOLUTION, variants=AUTRES, rtol=1e-3, label="l'écart type des produits scalaires"),
)

echelle = blank(
    "echelle",
    expect("avec_echelle", SOLUTION, variants=AUTRES, label="le plus grand poids moyen après division par √d"),
)
