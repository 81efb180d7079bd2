# %% [markdown]
# # Exercice 11 — Le coût de l'attention
#
# *D'après « Le mécanisme d'attention », sections « Le coût de l'attention » et « Exercices » (3).*
#
# Chaque position est notée par rapport à toutes les positions : pour une séquence de longueur T, la
# table des scores fait T×T. En doublant la longueur, le calcul et la mémoire de cette table sont
# multipliés par quatre. L'exercice 3 du cours propose de le mesurer : passer T de 5 à 1000, 2000 et
# 4000, chronométrer la tête d'attention pour chaque longueur, et se demander si le temps croît à peu
# près comme le carré.
#
# Une mesure de temps dépend de la machine et de tout ce qui tourne en même temps : les vérifications
# ne chronomètrent donc rien. Elles donnent à tes fonctions une horloge factice ou des durées déjà
# mesurées ; la vraie mesure se fait quand tu lances le fichier (`python exercises/11_cout.py`).
#
# **À toi de coder** : complète les trous `___`
# - dans `mesurer` : la durée de l'appel `f()`, lue sur l'horloge `horloge` (par défaut
#   `time.perf_counter`, plus précise que le `time.time()` du cours, qui convient aussi) ;
# - dans `rapports` : combien de fois la durée est multipliée d'une longueur à la suivante
#   (vers 4 quand T double, si le temps croît comme T²) ;
# - dans `pente` : la pente de la droite qui passe au plus près des points (log T, log durée) ;
#   une durée proportionnelle à T² donne une pente de 2 (`np.polyfit(x, y, 1)` renvoie [pente, ordonnée]).
#
# Attendu : avec les durées [0,01 ; 0,04 ; 0,16] pour T = 1000, 2000, 4000, des rapports [4 ; 4] et
# une pente de 2. Vérifie avec `pytest exercises/ -k 11_cout`, puis lance le fichier : une vraie mesure
# donne une pente proche de 2.

# %%
import math
import os
import time

# Un seul fil de calcul : pour T = 1000, lancer plusieurs fils coûte plus que la table elle-même, et ce
# coût fixe cacherait la croissance en T² (sans effet si NumPy est déjà chargé).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

d_model = 16
d_head = 8


def tete(x, W_q, W_k, W_v):
    """La tête causale de l'exercice 10."""
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    scores = q @ k.T / math.sqrt(d_head)
    masque = np.tril(np.ones((len(x), len(x)), dtype=bool))
    s = np.where(masque, scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def mesurer(f, horloge=time.perf_counter):
    """Durée, en secondes, d'un appel f()."""
    debut = horloge()
    f()
    fin = horloge()
    return fin - debut


def rapports(durees):
    """Pour chaque longueur, la durée divisée par celle de la longueur précédente."""
    return [apres / avant for avant, apres in zip(durees, durees[1:])]


def pente(longueurs, durees):
    """Pente de log(durée) en fonction de log(T) : la durée croît comme T à cette puissance."""
    x, y = np.log(longueurs), np.log(durees)
    return np.polyfit(x, y, 1)[0]


# %%
if __name__ == "__main__":
    rng = np.random.default_rng(0)
    longueurs = [1000, 2000, 4000]
    durees = []
    for T in longueurs:
        x = rng.standard_normal((T, d_model))
        W_q, W_k, W_v = (rng.standard_normal((d_model, d_head)) / math.sqrt(d_model) for _ in range(3))
        # Le temps de calcul de ce programme seul (process_time), et le meilleur de cinq essais : les
        # autres programmes de la machine ne font ainsi presque plus varier la mesure.
        durees.append(min(mesurer(lambda: tete(x, W_q, W_k, W_v), time.process_time) for _ in range(5)))
        print(f"T = {T:5d} : {durees[-1] * 1000:7.1f} ms")
    print("rapports quand T double :", [round(r, 1) for r in rapports(durees)])
    print(f"pente log-log : {pente(longueurs, durees):.2f} (2 si le temps croît comme T²)")
