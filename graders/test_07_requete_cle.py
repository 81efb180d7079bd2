"""Correcteur caché de l'exercice 7 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres clés et d'autres requêtes : la valeur attendue est celle que
donne la solution de référence sur les mêmes entrées (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("quatre caractères", k="np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 0.0], [3.0, -2.0]])",
            q_guang="np.array([0.5, 1.5])", q_lieu="np.array([-1.0, 2.0])"),
    variant("clés à trois composantes",
            k="np.array([[0.2, 0.1, 0.7], [1.0, 0.0, 0.3], [0.5, 0.5, 0.0], [0.0, 1.0, 1.0], [0.3, 0.3, 0.3], "
              "[2.0, 0.0, 1.0]])",
            q_guang="np.array([1.0, 0.0, 2.0])", q_lieu="np.array([0.0, 3.0, -1.0])"),
]

normalise = blank(
    "normalise",
    expect("softmax(np.array([1.0, 1.0, 2.0]))", SOLUTION),
    expect("softmax(np.array([0.5, -3.0, 2.0, 2.0, 7.0, 0.0]))", SOLUTION),
    expect("softmax(np.array([1000.0, 1000.0]))", SOLUTION),
    expect("poids", SOLUTION, variants=AUTRES),
)

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES),
)

concentre = blank(
    "concentre",
    expect("poids_x5", SOLUTION, variants=AUTRES),
)

requete_lieu = blank(
    "requete_lieu",
    expect("poids_lieu", SOLUTION, variants=AUTRES),
)
