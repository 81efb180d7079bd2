"""Vérifications publiques de l'exercice 1 (lance `pytest exercises/ -k toux`).

Chaque trou est vérifié sur l'exemple du cours, puis sur d'autres entrées, montrées : un calcul
juste marche pour toutes les phrases, pas seulement pour « fièvre sans toux ». Les valeurs
attendues sur ces autres entrées ont été calculées à part, à la main ou avec NumPy (formule en
commentaire), jamais avec le programme lui-même.
"""

from trous.spec import blank, expect, variant

# Quatre tokens ; « toux » reste x[2] = [2, 1].
QUATRE_TOKENS = variant("quatre tokens", shown=True, x="[[1, 2], [0, 1], [2, 1], [1, 1]]")
# Quatre scores donnés : les poids ne dépendent plus que de la softmax.
QUATRE_SCORES = variant("quatre scores", shown=True, scores="[4, 1, 5, 3]")
# Les mêmes quatre tokens, avec des poids donnés : le nouveau vecteur ne dépend plus que de son trou.
POIDS_DONNES = variant("quatre tokens et des poids donnés", shown=True, x="[[1, 2], [0, 1], [2, 1], [1, 1]]",
                       poids="[0.125, 0.375, 0.25, 0.25]")

somme_exp = blank(
    "somme_exp",
    expect("softmax([1, 1, 2])", [0.21, 0.21, 0.58], decimals=2,
           message="La softmax des scores [1, 1, 2] donne les poids du cours."),
    expect("sum(softmax([1, 1, 2]))", 1.0, message="Les poids doivent faire 1 au total."),
    # NumPy : e = np.exp([4, 1, 5, 3]); e / e.sum(), à quatre décimales (comparé à 0,001 près).
    expect("poids", [0.2418, 0.0120, 0.6572, 0.0889], atol=1e-3, variant=QUATRE_SCORES,
           message="Avec quatre scores, le total additionne les quatre exponentielles : "
                   "exp(4) + exp(1) + exp(5) + exp(3)."),
)

scores = blank(
    "scores",
    expect("scores", [1, 1, 2]),
    # À la main : chaque t · [2, 1] = 2 × t[0] + 1 × t[1].
    expect("scores", [4, 1, 5, 3], variant=QUATRE_TOKENS,
           message="« toux » = x[2] = [2, 1] : [1, 2] · [2, 1] = 4, [0, 1] · [2, 1] = 1, [2, 1] · [2, 1] = 5, "
                   "[1, 1] · [2, 1] = 3."),
)

nouveau = blank(
    "nouveau",
    expect("nouveau", [0.79, 0.79], decimals=2),
    # À la main : 0,125 × [1, 2] + 0,375 × [0, 1] + 0,25 × [2, 1] + 0,25 × [1, 1] = [0,875 ; 1,125].
    expect("nouveau", [0.875, 1.125], variant=POIDS_DONNES,
           message="Composante j : la somme, sur les quatre tokens, de poids[i] × x[i][j] : "
                   "0,125 × 1 + 0,375 × 0 + 0,25 × 2 + 0,25 × 1 = 0,875 pour j = 0 (sans arrondi)."),
)
