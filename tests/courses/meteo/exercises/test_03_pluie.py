"""Vérifications publiques de l'exercice 3 (valeurs calculées à la main)."""

from trous.spec import blank, expect, variant

AUTRE_PLUIE = variant("d'autres hauteurs", shown=True, pluie="[1.0, 2.5]")

compte = blank(
    "compte",
    expect("nombre", 3, message="3,2, 12,5 et 1 dépassent 0,5 : trois jours."),
    expect("jours_de_pluie([2.0, 4.0, 6.0], 3.0)", 2, message="Avec un seuil de 3 : 4 et 6."),
    expect("jours_de_pluie([3.0, 4.0], 3.0)", 1, message="Une valeur égale au seuil ne le dépasse pas."),
)

cumul = blank(
    "cumul",
    expect("cumul", 16.7, atol=1e-9, message="0 + 3,2 + 0 + 12,5 + 1 = 16,7."),
    expect("cumul", 3.5, variant=AUTRE_PLUIE),
)
