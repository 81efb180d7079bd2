"""Vérifications publiques de l'exercice 6 (lance `pytest exercises/ -k moyenne`).

Sur T = 5 (le cours), puis sur d'autres longueurs, montrées (T = 4, T = 6), et sur des vecteurs à 5
composantes : les matrices attendues ont été écrites à la main. Ce sont des tableaux NumPy, comme ceux que construit le cours : une liste de listes
des mêmes nombres ne suffit pas (la suite du programme s'en sert comme d'un tableau).
"""

import numpy as np

from trous.spec import blank, expect, variant

TRIANGLE_5 = [[1, 0, 0, 0, 0],
              [1, 1, 0, 0, 0],
              [1, 1, 1, 0, 0],
              [1, 1, 1, 1, 0],
              [1, 1, 1, 1, 1]]

MOYENNES_5 = [[1.00, 0.00, 0.00, 0.00, 0.00],
              [0.50, 0.50, 0.00, 0.00, 0.00],
              [0.33, 0.33, 0.33, 0.00, 0.00],
              [0.25, 0.25, 0.25, 0.25, 0.00],
              [0.20, 0.20, 0.20, 0.20, 0.20]]

QUATRE = variant("quatre caractères, T = 4", shown=True, T="4")

TRIANGLE_4 = [[1, 0, 0, 0],
              [1, 1, 0, 0],
              [1, 1, 1, 0],
              [1, 1, 1, 1]]

MOYENNES_4 = [[1, 0, 0, 0],
              [1 / 2, 1 / 2, 0, 0],
              [1 / 3, 1 / 3, 1 / 3, 0],
              [1 / 4, 1 / 4, 1 / 4, 1 / 4]]

# Une séquence plus longue que celle du cours : rien ne doit s'arrêter à 5.
SIX = variant("six caractères, T = 6", shown=True, T="6")
# À la main : la ligne i a i + 1 uns, puis des 0 ; divisée par sa somme, i + 1.
TRIANGLE_6 = [[1 if j <= i else 0 for j in range(6)] for i in range(6)]
MOYENNES_6 = [[1 / (i + 1) if j <= i else 0 for j in range(6)] for i in range(6)]

triangle = blank(
    "triangle",
    expect("triangle", np.array(TRIANGLE_5, dtype=float),
           message="La ligne i a des 1 aux positions 0 à i (diagonale comprise) et des 0 après."),
    expect("triangle", np.array(TRIANGLE_4, dtype=float), variant=QUATRE,
           message="Pour T = 4, un triangle 4×4 : la taille vient de T, elle n'est pas écrite en dur."),
    expect("triangle", np.array(TRIANGLE_6, dtype=float), variant=SIX,
           message="Pour T = 6, un triangle 6×6 : la taille vient de T."),
)

poids = blank(
    "poids",
    expect("poids", np.array(MOYENNES_5), decimals=2,
           message="Chaque ligne du triangle est divisée par sa propre somme : le tableau de la leçon."),
    expect("poids", np.array(MOYENNES_4), variant=QUATRE,
           message="Pour T = 4 aussi, la ligne i est divisée par sa somme, i + 1."),
    expect("poids", np.array(MOYENNES_6), variant=SIX,
           message="Pour T = 6 aussi, la ligne i est divisée par sa somme, i + 1."),
)

# Cinq vecteurs à 5 composantes (une de plus que le cours), 0 à 24 ligne par ligne : x[i][c] = 5i + c.
CINQ_COMPOSANTES = variant("des vecteurs à 5 composantes", shown=True, x="np.arange(25.0).reshape(T, 5)")
# À la main : la moyenne de x[0] à x[i] est 5i/2 + c pour la composante c.
MOYENNES_CINQ = [[5 * i / 2 + c for c in range(5)] for i in range(5)]

sortie = blank(
    "sortie",
    expect("list(sortie.shape)", [5, 4], message="Un résultat par caractère : 5 vecteurs à 4 composantes."),
    expect("sortie[2] - x[:3].mean(axis=0)", [0, 0, 0, 0], atol=1e-9,
           label="sortie[2] − la moyenne de x[0], x[1] et x[2]",
           message="Le résultat de la 3e position (« 明 ») est la moyenne des trois premiers vecteurs."),
    expect("list(sortie.shape)", [4, 4], variant=QUATRE,
           message="Pour T = 4 : 4 vecteurs à 4 composantes."),
    expect("sortie[3] - x.mean(axis=0)", [0, 0, 0, 0], atol=1e-9, variant=QUATRE,
           label="sortie[3] − la moyenne des quatre vecteurs x",
           message="La dernière position voit les quatre caractères : son résultat est leur moyenne."),
    expect("sortie", np.array(MOYENNES_CINQ), variant=CINQ_COMPOSANTES,
           message="Avec des vecteurs à 5 composantes, chaque résultat a 5 composantes : la moyenne des vecteurs "
                   "jusqu'à sa position."),
    expect("list(sortie.shape)", [6, 4], variant=SIX, message="Pour T = 6 : 6 vecteurs à 4 composantes."),
    expect("sortie[5] - x.mean(axis=0)", [0, 0, 0, 0], atol=1e-9, variant=SIX,
           label="sortie[5] − la moyenne des six vecteurs x",
           message="La dernière des six positions voit les six caractères : son résultat est leur moyenne."),
)
