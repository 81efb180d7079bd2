"""Vérifications publiques de l'exercice 8 (lance `pytest exercises/ -k masque_causal`).

Sur T = 5 et d = 8 (le cours), puis sur d'autres tailles, montrées (T = 4 et d = 2, T = 6 et d = 12) : les
tableaux attendus ont été écrits à la main (le masque : un tableau NumPy de booléens, comme celui que
construit le cours). La règle de l'exercice 3 vaut ici : un score masqué vaut
−∞ (-np.inf), jamais un grand nombre négatif, et son poids exactement 0.
"""

import numpy as np

from trous.spec import blank, expect, variant

ZEROS_5 = [[0.0] * 5 for _ in range(5)]
TRIANGLE_5 = [[j <= i for j in range(5)] for i in range(5)]

AUTRES_TAILLES = variant("d'autres tailles, T = 4 et d = 2", shown=True, T="4", d="2")
TRIANGLE_4 = [[True, False, False, False],
              [True, True, False, False],
              [True, True, True, False],
              [True, True, True, True]]
# Plus grand que le cours : rien ne doit s'arrêter à T = 5 ni à d = 8.
PLUS_GRAND = variant("de plus grandes tailles, T = 6 et d = 12", shown=True, T="6", d="12")
# À la main : vrai pour j ≤ i.
TRIANGLE_6 = [[j <= i for j in range(6)] for i in range(6)]

scores = blank(
    "scores",
    expect("list(scores.shape)", [5, 5], message="Un score pour chaque couple (position i, position j)."),
    expect("float(scores[1, 3] - q[1] @ k[3] / math.sqrt(d))", 0.0, atol=1e-9,
           label="scores[1, 3] − q[1]·k[3] / √8",
           message="scores[1, 3] est le produit scalaire de la requête q[1] et de la clé k[3], divisé par √8."),
    expect("list(scores.shape)", [4, 4], variant=AUTRES_TAILLES,
           message="Pour T = 4, une table 4×4 : sa taille vient de q et k, pas d'un 5 écrit en dur."),
    expect("float(scores[1, 3] - q[1] @ k[3] / math.sqrt(d))", 0.0, atol=1e-9, variant=AUTRES_TAILLES,
           label="scores[1, 3] − q[1]·k[3] / √d",
           message="Pour d = 2, on divise par √2 : la racine de la dimension d, quelle qu'elle soit."),
    expect("list(scores.shape)", [6, 6], variant=PLUS_GRAND, message="Pour T = 6, une table 6×6."),
    expect("float(scores[5, 4] - q[5] @ k[4] / math.sqrt(d))", 0.0, atol=1e-9, variant=PLUS_GRAND,
           label="scores[5, 4] − q[5]·k[4] / √d",
           message="Pour d = 12, le produit scalaire porte sur les 12 composantes, divisé par √12."),
)

masque = blank(
    "masque",
    expect("masque", np.array(TRIANGLE_5),
           message="La position i voit les positions 0 à i : vrai sur la diagonale et en dessous, faux au-dessus."),
    expect("masque", np.array(TRIANGLE_4), variant=AUTRES_TAILLES,
           message="Pour T = 4, un masque 4×4 : sa taille vient de T."),
    expect("masque", np.array(TRIANGLE_6), variant=PLUS_GRAND,
           message="Pour T = 6, un masque 6×6 : sa taille vient de T."),
)

scores_masques = blank(
    "scores_masques",
    expect("np.isneginf(scores_masques[0])", [False, True, True, True, True],
           label="scores_masques[0] vaut −∞ ?",
           message="Avant softmax, les scores des positions suivantes valent moins l'infini (-np.inf), pas un grand "
                   "nombre négatif : c'est la règle de l'exercice 3."),
    expect("np.tril(scores_masques) - np.tril(scores)", ZEROS_5, rtol=0.0, atol=0.0,
           label="scores_masques − scores, sur la diagonale et en dessous",
           message="Là où masque est vrai, scores_masques garde le score tel quel."),
    expect("np.triu(poids, 1)", ZEROS_5, rtol=0.0, atol=0.0, label="poids au-dessus de la diagonale",
           message="Après softmax, le poids des positions suivantes est exactement 0."),
    expect("poids.sum(axis=1)", [1.0] * 5, label="somme de chaque ligne de poids",
           message="Chaque ligne de poids fait 1 au total."),
    expect("poids[0]", [1.0, 0.0, 0.0, 0.0, 0.0],
           message="Le 1er caractère ne voit que lui-même : tout son poids va sur lui."),
    # À la main : −∞ exactement au-dessus de la diagonale d'une table 4×4.
    expect("np.isneginf(scores_masques)", [[not v for v in ligne] for ligne in TRIANGLE_4],
           label="scores_masques vaut −∞ ?", variant=AUTRES_TAILLES,
           message="Pour T = 4 aussi : −∞ exactement là où masque est faux, le score ailleurs."),
    # À la main : −∞ exactement au-dessus de la diagonale d'une table 6×6.
    expect("np.isneginf(scores_masques)", [[not v for v in ligne] for ligne in TRIANGLE_6],
           label="scores_masques vaut −∞ ?", variant=PLUS_GRAND,
           message="Pour T = 6 aussi : −∞ exactement là où masque est faux."),
    expect("np.tril(scores_masques) - np.tril(scores)", [[0.0] * 6 for _ in range(6)], rtol=0.0, atol=0.0,
           label="scores_masques − scores, sur la diagonale et en dessous", variant=PLUS_GRAND),
)
