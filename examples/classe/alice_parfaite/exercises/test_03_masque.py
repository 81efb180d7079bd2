"""Vérifications publiques de l'exercice 3 (lance `pytest exercises/ -k 03_masque`)."""

from trous.spec import blank, expect

masque = blank(
    "masque",
    expect("poids_f[2]", 0, label="poids du <rempl>",
           message="Le <rempl> doit recevoir un poids exactement nul : son score doit devenir −∞, car "
                   "exp(−∞) = 0. Avec 0 à la place, exp(0) = 1 et le remplissage garderait un gros poids."),
    expect("poids_f", [0.73, 0.27, 0], decimals=2,
           message="« fièvre » et « sans » se partagent tout le poids (leur somme fait 1) : "
                   "le masque s'applique avant la softmax, pas après."),
)
