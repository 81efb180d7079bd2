"""Vérifications publiques de l'exercice 9 (lance `pytest exercises/ -k racine_d`).

Sur l'expérience du cours, les nombres sont tirés au hasard : on vérifie des ordres de grandeur, déduits
du tableau de la leçon (écart type 3,89 ; 8,17 ; 16,08 ; 32,53 pour √d = 4, 8, 16, 32 ; plus grand poids
moyen 0,79 à 0,95 sans mise à l'échelle, 0,39 à 0,53 après division par √d), avec de la marge.

Une toute petite expérience, montrée (D = [4], n = 2, T = 3, même graine 0), donne des valeurs
exactes : elles ont été calculées à part avec NumPy (mêmes tirages, rng = np.random.default_rng(0),
q puis k de forme (2, 3, 4) ; s = np.einsum("sid,sjd->sij", q, k)), écrites à quatre décimales.
Sur 18 produits scalaires, l'écart type mesuré (1,52) s'éloigne de √4 = 2 : diviser par √d ou par
l'écart type mesuré n'est plus la même chose. Deux autres expériences, montrées : des séquences de 8
caractères (D = [4], mêmes tirages, valeurs exactes calculées de même avec NumPy), et un « tirage » où
toutes les composantes de q et k valent 1 (tous les scores valent 4, leur écart type est 0).
"""

from trous.spec import blank, expect, variant

PETITE = variant("une toute petite expérience, D = [4], n = 2, T = 3", shown=True, D="[4]", n="2", T="3")
# Une seule dimension, n = 40 comme dans le cours, des séquences plus longues (T = 8) : 2 560 produits scalaires.
LONGUES = variant("des séquences de 8 caractères, D = [4] : 2 560 produits scalaires", shown=True, D="[4]", T="8")
# Un « tirage » où toutes les composantes de q et k valent 1 : chaque produit scalaire vaut d = 4.
UNS = variant("des q et k dont toutes les composantes valent 1, D = [4], n = 2, T = 3", shown=True,
              D="[4]", n="2", T="3", rng="__import__('types').SimpleNamespace(standard_normal=np.ones)")

max_moyen = blank(
    "max_moyen",
    # À la main : poids [1/3 ; 1/3 ; 1/3] puis [0 ; 0 ; 1] : plus grands poids 1/3 et 1, en moyenne 2/3.
    expect("poids_max_moyen(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 100.0]]))", 2 / 3, atol=1e-9,
           message="Deux lignes : poids [1/3 ; 1/3 ; 1/3] puis [0 ; 0 ; 1] ; les plus grands poids sont 1/3 et 1, "
                   "en moyenne 2/3. Le maximum se prend dans chaque ligne, pas dans chaque colonne."),
    # À la main : quatre lignes, plus grands poids 1/3, 1, 1/3, 1/3 : en moyenne 1/2.
    expect("poids_max_moyen(np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, 100.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]))",
           1 / 2, atol=1e-9, label="poids_max_moyen sur un tableau à trois dimensions (2, 2, 3)",
           message="Trois dimensions : les lignes courent toujours le long de la dernière (axis=-1) ; quatre lignes, "
                   "plus grands poids 1/3, 1, 1/3, 1/3, en moyenne 1/2."),
    # À la main : trois lignes [0 ; 100] (plus grand poids 1), [0 ; 0] (1/2), [100 ; 0] (1) : en moyenne 5/6.
    expect("poids_max_moyen(np.array([[0.0, 100.0], [0.0, 0.0], [100.0, 0.0]]))", 5 / 6, atol=1e-9,
           label="poids_max_moyen sur un tableau de 3 lignes de 2 scores",
           message="Trois lignes de deux scores : plus grands poids 1, 1/2 et 1, en moyenne 5/6 ; le calcul ne "
                   "suppose ni 2 lignes ni 3 scores par ligne."),
    # À la main : six lignes de six scores, cinq avec un score 100 (en 2e, 3e… 6e position : plus grand poids 1),
    # une de zéros (1/6) : en moyenne (5 + 1/6) / 6 = 31/36.
    expect("poids_max_moyen(np.concatenate([100 * np.eye(6)[1:], np.zeros((1, 6))])[None])", 31 / 36, atol=1e-9,
           label="poids_max_moyen sur un tableau (1, 6, 6) : cinq lignes avec un score 100, une ligne de zéros",
           message="Six lignes de six scores : plus grands poids 1, 1, 1, 1, 1 et 1/6, en moyenne 31/36 ; le calcul "
                   "ne suppose ni 5 lignes ni 5 positions."),
    # À la main : deux lignes [0 ; 100] (plus grand poids 1) et [0 ; 0] (1/2), rangées en (2, 1, 2) : en moyenne 3/4.
    expect("poids_max_moyen(np.array([[[0.0, 100.0]], [[0.0, 0.0]]]))", 3 / 4, atol=1e-9,
           label="poids_max_moyen sur un tableau à trois dimensions (2, 1, 2)",
           message="Deux séquences d'une ligne de deux scores : plus grands poids 1 et 1/2, en moyenne 3/4."),
    expect("sans_echelle", [0.6550], atol=1e-3, variant=PETITE,
           message="Sur la petite expérience : le plus grand poids de chaque ligne des scores, en moyenne."),
)

