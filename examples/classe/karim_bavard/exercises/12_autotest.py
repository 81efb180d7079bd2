# %% [markdown]
# # Exercice 12 — Auto-test
#
# *D'après « Le mécanisme d'attention », section « Auto-test ».*
#
# Trois questions sur la leçon. Pour un choix multiple, remplace le trou par la lettre choisie, entre
# guillemets (par exemple `"A"`) ; pour les autres, par une expression Python. Vérifie avec
# `pytest exercises/ -k 12_autotest` ; si tu bloques, `trous hint` donne des indices, de plus en plus précis.
#
# **Question 1.** Quel rôle jouent respectivement la requête, la clé et la valeur ?
#
# - A. La requête est le vecteur d'origine du caractère, la clé sa position dans la phrase, la valeur
#   son poids d'attention.
# - B. La requête dit « ce que j'ai », la clé « ce que je cherche » ; la valeur est le score que
#   softmax donne à chaque position.
# - C. La requête dit « ce que je cherche », la clé « ce que j'ai » ; la valeur est l'information
#   transmise à qui me prête attention.
# - D. Les trois sont le même vecteur ; les séparer ne sert qu'à calculer plus vite.
#
# **Question 2.** Comment le masque causal est-il réalisé ? Pourquoi est-il nécessaire ?
#
# - `score_futur` : le score donné, avant softmax, à une position située après la position courante :
#   la valeur Python que le cours utilise, celle dont l'exponentielle vaut exactement 0 quels que soient
#   les autres scores (la règle de l'exercice 3 : pas un grand nombre négatif comme `-1e9`).
# - `reponse_2` : pourquoi ce masque ?
#   - A. Pour que chaque ligne des poids fasse 1.
#   - B. Pour aller plus vite : on ne calcule que la moitié de la table T×T.
#   - C. Pour que les scores ne deviennent pas trop grands quand la dimension augmente.
#   - D. Parce que le modèle apprend à prédire le caractère suivant : s'il voyait les caractères
#     suivants, il copierait la réponse et n'apprendrait rien.
#
# **Question 3.** Pourquoi divise-t-on les scores d'attention par la racine de la dimension ?
#
# - `echelle(d)` : le nombre par lequel on divise les scores quand q et k ont d composantes (pour
#   toute dimension d, pas seulement celles du tableau du cours).
# - `reponse_3` : pourquoi ?
#   - A. Le produit scalaire de deux vecteurs de dimension d a un écart type d'environ √d : sans
#     division, softmax se concentre sur une seule position et les gradients deviennent minuscules.
#   - B. Pour que les poids de chaque ligne fassent 1.
#   - C. Pour cacher les positions futures.
#   - D. Pour que la sortie ait autant de composantes que l'entrée.

# %%
import math

reponse_1 = "C"

score_futur = float("-inf")
reponse_2 = "D"


def echelle(d):
    return math.sqrt(d)


reponse_3 = "A"
