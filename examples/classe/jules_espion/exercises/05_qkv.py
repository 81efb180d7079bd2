# %% [markdown]
# # Exercice 5 — √d, puis requêtes, clés, valeurs
#
# *D'après « Partie 5 — Lire tout d'un coup (attention) », section « √d, puis requêtes, clés, valeurs ».*
#
# Avec des vecteurs de d composantes, les produits scalaires grandissent avec d et la softmax devient
# trop « pointue » (un poids proche de 1, des pentes presque nulles). On divise donc les scores par √d
# avant la softmax.
#
# Les vrais modèles ne comparent pas directement les embeddings : trois couches denses sans biais
# calculent, pour chaque token, une requête q (« que cherche-je ? »), une clé k (« que propose-je ? »)
# et une valeur v (« que transmets-je ? »). Le score est q · k, la moyenne pondérée porte sur les v :
# softmax(Q Kᵀ / √d) V. Avec x de 2 composantes et q, k, v de 4 composantes,
# cela fait 3 × 2 × 4 = 24 poids appris.
#
# Ici, x est « fièvre sans toux » et les matrices W_q, W_k, W_v (2 lignes, 4 colonnes) sont choisies
# pour que q · k / √d redonne les scores du cours (1, 1, 2 pour « toux »).
#
# **À toi de coder**, sans bibliothèque : complète quatre trous
# - la couche dense : composante `j` de `couche(v, W)` = somme des `v[i] * W[i][j]` ;
# - le nombre de poids appris, calculé à partir des formes de W_q, W_k, W_v (pas tapé à la main) ;
# - la division des scores par √d ;
# - la moyenne pondérée des valeurs : composante `j` = somme des `p[t] * V[t][j]`.
#
# Attendu : les scores [[1, 0, 1], [0, 1, 1], [1, 1, 2]], les poids de « toux » [0.21, 0.21, 0.58],
# et 24 poids appris. Vérifie avec `pytest exercises/ -k 05_qkv` : les vérifications essaient aussi
# d'autres entrées, montrées (un 4e token, des matrices à 3 colonnes, des embeddings à 3 composantes) ;
# rien ne doit supposer 3 tokens, des embeddings à 2 composantes ou d = 4.

# %%
import math


def softmax(s):
    e = [math.exp(v) for v in s]
    t = sum(e)
    return [v / t for v in e]


def couche(v, W):
    """Couche dense sans biais : le vecteur v fois la matrice W (une ligne de W par composante de v)."""
    return [sum(v[i] * W[i][j] for i in range(len(v))) for j in range(len(W[0]))]   # composante j : somme des v[i] * W[i][j]


x = [[1, 0], [0, 1], [1, 1]]   # fièvre, sans, toux
W_q = [[1, 0, 1, 0], [0, 1, 0, 1]]
W_k = [[1, 1, 1, -1], [0, 1, 0, 1]]
W_v = [[1, 0, 0, 1], [0, 1, 1, 0]]
nb_poids = 3 * len(W_q) * len(W_q[0])   # poids appris dans W_q, W_k, W_v, calculé à partir de leurs formes

Q = [couche(t, W_q) for t in x]   # requêtes : « que cherche-je ? »
K = [couche(t, W_k) for t in x]   # clés : « que propose-je ? »
V = [couche(t, W_v) for t in x]   # valeurs : « que transmets-je ? »
d = len(Q[0])                     # 4 composantes

scores = [[sum(a * b for a, b in zip(q, k)) / math.sqrt(d) for k in K] for q in Q]   # Q Kᵀ / √d
poids = [softmax(ligne) for ligne in scores]
sortie = [[sum(p[t] * V[t][j] for t in range(len(V))) for j in range(len(V[0]))] for p in poids]   # softmax(Q Kᵀ / √d) V
print(nb_poids, scores, poids[2], sortie)

if __name__ == "__main__":
    # Sans la division par √d, les scores de « toux » doublent et la softmax devient plus « pointue ».
    print("poids de « toux » sans √d :", softmax([sum(a * b for a, b in zip(Q[2], k)) for k in K]))
