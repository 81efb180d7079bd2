"""Write `examples/classe/`: a synthetic class, from the perfect student to the hostile one.

    .venv/bin/python examples/make_classe.py            # (re)writes examples/classe/
    .venv/bin/trous grade examples/classe                # grades it

Every copy is made from the course itself (templates in exercises/, fills of solutions/), so the class
follows the course as exercises are added: an exercise whose template or solution does not exist yet
is skipped. One folder per student (a git clone, an unpacked archive…), except `rose.zip`, a student
who handed in an archive. The generator is deterministic (fixed archive dates, no randomness), so
re-running it after a course change only changes what the change touches.

The benchmark (benchmarks/grade_class.py) imports this file for its realistic mixtures.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import math
import os
import shutil
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARKER = ".genere-par-make_classe"  # a folder we may wipe and rewrite

sys.path.insert(0, str(ROOT / "src"))

from trous.core import blanks as blanks_mod  # noqa: E402
from trous.core import Course, Exercise  # noqa: E402


@dataclass
class Link:
    """A symbolic link to create in a student's folder."""

    target: str


@dataclass
class Material:
    """What one exercise gives the generator."""

    exercise: Exercise
    template: str
    blanks: list[blanks_mod.Fill]  # where each `___` is in the template
    answers: list[str]  # the solution's fill of each blank
    constants: dict[str, str]  # top-level variable computed on a line with a blank → a literal of its value

    @property
    def id(self) -> str:
        return self.exercise.id

    def fill(self, replacements: dict[int, str]) -> str:
        """The template with some blanks filled; the others stay `___`."""
        return blanks_mod.splice(self.template, self.blanks, replacements)

    def perfect(self) -> str:
        return self.fill(dict(enumerate(self.answers)))

    def with_blank(self, index: int, text: str) -> str:
        return self.fill({**dict(enumerate(self.answers)), index: text})

    def first_blank_line(self) -> int:
        return self.blanks[0].line


def _literal(value) -> str | None:
    """Python source for a value as a student would copy it from the printed output, or None."""
    try:
        import numpy as np  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        np = None
    if np is not None and isinstance(value, np.ndarray):
        inner = _literal(value.tolist())
        return None if inner is None else f"np.array({inner})"
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f'float("{value}")'
    if isinstance(value, (list, tuple)):
        parts = [_literal(v) for v in value]
        if any(p is None for p in parts):
            return None
        text = ", ".join(parts)
        return f"[{text}]" if isinstance(value, list) else f"({text}{',' if len(parts) == 1 else ''})"
    return None


def _constants(exercise: Exercise, template: str, solution: str, blanks: list[blanks_mod.Fill]) -> dict[str, str]:
    """For each top-level one-line `name = … ___ …` of the template: a literal of the value the solution
    gives `name` (what a student copies from the printed output to pass the public check)."""
    lines = template.split("\n")
    targets = []
    for blank in blanks:
        line = lines[blank.line - 1]
        head = line.split("=", 1)[0].strip() if "=" in line[: blank.column] else ""
        if not line.startswith((" ", "\t")) and head.isidentifier() and head not in targets:
            try:
                ast.parse(line)
            except SyntaxError:
                continue  # a statement over several lines
            targets.append(head)
    if not targets:
        return {}
    namespace: dict = {"__name__": "__trous__"}
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(solution, str(exercise.solution_path), "exec"), namespace)  # our own solution
    except Exception:  # noqa: BLE001 (an unfinished solution: no hard-coding for this exercise)
        return {}
    found = {}
    for name in targets:
        literal = _literal(namespace.get(name))
        if literal is not None and ("np" in namespace or "np.array" not in literal):
            found[name] = literal
    return found


