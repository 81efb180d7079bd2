"""Vérifications publiques de l'exercice 10 (lance `pytest exercises/ -k 10_tete`).

Les sorties sont comparées à une tête de référence écrite autrement (position par position, avec des
boucles), et à `scaled_dot_product_attention` de PyTorch quand PyTorch est installé. Chaque trou est
vérifié sur T = 5 (le cours), puis sur une autre longueur, montrée (T = 4), et sur d'autres tailles
(T = 6, d_model = 6, d_head = 2) ; les formes et le masque attendus ont été écrits à la main.

PyTorch met plusieurs secondes à se charger, plus que le temps laissé à une vérification : les
vérifications PyTorch le chargent donc pendant le programme, dont le temps est plus large, en
remplaçant `graine = 0` par une expression qui importe torch et vaut toujours 0.
"""

import numpy as np

from trous.spec import blank, expect, variant

QUATRE = variant("quatre caractères, T = 4", shown=True, T="4")
AUTRES_TAILLES = variant("d'autres tailles, T = 6, d_model = 6, d_head = 2", shown=True, T="6", d_model="6",
                         d_head="2")
# À la main : vrai pour j ≤ i.
MASQUE_6 = np.array([[j <= i for j in range(6)] for i in range(6)])
AVEC_TORCH = variant("PyTorch chargé avant le programme", shown=True, graine='(__import__("torch"), 0)[1]')

REFERENCE = '''
import math as _math
import numpy as _np

def _ecart(a, b):
    return float(_np.abs(_np.asarray(a, dtype=float) - _np.asarray(b, dtype=float)).max())

def _reference(x, W_q, W_k, W_v, causal):
    q, k, v = (_np.einsum("td,dh->th", x, W) for W in (W_q, W_k, W_v))
    lignes = []
    for i in range(len(x)):
        visibles = range(i + 1) if causal else range(len(x))
        s = [float(_np.dot(q[i], k[j])) / _math.sqrt(q.shape[1]) for j in visibles]
        e = [_math.exp(t - max(s)) for t in s]
        lignes.append(sum(e_j / sum(e) * v[j] for e_j, j in zip(e, visibles)))
    return _np.array(lignes)
'''

TORCH = REFERENCE + '''
import torch as _torch

def _sdpa(x, W_q, W_k, W_v, causal):
    q, k, v = (_torch.from_numpy(x @ W)[None] for W in (W_q, W_k, W_v))
    return _torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)[0].numpy()
'''

normalisation = blank(
    "normalisation",
    expect('softmax(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, float("-inf")]]))',
           [[0.090, 0.245, 0.665], [0.5, 0.5, 0.0]], decimals=3,
           message="Chaque ligne est divisée par sa propre somme : chaque ligne de poids fait 1."),
    expect("poids.sum(axis=-1)", [1.0] * 4, label="somme de chaque ligne de poids", variant=QUATRE,
           message="Pour T = 4 aussi, chaque ligne de poids fait 1."),
    expect("poids.sum(axis=-1)", [1.0] * 6, label="somme de chaque ligne de poids", variant=AUTRES_TAILLES,
           message="Pour T = 6 aussi, chaque ligne de poids fait 1."),
)

qkv = blank(
    "qkv",
    expect("[q.shape, k.shape, v.shape]", [[5, 8], [5, 8], [5, 8]],
           message="q, k et v ont une ligne par caractère (T = 5) et d_head = 8 colonnes."),
    expect("max(_ecart(a, _np.einsum('td,dh->th', x, W)) for a, W in ((q, W_q), (k, W_k), (v, W_v)))", 0.0,
           atol=1e-9, setup=REFERENCE, label="plus grand écart entre (q, k, v) et x multiplié par (W_q, W_k, W_v)"),
    expect("[q.shape, k.shape, v.shape]", [[4, 8], [4, 8], [4, 8]], variant=QUATRE,
           message="Pour T = 4, q, k et v ont 4 lignes."),
    expect("[q.shape, k.shape, v.shape]", [[6, 2], [6, 2], [6, 2]], variant=AUTRES_TAILLES,
           message="Pour T = 6 et d_head = 2, q, k et v ont 6 lignes et 2 colonnes."),
    expect("max(_ecart(a, _np.einsum('td,dh->th', x, W)) for a, W in ((q, W_q), (k, W_k), (v, W_v)))", 0.0,
           atol=1e-9, setup=REFERENCE, variant=AUTRES_TAILLES,
           label="plus grand écart entre (q, k, v) et x multiplié par (W_q, W_k, W_v)"),
)

