# %% [markdown]
# # Exercice 3 — Masquer le remplissage
#
# *D'après « Partie 5 — Lire tout d'un coup (attention) », section « Le masque de remplissage ».*
#
# Pour traiter des textes de longueurs différentes, on complète les plus courts avec des `<rempl>`
# (embedding [0 ; 0]). Ils ne doivent pas recevoir de poids. Avant la softmax, on remplace leur score
# par −∞ : exp(−∞) = 0, donc le poids vaut exactement 0 et les autres poids se partagent le total.
# Mettre 0 à la place ne marcherait pas : exp(0) = 1, le remplissage garderait un gros poids.
#
# Exemple : « fièvre » dans « fièvre sans <rempl> » a des scores 1, 0, 0 ;
# avec le masque 1, 1, 0 on obtient [0,73 ; 0,27 ; 0].
#
# **À toi de coder** : les scores de « fièvre » vers chaque token sont déjà calculés. Remplace par
# `float("-inf")` ceux dont le masque vaut 0, **avant** la softmax (qui est fournie). Une fois la
# softmax passée, il est trop tard : les poids faussés ne se « corrigent » plus.
#
# Attendu : `[0.73, 0.27, 0]`. Vérifie avec `pytest exercises/ -k 03_masque`.

# %%
import math


def softmax(s):
    e = [math.exp(v) for v in s]
    t = sum(e)
    return [v / t for v in e]


xr = [[1, 0], [0, 1], [0, 0]]    # fièvre, sans, <rempl>
masque = [1, 1, 0]
scores_f = [sum(a * b for a, b in zip(xr[0], t)) for t in xr]
scores_f = [s if m else float("-inf") for s, m in zip(scores_f, masque)]
poids_f = softmax(scores_f)
print(poids_f)
