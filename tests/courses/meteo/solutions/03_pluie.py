# Exercice 3 — Les jours de pluie
#
# Les hauteurs de pluie de cinq jours, en millimètres. Un jour compte comme pluvieux au-delà d'un seuil.


def jours_de_pluie(mm, seuil):
    return sum(1 for v in mm if v > seuil)  # combien de valeurs de mm dépassent seuil


pluie = [0.0, 3.2, 0.0, 12.5, 1.0]
nombre = jours_de_pluie(pluie, 0.5)
cumul = sum(pluie)     # la pluie tombée en tout
print(nombre, cumul)
