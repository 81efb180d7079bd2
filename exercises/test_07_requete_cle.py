"""Vérifications publiques de l'exercice 7 (lance `pytest exercises/ -k requete`).

Sur les vecteurs de la leçon, puis avec d'autres requêtes, montrées : q_guang = [2, 0] et
q_lieu = [0, 2], deux fois plus « longues » ; puis avec six autres clés et des requêtes à 3 composantes. Les valeurs attendues ont été calculées à part
(formule NumPy en commentaire), écrites à quatre décimales et comparées à 0,001 près. Ce sont des
tableaux NumPy, comme ceux que construit le cours : une liste des mêmes nombres ne suffit pas.

Le décalage (retrancher le maximum avant l'exponentielle) est déjà écrit dans softmax : aucune
vérification ne porte ici sur de très grands scores (c'est l'objet de l'exercice 13).
"""

import numpy as np

from trous.spec import blank, expect, variant

# k @ [2, 0] = 2 × (première colonne de k) ; k @ [0, 2] = 2 × (seconde colonne).
AUTRES_REQUETES = variant("d'autres requêtes", shown=True, q_guang="np.array([2.0, 0.0])",
                          q_lieu="np.array([0.0, 2.0])")

# Six clés à 3 composantes (une de plus que la leçon) : à la main, k @ q_guang = [1, 4, 2,5, 3,5, 0, 4,5]
# et k @ q_lieu = [0,5, 4, 2,5, 2, 1, 4,5].
AUTRES_CLES = variant("six clés et des requêtes à 3 composantes", shown=True,
                      k="np.array([[1.0, 0.0, 2.0], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 3.0], [2.0, 0.0, 0.0], "
                        "[1.0, 2.0, 1.0]])",
                      q_guang="np.array([0.0, 2.0, 0.5])", q_lieu="np.array([0.5, 2.0, 0.0])")

normalise = blank(
    "normalise",
    expect("softmax(np.array([0.1, 0.0, 0.9, 1.0, 0.8]))", [0.12, 0.11, 0.26, 0.29, 0.23], decimals=2,
           message="La softmax des scores de la leçon : « 月 » reçoit le plus grand poids."),
    expect("float(softmax(np.array([0.1, 0.0, 0.9, 1.0, 0.8])).sum())", 1.0,
           message="Les poids doivent faire 1 au total."),
    # NumPy : e = np.exp([0.2, 0, 1.8, 2, 1.6]); e / e.sum()
    expect("poids", np.array([0.0593, 0.0485, 0.2935, 0.3585, 0.2403]), atol=1e-3, variant=AUTRES_REQUETES,
           message="Les scores 0,2 ; 0 ; 1,8 ; 2 ; 1,6 : chaque exponentielle divisée par leur total."),
    # NumPy : e = np.exp([0, 1, 2]); e / e.sum()
    expect("softmax(np.array([0.0, 1.0, 2.0]))", np.array([0.0900, 0.2447, 0.6652]), atol=1e-3,
           message="Trois scores : chaque exponentielle divisée par le total des trois."),
    # NumPy : e = np.exp([0, 1, 2, 3, -1, 0.5]); e / e.sum()
    expect("softmax(np.array([0.0, 1.0, 2.0, 3.0, -1.0, 0.5]))",
           np.array([0.0301, 0.0819, 0.2225, 0.6048, 0.0111, 0.0496]), atol=1e-3,
           message="Six scores : chaque exponentielle divisée par le total des six, pas des cinq premières."),
    # NumPy : e = np.exp([1, 4, 2.5, 3.5, 0, 4.5]); e / e.sum()
    expect("poids", np.array([0.0140, 0.2820, 0.0629, 0.1710, 0.0052, 0.4649]), atol=1e-3, variant=AUTRES_CLES,
           message="Six scores 1 ; 4 ; 2,5 ; 3,5 ; 0 ; 4,5 : chaque exponentielle divisée par le total des six."),
)

scores = blank(
    "scores",
    expect("scores", np.array([0.1, 0.0, 0.9, 1.0, 0.8]),
           message="Un score par caractère : le produit scalaire de sa clé et de la requête [1, 0]."),
    # À la main : [2, 0] · [a, b] = 2a.
    expect("scores", np.array([0.2, 0.0, 1.8, 2.0, 1.6]), variant=AUTRES_REQUETES,
           message="Avec la requête [2, 0], le score de la clé [a, b] est 2 × a + 0 × b : "
                   "le produit scalaire de chaque clé avec q_guang, quelle que soit q_guang."),
    # À la main : [0, 2, 0,5] · [a, b, c] = 2b + 0,5c.
    expect("scores", np.array([1.0, 4.0, 2.5, 3.5, 0.0, 4.5]), variant=AUTRES_CLES,
           message="Six clés à 3 composantes et q_guang = [0, 2, 0,5] : un score par clé, 0 × a + 2 × b + 0,5 × c."),
)

concentre = blank(
    "concentre",
    expect("poids_x5", np.array([0.01, 0.0, 0.3, 0.5, 0.18]), decimals=2,
           message="Scores multipliés par 5 avant softmax : « 月 » prend à lui seul la moitié."),
    # NumPy : e = np.exp(5 * np.array([0.2, 0, 1.8, 2, 1.6])); e / e.sum()
    expect("poids_x5", np.array([0.0001, 0.0000, 0.2447, 0.6652, 0.0900]), atol=1e-3, variant=AUTRES_REQUETES,
           message="Les scores 0,2 ; 0 ; 1,8 ; 2 ; 1,6, multipliés par 5, puis softmax."),
    # NumPy : e = np.exp(5 * np.array([1, 4, 2.5, 3.5, 0, 4.5])); e / e.sum()
    expect("poids_x5", np.array([0.0000, 0.0754, 0.0000, 0.0062, 0.0000, 0.9184]), atol=1e-3, variant=AUTRES_CLES,
           message="Les scores 1 ; 4 ; 2,5 ; 3,5 ; 0 ; 4,5, multipliés par 5, puis softmax."),
)

requete_lieu = blank(
    "requete_lieu",
    expect("poids_lieu", np.array([0.29, 0.32, 0.13, 0.12, 0.14]), decimals=2,
           message="Avec la requête [0, 1], « 床 » et « 前 » (des lieux) passent devant."),
    # NumPy : e = np.exp(k @ [0, 2]) = np.exp([1.8, 2, 0.2, 0, 0.4]); e / e.sum()
    expect("poids_lieu", np.array([0.3527, 0.4308, 0.0712, 0.0583, 0.0870]), atol=1e-3, variant=AUTRES_REQUETES,
           message="Avec la requête q_lieu = [0, 2], les scores valent 1,8 ; 2 ; 0,2 ; 0 ; 0,4 : "
                   "softmax des scores de q_lieu, quelle que soit q_lieu."),
    # NumPy : e = np.exp(k @ [0.5, 2, 0]) = np.exp([0.5, 4, 2.5, 2, 1, 4.5]); e / e.sum()
    expect("poids_lieu", np.array([0.0098, 0.3239, 0.0723, 0.0438, 0.0161, 0.5341]), atol=1e-3, variant=AUTRES_CLES,
           message="Six clés à 3 composantes et q_lieu = [0,5, 2, 0] : les scores valent 0,5 ; 4 ; 2,5 ; 2 ; 1 ; 4,5."),
)