def hard_code(text: str, constants: dict[str, str]) -> str:
    """Each `name = <computation>` line of `text` replaced by `name = <its value>`."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        name = line.split("=", 1)[0].strip() if "=" in line and not line.startswith((" ", "\t")) else ""
        if name in constants:
            try:
                ast.parse(line)
            except SyntaxError:
                continue
            lines[k] = f"{name} = {constants[name]}"
    return "\n".join(lines)


def load_materials(course: Course) -> list[Material]:
    materials = []
    for exercise in course.exercises:
        if not (exercise.template_path.exists() and exercise.solution_path.exists()):
            continue
        template = exercise.template_path.read_text(encoding="utf-8")
        solution = exercise.solution_path.read_text(encoding="utf-8")
        blanks = blanks_mod.align(template, template)
        fills = blanks_mod.align(template, solution)
        if not blanks or fills is None or len(fills) != len(blanks):
            continue  # solution not aligned with its exercise yet
        materials.append(Material(exercise, template, blanks, [f.text for f in fills],
                                  _constants(exercise, template, solution, blanks)))
    return materials


def insert_before_line(text: str, line: int, code: str) -> str:
    lines = text.split("\n")
    return "\n".join(lines[: line - 1] + code.rstrip("\n").split("\n") + lines[line - 1:])


def _top_level_line(material: Material, text: str) -> int:
    """A line where a top-level statement may be inserted: the first top-level blank's, or the end."""
    lines = text.split("\n")
    for blank in material.blanks:
        if not lines[blank.line - 1].startswith((" ", "\t")):
            return blank.line
    return len(lines) + 1


def wrong(answer: str, k: int) -> str:
    """A plausible wrong fill: twice the value, one more, or the opposite (−∞ stays −∞ doubled)."""
    if "inf" in answer or k % 3 == 2:
        return f"-({answer})"
    return f"({answer}) * 2" if k % 3 == 0 else f"({answer}) + 1"


def around(payload: str, answer: str) -> str:
    """A fill that runs `payload` first, then gives the right answer (in any expression position)."""
    return f"({payload}, ({answer}))[-1]"


FAKE_PYTEST = ("============================= test session starts ==============================\n"
               "collected 10 items\n\nexercises/test_exercice.py ..........                                 [100%]\n\n"
               "============================== 10 passed in 0.03s ==============================")

# -- the students ---------------------------------------------------------------------------------
Files = dict[str, "bytes | Link"]
Builder = Callable[[list[Material]], Files]


def _ex(material: Material, text: str | bytes, folder: str = "exercises/") -> tuple[str, bytes]:
    return f"{folder}{material.id}.py", text.encode("utf-8") if isinstance(text, str) else text


def parfaite(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect()) for m in ms)
    files["README.md"] = "# Mes exercices\n".encode()
    for m in ms:
        files[f"exercises/test_{m.id}.py"] = m.exercise.checks_path.read_bytes()
    return files


def partiel(ms: list[Material]) -> Files:
    # Every other blank filled (right), and the last exercise not handed in.
    files = {}
    for k, m in enumerate(ms[:-1] if len(ms) > 1 else ms):
        files.update([_ex(m, m.fill({i: a for i, a in enumerate(m.answers) if (i + k) % 2 == 0}))])
    return files


def en_dur(ms: list[Material]) -> Files:
    # `nouveau = [0.79, 0.79]`: the values of the course's example, copied from the printed output.
    return dict(_ex(m, hard_code(m.perfect(), m.constants)) for m in ms)


def faux(ms: list[Material]) -> Files:
    return dict(_ex(m, m.fill({i: wrong(a, i + k) for i, a in enumerate(m.answers)})) for k, m in enumerate(ms))


def syntaxe(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect(), "") for m in ms)  # an unpacked archive: files at the top
    first = ms[0]
    files.update([_ex(first, first.perfect() + '\nprint("fini"\n', "")])
    return files


def boucle(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect()) for m in ms)
    m = ms[0]
    text = m.perfect()
    files.update([_ex(m, insert_before_line(text, _top_level_line(m, text), "i = 0\nwhile i < 10:\n    pass\n"))])
    return files


def memoire(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect()) for m in ms)
    m = ms[0]
    files.update([_ex(m, m.with_blank(0, around("[bytearray(1 << 26) for _ in range(1 << 12)]", m.answers[0])))])
    return files


def fourche(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect()) for m in ms)
    m = ms[0]
    files.update([_ex(m, m.with_blank(0, around('[__import__("os").fork() for _ in range(10 ** 6)]', m.answers[0])))])
    return files


def sortie_brutale(ms: list[Material]) -> Files:
    # os._exit(0) before anything is computed, hoping a clean exit reads as success; sys.exit(0)
    # in the middle of the next exercise.
    files = dict(_ex(m, m.perfect()) for m in ms)
    m = ms[0]
    text = m.perfect()
    files.update([_ex(m, insert_before_line(text, _top_level_line(m, text), 'import os\nos._exit(0)\n'))])
    if len(ms) > 1:
        m = ms[1]
        text = m.perfect()
        files.update([_ex(m, insert_before_line(text, _top_level_line(m, text), "import sys\nsys.exit(0)\n"))])
    return files


