"""Correcteur caché de l'exercice 1 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres phrases : la valeur attendue est celle que donne la
solution de référence sur les mêmes entrées (SOLUTION). Les descriptions et les étiquettes (label)
sont ce que l'élève lit : elles disent ce qui est vérifié, jamais les entrées.
"""

import pytest

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("une autre phrase de même longueur", x="[[2, 1], [0, 3], [1, -1]]"),
    variant("une phrase plus longue", x="[[0.5, -1.0], [1.0, 2.0], [-1.0, 0.0], [2.0, 2.0]]"),
    variant("des vecteurs à composantes négatives", x="[[-1, -2], [3, 0.5], [0, -1]]"),
]

somme_exp = blank(
    "somme_exp",
    expect("softmax([0.5, 2.0, -1.0, 3.0])", SOLUTION, label="softmax d'autres scores"),
    expect("softmax([10.0, 10.0])", SOLUTION, label="softmax de deux scores égaux"),
    expect("poids", SOLUTION, variants=AUTRES, label="les poids"),
)

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores"),
)

nouveau = blank(
    "nouveau",
    expect("nouveau", SOLUTION, variants=AUTRES, label="le nouveau vecteur"),
)

# Wrong-looking fills that `trous doctor` generates but that are right: accepted on purpose.
EQUIVALENT_MUTANTS = {
    # poids has one weight per token, so len(poids) == len(x): the same sum.
    "nouveau": ["sum(poids[i] * x[i][j] for i in range(len(poids)))"],
}


# Une propriété plutôt qu'une valeur : pour tous ces scores, les poids font 1 et rangent les mots
# comme leurs scores. Les paramètres ne sont jamais montrés à l'élève (seulement « cas 2 sur 3 »).
@pytest.mark.trou("somme_exp")
@pytest.mark.parametrize("scores", [[3.0, 1.0, 0.2], [0.5, -2.0, 4.0, 1.5], [-1.0, -3.0]])
def test_les_poids_font_un_et_gardent_l_ordre(eleve, scores):
    """les poids font 1 et gardent l'ordre des scores"""
    poids = eleve.call("softmax", scores)
    assert sum(poids) == pytest.approx(1)
    rang = sorted(range(len(scores)), key=lambda i: scores[i])
    assert [poids[i] for i in rang] == sorted(poids)
    # Avec d'autres scores dans le programme, les poids calculés suivent (une variable remplacée).
    assert eleve("sum(poids)", scores=scores) == pytest.approx(1)
