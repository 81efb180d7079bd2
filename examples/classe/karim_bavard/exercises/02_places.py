# %% [markdown]
# # Exercice 2 — Remettre l'ordre : le vecteur de place
#
# *D'après « Partie 5 — Lire tout d'un coup (attention) », section « Remettre l'ordre : le vecteur de place ».*
#
# L'attention ignore l'ordre : dans « toux sans fièvre », « toux » obtient le même [0,79 ; 0,79]
# que dans « fièvre sans toux ». On donne donc à chaque place un vecteur (appris comme un embedding)
# et on l'ajoute au vecteur du token : places [1 ; 0], [0 ; 0], [0 ; 1].
# Dans « fièvre sans toux », « toux » devient [1 ; 1] + [0 ; 1] = [1 ; 2] ;
# dans « toux sans fièvre », il devient [2 ; 1]. Le token garde un seul vecteur : la somme des deux.
#
# Il faut faire l'addition **avant** l'attention : les scores doivent déjà « connaître » la place.
#
# **À toi de coder** : complète `xp` et `xp2` — pour chaque couple (vecteur `v`, place `p`), la liste
# des sommes composante par composante. L'attention est déjà fournie : `attention(X, i)` donne le
# nouveau vecteur du token `i`.
#
# Attendu : la même phrase, dans deux ordres, donne maintenant deux vecteurs différents pour « toux » :
# `[1, 1.86]` à la place 3, `[1.85, 1]` à la place 1. Vérifie avec `pytest exercises/ -k 02_places` : les
# vérifications essaient aussi d'autres vecteurs de place, montrés.

# %%
import math


def softmax(s):
    e = [math.exp(v) for v in s]
    t = sum(e)
    return [v / t for v in e]


def attention(X, i):
    poids = softmax([sum(a * b for a, b in zip(X[i], t)) for t in X])
    return [sum(p * t[j] for p, t in zip(poids, X)) for j in range(2)]


places = [[1, 0], [0, 0], [0, 1]]
x = [[1, 0], [0, 1], [1, 1]]         # fièvre sans toux
x2 = [[1, 1], [0, 1], [1, 0]]        # toux sans fièvre

xp = [[a + b for a, b in zip(v, p)] for v, p in zip(x, places)]     # v + p, composante par composante
xp2 = [[a + b for a, b in zip(v, p)] for v, p in zip(x2, places)]
sortie = attention(xp, 2)       # « toux » à la place 3
sortie_autre = attention(xp2, 0)   # « toux » à la place 1
print(xp, sortie, sortie_autre)
