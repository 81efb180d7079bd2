"""Correcteur caché de l'exercice 2 : d'autres relevés, comparés à la solution de référence."""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [variant("des relevés négatifs", temperatures="[-5.0, -1.0, -3.0]"),
          variant("le plus haut en premier", temperatures="[9.0, 2.0, 4.0]"),
          variant("des demi-degrés", temperatures="[1.5, -0.5, 2.5]")]

plus_haute = blank("plus_haute", expect("plus_haute", SOLUTION, variants=AUTRES, label="le plus haut relevé"))
plus_basse = blank("plus_basse", expect("plus_basse", SOLUTION, variants=AUTRES, label="le plus bas relevé"))
