"""Vérifications publiques de l'exercice 1 : sur les relevés du cours, puis sur d'autres, montrés.
Les valeurs attendues sont calculées à la main."""

from trous.spec import blank, expect, variant

CINQ = variant("cinq relevés", shown=True, temperatures="[20.0, 10.0, 0.0, 5.0, 15.0]")
TROIS = variant("trois relevés", shown=True, temperatures="[0.5, 1.0, 3.0]")
TOTAL_DONNE = variant("un total donné", shown=True, total="30.0")

total = blank(
    "total",
    expect("total", 48.0, message="12 + 15,5 + 9 + 11,5 = 48."),
    expect("total", 50.0, variant=CINQ),
    expect("total", 4.5, variant=TROIS, message="0,5 + 1 + 3 = 4,5."),
)

moyenne = blank(
    "moyenne",
    expect("moyenne", 12.0, message="48 / 4 = 12."),
    expect("moyenne", 1.5, variant=TROIS, message="4,5 / 3 = 1,5 : on divise par le nombre de relevés."),
    expect("moyenne", 10.0, variant=CINQ, message="50 / 5 = 10."),
    expect("moyenne", 7.5, variant=TOTAL_DONNE, message="30 / 4 = 7,5 : la moyenne se calcule à partir du total."),
)
