"""Vérifications publiques de l'exercice 2 (valeurs calculées à la main)."""

from trous.spec import blank, expect, variant

AUTRES = variant("d'autres relevés", shown=True, temperatures="[3.5, -2.5, 7.0]")

plus_haute = blank(
    "plus_haute",
    expect("plus_haute", 15.5),
    expect("plus_haute", 7.0, variant=AUTRES),
)

plus_basse = blank(
    "plus_basse",
    expect("plus_basse", 9.0),
    expect("plus_basse", -2.5, variant=AUTRES),
)
