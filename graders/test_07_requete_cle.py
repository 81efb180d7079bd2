"""Correcteur caché de l'exercice 7 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres clés et d'autres requêtes : la valeur attendue est celle que
donne la solution de référence sur les mêmes entrées (SOLUTION). Comme l'annonce l'exercice, la
stabilité numérique (de très grands scores) n'est pas notée ici : le décalage par le maximum est du
code fourni, le trou est la normalisation ; elle est notée à l'exercice 13, où elle est demandée.
Les descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("d'autres caractères et d'autres requêtes",
            k="np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 0.0], [3.0, -2.0]])",
            q_guang="np.array([0.5, 1.5])", q_lieu="np.array([-1.0, 2.0])"),
    variant("des clés et des requêtes d'une autre taille",
            k="np.array([[0.2, 0.1, 0.7], [1.0, 0.0, 0.3], [0.5, 0.5, 0.0], [0.0, 1.0, 1.0], [0.3, 0.3, 0.3], "
              "[2.0, 0.0, 1.0]])",
            q_guang="np.array([1.0, 0.0, 2.0])", q_lieu="np.array([0.0, 3.0, -1.0])"),
]

normalise = blank(
    "normalise",
    expect("softmax(np.array([1.0, 1.0, 2.0]))", SOLUTION, label="softmax d'autres scores"),
    expect("softmax(np.array([0.5, -3.0, 2.0, 2.0, 7.0, 0.0]))", SOLUTION, label="softmax d'une liste plus longue"),
    expect("poids", SOLUTION, variants=AUTRES, label="les poids"),
)

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores"),
)

concentre = blank(
    "concentre",
    expect("poids_x5", SOLUTION, variants=AUTRES, label="les poids des scores multipliés par 5"),
)

requete_lieu = blank(
    "requete_lieu",
    expect("poids_lieu", SOLUTION, variants=AUTRES, label="les poids avec l'autre requête"),
)
