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
scores = np.array([[-0.6958048385474743, 0.2488062430065778, -1.6312166174226888, 0.23226187535979748, 0.17081325227763336], [-0.8970099544146148, 0.5376661693428925, 0.6229185662161247, -1.3615359496753678, 1.3492188006813415], [0.31056526084136604, -1.404954863657931, 1.5226479251192744, 0.11893231871921771, -1.5618211181218205], [0.33980432367130237, 1.2511383664269586, -0.07371744744680245, 0.28081739503456943, 1.7853456588567331], [-0.645921889917517, -1.960529304312293, 1.4079138409795273, 0.36854006865397215, -2.9799789321112558]])
masque = np.array([[True, False, False, False, False], [True, True, False, False, False], [True, True, True, False, False], [True, True, True, True, False], [True, True, True, True, True]])
poids = softmax(np.where(masque, scores, float("-inf")))
sortie = np.array([[-0.5343073390675738, -1.2749943253089113, 0.1194753308531731, -1.807853151520061, 1.0526767593160378, -0.3812771497067249, 1.30483923235972, 0.2585375526521196], [-0.6036175440619009, 0.5223927664651831, 0.2364896593074015, 0.5048683268009363, -0.2238445755273762, -0.7831303477700431, -0.6547479388834874, 0.5818757539930488], [-0.3825272325860726, -0.16905711694638115, 0.4962753699665703, -0.2880794976813522, 0.2028049459783674, -2.0727093182311194, 0.6106118010241044, 0.13649250639804564], [-0.3496391920461066, -0.1469422516566743, 0.30682212011391385, 0.10050863277830148, 0.14031514429074932, -1.0040417794018728, -0.39752149179795215, 0.6067922284744903], [-0.16681285683749872, -0.4769180651220827, 0.5274172828705312, -0.15731921195068127, 0.30136826434370634, -1.9638547096557124, 0.1963171950687824, 0.3733069918947466]])

# Exercice 2 : sans masque causal, chaque position regarde aussi les suivantes.
sortie_libre = np.array([[-0.7978040177982428, -0.09786547235761647, 0.6739831966628571, 0.009730370352232587, -0.03144260483900766, -0.3000263975309207, -0.4154998506568179, 0.8579430227283056], [-1.4555478487341595, 0.7027529208786283, 1.0045250765303297, 0.16701961754880726, -0.5496640356053812, -0.20759210180647805, -0.08104632871813501, 0.7199631176957646], [-0.3060493825966957, -0.4056459547084807, 0.513694109985014, -0.2937888503598669, 0.2921607523271308, -1.7947077064191372, 0.36493297549784554, 0.32380215642454285], [-1.3744621355253677, 0.49922981833811, 0.9187551036762606, 0.07955674459372646, -0.4213746656238085, 0.056120760372037316, -0.21189921648032317, 0.820275974889964], [-0.16681285683749872, -0.4769180651220827, 0.5274172828705312, -0.15731921195068127, 0.30136826434370634, -1.9638547096557124, 0.1963171950687824, 0.3733069918947466]])

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
