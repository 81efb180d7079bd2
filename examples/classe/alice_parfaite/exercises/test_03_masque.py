"""Vérifications publiques de l'exercice 3 (lance `pytest exercises/ -k 03_masque`).

La règle du cours : un score masqué vaut −∞ (float("-inf")), et son poids exactement 0 (comparé sans
aucune tolérance). Sur l'autre masque, montré, les valeurs attendues ont été calculées à part.
"""

from trous.spec import blank, expect, variant

REGLE = ("Un score masqué vaut moins l'infini, float(\"-inf\") : c'est la seule valeur dont l'exponentielle "
         "vaut exactement 0 quels que soient les autres scores. Pas 0 (exp(0) = 1), ni un grand nombre négatif "
         "comme -1e9.")

# Quatre tokens, le 2e et le 4e masqués : un masque au milieu de la phrase.
AU_MILIEU = variant("un masque au milieu", shown=True, xr="[[1, 2], [3, 1], [2, 2], [0, 0]]", masque="[1, 0, 1, 0]")

masque = blank(
    "masque",
    expect("scores_f[2]", float("-inf"), label="score du <rempl> après le masque", message=REGLE),
    expect("poids_f[2]", 0, rtol=0.0, atol=0.0, label="poids du <rempl>",
           message="Le <rempl> doit recevoir un poids exactement nul : son score doit devenir −∞, car "
                   "exp(−∞) = 0. Avec 0 à la place, exp(0) = 1 et le remplissage garderait un gros poids."),
    expect("poids_f", [0.73, 0.27, 0], decimals=2,
           message="« fièvre » et « sans » se partagent tout le poids (leur somme fait 1) : "
                   "le masque s'applique avant la softmax, pas après."),
    # À la main : scores de xr[0] = [1, 2] : 1·1 + 2·2 = 5, 3 + 2 = 5, 2 + 4 = 6, 0.
    expect("scores_f", [5, float("-inf"), 6, float("-inf")], variant=AU_MILIEU,
           message="Avec le masque [1, 0, 1, 0], les scores 5, 5, 6, 0 deviennent 5, −∞, 6, −∞ : "
                   "chaque score dont le masque vaut 0 devient −∞, où qu'il soit."),
    # À la main : poids de 5 et 6 seuls : e⁵ / (e⁵ + e⁶) = 1 / (1 + e) ≈ 0,2689 ; e / (1 + e) ≈ 0,7311.
    expect("poids_f", [0.2689, 0, 0.7311, 0], atol=1e-3, variant=AU_MILIEU),
)
