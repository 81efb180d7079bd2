# Exercice 1 — La température moyenne
#
# Quatre relevés de la journée, en degrés. Complète les deux trous `___`, puis vérifie avec
# `pytest exercises/ -k 01_moyenne`.

temperatures = [12.0, 15.5, 9.0, 11.5]

total = ___      # la somme des relevés
moyenne = ___    # le total divisé par le nombre de relevés
print(total, moyenne)
