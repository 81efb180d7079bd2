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
# **La règle, pour tout le cours** (ici, puis aux exercices 8, 10 et 12) : un score masqué vaut
# **moins l'infini**, `float("-inf")` (ou `-np.inf` avec NumPy), jamais un grand nombre négatif comme
# `-100` ou `-1e9`. Seul −∞ donne un poids exactement nul quels que soient les autres scores.
# L'exponentielle d'un nombre fini n'est jamais nulle : avec `-100`, il reste un poids minuscule ;
# avec `-1e9`, le 0 ne vient que d'un arrondi de l'ordinateur, et ne tient plus si les autres scores
# sont eux aussi très négatifs. Les vérifications demandent donc −∞, et un poids exactement 0.
#
# Exemple : « fièvre » dans « fièvre sans <rempl> » a des scores 1, 0, 0 ;
# avec le masque 1, 1, 0 on obtient [0,73 ; 0,27 ; 0].
#
# **À toi de coder** : les scores de « fièvre » vers chaque token sont déjà calculés. Remplace par
# `float("-inf")` ceux dont le masque vaut 0, **avant** la softmax (qui est fournie). Une fois la
# softmax passée, il est trop tard : les poids faussés ne se « corrigent » plus.
#
# Attendu : `[0.73, 0.27, 0]`. Vérifie avec `pytest exercises/ -k 03_masque` : les vérifications
# essaient aussi un autre masque (un token masqué au milieu de la phrase).

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