def espion(ms: list[Material]) -> Files:
    files = dict(_ex(m, m.perfect()) for m in ms)
    for m in ms[:1]:
        spy = (f'open("../graders/test_{m.id}.py").read(), open("../../../graders/test_{m.id}.py").read(), '
               'open("../../classe-resultats/gradebook.db", "rb").read()')
        files.update([_ex(m, m.with_blank(0, around(spy, m.answers[0])))])
    if len(ms) > 1:
        m = ms[1]
        text = m.perfect()
        # Looks around and tries to delete the gradebook, catching its failures so that the rest runs:
        # it must gain nothing. (Relative paths only: under the fallback sandbox, an absolute one
        # would really reach the teacher's files, which is what the fallback's warning is about.)
        code = ('import os\n'
                'for _p in ("..", "../..", "../graders", "../../graders"):\n'
                '    try:\n'
                '        print(_p, os.listdir(_p))\n'
                '    except OSError:\n'
                '        pass\n'
                'for _p in ("../gradebook.db", "../resultats/gradebook.db", "../../classe-resultats/gradebook.db"):\n'
                '    try:\n'
                '        os.remove(_p)\n'
                '    except OSError:\n'
                '        pass\n')
        files.update([_ex(m, insert_before_line(text, _top_level_line(m, text), code))])
    return files


def bavard(ms: list[Material]) -> Files:
    # 40 Mo printed on the way, then the right value.
    files = dict(_ex(m, m.perfect()) for m in ms)
    m = ms[0]
    files.update([_ex(m, m.with_blank(0, around('print("bla " * 10 ** 7)', m.answers[0])))])
    return files


