"""Vérifications publiques de l'exercice 11 (lance `pytest exercises/ -k 11_cout`).

Aucune ne chronomètre : une horloge factice donne les instants, et les durées sont fournies, pour
que le résultat ne dépende ni de la machine ni de ce qui tourne en même temps. Chaque fonction est
essayée sur l'exemple du cours (T qui double), puis sur d'autres entrées, montrées dans l'expression
elle-même (d'autres instants, des longueurs qui triplent) ; les valeurs attendues sont faites à la main.
"""

from trous.spec import blank, expect

duree = blank(
    "duree",
    expect("mesurer(lambda: None, iter([1.0, 3.5]).__next__)", 2.5,
           label="mesurer(f) avec une horloge factice qui indique 1,0 puis 3,5",
           message="La durée est le temps écoulé entre les deux lectures de l'horloge."),
    # À la main : 10,75 − 10,0.
    expect("mesurer(lambda: None, iter([10.0, 10.75]).__next__)", 0.75,
           label="mesurer(f) avec une horloge factice qui indique 10,0 puis 10,75",
           message="La durée est l'instant de fin moins l'instant de début : 10,75 − 10 = 0,75."),
)

rapport = blank(
    "rapport",
    expect("rapports([0.01, 0.04, 0.16])", [4.0, 4.0],
           message="De 0,01 s à 0,04 s, la durée est multipliée par 4 (et de même de 0,04 à 0,16)."),
    # À la main : 3 / 2 = 1,5 ; 7,5 / 3 = 2,5.
    expect("rapports([2.0, 3.0, 7.5])", [1.5, 2.5],
           message="De 2 s à 3 s, la durée est multipliée par 1,5 ; de 3 s à 7,5 s, par 2,5 : "
                   "un rapport n'est pas toujours un nombre entier (/ et non //)."),
)

pente = blank(
    "pente",
    expect("pente([1000, 2000, 4000], [0.01, 0.04, 0.16])", 2.0,
           message="Des durées multipliées par 4 quand T double croissent comme T² : la pente vaut 2."),
    expect("pente([1000, 2000, 4000], [0.01, 0.02, 0.04])", 1.0,
           message="Des durées proportionnelles à T donnent une pente de 1."),
    # À la main : 0,5 × (T / 10)², T = 10, 30, 90 : une loi en T², la pente vaut 2.
    # À la main : des durées T³ (1, 8, 64, 512 pour T = 1, 2, 4, 8) : une pente de 3, sur quatre longueurs.
    expect("pente([1, 2, 4, 8], [1, 8, 64, 512])", 3.0,
           message="Sur quatre longueurs, des durées qui croissent comme T³ donnent une pente de 3 : la pente se "
                   "calcule sur toutes les longueurs données, pas seulement trois."),
    expect("pente([10, 30, 90], [0.5, 4.5, 40.5])", 2.0,
           message="Quand T triple, des durées multipliées par 9 croissent aussi comme T² : la pente vaut 2 "
                   "(la pente de la droite des (log T, log durée), pas le logarithme d'un rapport)."),
)
