"""Correcteur caché de l'exercice 4 (jamais distribué aux élèves).

D'autres w, une autre distance, d'autres embeddings, et le poids de chaque mot de la phrase (pas
seulement « Pas ») : la valeur attendue est celle que donne la solution de référence (SOLUTION). Les
descriptions et les étiquettes disent ce qui est vérifié, jamais les entrées.
"""

import pytest

from trous.spec import SOLUTION, StudentError, blank, expect, variant

AUTRES = [
    variant("un autre w", w="0.9"),
    variant("un autre w et une autre distance", w="0.3", phrase='"Pas de toux".split()'),
    variant("d'autres embeddings", vec='{"Pas": [1, 2], "de": [0.5, 0], "ni": [0, -1], "fièvre": [2, 0], '
                                       '"frissons": [1, 1], "toux": [1, -0.5]}'),
]

rnn = blank(
    "rnn",
    expect("reste", SOLUTION, variants=AUTRES, label="ce qui reste de « Pas » au RNN"),
    expect("[reste_rnn(w, d) for w in (0.9, 0.3) for d in (1, 3, 10)]", SOLUTION,
           label="reste_rnn pour d'autres w et d'autres distances"),
)

poids = blank(
    "poids",
    expect("[loin, pres]", SOLUTION, variants=AUTRES, label="le poids de « Pas », loin et près"),
    expect("[poids_de(m, phrase) for m in phrase]", SOLUTION, variants=AUTRES,
           label="le poids de chaque mot de la phrase"),
    expect("[poids_de(m, proche) for m in proche]", SOLUTION, label="le poids de chaque mot de l'autre phrase"),
)


# Une déclaration ne sait dire que « cette expression vaut ceci » ; refuser une entrée impossible se
# vérifie avec un test : le code de l'élève doit lever une erreur (n'importe laquelle), pas inventer
# un poids. Une boucle sans fin n'est pas un refus (elle lève StudentStopped, pas StudentError).
@pytest.mark.trou("poids")
def test_un_mot_absent_n_a_pas_de_poids(eleve):
    """un mot qui n'est pas dans la phrase n'a pas de poids : poids_de le refuse"""
    with pytest.raises(StudentError):
        eleve('poids_de("zèbre", phrase)')
    with pytest.raises(StudentError):
        eleve('poids_de("Pas", [])')
