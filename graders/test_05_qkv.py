"""Correcteur caché de l'exercice 5 (jamais distribué aux élèves).

D'autres matrices, d'autres tailles, d'autres tokens : la valeur attendue est celle que donne la
solution de référence (SOLUTION). Les descriptions et les étiquettes disent ce qui est vérifié,
jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("d'autres matrices", W_q="[[0.5, -1, 2, 0], [1, 0, -0.5, 1]]", W_k="[[1, 2, 0, -1], [0, 1, 1, 0.5]]",
            W_v="[[2, 0, 1, -1], [0, 1, 0, 3]]"),
    variant("des requêtes, clés et valeurs d'une autre taille", W_q="[[1, 0, 2], [0, 1, -1]]",
            W_k="[[0, 1, 1], [1, 0, 2]]", W_v="[[1, 2, 0], [0, 1, 1]]"),
    variant("des embeddings d'une autre taille et une autre phrase",
            x="[[1, 0, 2], [0, 1, 0], [1, 1, 1], [2, 0, -1]]",
            W_q="[[1, 0], [0, 1], [1, 1]]", W_k="[[0, 1], [1, 0], [1, -1]]", W_v="[[1, 2], [0, 1], [-1, 0]]"),
    variant("d'autres tokens", x="[[2, -1], [0.5, 1], [1, 3], [-1, 0]]"),
]

couche = blank(
    "couche",
    expect("[Q, K, V]", SOLUTION, variants=AUTRES, label="les requêtes, clés et valeurs (Q, K, V)"),
)

nb_poids = blank(
    "nb_poids",
    expect("nb_poids", SOLUTION, variants=AUTRES, label="le nombre de poids appris"),
)

racine = blank(
    "racine",
    expect("scores", SOLUTION, variants=AUTRES, label="les scores divisés par √d"),
)

sortie = blank(
    "sortie",
    expect("sortie", SOLUTION, variants=AUTRES, label="la sortie (moyenne pondérée des valeurs)"),
)

# Wrong-looking fills that `trous doctor` generates but that are right: accepted on purpose.
EQUIVALENT_MUTANTS = {
    # A dense layer's matrix has one row per input component: len(W) == len(v).
    "couche": ["sum(v[i] * W[i][j] for i in range(len(W)))"],
    # Every row of W_q has the same length: any row gives the output size.
    "nb_poids": ["3 * len(W_q) * len(W_q[0 + 1])", "3 * len(W_q) * len(W_q[0 - 1])",
                 "3 * len(W_q) * len(W_q[1])", "3 * len(W_q) * len(W_q[-1])"],
    # One weight per token: len(p) == len(V).
    "sortie": ["sum(p[t] * V[t][j] for t in range(len(p)))"],
}
