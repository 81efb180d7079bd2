# %% [markdown]
# # Exercice 9 — Pourquoi diviser par la racine de la dimension
#
# *D'après « Le mécanisme d'attention », section « Pourquoi diviser par la racine de la dimension ».*
#
# À l'exercice 8, les scores étaient divisés par `math.sqrt(d)`, où d = 8 est la dimension de q et k.
# Cette étape s'appelle la **mise à l'échelle** ; voyons ce qui se passe sans elle.
#
# Le produit scalaire de deux vecteurs aléatoires est une somme de d produits. Plus il y a de termes,
# plus le résultat fluctue, avec un **écart type d'environ racine de d** : pour d = 256, il vaut 16.
# Quand les scores fluctuent beaucoup, softmax devient extrême, comme avec la « multiplication par 5 »
# de l'exercice 7 : presque toute l'attention va à une seule position. C'est très mauvais au début de
# l'entraînement : là où les poids sont proches de 0 ou de 1, le gradient de softmax est minuscule.
# En divisant par la racine de d, l'écart type des scores revient autour de 1 et l'attention est répartie.
#
# L'expérience : pour chaque dimension d de `D`, on tire au hasard n = 40 petites séquences de T = 5
# caractères (q et k de forme (n, T, d)) et l'on mesure
#
# 1. **scores** : dans chaque séquence, le produit scalaire de chaque requête avec chaque clé, forme
#    (n, T, T). Pour des tableaux à trois dimensions, `@` multiplie séquence par séquence les deux
#    dernières dimensions ; attention, `.T` inverserait les trois axes à la fois ;
# 2. **l'écart type** de tous ces produits scalaires ;
# 3. **le plus grand poids de chaque ligne** après softmax, en moyenne sur toutes les lignes
#    (la fonction `poids_max_moyen`), sans mise à l'échelle puis **après division par √d**.
#    Une « ligne » court toujours le long de la **dernière** dimension (celle que softmax normalise),
#    quel que soit le nombre de dimensions : `poids_max_moyen` reçoit ici des tableaux à trois
#    dimensions (n, T, T), et les vérifications l'appellent aussi sur des tableaux à deux dimensions.
#
# La leçon trouve :
#
# | d | écart type | √d | plus grand poids moyen, sans mise à l'échelle | divisé par √d |
# |---|---|---|---|---|
# | 16 | 3,89 | 4 | 0,79 | 0,53 |
# | 64 | 8,17 | 8 | 0,86 | 0,47 |
# | 256 | 16,08 | 16 | 0,95 | 0,47 |
# | 1024 | 32,53 | 32 | 0,92 | 0,39 |
#
# Tes nombres, tirés au hasard, seront un peu différents ; on vérifie que l'écart type est √d à 15 %
# près, que les poids mis à l'échelle restent entre 0,3 et 0,6, et que sans mise à l'échelle le plus
# grand poids les dépasse d'au moins 0,2. Sur une toute petite expérience (D = [4], n = 2, T = 3), où
# l'écart type mesuré s'éloigne de √d, les vérifications comparent aussi tes nombres aux valeurs
# exactes : l'écart type mesuré n'est pas √d, et la mise à l'échelle divise par √d, pas par lui.
#
# **À toi de coder** avec NumPy : complète les quatre trous `___`. Vérifie avec
# `pytest exercises/ -k racine_d`, ou lance `python exercises/09_racine_d.py` pour voir le tableau.

# %%
import math

import numpy as np

D = [16, 64, 256, 1024]   # les dimensions essayées
n = 40                    # 40 petites séquences…
T = 5                     # … de 5 caractères chacune
graine = 0
rng = np.random.default_rng(graine)


def softmax(s):
    """Sur la dernière dimension : des scores aux poids, positifs, de somme 1."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def poids_max_moyen(scores):
    """Le plus grand poids de chaque ligne (le long de la dernière dimension) après softmax, en moyenne
    sur toutes les lignes ; `scores` a deux dimensions ou plus."""
    return ___


ecarts_types, sans_echelle, avec_echelle = [], [], []
for d in D:
    q = rng.standard_normal((n, T, d))
    k = rng.standard_normal((n, T, d))
    scores = ___                                 # scores[s, i, j] : q[s, i] · k[s, j]
    ecarts_types.append(___)                     # l'écart type de tous les produits scalaires
    sans_echelle.append(poids_max_moyen(scores))
    avec_echelle.append(poids_max_moyen(___))    # les scores mis à l'échelle

# %%
if __name__ == "__main__":
    print("== 4. Pourquoi diviser par √d : plus la dimension est grande, plus les produits scalaires sont "
          "grands, et softmax devient très extrême")
    for d, e, brut, echelle in zip(D, ecarts_types, sans_echelle, avec_echelle):
        print(f"  d={d:5d}  écart type des produits scalaires {e:6.2f} (√d = {math.sqrt(d):5.2f})  "
              f"plus grand poids moyen par ligne : sans mise à l'échelle {brut:.2f}, divisé par √d {echelle:.2f}")
