"""Vérifications publiques de l'exercice 5 (lance `pytest exercises/ -k 05_qkv`).

Les valeurs attendues ont été calculées une fois, indépendamment (NumPy), à partir de x, W_q, W_k, W_v.
"""

from trous.spec import blank, expect

couche = blank(
    "couche",
    expect("Q", [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 1]],
           message="La requête de « toux » : [1 ; 1] fois W_q, composante j = 1 × W_q[0][j] + 1 × W_q[1][j]."),
    expect("K", [[1, 1, 1, -1], [0, 1, 0, 1], [1, 2, 1, 0]]),
    expect("V", [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 1]]),
)

nb_poids = blank(
    "nb_poids",
    expect("nb_poids", 24, message="3 matrices de 2 × 4 poids : 3 × 2 × 4 = 24."),
)

racine = blank(
    "racine",
    expect("scores", [[1, 0, 1], [0, 1, 1], [1, 1, 2]],
           message="q et k ont d = 4 composantes : on divise chaque q · k par √4 = 2."),
    expect("poids[2]", [0.21, 0.21, 0.58], decimals=2, label="poids de « toux »"),
)

sortie = blank(
    "sortie",
    expect("sortie", [[0.84, 0.58, 0.58, 0.84], [0.58, 0.84, 0.84, 0.58], [0.79, 0.79, 0.79, 0.79]], decimals=2,
           message="Chaque ligne : la moyenne des valeurs V pondérée par les poids du token."),
)
