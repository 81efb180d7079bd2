"""Vérifications publiques de l'exercice 5 (lance `pytest exercises/ -k 05_qkv`).

Les valeurs attendues ont été calculées une fois, indépendamment (NumPy), à partir de x, W_q, W_k, W_v :
celles du cours, puis d'autres entrées, montrées (quatre tokens ; q, k, v à 3 composantes ; des embeddings
à 3 composantes), écrites à quatre décimales et comparées à 0,001 près.
"""

from trous.spec import blank, expect, variant

# x : « fièvre sans toux » plus un 4e token [2 ; 1] ; W_q, W_k, W_v de 2 lignes et 3 colonnes : d = 3.
AUTRES = variant("quatre tokens ; q, k et v à 3 composantes", shown=True,
                 x="[[1, 0], [0, 1], [1, 1], [2, 1]]",
                 W_q="[[1, 0, 1], [0, 1, 1]]", W_k="[[1, 1, 0], [0, 1, 1]]", W_v="[[2, 0, 1], [0, 1, 1]]")

# x à 3 composantes, W_q, W_k, W_v de 3 lignes et 2 colonnes : v et chaque ligne de W ont 3 composantes, d = 2.
TROIS = variant("des embeddings à 3 composantes ; q, k et v à 2 composantes", shown=True,
                x="[[1, 0, 1], [0, 1, 0], [1, 1, 2]]",
                W_q="[[1, 0], [0, 1], [1, 1]]", W_k="[[1, 1], [0, 1], [1, 0]]", W_v="[[2, 0], [0, 1], [1, 1]]")

couche = blank(
    "couche",
    expect("Q", [[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 1]],
           message="La requête de « toux » : [1 ; 1] fois W_q, composante j = 1 × W_q[0][j] + 1 × W_q[1][j]."),
    expect("K", [[1, 1, 1, -1], [0, 1, 0, 1], [1, 2, 1, 0]]),
    expect("V", [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 1, 1]]),
    # NumPy : x @ W_q, x @ W_k, x @ W_v.
    expect("[Q, K, V]", [[[1, 0, 1], [0, 1, 1], [1, 1, 2], [2, 1, 3]],
                         [[1, 1, 0], [0, 1, 1], [1, 2, 1], [2, 3, 1]],
                         [[2, 0, 1], [0, 1, 1], [2, 1, 2], [4, 1, 3]]], variant=AUTRES,
           label="[Q, K, V]",
           message="Avec W à 3 colonnes, chaque requête, clé ou valeur a 3 composantes : "
                   "composante j = somme des v[i] × W[i][j]."),
    # À la main (NumPy : x @ W_q, x @ W_k, x @ W_v) : « toux » [1, 1, 2] fois W_q = [1 + 2, 1 + 2] = [3, 3].
    expect("[Q, K, V]", [[[2, 1], [0, 1], [3, 3]],
                         [[2, 1], [0, 1], [3, 2]],
                         [[3, 1], [0, 1], [4, 3]]], variant=TROIS,
           label="[Q, K, V]",
           message="Avec des embeddings à 3 composantes, la somme porte sur les 3 composantes de v : "
                   "i va de 0 à len(v) − 1, pas de 0 à 1."),
)

nb_poids = blank(
    "nb_poids",
    expect("nb_poids", 24, message="3 matrices de 2 × 4 poids : 3 × 2 × 4 = 24."),
    # À la main : 3 matrices de 2 × 3.
    expect("nb_poids", 18, variant=AUTRES,
           message="Avec des matrices de 2 lignes et 3 colonnes : 3 × 2 × 3 = 18. Le nombre se calcule à partir "
                   "des formes de W_q, W_k, W_v."),
    # À la main : 3 matrices de 3 × 2.
    expect("nb_poids", 18, variant=TROIS,
           message="Avec des matrices de 3 lignes et 2 colonnes : 3 × 3 × 2 = 18. Le nombre de lignes vient lui "
                   "aussi de la forme de W_q (len(W_q)), pas de l'exemple."),
)

racine = blank(
    "racine",
    expect("scores", [[1, 0, 1], [0, 1, 1], [1, 1, 2]],
           message="q et k ont d = 4 composantes : on divise chaque q · k par √4 = 2."),
    expect("poids[2]", [0.21, 0.21, 0.58], decimals=2, label="poids de « toux »"),
    # NumPy : Q @ K.T / np.sqrt(3).
    expect("scores", [[0.5774, 0.5774, 1.1547, 1.7321],
                      [0.5774, 1.1547, 1.7321, 2.3094],
                      [1.1547, 1.7321, 2.8868, 4.0415],
                      [1.7321, 2.3094, 4.0415, 5.7735]], atol=1e-3, variant=AUTRES,
           message="q et k ont ici d = 3 composantes : on divise chaque q · k par √3 ≈ 1,7321."),
)

sortie = blank(
    "sortie",
    expect("sortie", [[0.84, 0.58, 0.58, 0.84], [0.58, 0.84, 0.84, 0.58], [0.79, 0.79, 0.79, 0.79]], decimals=2,
           message="Chaque ligne : la moyenne des valeurs V pondérée par les poids du token."),
    # NumPy : p = softmax(Q @ K.T / np.sqrt(3)) ligne par ligne, puis p @ V.
    expect("sortie", [[2.6250, 0.8562, 2.1687],
                      [2.6670, 0.9138, 2.2474],
                      [3.2252, 0.9621, 2.5747],
                      [3.5805, 0.9857, 2.7759]], atol=1e-3, variant=AUTRES,
           message="Quatre tokens : chaque ligne est la somme, sur les quatre valeurs V[t], de p[t] × V[t][j]."),
)
