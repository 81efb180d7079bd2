"""Vérifications publiques de l'exercice 8 (lance `pytest exercises/ -k masque_causal`)."""

from trous.spec import blank, expect

ZEROS_5 = [[0.0] * 5 for _ in range(5)]
TRIANGLE_5 = [[j <= i for j in range(5)] for i in range(5)]

scores = blank(
    "scores",
    expect("list(scores.shape)", [5, 5], message="Un score pour chaque couple (position i, position j)."),
    expect("float(scores[1, 3] - q[1] @ k[3] / math.sqrt(d))", 0.0, atol=1e-9,
           label="scores[1, 3] − q[1]·k[3] / √8",
           message="scores[1, 3] est le produit scalaire de la requête q[1] et de la clé k[3], divisé par √8."),
)

masque = blank(
    "masque",
    expect("np.asarray(masque).astype(bool)", TRIANGLE_5, label="masque",
           message="La position i voit les positions 0 à i : vrai sur la diagonale et en dessous, faux au-dessus."),
)

scores_masques = blank(
    "scores_masques",
    expect("np.isneginf(scores_masques[0])", [False, True, True, True, True],
           label="scores_masques[0] vaut −∞ ?",
           message="Avant softmax, les scores des positions suivantes valent moins l'infini (-np.inf)."),
    expect("np.triu(poids, 1)", ZEROS_5, rtol=0.0, atol=0.0, label="poids au-dessus de la diagonale",
           message="Après softmax, le poids des positions suivantes est exactement 0."),
    expect("poids.sum(axis=1)", [1.0] * 5, label="somme de chaque ligne de poids",
           message="Chaque ligne de poids fait 1 au total."),
    expect("poids[0]", [1.0, 0.0, 0.0, 0.0, 0.0],
           message="Le 1er caractère ne voit que lui-même : tout son poids va sur lui."),
)
