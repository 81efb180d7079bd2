# %% [markdown]
# # Exercice 10 — Une tête d'attention complète
#
# *D'après « Le mécanisme d'attention », sections « Une tête d'attention complète » et « Exercices » (2).*
#
# Réunissons tout : trois matrices transforment l'entrée `x` (T = 5 caractères, vecteurs de
# d_model = 16 composantes) en requêtes `q`, clés `k` et valeurs `v` (d_head = 8 composantes chacune).
# Ensuite : notation, mise à l'échelle, masque ; softmax ; somme pondérée. C'est la formule de
# « Attention Is All You Need » (2017) : softmax(QKᵀ/√d)V.
#
# **À toi de coder**, avec NumPy : complète les trous `___`
# - dans `softmax` : chaque exponentielle divisée par la somme de **sa ligne** (le décalage par le
#   maximum de la ligne est déjà écrit ; la stabilité numérique est l'objet de l'exercice 13) ;
# - `q, k, v` : l'entrée multipliée par chacune des trois matrices ;
# - `scores` : le produit scalaire de chaque requête avec chaque clé, divisé par √d_head ;
# - `masque` : une matrice T×T de booléens, vraie sur la diagonale et en dessous (chaque position ne voit
#   qu'elle-même et les positions précédentes) ; les scores des positions suivantes passent à moins l'infini
#   (`float("-inf")`, la règle de l'exercice 3 : jamais un grand nombre négatif) ;
# - `sortie` : la somme des valeurs pondérée par les poids, pour toutes les positions d'un coup ;
# - `sortie_libre` (exercice 2 du cours) : la même tête **sans** masque causal.
#
# Attendu : `q`, `k`, `v` et `sortie` de forme (5, 8) ; chaque ligne de `poids` fait 1, avec des zéros
# au-dessus de la diagonale. Vérifie avec `pytest exercises/ -k 10_tete` : les vérifications essaient
# aussi une autre longueur (T = 4) et d'autres tailles (T = 6, d_model = 6, d_head = 2) : le calcul ne
# doit supposer ni T = 5, ni d_model = 16, ni d_head = 8. Si PyTorch est installé, les
# vérifications comparent aussi tes deux sorties à son `scaled_dot_product_attention`
# (`is_causal=True` puis `False`) ; lance le fichier (`python exercises/10_tete.py`) pour voir l'écart.

# %%
import math

import numpy as np

T = 5
d_model = 16
d_head = 8
graine = 0

rng = np.random.default_rng(graine)
x = rng.standard_normal((T, d_model))
W_q, W_k, W_v = (rng.standard_normal((d_model, d_head)) / math.sqrt(d_model) for _ in range(3))


def softmax(s):
    """Softmax de chaque ligne. Retirer le maximum de la ligne ne change pas le résultat et évite exp(grand)."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


q, k, v = x @ W_q, x @ W_k, x @ W_v
scores = q @ k.T / math.sqrt(d_head)
masque = np.tril(np.ones((T, T), dtype=bool))
poids = softmax(np.where(masque, scores, float("-inf")))
sortie = poids @ v

# Exercice 2 : sans masque causal, chaque position regarde aussi les suivantes.
sortie_libre = softmax(scores) @ v

# %%
if __name__ == "__main__":
    np.set_printoptions(precision=2, suppress=True)
    print(poids)
    print(f"entrée {x.shape} → q, k, v {q.shape} chacun → sortie {sortie.shape}")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("(PyTorch absent : pas de comparaison avec scaled_dot_product_attention)")
    else:
        t = [torch.from_numpy(a) for a in (q, k, v)]
        for nom, a, causal in (("causale", sortie, True), ("sans masque", sortie_libre, False)):
            attendu = F.scaled_dot_product_attention(*t, is_causal=causal).numpy()
            print(f"{nom} : plus grand écart avec scaled_dot_product_attention {np.abs(a - attendu).max():.1e}")
