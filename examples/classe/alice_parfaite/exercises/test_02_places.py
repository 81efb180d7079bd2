"""Vérifications publiques de l'exercice 2 (lance `pytest exercises/ -k 02_places`)."""

from trous.spec import blank, expect

xp = blank(
    "xp",
    expect("xp", [[2, 0], [0, 1], [1, 2]],
           message="Chaque token plus le vecteur de sa place : « toux » devient [1 ; 1] + [0 ; 1] = [1 ; 2]."),
    expect("sortie", [1, 1.86], decimals=2,
           message="« toux » à la place 3, après l'attention sur les vecteurs additionnés."),
)

xp2 = blank(
    "xp2",
    expect("xp2", [[2, 1], [0, 1], [1, 1]],
           message="Dans « toux sans fièvre », « toux » est à la place 1 : [1 ; 1] + [1 ; 0] = [2 ; 1]."),
    expect("sortie_autre", [1.85, 1], decimals=2,
           message="« toux » à la place 1 : un autre vecteur qu'à la place 3, l'ordre compte maintenant."),
)
