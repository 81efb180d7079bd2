"""`trous doctor` against public checks that do not vary what the hidden graders vary (issue 22 §1).

A purpose-written course of three small exercises, each with one weakness a student's mistake gets
through: the public checks keep a size the hidden grader changes (`couche`: vectors of 2 components
only), check only a shape where the hidden grader checks values (`racine`: `math.sqrt(2)` written out
passes), or always give values of mean zero (`ecart`: a standard deviation that does not remove the
mean passes). The doctor must fail the course and say, for each, which blank, which sub-expression or
which generated mistake, and which hidden check.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import ROOT, run_trous

COURSE = """
course:
  id: essai
  title: "Cours d'essai"
  language: fr
  version: "2026.1"
assignments:
  - id: devoir
    title: "Devoir"
    source: "essai"
    exercises:
      - id: 01_couche
        title: "Une couche dense"
        file: exercises/01_couche.py
        source: "essai"
        blanks:
          - id: couche
            hint: ["Additionne les v[i] * W[i][j] sur tous les i.", "sum(v[i] * W[i][j] for i in range(len(v)))"]
          - id: racine
            hint: ["La racine carrée de d.", "math.sqrt(d)"]
      - id: 02_ecart
        title: "Un écart type"
        file: exercises/02_ecart.py
        source: "essai"
        requires: [numpy]
        blanks:
          - id: ecart
            hint: ["L'écart type de s, avec NumPy.", "s.std()"]
