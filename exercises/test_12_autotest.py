"""Vérifications publiques de l'exercice 12 (lance `pytest exercises/ -k 12_autotest`).

Les bonnes lettres ne sont pas écrites ici en clair (seulement une empreinte), pour qu'un coup d'œil
à ce fichier ne remplace pas la réflexion : les indices (`trous hint`) sont faits pour ça.
"""

from trous.spec import blank, expect

EMPREINTES = '''
import hashlib as _hashlib

def _lettre(reponse):
    return str(reponse).strip().upper()

def _juste(question, reponse):
    empreinte = _hashlib.sha256(f"trous-autotest-{question}-{_lettre(reponse)}".encode()).hexdigest()[:16]
    return empreinte == {1: "6ce2cc6613a59635", 2: "e8fab9ab941f4d28", 3: "49cc8b67b49db4af"}[question]
'''


def choix(question: int, variable: str):
    """Une réponse à choix multiple : une lettre de A à D, puis la bonne."""
    return [
        expect(f"_lettre({variable}) in ('A', 'B', 'C', 'D')", True, setup=EMPREINTES,
               label=f"{variable} est une des lettres A, B, C ou D",
               message='Réponds par une seule lettre entre guillemets, par exemple "A".'),
        expect(f"_juste({question}, {variable})", True, setup=EMPREINTES,
               label=f"{variable} est la bonne réponse",
               message=f"Ce n'est pas la bonne lettre pour la question {question} : relis la leçon, ou demande "
                       "un indice avec trous hint."),
    ]


reponse_1 = blank("reponse_1", choix(1, "reponse_1"))

score_futur = blank(
    "score_futur",
    expect("math.exp(score_futur)", 0.0, label="exp(score_futur)",
           message="Après softmax, le poids d'une position future doit être exactement 0."),
    expect("score_futur", float("-inf"),
           message="La règle de l'exercice 3 : le cours ne met pas un grand nombre négatif (exp(-1e9) ne vaut 0 "
                   "que par un arrondi de l'ordinateur), mais moins l'infini, plus petit que tous les nombres."),
)

reponse_2 = blank("reponse_2", choix(2, "reponse_2"))

echelle = blank(
    "echelle",
    expect("[echelle(16), echelle(64), echelle(256)]", [4.0, 8.0, 16.0],
           message="Le tableau du cours : pour d = 16, 64 et 256, on divise par 4, 8 et 16."),
    # √2 et √10, à la main (racines connues à 16 chiffres).
    expect("[echelle(2), echelle(10)]", [1.4142135623730951, 3.1622776601683795],
           message="Pour d = 2 et d = 10, on divise par √2 ≈ 1,4142 et √10 ≈ 3,1623 : la racine exacte, "
                   "pas arrondie à un entier."),
)

reponse_3 = blank("reponse_3", choix(3, "reponse_3"))
