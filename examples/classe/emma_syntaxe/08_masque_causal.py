# %% [markdown]
# # Exercice 8 — Le masque causal : interdit de regarder plus loin
#
# *D'après « Le mécanisme d'attention », section « Le masque causal : interdit de regarder plus loin ».*
#
# À l'entraînement, le modèle doit prédire le caractère suivant à chaque position. Si la 3e position
# pouvait voir le 4e caractère, elle pourrait directement « copier la réponse » et n'apprendrait rien.
# Chaque position ne peut donc voir qu'elle-même et les positions précédentes.
#
# Pour cela, **avant softmax**, on met à **moins l'infini** les scores des positions suivantes.
# L'exponentielle de moins l'infini vaut 0 : après softmax, leur poids est 0.
#
# 1. **scores** : `scores[i, j]` est le produit scalaire de la requête `q[i]` et de la clé `k[j]`,
#    divisé par la racine de la dimension d = 8 de q et k (on verra pourquoi à l'exercice 9) ;
# 2. **masque** : une matrice T×T de booléens, vraie là où la position i a le droit de voir la position j,
#    c'est-à-dire sur la diagonale et en dessous (triangulaire inférieure) ;
# 3. **scores_masques** : les scores, avec −∞ partout où `masque` est faux (`np.where` choisit, case par
#    case, entre deux tableaux). La règle de l'exercice 3 vaut ici aussi : −∞ (`-np.inf`), jamais un
#    grand nombre négatif comme `-1e9`.
#
# Attendu : comme la matrice de moyenne de l'exercice 6, des poids triangulaires inférieurs (des zéros
# exacts au-dessus de la diagonale), chaque ligne de somme 1, la première ligne [1, 0, 0, 0, 0]. La
# différence : les poids d'une ligne ne sont plus égaux, ils sont décidés par q et k. Ici q et k sont
# aléatoires, et les poids semblent sans logique ; après l'entraînement, ils prendront un sens.
#
# **À toi de coder** avec NumPy : complète les trois trous `___`. Vérifie avec
# `pytest exercises/ -k masque_causal`, ou lance `python exercises/08_masque_causal.py` pour voir les poids.
# Les vérifications essaient aussi une autre longueur T et une autre dimension d : le calcul ne doit pas
# supposer T = 5 ni d = 8.

# %%
import math

import numpy as np

T = 5
d = 8                               # la dimension de q et k
graine = 8
rng = np.random.default_rng(graine)
q = rng.standard_normal((T, d))     # au hasard : un modèle pas encore entraîné
k = rng.standard_normal((T, d))


def softmax(s):
    """Sur chaque ligne : des scores aux poids, positifs, de somme 1 (et exp(−∞) = 0)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


scores = q @ k.T / math.sqrt(d)           # scores[i, j] : q[i] · k[j], divisé par la racine de d
masque = np.tril(np.ones((T, T), dtype=bool))           # vrai là où la position i peut voir la position j
scores_masques = np.where(masque, scores, -np.inf)   # −∞ là où masque est faux, le score ailleurs
poids = softmax(scores_masques)

# %%
if __name__ == "__main__":
    np.set_printoptions(precision=2, suppress=True)
    print("== 3. Masque causal : les scores des positions suivantes valent −∞, leur poids après softmax est 0")
    print(poids)
