"""Vérifications publiques de l'exercice 9 (lance `pytest exercises/ -k racine_d`).

Les nombres sont tirés au hasard : on vérifie des ordres de grandeur, déduits du tableau de la leçon
(écart type 3,89 ; 8,17 ; 16,08 ; 32,53 pour √d = 4, 8, 16, 32 ; plus grand poids moyen 0,79 à 0,95
sans mise à l'échelle, 0,39 à 0,53 après division par √d), avec de la marge.
"""

from trous.spec import blank, expect

max_moyen = blank(
    "max_moyen",
    expect("poids_max_moyen(np.array([[0.0, 0.0], [0.0, 100.0]]))", 0.75,
           message="Poids [0,5 ; 0,5] puis [0 ; 1] : les plus grands poids sont 0,5 et 1, en moyenne 0,75."),
)

produits = blank(
    "produits",
    expect("list(scores.shape)", [40, 5, 5],
           message="Pour chacune des 40 séquences, un score par couple (requête i, clé j) : forme (40, 5, 5)."),
    expect("float(scores[3, 1, 2] - q[3, 1] @ k[3, 2])", 0.0, atol=1e-9, label="scores[3, 1, 2] − q[3, 1]·k[3, 2]",
           message="scores[s, i, j] est le produit scalaire de la requête i et de la clé j de la séquence s."),
)

ecart_type = blank(
    "ecart_type",
    expect("[e / math.sqrt(d) for e, d in zip(ecarts_types, D)]", [1.0] * 4, atol=0.15,
           label="écart type divisé par √d, pour chaque d (1 à 0,15 près)",
           message="L'écart type des produits scalaires vaut environ √d (à 15 % près) : 4, 8, 16 et 32."),
)

echelle = blank(
    "echelle",
    expect("avec_echelle", [0.45] * 4, atol=0.15, label="plus grand poids moyen après division par √d (entre 0,3 et 0,6)",
           message="Après division par √d, le plus grand poids moyen reste entre 0,3 et 0,6 : l'attention est répartie."),
    expect("[b - a >= 0.2 for b, a in zip(sans_echelle, avec_echelle)]", [True] * 4,
           label="sans mise à l'échelle, au moins 0,2 de plus ?",
           message="Sans mise à l'échelle, le plus grand poids moyen dépasse d'au moins 0,2 celui obtenu après "
                   "division par √d : softmax se concentre sur une seule position."),
)