def vide(ms: list[Material]) -> Files:
    files: Files = {}
    files.update([_ex(ms[0], b"")])
    if len(ms) > 1:
        files.update([_ex(ms[1], b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")])
    if len(ms) > 2:
        files.update([_ex(ms[2], "\n\n   \n")])
    return files  # the others are missing


def encodages(ms: list[Material]) -> Files:
    # Latin-1 without a coding cookie (unreadable, says how to fix it); BOM + CRLF (fine, like Windows
    # Notepad saves); Latin-1 with a cookie (fine too).
    files = dict(_ex(m, m.perfect()) for m in ms)
    files.update([_ex(ms[0], ms[0].perfect().encode("latin-1", "replace"))])
    if len(ms) > 1:
        files.update([_ex(ms[1], b"\xef\xbb\xbf" + ms[1].perfect().replace("\n", "\r\n").encode("utf-8"))])
    if len(ms) > 2:
        files.update([_ex(ms[2], ("# -*- coding: latin-1 -*-\n" + ms[2].perfect()).encode("latin-1", "replace"))])
    return files


def faux_pytest(ms: list[Material]) -> Files:
    files = {}
    for m in ms:
        text = m.fill({i: "0" for i in range(len(m.blanks))})
        banner = f"print({FAKE_PYTEST!r})\nimport sys\nsys.exit(0)\n"
        files.update([_ex(m, insert_before_line(text, _top_level_line(m, text), banner))])
    return files


def menteur(ms: list[Material]) -> Files:
    always = 'type("Toujours", (), {"__eq__": lambda s, o: True, "__ne__": lambda s, o: False, "__hash__": lambda s: 0})()'
    float_liar = 'type("Flottant", (float,), {"__eq__": lambda s, o: True, "__ne__": lambda s, o: False})(0.5)'
    files = {}
    for k, m in enumerate(ms):
        files.update([_ex(m, m.fill({i: (always if (i + k) % 2 == 0 else float_liar) for i in range(len(m.blanks))}))])
    return files


def depot(ms: list[Material]) -> Files:
    # A git clone: exercises/ right, an old copy of the first exercise at the top (duplicate), a draft,
    # an editor's checkpoint (skipped), and the second exercise replaced by a link to /etc/passwd.
    # (No .git/ nor __pycache__/ here: git cannot commit them; the intake tests cover those.)
    files: Files = dict(_ex(m, m.perfect()) for m in ms)
    files[".gitignore"] = b"__pycache__/\n"
    files[f"exercises/.ipynb_checkpoints/{ms[0].id}.py"] = ms[0].template.encode("utf-8")
    files[f"{ms[0].id}.py"] = ms[0].template.encode("utf-8")
    files["exercises/brouillon.py"] = b"print('essai')\n"
    if len(ms) > 1:
        files[f"exercises/{ms[1].id}.py"] = Link("/etc/passwd")
    files["secrets"] = Link("/etc")
    return files


def archive_perso(ms: list[Material]) -> Files:
    # The student's folder holds their own .zip (as Moodle keeps it), with the first exercise half done.
    inner = {f"mes-exercices/{m.id}.py": (m.fill({0: m.answers[0]}) if k == 0 else m.perfect()).encode("utf-8")
             for k, m in enumerate(ms)}
    return {"rendu.zip": zip_bytes(inner)}


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


# (folder, what the student does); the order is the table's, the names tell the story.
STUDENTS: list[tuple[str, str, Builder]] = [
    ("alice_parfaite", "tout juste (dépôt git : exercises/, README, tests publics)", parfaite),
    ("bruno_partiel", "un trou sur deux rempli, dernier exercice absent", partiel),
    ("chloe_en_dur", "valeurs de l'exemple écrites en dur (nouveau = [0.79, 0.79])", en_dur),
    ("david_faux", "calculs faux (×2, +1)", faux),
    ("emma_syntaxe", "erreur de syntaxe dans le premier exercice (fichiers à plat)", syntaxe),
    ("fabien_boucle", "boucle sans fin dans le premier exercice", boucle),
    ("gaelle_memoire", "bombe mémoire dans un trou", memoire),
    ("hugo_fourche", "bombe de processus (fork) dans un trou", fourche),
    ("ines_sortie", "os._exit(0) puis sys.exit(0) au milieu du fichier", sortie_brutale),
    ("jules_espion", "lit ../graders et le carnet de notes, tente d'effacer le carnet", espion),
    ("karim_bavard", "affiche 40 Mo avant la bonne réponse (limite d'affichage)", bavard),
    ("lea_vide", "fichier vide, fichier binaire, fichier blanc, le reste absent", vide),
    ("mathis_encodages", "Latin-1 sans déclaration, BOM + CRLF, Latin-1 déclaré", encodages),
    ("nina_faux_pytest", "affiche « 10 passed » et quitte avec 0", faux_pytest),
    ("oscar_menteur", "objets dont __eq__ répond toujours True, float qui ment", menteur),
    ("paul_depot", "doublon, brouillon, caches, lien symbolique vers /etc/passwd", depot),
    ("quentin_archive", "son dossier contient son propre .zip", archive_perso),
]
ZIPPED = {"rose": ("un .zip à la place d'un dossier, tout juste", parfaite)}


def write_tree(folder: Path, files: Files) -> None:
    for relative, content in sorted(files.items(), key=lambda kv: kv[0]):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            os.symlink(content.target, path)
        else:
            path.write_bytes(content)


def write_class(course: Course, dest: Path) -> list[tuple[str, str]]:
    materials = load_materials(course)
    if not materials:
        raise SystemExit("aucun exercice complet (modèle + solution) : rien à générer")
    if dest.exists():
        if not (dest / MARKER).exists():
            raise SystemExit(f"{dest} existe et n'a pas été écrit par ce script : je n'y touche pas")
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / MARKER).write_text("Écrit par examples/make_classe.py : ne pas modifier à la main.\n", encoding="utf-8")
    written = []
    for name, what, build in STUDENTS:
        write_tree(dest / name, build(materials))
        written.append((name, what))
    for name, (what, build) in ZIPPED.items():
        files = build(materials)
        (dest / f"{name}.zip").write_bytes(zip_bytes({f"{name}/{k}": v for k, v in files.items()
                                                      if isinstance(v, bytes)}))
        written.append((f"{name}.zip", what))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Écrit la classe d'exemple (copies synthétiques).")
    parser.add_argument("destination", nargs="?", default=str(HERE / "classe"))
    parser.add_argument("-C", "--cours", default=str(ROOT), help="dossier du cours")
    args = parser.parse_args(argv)
    course = Course.load(args.cours)
    materials = load_materials(course)
    written = write_class(course, Path(args.destination))
    print(f"{len(written)} copies écrites dans {args.destination}, sur {len(materials)} exercice(s) : "
          + ", ".join(m.id for m in materials))
    for name, what in written:
        print(f"  {name:20} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
