"""Vérifications publiques de l'exercice 2 (lance `pytest exercises/ -k 02_places`).

Les deux trous sont vérifiés sur l'exemple du cours, puis avec d'autres vecteurs de place, montrés :
les sommes attendues ont été faites à la main.
"""

from trous.spec import blank, expect, variant

AUTRES_PLACES = variant("d'autres vecteurs de place", shown=True, places="[[2, 0], [0, 1], [1, -1]]")

xp = blank(
    "xp",
    expect("xp", [[2, 0], [0, 1], [1, 2]],
           message="Chaque token plus le vecteur de sa place : « toux » devient [1 ; 1] + [0 ; 1] = [1 ; 2]."),
    expect("sortie", [1, 1.86], decimals=2,
           message="« toux » à la place 3, après l'attention sur les vecteurs additionnés."),
    # À la main : [1, 0] + [2, 0], [0, 1] + [0, 1], [1, 1] + [1, -1].
    expect("xp", [[3, 0], [0, 2], [2, 0]], variant=AUTRES_PLACES,
           message="Avec les places [2 ; 0], [0 ; 1], [1 ; −1] : [1 ; 0] + [2 ; 0] = [3 ; 0], "
                   "[0 ; 1] + [0 ; 1] = [0 ; 2], [1 ; 1] + [1 ; −1] = [2 ; 0]."),
)

xp2 = blank(
    "xp2",
    expect("xp2", [[2, 1], [0, 1], [1, 1]],
           message="Dans « toux sans fièvre », « toux » est à la place 1 : [1 ; 1] + [1 ; 0] = [2 ; 1]."),
    expect("sortie_autre", [1.85, 1], decimals=2,
           message="« toux » à la place 1 : un autre vecteur qu'à la place 3, l'ordre compte maintenant."),
    # À la main : [1, 1] + [2, 0], [0, 1] + [0, 1], [1, 0] + [1, -1].
    expect("xp2", [[3, 1], [0, 2], [2, -1]], variant=AUTRES_PLACES,
           message="Avec les places [2 ; 0], [0 ; 1], [1 ; −1] : [1 ; 1] + [2 ; 0] = [3 ; 1], "
                   "[0 ; 1] + [0 ; 1] = [0 ; 2], [1 ; 0] + [1 ; −1] = [2 ; −1]."),
)
