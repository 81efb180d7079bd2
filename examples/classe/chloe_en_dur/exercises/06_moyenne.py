# %% [markdown]
# # Exercice 6 — La méthode la plus simple : la moyenne
#
# *D'après « Le mécanisme d'attention », section « La méthode la plus simple : la moyenne ».*
#
# Pour écrire « 光 » (la clarté) après « 床前明月 » (devant mon lit, la lune claire…), chaque position
# doit recueillir des informations auprès des caractères précédents. Chaque caractère est représenté
# par un vecteur ; la façon la plus simple est de faire **la moyenne** de son propre vecteur et de ceux
# de tous les caractères précédents.
#
# Cela se fait en une seule multiplication matricielle :
#
# 1. **triangle** : une matrice triangulaire inférieure T×T, avec des 1 sur la diagonale et en dessous,
#    des 0 au-dessus — la ligne i n'a de valeurs qu'aux positions 0 à i ;
# 2. **poids** : chaque ligne divisée par sa somme, pour que chaque ligne fasse 1 ;
# 3. **sortie** : `poids @ x` calcule d'un coup le résultat de toutes les positions.
#
# Attendu pour T = 5 (arrondi à deux décimales) :
#
# ```
# [[1.00, 0.00, 0.00, 0.00, 0.00],
#  [0.50, 0.50, 0.00, 0.00, 0.00],
#  [0.33, 0.33, 0.33, 0.00, 0.00],
#  [0.25, 0.25, 0.25, 0.25, 0.00],
#  [0.20, 0.20, 0.20, 0.20, 0.20]]
# ```
#
# Le 1er caractère ne voit que lui-même, le 3e regarde les trois premiers à parts égales : le résultat
# de la 3e position (« 明 ») est la moyenne des trois premiers vecteurs.
#
# **À toi de coder** avec NumPy : complète les trois trous `___`. Vérifie avec
# `pytest exercises/ -k moyenne` (pour T = 5, puis pour d'autres longueurs, T = 4 et T = 6, et des
# vecteurs à 5 composantes : les tailles viennent de T et de x), ou lance `python exercises/06_moyenne.py`
# pour voir la matrice.

# %%
import numpy as np

T = 5
graine = 0
rng = np.random.default_rng(graine)
x = rng.standard_normal((T, 4))   # 5 caractères, un vecteur à 4 composantes chacun (pris au hasard pour l'instant)

triangle = np.array([[1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
poids = np.array([[1.0, 0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0, 0.0], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25, 0.0], [0.2, 0.2, 0.2, 0.2, 0.2]])
sortie = np.array([[0.1257302210933933, -0.1321048632913019, 0.6404226504432821, 0.10490011715303971], [-0.20496957603385885, 0.11474509580909142, 0.9722113477867096, 0.5259905401411409], [-0.3712247959582367, -0.34531042647595656, 0.44038274434535574, 0.36443568654317515], [-0.8596762906283861, -0.31368073584010386, 0.018809321445750427, 0.09025992623151843], [-0.7965928290741708, -0.314204619945914, 0.09737356443142695, 0.2807106148737503]])

# %%
if __name__ == "__main__":
    np.set_printoptions(precision=2, suppress=True)
    print("== 1. Une seule multiplication matricielle : chaque position reçoit la moyenne "
          "d'elle-même et de toutes les précédentes")
    print(poids)
    print("  Résultat de la 3e position (« 明 ») = moyenne des trois premiers vecteurs ?",
          np.allclose(sortie[2], x[:3].mean(axis=0)))
