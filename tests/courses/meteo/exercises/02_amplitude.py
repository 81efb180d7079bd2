# Exercice 2 — L'amplitude de la journée
#
# L'amplitude est l'écart entre le relevé le plus haut et le plus bas.

temperatures = [12.0, 15.5, 9.0, 11.5]

plus_haute = ___
plus_basse = ___
amplitude = plus_haute - plus_basse
print(amplitude)
