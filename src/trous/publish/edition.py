"""The student edition (`trous edition`): what a student needs and nothing of solutions/ or graders/;
the hints that give the answer masked (check/hints.py), trous as a wheel of its own, and the files
the course's own notebook imports (`explorer.files`: they belong to the course, not to trous).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import zipfile
from importlib import metadata
from pathlib import Path

import trous

import yaml

from ..core.course import Course
from ..core.wording import count
from ..check import hints as hints_mod

FIXED_DATE = (2026, 1, 1, 0, 0, 0)  # zip entries get a fixed date: same course, same bytes
LAB_REQUIREMENTS = "jupyterlab>=4.2,<5\njupytext>=1.16\nipywidgets>=8.1\nanywidget>=0.9\n"
MAX_SHIPPED = 2000  # files of a course's own notebook shipped with it (a widget's module is a handful)

STUDENT_README = """\
# {title}

Bienvenue ! Ce dossier contient les exercices à trous du cours, à compléter dans l'ordre.

## Installer (une seule fois)

```
python -m venv .venv
source .venv/bin/activate          # Windows : .venv\\Scripts\\activate
python -m pip install -r requirements.txt
```

## Travailler dans JupyterLab (facultatif)

```
python -m pip install -r requirements-lab.txt
trous lab
```

Chaque exercice s'ouvre en notebook (enregistrer le notebook enregistre aussi le fichier `.py`) ; la
dernière cellule vérifie tes trous.{explorer}

## Travailler

- Ouvre `exercises/{first}.py` : chaque `___` est un trou à remplacer par une expression Python.
- Vérifie-toi : `pytest exercises/` (tout) ou `pytest exercises/ -k {first}` (un exercice) : une ligne
  par exercice, un signe par trou, puis le détail du premier exercice pas encore réussi
  (`pytest exercises/ --tout` : le détail de tous). Pour chaque trou : pas encore rempli, juste,
  faux (la valeur attendue et la tienne), ou en attente d'un autre trou à corriger d'abord (il « dépend
  de » son résultat, ou le programme s'arrête sur lui avant d'arriver au tien).
- `trous list` affiche ta progression ; `trous check` détaille l'exercice en cours ;
  `trous hint` donne un indice pour l'exercice en cours (`trous hint {other}` pour un autre ; un de
  plus à chaque appel ; il te prévient avant celui qui donne la réponse) ;
  `trous watch` revérifie l'exercice à chaque enregistrement et passe au suivant quand il est réussi.
- Ne modifie pas les fichiers `exercises/test_*.py` ni le dossier `.trous/` : ce sont les vérifications.

Les vérifications publiques ne sont pas la note : l'enseignant corrige aussi sur d'autres entrées,
donc écris un calcul qui marche en général, pas seulement la valeur attendue.

## Exercices

