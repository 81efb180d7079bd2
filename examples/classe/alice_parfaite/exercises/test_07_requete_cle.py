"""Vérifications publiques de l'exercice 7 (lance `pytest exercises/ -k requete`)."""

from trous.spec import blank, expect

normalise = blank(
    "normalise",
    expect("softmax(np.array([0.1, 0.0, 0.9, 1.0, 0.8]))", [0.12, 0.11, 0.26, 0.29, 0.23], decimals=2,
           message="La softmax des scores de la leçon : « 月 » reçoit le plus grand poids."),
    expect("float(softmax(np.array([0.1, 0.0, 0.9, 1.0, 0.8])).sum())", 1.0,
           message="Les poids doivent faire 1 au total."),
)

scores = blank(
    "scores",
    expect("scores", [0.1, 0.0, 0.9, 1.0, 0.8],
           message="Un score par caractère : le produit scalaire de sa clé et de la requête [1, 0]."),
)

concentre = blank(
    "concentre",
    expect("poids_x5", [0.01, 0.0, 0.3, 0.5, 0.18], decimals=2,
           message="Scores multipliés par 5 avant softmax : « 月 » prend à lui seul la moitié."),
)

requete_lieu = blank(
    "requete_lieu",
    expect("poids_lieu", [0.29, 0.32, 0.13, 0.12, 0.14], decimals=2,
           message="Avec la requête [0, 1], « 床 » et « 前 » (des lieux) passent devant."),
)
