"""Correcteur caché de l'exercice 10 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres entrées (autre graine, autres T, d_model, d_head) : la
valeur attendue est celle que donne la solution de référence sur les mêmes entrées (SOLUTION).
"""

from trous.spec import SOLUTION, blank, expect, variant

# Les scores de l'exercice sont une table à deux dimensions : sommer sur l'axe 1 ou sur le dernier
# axe (-1) revient au même.
EQUIVALENT_MUTANTS = {"normalisation": ["e / e.sum(axis=1, keepdims=True)"]}

AUTRES = [
    variant("autre graine, T = 7", graine="1", T="7"),
    variant("T = 3, d_model = 12, d_head = 4", graine="2", T="3", d_model="12", d_head="4"),
    variant("d_head = 6", graine="3", d_head="6"),
]

normalisation = blank(
    "normalisation",
    expect('softmax(np.array([[0.5, -1.0, 2.0, 0.0], [3.0, 3.0, 1.0, float("-inf")], [0.0, 0.0, 0.0, 0.0]]))',
           SOLUTION),
    expect("softmax(np.array([[1.0, 2.0], [0.0, 5.0], [2.0, 2.0]]))", SOLUTION),
    expect("poids", SOLUTION, variants=AUTRES),
)

qkv = blank(
    "qkv",
    expect("[q, k, v]", SOLUTION),
    expect("[q, k, v]", SOLUTION, variants=AUTRES),
)

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES),
)

masque = blank(
    "masque",
    expect("np.asarray(masque, dtype=bool)", SOLUTION, variants=AUTRES),
)

sortie = blank(
    "sortie",
    expect("sortie", SOLUTION, variants=AUTRES),
)

sans_masque = blank(
    "sans_masque",
    expect("sortie_libre", SOLUTION, variants=AUTRES),
)
