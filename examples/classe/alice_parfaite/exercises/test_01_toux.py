"""Vérifications publiques de l'exercice 1 (lance `pytest exercises/ -k toux`)."""

from trous.spec import blank, expect

somme_exp = blank(
    "somme_exp",
    expect("softmax([1, 1, 2])", [0.21, 0.21, 0.58], decimals=2,
           message="La softmax des scores [1, 1, 2] donne les poids du cours."),
    expect("sum(softmax([1, 1, 2]))", 1.0, message="Les poids doivent faire 1 au total."),
)

scores = blank(
    "scores",
    expect("scores", [1, 1, 2]),
)

nouveau = blank(
    "nouveau",
    expect("nouveau", [0.79, 0.79], decimals=2),
)
