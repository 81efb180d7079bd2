"""Vérifications publiques de l'exercice 4 (lance `pytest exercises/ -k 04_distance`).

Sur l'exemple du cours, puis sur d'autres entrées, montrées (un autre w et une autre phrase, d'autres
embeddings) : les valeurs attendues ont été calculées à part, à la main (formule en commentaire).
"""

import math

from trous.spec import blank, expect, variant

# « Pas » à 4 mots de « toux », w = 0,8.
AUTRE_W = variant("un autre w, une phrase plus courte", shown=True, w="0.8",
                  phrase='"Pas ni fièvre ni toux".split()')
# Scores avec « toux » = [1 ; 1] : « Pas », « fièvre » et « toux » 2 ; « ni » et « frissons » 1 ; « de » 0.
AUTRES_EMBEDDINGS = variant("d'autres embeddings", shown=True,
                            vec='{"Pas": [0, 2], "de": [0, 0], "ni": [1, 0], "fièvre": [1, 1], "frissons": [0, 1], '
                                '"toux": [1, 1]}')

rnn = blank(
    "rnn",
    expect("reste", 1 / 256,
           message="« Pas » est à 8 mots de « toux » : son apport est multiplié 8 fois par 0,5, il en reste 1/256."),
    # À la main : 0,8⁴ = 0,64 × 0,64 = 0,4096.
    expect("reste", 0.4096, variant=AUTRE_W,
           message="Avec w = 0,8 et « Pas » à 4 mots de « toux » (« Pas ni fièvre ni toux ») : "
                   "0,8 × 0,8 × 0,8 × 0,8 = 0,4096."),
)

poids = blank(
    "poids",
    expect("loin", 0.13, decimals=2, message="Le poids de « Pas » à 8 mots de « toux » : e¹ / (3 e¹ + 5 e⁰ + e²)."),
    expect("pres", 0.13, decimals=2, message="Le poids de « Pas » juste avant « toux »."),
    expect("loin - pres", 0, label="loin − pres",
           message="Le même poids à 8 mots et à 1 mot : la distance n'entre pas dans le calcul."),
    # À la main : scores 1, 0, 1, 0, 0, 1, 0, 0, 2 ; le poids de « de » (score 0) : e⁰ / (3 e¹ + 5 e⁰ + e²).
    expect("poids_de('de', phrase)", 1 / (3 * math.e + 5 + math.e ** 2), atol=1e-6, label="poids_de('de', phrase)",
           message="Le poids d'un autre mot que « Pas » : l'exponentielle du score de ce mot-là (mots.index(mot)), "
                   "divisée par la somme des exponentielles."),
    # À la main : « Pas ni fièvre ni toux », scores 1, 0, 1, 0, 2 : loin = e¹ / (2 e¹ + 2 e⁰ + e²) ; pres ne change pas.
    expect("[loin, pres]", [math.e / (2 * math.e + 2 + math.e ** 2), math.e / (3 * math.e + 5 + math.e ** 2)],
           atol=1e-6, variant=AUTRE_W,
           message="Avec une phrase de cinq mots, la somme porte sur cinq exponentielles : e¹ / (2 e¹ + 2 + e²)."),
    # À la main : scores 2, 0, 2, 1, 0, 1, 1, 0, 2 ; poids de « Pas » e² / (3 e² + 3 e¹ + 3 e⁰) ≈ 0,2217.
    expect("[loin, pres]", [0.2217, 0.2217], atol=1e-3, variant=AUTRES_EMBEDDINGS,
           message="Avec « Pas » = [0 ; 2], « fièvre » = [1 ; 1], « ni » = [1 ; 0], « frissons » = [0 ; 1] : "
                   "les scores valent 2, 0, 2, 1, 0, 1, 1, 0, 2 et le poids de « Pas » e² / (3 e² + 3 e + 3)."),
)