"""

COUCHE = '''\
import math

x = [[3.0, 4.0], [1.0, 2.0], [0.0, 1.0]]
W = [[1.0, 2.0], [0.5, -1.0]]
d = len(W[0])


def couche(v, W):
    return [{couche} for j in range(len(W[0]))]


y = [couche(t, W) for t in x]
echelle = [[a / {racine} for a in t] for t in y]
print(y, echelle)
'''

# Every expected value below is worked out by hand from x and W.
COUCHE_PUBLIC = '''\
import math

from trous.spec import blank, expect, variant

# Other weights, the same shapes: x @ W by hand.
AUTRES_POIDS = variant("d'autres poids", shown=True, W="[[2.0, 0.0], [0.0, 3.0]]")
# Three components, d = 3: only the shape of echelle is checked (the weakness under test).
TROIS = variant("trois composantes", shown=True, x="[[1.0, 0.0, 1.0]]", W="[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]")

couche = blank(
    "couche",
    expect("y", [[5.0, 2.0], [2.0, 0.0], [0.5, -1.0]]),
    expect("y", [[6.0, 12.0], [2.0, 6.0], [0.0, 3.0]], variant=AUTRES_POIDS),
)

racine = blank(
    "racine",
    expect("echelle", [[5.0 / math.sqrt(2), 2.0 / math.sqrt(2)], [2.0 / math.sqrt(2), 0.0], [0.5 / math.sqrt(2), -1.0 / math.sqrt(2)]]),
    expect("[len(t) for t in echelle]", [3], variant=TROIS),
)
'''

COUCHE_HIDDEN = '''\
from trous.spec import SOLUTION, blank, expect, variant

AUTRES = [variant("des vecteurs plus longs", x="[[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]]",
                  W="[[1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]")]

couche = blank("couche", expect("y", SOLUTION, variants=AUTRES, label="les sorties de la couche"))
racine = blank("racine", expect("echelle", SOLUTION, variants=AUTRES, label="les sorties divisées par la racine de d"))

# W has one row per component of v.
EQUIVALENT_MUTANTS = {"couche": ["sum(v[i] * W[i][j] for i in range(len(W)))"]}
'''

ECART = '''\
import numpy as np

s = np.array([-1.0, 0.0, 1.0])
ecart = {ecart}
print(ecart)
'''

ECART_PUBLIC = '''\
import math

import numpy as np

from trous.spec import blank, expect, variant

# Another sample, again of mean zero (the weakness under test): by hand, sqrt((4 + 0 + 4) / 3).
AUTRE = variant("d'autres nombres", shown=True, s="np.array([-2.0, 0.0, 2.0])")

ecart = blank(
    "ecart",
    expect("ecart", math.sqrt(2 / 3)),
    expect("ecart", math.sqrt(8 / 3), variant=AUTRE),
)
'''

ECART_HIDDEN = '''\
from trous.spec import SOLUTION, blank, expect, variant

ecart = blank("ecart", expect("ecart", SOLUTION, variant=variant("d'autres nombres", s="np.array([1.0, 2.0, 4.0])"),
                              label="l'écart type"))
'''


def write_course(root, *, couche_public=COUCHE_PUBLIC, ecart_public=ECART_PUBLIC):
    for folder in ("exercises", "solutions", "graders"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "course.yaml").write_text(textwrap.dedent(COURSE), encoding="utf-8")
    files = {
        "exercises/01_couche.py": COUCHE.format(couche="___", racine="___"),
        "solutions/01_couche.py": COUCHE.format(couche="sum(v[i] * W[i][j] for i in range(len(v)))",
                                                racine="math.sqrt(d)"),
        "exercises/test_01_couche.py": couche_public,
        "graders/test_01_couche.py": COUCHE_HIDDEN,
        "exercises/02_ecart.py": ECART.format(ecart="___"),
        "solutions/02_ecart.py": ECART.format(ecart="s.std()"),
        "exercises/test_02_ecart.py": ecart_public,
        "graders/test_02_ecart.py": ECART_HIDDEN,
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def weak(tmp_path_factory):
    """`trous doctor` on the course with its three weaknesses."""
    root = write_course(tmp_path_factory.mktemp("faible") / "cours")
    result = run_trous(root, "doctor", timeout=600)
    return result


def errors(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("[erreur]")]


def test_the_weak_course_fails(weak):
    assert "trous doctor : 2 exercices vérifiés" in weak.stdout, weak.stdout[-3000:] + weak.stderr[-3000:]
    assert weak.returncode != 0 and "0 erreur(s)" not in weak.stdout, weak.stdout[-3000:]


def test_a_size_only_the_hidden_grader_changes_is_named(weak):
    """`couche` is only ever given vectors of 2 components in public; the hidden variant gives 3."""
    found = [e for e in errors(weak) if "essaie le trou « couche »" in e]
    assert len(found) == 1, errors(weak)
    [line] = found
    assert line.startswith("[erreur] 01_couche — exercises/test_01_couche.py")
    # Which sub-expression, its public and hidden values, which hidden variant, and what to add.
    assert "len(v) vaut 2 dans toutes les vérifications publiques, 3 dans la variante cachée " \
           "« des vecteurs plus longs »" in line, line
    assert "variant(..., shown=True)" in line and "en remplaçant aussi W, x" in line, line
    # `racine` is given d = 3 by a shown variant: no gap there, whatever its check looks at.
    assert not any("essaie le trou « racine »" in e for e in errors(weak))


def test_a_generated_value_of_the_example_that_passes_in_public_is_named(weak):
    """d written out as its value on the example (`math.sqrt(2)`) passes the shape-only public check
    on d = 3; the hidden grader refuses it. The doctor names the blank and the mutant."""
    found = [e for e in errors(weak) if "passe les vérifications publiques du trou « racine »" in e]
    assert any("« valeur de l'exemple »" in e and "(d → 2)" in e and ": a / math.sqrt(2)" not in e
               and "math.sqrt(2)" in e for e in found), errors(weak)
    # …and range(len(v)) written out as range(2) in `couche`.
    assert any("passe les vérifications publiques du trou « couche »" in e and "range(2)" in e
               for e in errors(weak)), errors(weak)
    # The table lists them with the blank.
    table = weak.stdout[weak.stdout.index("Mutants générés"):]
    assert re.search(r"^  01_couche +racine +\d+ +\d+ +\d+ +[1-9]\d*$", table, re.M), table
    assert "✘ valeur de l'exemple, d → 2 : math.sqrt(2)" in table, table


def test_a_property_every_public_check_has_is_named_with_the_formula_it_lets_through(weak):
    """Every public sample has mean zero, the hidden one does not: a standard deviation that forgets
    to remove the mean is right on the first and wrong on the second."""
    found = [e for e in errors(weak) if "02_ecart" in e]
    assert any("essaie le trou « ecart »" in e and "s a une moyenne nulle dans toutes les vérifications publiques, "
               "pas dans la variante cachée « d'autres nombres »" in e for e in found), found
    assert any("« coïncide sur l'exemple »" in e and "(moyenne non retirée)" in e and "(s ** 2).mean() ** 0.5" in e
               for e in found), found


def test_the_same_course_with_public_checks_that_vary_it_all_passes(tmp_path):
    """The same exercises, with shown variants changing what the hidden graders change: no error."""
    public = COUCHE_PUBLIC.replace(
        '''    expect("y", [[6.0, 12.0], [2.0, 6.0], [0.0, 3.0]], variant=AUTRES_POIDS),
)''', '''    expect("y", [[6.0, 12.0], [2.0, 6.0], [0.0, 3.0]], variant=AUTRES_POIDS),
    # By hand: [1, 0, 1] times the identity.
    expect("y", [[1.0, 0.0, 1.0]], variant=TROIS),
)''').replace('''    expect("[len(t) for t in echelle]", [3], variant=TROIS),''',
              '''    expect("echelle", [[1.0 / math.sqrt(3), 0.0, 1.0 / math.sqrt(3)]], variant=TROIS),''')
    ecart = ECART_PUBLIC.replace('''    expect("ecart", math.sqrt(8 / 3), variant=AUTRE),
)''', '''    expect("ecart", math.sqrt(8 / 3), variant=AUTRE),
    # By hand: [0, 0, 3] has mean 1, squared deviations 1, 1, 4: sqrt(6 / 3).
    expect("ecart", math.sqrt(2), variant=variant("un échantillon de moyenne 1", shown=True, s="np.array([0.0, 0.0, 3.0])")),
)''')
    root = write_course(tmp_path / "cours", couche_public=public, ecart_public=ecart)
    result = run_trous(root, "doctor", timeout=600)
    assert result.returncode == 0, "\n".join(errors(result)) or result.stdout[-3000:]
    assert "0 refusé(s) en secret mais accepté(s) en public" in result.stdout


def test_the_real_course_has_a_family_table(tmp_path):
    """The doctor says how many mutants of each family it made, and how many each side refused."""
    result = run_trous(ROOT, "doctor", "05_qkv", timeout=600)
    assert result.returncode == 0, result.stdout[-3000:]
    table = result.stdout[result.stdout.index("Mutants par famille"):]
    for family in ("écrit en dur", "valeur de l'exemple", "décalé de un", "autre"):
        assert re.search(rf"^  {re.escape(family)} +(\d+) +\1 +\1 +0$", table, re.M), table
