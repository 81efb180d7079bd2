# %% [markdown]
# # Exercice 4 — Loin ou près, c'est le même calcul
#
# *D'après « Partie 5 — Lire tout d'un coup (attention) », sections « Loin ou près, c'est le même
# calcul » et « Baisse w : le RNN oublie « Pas » ».*
#
# Dans « Pas de fièvre ni de frissons ni de toux », la négation « Pas » est à 8 mots de « toux ».
# Un RNN a multiplié son apport 8 fois par w = 0,5 : il en reste 1/256.
# L'attention calcule le score de « toux » avec « Pas » exactement comme avec « de » : la distance
# n'entre pas dans le calcul. Le poids d'attention de « Pas » ne dépend que de son score.
#
# Embeddings : « Pas » = [0 ; 1] (une négation, comme « sans »), « fièvre » = « frissons » = [1 ; 0],
# « de » = « ni » = [0 ; 0], « toux » = [1 ; 1]. Les scores avec « toux » valent donc 1 pour « Pas »,
# « fièvre » et « frissons », 0 pour « de » et « ni », 2 pour « toux » lui-même :
# le poids de « Pas » est e¹ / (3 e¹ + 5 e⁰ + e²) ≈ 0,13.
#
# **À toi de coder** : complète deux trous
# - ce qui reste de l'apport de « Pas » au RNN après `distance` multiplications par `w` ;
# - le poids d'attention de `mot` : l'exponentielle de son score divisée par la somme des exponentielles.
#
# Attendu : `reste` = 1/256 ; le poids de « Pas » vaut 0,13, à 8 mots (`loin`) comme à 1 mot (`pres`).
# Vérifie avec `pytest exercises/ -k 04_distance` (sur l'exemple, puis sur un autre w, une autre phrase et
# d'autres embeddings), puis lance le fichier : baisse w, le RNN oublie « Pas ».

# %%
import math

phrase = "Pas de fièvre ni de frissons ni de toux".split()
distance = phrase.index("toux") - phrase.index("Pas")   # 8 mots


def reste_rnn(w, distance):
    return w ** distance   # l'apport de « Pas », multiplié `distance` fois par w


w = 0.5
reste = reste_rnn(w, distance)

vec = {"Pas": [0, 1], "de": [0, 0], "ni": [0, 0], "fièvre": [1, 0], "frissons": [1, 0], "toux": [1, 1]}


def poids_de(mot, mots):
    """Le poids d'attention de `mot` quand « toux » lit la phrase `mots`."""
    scores = [sum(a * b for a, b in zip(vec[m], vec["toux"])) for m in mots]
    e = [math.exp(s) for s in scores]
    return e[mots.index(mot)] / sum(e)   # l'exponentielle du score de `mot`, divisée par la somme


proche = "de fièvre ni de frissons ni de Pas toux".split()   # « Pas » juste avant « toux »
loin = poids_de("Pas", phrase)   # à 8 mots
pres = poids_de("Pas", proche)   # à 1 mot
print(reste, loin, pres)

if __name__ == "__main__":
    for w in (0.9, 0.5, 0.2):
        print(f"w = {w} : il reste {reste_rnn(w, distance):.6f} de « Pas » au RNN ; poids d'attention {loin:.2f}")
    print(f"Résumé de 241 tokens, w = 0,5 : il reste {reste_rnn(0.5, 240):.1e} du premier au RNN")
