"""Vérifications publiques de l'exercice 11 (lance `pytest exercises/ -k 11_cout`).

Aucune ne chronomètre : une horloge factice donne les instants, et les durées sont fournies, pour
que le résultat ne dépende ni de la machine ni de ce qui tourne en même temps.
"""

from trous.spec import blank, expect

duree = blank(
    "duree",
    expect("mesurer(lambda: None, iter([1.0, 3.5]).__next__)", 2.5,
           label="mesurer(f) avec une horloge factice qui indique 1,0 puis 3,5",
           message="La durée est le temps écoulé entre les deux lectures de l'horloge."),
)

rapport = blank(
    "rapport",
    expect("rapports([0.01, 0.04, 0.16])", [4.0, 4.0],
           message="De 0,01 s à 0,04 s, la durée est multipliée par 4 (et de même de 0,04 à 0,16)."),
)

pente = blank(
    "pente",
    expect("pente([1000, 2000, 4000], [0.01, 0.04, 0.16])", 2.0,
           message="Des durées multipliées par 4 quand T double croissent comme T² : la pente vaut 2."),
    expect("pente([1000, 2000, 4000], [0.01, 0.02, 0.04])", 1.0,
           message="Des durées proportionnelles à T donnent une pente de 1."),
)
