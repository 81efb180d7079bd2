"""Correcteur caché de l'exercice 10 (jamais distribué aux élèves).

Chaque trou est aussi vérifié sur d'autres entrées (autre graine, autres T, d_model, d_head) : la
valeur attendue est celle que donne la solution de référence sur les mêmes entrées (SOLUTION). Comme à
l'exercice 7, la stabilité numérique n'est pas notée ici (le décalage est du code fourni). Les
descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

import numpy as np
import pytest

from trous.spec import SOLUTION, blank, expect, variant

# Les scores de l'exercice sont une table à deux dimensions : sommer sur l'axe 1 ou sur le dernier
# axe (-1) revient au même.
EQUIVALENT_MUTANTS = {"normalisation": ["e / e.sum(axis=1, keepdims=True)"]}

AUTRES = [
    variant("une séquence plus longue, un autre tirage", graine="1", T="7"),
    variant("d'autres tailles", graine="2", T="3", d_model="12", d_head="4"),
    variant("une autre taille de tête", graine="3", d_head="6"),
]

normalisation = blank(
    "normalisation",
    expect('softmax(np.array([[0.5, -1.0, 2.0, 0.0], [3.0, 3.0, 1.0, float("-inf")], [0.0, 0.0, 0.0, 0.0]]))',
           SOLUTION, label="softmax d'autres scores, dont un masqué"),
    expect("softmax(np.array([[1.0, 2.0], [0.0, 5.0], [2.0, 2.0]]))", SOLUTION, label="softmax d'autres scores"),
    expect("poids", SOLUTION, variants=AUTRES, label="les poids"),
)

qkv = blank(
    "qkv",
    expect("[q, k, v]", SOLUTION, label="q, k et v"),
    expect("[q, k, v]", SOLUTION, variants=AUTRES, label="q, k et v"),
)

scores = blank(
    "scores",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores"),
)

masque = blank(
    "masque",
    expect("masque", SOLUTION, variants=AUTRES, label="le masque"),
)

sortie = blank(
    "sortie",
    expect("sortie", SOLUTION, variants=AUTRES, label="la sortie de la tête"),
)

sans_masque = blank(
    "sans_masque",
    expect("sortie_libre", SOLUTION, variants=AUTRES, label="la sortie sans masque"),
)


# Des scores tirés au hasard, comparés à une softmax écrite ici avec NumPy : la graine est fixe, donc
# les mêmes tirages (et la même note) à chaque correction.
@pytest.mark.trou("normalisation")
def test_softmax_sur_des_scores_tires_au_hasard(eleve):
    """softmax sur des scores tirés au hasard : chaque ligne devient des poids positifs, de somme 1"""
    rng = np.random.default_rng(2026)
    for forme in [(3, 4), (6, 6), (1, 9), (5, 2)]:
        s = rng.normal(scale=4.0, size=forme)
        e = np.exp(s - np.max(s, axis=-1, keepdims=True))  # la référence, écrite ici
        assert eleve.call("softmax", s) == pytest.approx(e / e.sum(axis=-1, keepdims=True), rel=1e-6, abs=1e-12)
