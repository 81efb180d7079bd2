"""Correcteur caché de l'exercice 3, en fonctions de test pytest : l'élève ne voit que leur description."""

import pytest


@pytest.mark.trou("compte")
@pytest.mark.parametrize("mm, seuil, attendu", [([0.0, 8.0, 2.0], 1.0, 2), ([5.0, 5.0], 5.0, 0), ([], 1.0, 0)])
def test_compte_les_jours_au_dessus_du_seuil(eleve, mm, seuil, attendu):
    """compte les jours au-dessus du seuil"""
    assert eleve.call("jours_de_pluie", mm, seuil) == attendu


@pytest.mark.trou("cumul")
def test_le_cumul_suit_la_pluie(eleve):
    """le cumul suit la pluie"""
    assert eleve("cumul", pluie=[2.0, 0.5, 4.0]) == pytest.approx(6.5)