{exercises}
"""


class ShippedError(ValueError):
    """French: a file `explorer.files` names is not there (or too many)."""


def explorer_files(course: Course) -> dict[str, bytes]:
    """`explorer.files` (files or folders) by path from the course's root, links not followed, caches
    left out: the edition and the nbgrader release carry them beside the notebook."""
    found: dict[str, bytes] = {}
    if course.explorer is None:
        return found
    root = course.root.resolve()
    for name in course.explorer.files:
        path = root / name
        if path.is_symlink() or not path.exists() or root not in path.resolve().parents:
            raise ShippedError(f"course.yaml, explorer.files : « {name} » introuvable dans {root} (un chemin "
                               "depuis la racine du cours, vers un fichier ou un dossier qui y est)")
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for item in paths:
            if item.is_symlink() or "__pycache__" in item.parts or item.suffix in (".pyc", ".pyo"):
                continue
            found[item.relative_to(root).as_posix()] = item.read_bytes()
            if len(found) > MAX_SHIPPED:
                raise ShippedError(f"course.yaml, explorer.files : plus de {MAX_SHIPPED} fichiers à donner")
    return found


def build(course: Course, dest: str | Path, make_zip: bool = True) -> Path:
    dest = Path(dest).resolve()
    if dest == course.root or dest in course.root.parents or any(
            (course.root / name) in (dest, *dest.parents) for name in ("exercises", "solutions", "graders")):
        raise ValueError(f"{dest} : la destination ne peut pas être le cours ni l'un de ses dossiers")
    if dest.exists():
        if any(dest.iterdir()) and not (dest / ".trous" / "modeles").is_dir():
            raise ValueError(f"{dest} existe et n'est pas une édition élève : choisis un dossier neuf")
        shutil.rmtree(dest)
    (dest / "exercises").mkdir(parents=True)
    (dest / ".trous" / "modeles").mkdir(parents=True)
    write_course_yaml(course, dest)
    for rel, data in explorer_files(course).items():  # what the course's own notebook imports
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
    lines = []
    for exercise in course.exercises:
        template = exercise.template_path
        shutil.copyfile(template, dest / "exercises" / exercise.path.name)
        shutil.copyfile(template, dest / ".trous" / "modeles" / exercise.path.name)
        shutil.copyfile(exercise.checks_path, dest / "exercises" / exercise.checks_path.name)
        lines.append(f"{exercise.number}. `{exercise.path.name}` — {exercise.title} "
                     f"({count(len(exercise.blanks), 'trou')})")
    wheel = build_wheel(dest / ".trous" / "wheels")
    (dest / "requirements.txt").write_text(f"./.trous/wheels/{wheel.name}\n", encoding="utf-8")
    (dest / "requirements-lab.txt").write_text(f"-r requirements.txt\n{LAB_REQUIREMENTS}", encoding="utf-8")
    (dest / "pytest.ini").write_text("[pytest]\ntestpaths = exercises\n", encoding="utf-8")
    (dest / ".gitignore").write_text(".venv/\n__pycache__/\n.trous/etat.json\n.trous/cours-valide.json\n", encoding="utf-8")
    first, explorer = course.exercises[0].id, course.explorer
    other = course.exercises[1].id if len(course.exercises) > 1 else first  # « pour un autre » exercise
    mention = f" `{explorer.file}` contient {explorer.title}." if explorer is not None else ""
    (dest / "LISEZMOI.md").write_text(STUDENT_README.format(title=course.title, exercises="\n".join(lines), first=first,
                                                            other=other, explorer=mention), encoding="utf-8")
    if make_zip:
        _write_zip(dest.with_suffix(".zip"), {f"{dest.name}/{p.relative_to(dest).as_posix()}": p.read_bytes()
                                              for p in sorted(dest.rglob("*")) if p.is_file()})
    return dest


HEADER = """\
# Le cours, lu par trous. Les indices qui donnent la réponse ne sont pas ici : « trous hint » les donne,
# un à la fois, quand les autres n'ont pas suffi (ils sont dans .trous/indices.json, illisibles).
"""


def pointer(exercise_id: str, index: int) -> str:
    """The hint course.yaml shows for a blank whose every hint gives the answer."""
    return (f"Les indices de ce trou donnent la réponse : lance « trous hint {exercise_id} --trou {index + 1} » "
            "pour les voir un par un.")


def split_hints(course: Course) -> dict[tuple[str, str], int]:
    """(exercise, blank) → how many of its first hints stay readable (before one giving the answer)."""
    split = {}
    for exercise in course.exercises:
        fills = hints_mod.solution_fills(exercise)
        for index, blank in enumerate(exercise.blanks):
            levels = hints_mod.answer_levels(blank.hints, fills[index] if fills else None)
            split[(exercise.id, blank.id)] = levels.index(True) if True in levels else len(levels)
    return split


class _Dumper(yaml.SafeDumper):
    """Multi-line texts (a notebook's Markdown, its code) as blocks, readable as the author wrote them."""


_Dumper.add_representer(str, lambda dumper, value: dumper.represent_scalar(
    "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


def write_course_yaml(course: Course, dest: Path) -> None:
    split = split_hints(course)
    # The author's own text, as written (what was left to its default stays unwritten).
    data = yaml.safe_load((course.root / "course.yaml").read_text(encoding="utf-8"))
    for assignment in data["assignments"]:
        for exercise in assignment["exercises"]:
            for index, blank in enumerate(exercise["blanks"]):
                hints = [blank["hint"]] if isinstance(blank["hint"], str) else list(blank["hint"])
                shown = split[(exercise["id"], blank["id"])]
                blank["hint"] = hints[:shown] or [pointer(exercise["id"], index)]
    text = HEADER + yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=120)
    (dest / "course.yaml").write_text(text, encoding="utf-8")
    document = hints_mod.held_document(course.id, course.exercises, split)
    (dest / hints_mod.HELD_FILE).write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n",
                                             encoding="utf-8")
    # The edition is read by the same code as the course: refuse to ship one that would not load.
    Course.load(dest)


def _write_zip(archive: Path, files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(archive, "w", compression) as z:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, FIXED_DATE)
            info.compress_type = compression
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return archive


def build_wheel(out_dir: str | Path) -> Path:
    """A pure-Python wheel of the installed trous package (no course files can be in it)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    package = Path(trous.__file__).parent
    version = trous.__version__
    dist = f"trous-{version}.dist-info"
    requires = [r for r in (metadata.requires("trous") or []) if "extra ==" not in r]
    meta = ["Metadata-Version: 2.1", "Name: trous", f"Version: {version}",
            "Summary: Exercices Python à trous, corrigés automatiquement", "Requires-Python: >=3.10"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files = {f"trous/{path.relative_to(package).as_posix()}": path.read_bytes()
             for path in sorted(package.rglob("*"))
             if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")}
    files[f"{dist}/METADATA"] = ("\n".join(meta) + "\n").encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: trous\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist}/entry_points.txt"] = (b"[console_scripts]\ntrous = trous.cli:main\n\n"
                                         b"[pytest11]\ntrous = trous.check.pytest_plugin\n")
    return write_wheel(out_dir / f"trous-{version}-py3-none-any.whl", dist, files)


def write_wheel(name: Path, dist: str, files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    """`files` (archive path → bytes) with the RECORD of `dist`. Also benchmarks/student_venv.py's."""
    files = {path: data for path, data in files.items() if path != f"{dist}/RECORD"}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    return _write_zip(name, files, compression)
