"""Correcteur caché de l'exercice 11 (jamais distribué aux élèves).

D'autres instants d'horloge et d'autres durées : la valeur attendue est celle que donne la solution de
référence (SOLUTION). Les durées suivent des lois de puissance exactes (T¹, T^1,5, T³), pour que toute
façon juste de calculer la pente (moindres carrés ou deux points extrêmes) donne la même valeur. Les
étiquettes disent ce qui est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect

duree = blank(
    "duree",
    expect("mesurer(lambda: None, iter([2.0, 2.25]).__next__)", SOLUTION,
           label="mesurer(f) avec une autre horloge factice"),
    expect("mesurer(lambda: None, iter([100.0, 107.5]).__next__)", SOLUTION,
           label="mesurer(f) avec une horloge factice qui indique de grands instants"),
)

rapport = blank(
    "rapport",
    expect("rapports([0.5, 1.0, 2.0, 4.0])", SOLUTION, label="rapports de quatre durées"),
    expect("rapports([0.002, 0.009, 0.03])", SOLUTION, label="rapports de durées qui ne sont pas des multiples"),
)

pente = blank(
    "pente",
    expect("pente([1000, 2000, 4000], [0.001, 0.008, 0.064])", SOLUTION, label="la pente d'une durée qui croît plus vite"),
    expect("pente([100, 300, 900], [0.1, 0.1 * 3 ** 1.5, 0.1 * 9 ** 1.5])", SOLUTION,
           label="la pente quand les longueurs triplent"),
    expect("pente([10, 20, 40, 80], [0.5, 1.0, 2.0, 4.0])", SOLUTION, label="la pente sur quatre longueurs"),
)