scores = blank(
    "scores",
    expect("scores.shape", [5, 5], message="Un score pour chaque paire (requête, clé) : une table T×T."),
    expect("_ecart(scores, [[_np.dot(a, b) / _math.sqrt(d_head) for b in k] for a in q])", 0.0, atol=1e-9,
           setup=REFERENCE, label="plus grand écart entre scores et les q·k divisés par √d_head"),
    expect("scores.shape", [4, 4], variant=QUATRE, message="Pour T = 4, une table 4×4."),
    expect("_ecart(scores, [[_np.dot(a, b) / _math.sqrt(d_head) for b in k] for a in q])", 0.0, atol=1e-9,
           setup=REFERENCE, variant=QUATRE, label="plus grand écart entre scores et les q·k divisés par √d_head"),
    expect("scores.shape", [6, 6], variant=AUTRES_TAILLES, message="Pour T = 6, une table 6×6."),
    expect("_ecart(scores, [[_np.dot(a, b) / _math.sqrt(d_head) for b in k] for a in q])", 0.0, atol=1e-9,
           setup=REFERENCE, variant=AUTRES_TAILLES, label="plus grand écart entre scores et les q·k divisés par √d_head",
           message="Pour d_head = 2, on divise par √2 : la racine de d_head, quelle qu'elle soit."),
)

masque = blank(
    "masque",
    expect("masque", np.array(
           [[True, False, False, False, False],
            [True, True, False, False, False],
            [True, True, True, False, False],
            [True, True, True, True, False],
            [True, True, True, True, True]]),
           message="La ligne i est vraie pour les positions 0 à i : elle-même et les précédentes."),
    expect("masque", np.array(
           [[True, False, False, False],
            [True, True, False, False],
            [True, True, True, False],
            [True, True, True, True]]), variant=QUATRE,
           message="Pour T = 4, un masque 4×4 : sa taille vient de T."),
    expect("masque", MASQUE_6, variant=AUTRES_TAILLES, message="Pour T = 6, un masque 6×6 : sa taille vient de T."),
)

sortie = blank(
    "sortie",
    expect("sortie.shape", [5, 8]),
    expect("_ecart(sortie, _reference(x, W_q, W_k, W_v, causal=True))", 0.0, atol=1e-6, setup=REFERENCE,
           label="plus grand écart entre sortie et la tête de référence",
           message="sortie est la tête complète, masque causal compris (si q, k, v, les scores ou le masque sont "
                   "faux, cette vérification échoue aussi)."),
    expect("sortie.shape", [4, 8], variant=QUATRE),
    expect("_ecart(sortie, _reference(x, W_q, W_k, W_v, causal=True))", 0.0, atol=1e-6, setup=REFERENCE,
           variant=QUATRE, label="plus grand écart entre sortie et la tête de référence"),
    expect("sortie.shape", [6, 2], variant=AUTRES_TAILLES),
    expect("_ecart(sortie, _reference(x, W_q, W_k, W_v, causal=True))", 0.0, atol=1e-6, setup=REFERENCE,
           variant=AUTRES_TAILLES, label="plus grand écart entre sortie et la tête de référence"),
)

sortie_torch = blank(
    "sortie",
    expect("_ecart(sortie, _sdpa(x, W_q, W_k, W_v, causal=True))", 0.0, atol=1e-6, setup=TORCH,
           variant=AVEC_TORCH,
           label="plus grand écart entre sortie et scaled_dot_product_attention(..., is_causal=True)"),
    requires=["torch"],
)

sans_masque = blank(
    "sans_masque",
    expect("sortie_libre.shape", [5, 8]),
    expect("_ecart(sortie_libre, _reference(x, W_q, W_k, W_v, causal=False))", 0.0, atol=1e-6, setup=REFERENCE,
           label="plus grand écart entre sortie_libre et la tête de référence sans masque",
           message="Sans masque, chaque position regarde toutes les positions, y compris les suivantes."),
    expect("sortie_libre.shape", [4, 8], variant=QUATRE),
    expect("_ecart(sortie_libre, _reference(x, W_q, W_k, W_v, causal=False))", 0.0, atol=1e-6, setup=REFERENCE,
           variant=QUATRE, label="plus grand écart entre sortie_libre et la tête de référence sans masque"),
    expect("sortie_libre.shape", [6, 2], variant=AUTRES_TAILLES),
    expect("_ecart(sortie_libre, _reference(x, W_q, W_k, W_v, causal=False))", 0.0, atol=1e-6, setup=REFERENCE,
           variant=AUTRES_TAILLES, label="plus grand écart entre sortie_libre et la tête de référence sans masque"),
)

sans_masque_torch = blank(
    "sans_masque",
    expect("_ecart(sortie_libre, _sdpa(x, W_q, W_k, W_v, causal=False))", 0.0, atol=1e-6, setup=TORCH,
           variant=AVEC_TORCH,
           label="plus grand écart entre sortie_libre et scaled_dot_product_attention(..., is_causal=False)"),
    requires=["torch"],
)
