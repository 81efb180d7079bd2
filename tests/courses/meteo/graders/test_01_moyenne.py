"""Correcteur caché de l'exercice 1 : d'autres relevés, comparés à la solution de référence."""

from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [
    variant("d'autres relevés", temperatures="[5.0, 7.0, 9.0, 11.0, 13.0]"),
    variant("un seul relevé", temperatures="[4.0]"),
    variant("des demi-degrés", temperatures="[0.5, 1.25, 2.0]"),
]

total = blank("total", expect("total", SOLUTION, variants=AUTRES, label="le total"))
moyenne = blank("moyenne", expect("moyenne", SOLUTION, variants=AUTRES, label="la moyenne"))
