"""Vérifications publiques de l'exercice 6 (lance `pytest exercises/ -k moyenne`)."""

from trous.spec import blank, expect

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

triangle = blank(
    "triangle",
    expect("np.asarray(triangle, dtype=float)", TRIANGLE_5, label="triangle",
           message="La ligne i a des 1 aux positions 0 à i (diagonale comprise) et des 0 après."),
)

poids = blank(
    "poids",
    expect("poids", MOYENNES_5, decimals=2,
           message="Chaque ligne du triangle est divisée par sa propre somme : le tableau de la leçon."),
)

sortie = blank(
    "sortie",
    expect("list(sortie.shape)", [5, 4], message="Un résultat par caractère : 5 vecteurs à 4 composantes."),
    expect("sortie[2] - x[:3].mean(axis=0)", [0, 0, 0, 0], atol=1e-9,
           label="sortie[2] − la moyenne de x[0], x[1] et x[2]",
           message="Le résultat de la 3e position (« 明 ») est la moyenne des trois premiers vecteurs."),
)
