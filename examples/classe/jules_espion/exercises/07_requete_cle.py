# %% [markdown]
# # Exercice 7 — Requête et clé : chaque caractère décide qui regarder
#
# *D'après « Le mécanisme d'attention », section « Requête et clé : chaque caractère décide qui regarder ».*
#
# La moyenne traite tous les caractères à égalité ; or « 光 » veut savoir si « 月 » (la lune) apparaît
# avant lui, et « 床 » (le lit) ou « 前 » (devant) comptent moins pour lui. Chaque caractère reçoit donc
# deux vecteurs : la **requête** q (quel type d'information je cherche) et la **clé** k (quel type
# d'information j'ai). À quel point un caractère en regarde un autre se note par le **produit scalaire**
# de sa q et de la k de l'autre.
#
# Vecteurs fabriqués à la main, à deux composantes : la première signifie « lié au ciel », la seconde
# « lié au lieu ». La requête de « 光 » est [1, 0] : il cherche quelque chose de lié au ciel.
#
# 1. **scores** : le produit scalaire de q_guang avec la clé de chaque caractère → 0,1 ; 0 ; 0,9 ; 1 ; 0,8 ;
# 2. **softmax** transforme les scores en poids de somme 1 → 0,12 ; 0,11 ; 0,26 ; 0,29 ; 0,23 :
#    « 月 » a le score le plus élevé et reçoit le poids le plus grand ;
# 3. **scores × 5** : si l'on multiplie tous les scores par 5 avant softmax, les poids se concentrent
#    → 0,01 ; 0 ; 0,3 ; 0,5 ; 0,18 : « 月 » en prend à lui seul la moitié. La taille des scores décide
#    si l'attention est « répartie sur tous » ou « fixée sur un seul ».
# 4. **Exercice de la leçon** : donne à « 光 » la requête [0, 1] (il cherche quelque chose lié au lieu).
#    Comment les poids changent-ils ? → 0,29 ; 0,32 ; 0,13 ; 0,12 ; 0,14.
#
# **À toi de coder** avec NumPy : complète les quatre trous `___`. Dans `softmax`, le décalage
# (retrancher le maximum avant l'exponentielle) est déjà écrit : le trou ne demande que de rendre les
# exponentielles `e` de somme 1, et rien n'est vérifié ici sur de très grands scores (la stabilité
# numérique est l'objet de l'exercice 13). Vérifie avec `pytest exercises/ -k requete` (sur les vecteurs
# de la leçon, puis avec d'autres requêtes), ou lance `python exercises/07_requete_cle.py` pour voir les poids.

# %%
import numpy as np

caracteres = ["床", "前", "明", "月", "光"]
k = np.array([[0.1, 0.9],   # 床 (le lit) : un lieu
              [0.0, 1.0],   # 前 (devant) : une direction
              [0.9, 0.1],   # 明 (clair) : lié au ciel, à la lumière
              [1.0, 0.0],   # 月 (la lune) : une chose du ciel
              [0.8, 0.2]])  # 光 (la clarté)
q_guang = np.array([1.0, 0.0])   # ce que « 光 » cherche : quelque chose lié au ciel
q_lieu = np.array([0.0, 1.0])    # l'exercice de la leçon : quelque chose lié au lieu


def softmax(s):
    """Des scores aux poids : positifs, de somme 1."""
    e = np.exp(s - s.max())   # retrancher le max ne change pas le résultat et évite exp(1000) = inf
    return e / e.sum()


scores = k @ q_guang       # un score par caractère : sa clé face à la requête de « 光 »
poids = softmax(scores)
poids_x5 = softmax(5 * scores)     # les mêmes scores multipliés par 5, puis softmax
poids_lieu = softmax(k @ q_lieu)   # les poids quand « 光 » a la requête q_lieu

# %%
if __name__ == "__main__":
    def par_caractere(valeurs):
        return {c: round(float(v), 2) for c, v in zip(caracteres, valeurs)}

    print("== 2. Score par produit scalaire : plus la requête (q) ressemble à une clé (k), plus le score est grand")
    print("  scores de « 光 » pour chaque caractère :", par_caractere(scores))
    print("  poids après softmax :                  ", par_caractere(poids))
    print("  scores multipliés par 5, puis softmax :", par_caractere(poids_x5))
    print("  avec la requête [0, 1] (le lieu) :     ", par_caractere(poids_lieu))
