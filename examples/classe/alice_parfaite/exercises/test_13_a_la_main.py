"""Vérifications publiques de l'exercice 13 (lance `pytest exercises/ -k 13_a_la_main`).

Les valeurs attendues sont celles du cours, arrondies comme lui à trois décimales.
"""

from trous.spec import blank, expect

scores = blank(
    "scores",
    expect("scores", [0.707, 0.0, 0.707], decimals=3,
           message="Produits scalaires 1, 0, 1, divisés par √2."),
)

shift = blank(
    "shift",
    expect("softmax([1000.0, 999.0, 0.0])", [0.731, 0.269, 0.0], decimals=3,
           message="Avec de grands scores, exp(1000) déborde : retire d'abord le plus grand score "
                   "(le résultat du softmax ne change pas)."),
)

normalisation = blank(
    "normalisation",
    expect("weights", [0.401, 0.198, 0.401], decimals=3),
    expect("sum(weights)", 1.0, message="Les coefficients du softmax font 1 au total."),
)

sortie = blank(
    "sortie",
    expect("melange([0.5, 0.25, 0.25], values)", [1.5, 1.0],
           message="Avec les poids 0,5 ; 0,25 ; 0,25 : 0,5 × (2, 0) + 0,25 × (0, 2) + 0,25 × (2, 2) = (1,5 ; 1)."),
    expect("output", [1.604, 1.198], decimals=3),
)

x10 = blank(
    "x10",
    expect("weights_x10", [0.5, 0.0, 0.5], decimals=3,
           message="Multiplier les scores par dix concentre les poids sur les deux maxima."),
    expect("weights_x10[0] == weights_x10[2]", True, label="le 1er et le 3e poids restent égaux",
           message="Multiplier les scores ne départage pas une égalité."),
)

valeurs = blank(
    "valeurs",
    expect("weights_2", [0.401, 0.198, 0.401], decimals=3,
           message="Changer seulement les valeurs ne modifie aucun coefficient d'attention."),
    expect("output_2", [1.198, 1.604], decimals=3),
    expect("output_2 != output", True, label="la sortie a changé"),
)
