"""Correcteur caché de l'exercice 12 (jamais distribué aux élèves).

Des réponses, pas des calculs : pas de variantes. Les réponses sont vérifiées de nouveau contre la
solution de référence (SOLUTION), et `echelle` sur d'autres dimensions. Les étiquettes disent ce qui
est vérifié, jamais les entrées.
"""

from trous.spec import SOLUTION, blank, expect

# Une réponse à choix multiple est une lettre écrite en dur : la bonne lettre n'est pas une tricherie.
EQUIVALENT_MUTANTS = {
    f"reponse_{n}": [repr(lettre), f"reponse_{n} = {lettre!r}"] for n, lettre in ((1, "C"), (2, "D"), (3, "A"))
}

reponse_1 = blank("reponse_1", expect("str(reponse_1).strip().upper()", SOLUTION, label="la réponse à la question 1"))

score_futur = blank("score_futur", expect("score_futur", SOLUTION, label="le score d'une position future"))

reponse_2 = blank("reponse_2", expect("str(reponse_2).strip().upper()", SOLUTION, label="la réponse à la question 2"))

echelle = blank("echelle", expect("[echelle(1), echelle(3), echelle(12), echelle(1024)]", SOLUTION,
                                  label="echelle(d) pour d'autres dimensions"))

reponse_3 = blank("reponse_3", expect("str(reponse_3).strip().upper()", SOLUTION, label="la réponse à la question 3"))
