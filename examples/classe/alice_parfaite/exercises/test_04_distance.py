"""Vérifications publiques de l'exercice 4 (lance `pytest exercises/ -k 04_distance`)."""

from trous.spec import blank, expect

rnn = blank(
    "rnn",
    expect("reste", 1 / 256,
           message="« Pas » est à 8 mots de « toux » : son apport est multiplié 8 fois par 0,5, il en reste 1/256."),
)

poids = blank(
    "poids",
    expect("loin", 0.13, decimals=2, message="Le poids de « Pas » à 8 mots de « toux » : e¹ / (3 e¹ + 5 e⁰ + e²)."),
    expect("pres", 0.13, decimals=2, message="Le poids de « Pas » juste avant « toux »."),
    expect("loin - pres", 0, label="loin − pres",
           message="Le même poids à 8 mots et à 1 mot : la distance n'entre pas dans le calcul."),
)
