"""Vérifications publiques de l'exercice 13 (lance `pytest exercises/ -k 13_a_la_main`).

Sur l'exemple du cours, avec ses valeurs arrondies comme lui à trois décimales ; puis sur d'autres
entrées, montrées : une requête de dimension 3 face à quatre clés (deux à égalité), et de grands
scores dont le plus grand n'est pas le premier. Les valeurs attendues ont été calculées à part
(NumPy, formule en commentaire), écrites à quatre décimales et comparées à 0,001 près.
"""

import math

from trous.spec import blank, expect, variant

# Scores q · k : 1, 2, 4, 4, divisés par √3 ; la 3e et la 4e clé sont à égalité.
AUTRES = variant("une requête de dimension 3, quatre clés", shown=True, q="[1.0, 0.0, 2.0]",
                 keys="[[1, 1, 0], [0, 1, 1], [2, 0, 1], [0, 0, 2]]",
                 values="[[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]",
                 autres_values="[[0, 0, 1], [0, 1, 0], [1, 0, 0], [2, 2, 2]]")

scores = blank(
    "scores",
    expect("scores", [0.707, 0.0, 0.707], decimals=3,
           message="Produits scalaires 1, 0, 1, divisés par √2."),
    # NumPy : np.array(keys) @ q / np.sqrt(3).
    expect("scores", [0.5774, 1.1547, 2.3094, 2.3094], atol=1e-3, variant=AUTRES,
           message="q = [1, 0, 2] a 3 composantes : les produits scalaires 1, 2, 4, 4 sont divisés par √3 "
                   "(d_k = len(q), pas 2)."),
)

shift = blank(
    "shift",
    expect("softmax([1000.0, 999.0, 0.0])", [0.731, 0.269, 0.0], decimals=3,
           message="Avec de grands scores, exp(1000) déborde : retire d'abord le plus grand score "
                   "(le résultat du softmax ne change pas)."),
    # NumPy : e = np.exp([0, 1000, 999] - 1000); e / e.sum().
    expect("softmax([0.0, 1000.0, 999.0])", [0.0, 0.7311, 0.2689], atol=1e-3,
           message="Le plus grand score n'est pas toujours le premier : c'est le maximum des scores qu'il faut "
                   "retirer, sinon exp(1000 − 0) déborde."),
    # À la main : exp(0 − 1000), exp(1 − 1000), exp(2 − 1000) valent 0 à 10⁻⁴³⁰ près : [0, 0, 0, 1].
    expect("softmax([0.0, 1.0, 2.0, 1000.0])", [0.0, 0.0, 0.0, 1.0], atol=1e-9,
           message="Quatre scores, le plus grand en dernier : le maximum se cherche parmi tous les scores "
                   "(sinon exp(1000 − 2) déborde)."),
    # NumPy : e = np.exp(s - s.max()); e / e.sum(), avec s les scores ci-dessus.
    expect("weights", [0.0710, 0.1265, 0.4013, 0.4013], atol=1e-3, variant=AUTRES),
)

normalisation = blank(
    "normalisation",
    expect("weights", [0.401, 0.198, 0.401], decimals=3),
    expect("sum(weights)", 1.0, message="Les coefficients du softmax font 1 au total."),
    expect("weights", [0.0710, 0.1265, 0.4013, 0.4013], atol=1e-3, variant=AUTRES,
           message="Quatre coefficients, de somme 1 : chaque exponentielle divisée par la somme des quatre."),
)

sortie = blank(
    "sortie",
    expect("melange([0.5, 0.25, 0.25], values)", [1.5, 1.0],
           message="Avec les poids 0,5 ; 0,25 ; 0,25 : 0,5 × (2, 0) + 0,25 × (0, 2) + 0,25 × (2, 2) = (1,5 ; 1)."),
    expect("output", [1.604, 1.198], decimals=3),
    # À la main : 0,1 × (1, 0) + 0,2 × (0, 1) + 0,3 × (2, 2) + 0,4 × (1, 3) = (1,1 ; 2).
    expect("melange([0.1, 0.2, 0.3, 0.4], [[1, 0], [0, 1], [2, 2], [1, 3]])", [1.1, 2.0],
           message="Quatre poids et quatre valeurs : 0,1 × (1, 0) + 0,2 × (0, 1) + 0,3 × (2, 2) + 0,4 × (1, 3) "
                   "= (1,1 ; 2)."),
    # NumPy : weights @ np.array(values).
    expect("output", [0.4723, 0.5277, 0.8025], atol=1e-3, variant=AUTRES),
)

# Des scores donnés, petits : multiplier par dix (et pas par un autre nombre) se voit sur les poids.
PETITS_SCORES = variant("des scores donnés", shown=True, scores="[0.1234, 0.0, -0.1]")

x10 = blank(
    "x10",
    expect("weights_x10", [0.5, 0.0, 0.5], decimals=3,
           message="Multiplier les scores par dix concentre les poids sur les deux maxima."),
    expect("weights_x10[0] == weights_x10[2]", True, label="le 1er et le 3e poids restent égaux",
           message="Multiplier les scores ne départage pas une égalité."),
    # NumPy : softmax de 10 × les scores ci-dessus.
    expect("weights_x10", [0.0, 0.0, 0.5, 0.5], atol=1e-3, variant=AUTRES,
           message="Quatre scores, chacun multiplié par dix : les deux maxima, à égalité, se partagent tout."),
    # À la main : softmax([1,234, 0, −1]) = [e^1,234 ; 1 ; 1/e] / (e^1,234 + 1 + 1/e).
    expect("weights_x10", [math.exp(1.234) / (math.exp(1.234) + 1 + math.exp(-1)),
                           1 / (math.exp(1.234) + 1 + math.exp(-1)),
                           math.exp(-1) / (math.exp(1.234) + 1 + math.exp(-1))], atol=1e-6, variant=PETITS_SCORES,
           message="Les scores 0,1234 ; 0 ; −0,1 multipliés par dix donnent 1,234 ; 0 ; −1, puis softmax : "
                   "[e^1,234 ; 1 ; 1/e] / (e^1,234 + 1 + 1/e), sans arrondir les scores."),
)

valeurs = blank(
    "valeurs",
    expect("weights_2", [0.401, 0.198, 0.401], decimals=3,
           message="Changer seulement les valeurs ne modifie aucun coefficient d'attention."),
    expect("output_2", [1.198, 1.604], decimals=3),
    expect("output_2 != output", True, label="la sortie a changé"),
    expect("weights_2", [0.0710, 0.1265, 0.4013, 0.4013], atol=1e-3, variant=AUTRES,
           message="Les poids ne dépendent que de q et des clés : les mêmes qu'avant le changement de valeurs."),
    # NumPy : weights @ np.array(autres_values).
    expect("output_2", [1.2038, 0.9290, 0.8735], atol=1e-3, variant=AUTRES),
)