produits = blank(
    "produits",
    expect("list(scores.shape)", [40, 5, 5],
           message="Pour chacune des 40 séquences, un score par couple (requête i, clé j) : forme (40, 5, 5)."),
    expect("float(scores[3, 1, 2] - q[3, 1] @ k[3, 2])", 0.0, atol=1e-9, label="scores[3, 1, 2] − q[3, 1]·k[3, 2]",
           message="scores[s, i, j] est le produit scalaire de la requête i et de la clé j de la séquence s."),
    expect("list(scores.shape)", [2, 3, 3], variant=PETITE,
           message="2 séquences de 3 caractères : forme (2, 3, 3)."),
    expect("float(scores[1, 2, 0] - q[1, 2] @ k[1, 0])", 0.0, atol=1e-9, variant=PETITE,
           label="scores[1, 2, 0] − q[1, 2]·k[1, 0]"),
    expect("list(scores.shape)", [40, 8, 8], variant=LONGUES,
           message="40 séquences de 8 caractères : forme (40, 8, 8)."),
    expect("float(scores[3, 7, 6] - q[3, 7] @ k[3, 6])", 0.0, atol=1e-9, variant=LONGUES,
           label="scores[3, 7, 6] − q[3, 7]·k[3, 6]"),
)

ecart_type = blank(
    "ecart_type",
    expect("[e / math.sqrt(d) for e, d in zip(ecarts_types, D)]", [1.0] * 4, atol=0.15,
           label="écart type divisé par √d, pour chaque d (1 à 0,15 près)",
           message="L'écart type des produits scalaires vaut environ √d (à 15 % près) : 4, 8, 16 et 32."),
    # 1,5212 ; l'écart type « corrigé » (ddof=1), 1,5654, est accepté aussi (5 % près).
    expect("ecarts_types", [1.5212], rtol=0.05, variant=PETITE,
           message="L'écart type mesuré de ces 18 produits scalaires, qui n'est pas exactement √d."),
    # NumPy : rng = np.random.default_rng(0) ; q puis k de forme (40, 8, 4) ;
    # np.einsum("sid,sjd->sij", q, k).std() = 1,954225 (avec ddof=1 : 1,954606, accepté aussi).
    expect("ecarts_types", [1.954225], rtol=1e-3, variant=LONGUES,
           message="L'écart type de ces 2 560 produits scalaires, calculé exactement (à 0,1 % près, sans arrondi)."),
    # À la main : les 18 scores valent 4, leur moyenne aussi : l'écart type est 0.
    expect("ecarts_types", [0.0], atol=1e-9, variant=UNS,
           message="Tous les produits scalaires valent 4 : ils ne s'écartent pas de leur moyenne, l'écart type est 0. "
                   "L'écart type retire la moyenne avant d'élever au carré (sans cela on obtiendrait 4)."),
)

echelle = blank(
    "echelle",
    expect("avec_echelle", [0.45] * 4, atol=0.15, label="plus grand poids moyen après division par √d (entre 0,3 et 0,6)",
           message="Après division par √d, le plus grand poids moyen reste entre 0,3 et 0,6 : l'attention est répartie."),
    expect("[b - a >= 0.2 for b, a in zip(sans_echelle, avec_echelle)]", [True] * 4,
           label="sans mise à l'échelle, au moins 0,2 de plus ?",
           message="Sans mise à l'échelle, le plus grand poids moyen dépasse d'au moins 0,2 celui obtenu après "
                   "division par √d : softmax se concentre sur une seule position."),
    # NumPy (mêmes tirages qu'au-dessus, q puis k de forme (40, 8, 4)) : s / 2, softmax sur le dernier axe,
    # puis .max(axis=-1).mean() = 0,332173.
    expect("avec_echelle", [0.332173], atol=1e-5, variant=LONGUES,
           message="Des séquences de 8 caractères : les scores divisés par √d = 2, sans arrondi."),
    # NumPy (mêmes tirages que ci-dessus) : s / 2, softmax sur le dernier axe, puis .max(axis=-1).mean().
    expect("avec_echelle", [0.512954], atol=1e-5, variant=PETITE,
           message="Les scores sont divisés par √d = 2 (la racine de la dimension), pas par leur écart type mesuré."),
)
