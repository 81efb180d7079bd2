"""`trous doctor`: does everything the course says agree with everything the course has?

For course authors: the files, the blanks and the solution agree with course.yaml, each public check
passes on the solution and fails with its blank put back, and what a student reads of a hidden grader
does not show its inputs. What the graders catch (coverage, mutants) is `quality`'s.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..check.selfcheck import PASSED, SUSPECT
from ..core import blanknames, schema
from ..core import blanks as blanks_mod
from ..core.analysis import analyse_source
from ..core.checks import load_checks
from ..core.course import COURSE_FILE, Course, Exercise
from ..core.errors import CourseError
from ..core.source import Source, SourceError, read
from ..grade.engine import preloaded
from ..sandbox.backend import LIMITS
from ..sandbox.pool import RunnerPool
from . import derive, quality


@dataclass
class Finding:
    exercise: str
    message: str
    path: str = ""
    line: int | None = None
    severity: str = "erreur"  # or "avertissement"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"[{self.severity}] {self.exercise} — {where + ' : ' if where else ''}{self.message}"


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    escapes: list = field(default_factory=list)  # quality.Escape: refused in secret, « juste » in public
    tallies: list = field(default_factory=list)  # quality.Tally: each blank's mutants, per side
    tests: list = field(default_factory=list)  # quality.TestTally: mutants each test function refuses
    families: list = field(default_factory=list)  # quality.Tally: each family of mistakes
    misnamed: set = field(default_factory=set)  # exercises whose course.yaml ids contradict their file

    @property
    def ok(self) -> bool:
        return not any(f.severity == "erreur" for f in self.findings)

    def add(self, *args, **kwargs) -> None:
        self.findings.append(Finding(*args, **kwargs))

    def lines(self) -> list[str]:
        out = [str(f) for f in self.findings]
        out += quality.mutant_table(self.tallies, self.escapes) + quality.family_table(self.families)
        out += quality.test_table(self.tests)
        errors = sum(1 for f in self.findings if f.severity == "erreur")
        out.append(f"trous doctor : {len(self.checked)} exercices vérifiés, {errors} erreur(s), "
                   f"{len(self.findings) - errors} avertissement(s)")
        return out


def _rel(course: Course, path: Path) -> str:
    try:
        return str(path.relative_to(course.root))
    except ValueError:
        return str(path)


def check_files(course: Course, exercise: Exercise, report: Report) -> tuple[str | None, str | None]:
    """Template and solution texts, after checking blanks and alignment."""
    try:
        marked = exercise.solution_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        marked = None  # reported with the other files
    problems = derive.check(exercise, marked)[1] if marked is not None else []
    for problem in problems:
        report.add(exercise.id, problem.message, problem.path, problem.line)
    if problems:
        report.misnamed.add(exercise.id)
        return None, None  # the rest would be checked on a student file that is not the solution's
    for path in [p for p in (exercise.path, exercise.checks_path, exercise.solution_path) if not p.exists()]:
        report.add(exercise.id, "fichier manquant", _rel(course, path))
    try:
        template = read(exercise.template_path, _rel(course, exercise.template_path)).text
        found = blanks_mod.find_blanks(template)
    except SourceError as exc:
        report.add(exercise.id, exc.message, exc.path, exc.line)
        return None, None
    except blanks_mod.TokenizeError as exc:
        report.add(exercise.id, f"modèle illisible : {exc.message}", _rel(course, exercise.path), exc.line)
        return None, None
    declared = exercise.blanks
    if len(found) != len(declared):
        where = ", ".join(f"ligne {b.line}" for b in found) or "aucun"
        report.add(exercise.id, f"{len(found)} trous « ___ » dans le fichier ({where}) mais {len(declared)} "
                                f"déclarés dans course.yaml ({', '.join(b.id for b in declared)})",
                   _rel(course, exercise.path), found[0].line if found else None)
    elif check_names(course, exercise, template, report):
        return template, None  # checking with swapped ids would only print misleading errors
    if not exercise.solution_path.exists():
        return template, None
    path = _rel(course, exercise.solution_path)
    try:
        solution = read(exercise.solution_path, path).text
    except SourceError as exc:
        report.add(exercise.id, exc.message, exc.path, exc.line)
        return template, None
    fills = blanks_mod.align(template, solution)
    if fills is None:
        line, tline = _first_difference(template, solution)
        shown = ""
        if line and tline:
            shown = (f" : la solution écrit ligne {line} « {_line_text(solution, line)} », l'exercice ligne "
                     f"{tline} « {_line_text(template, tline)} »")
        report.add(exercise.id, "la solution ne correspond pas à l'exercice : en dehors des trous, le code "
                                "doit être identique (seuls les ___ changent)" + shown, path, line)
        return template, None
    for fill in [f for f in fills if not f.filled]:
        report.add(exercise.id, f"trou {fill.index + 1} pas rempli dans la solution", path, fill.line)
    for fill in fills:
        try:
            compile(fill.text.strip(), "<trou>", "eval")
        except SyntaxError:
            report.add(exercise.id, f"le trou {fill.index + 1} de la solution n'est pas une expression : "
                                    f"{fill.text.strip()}", path, fill.line, severity="avertissement")
    return template, solution


def check_names(course: Course, exercise: Exercise, template: str, report: Report) -> bool:
    """Whether course.yaml calls a blank by the name another blank's line assigns (reported)."""
    found = blanknames.contradictions(template, [b.id for b in exercise.blanks])
    for contradiction in found:
        line = _yaml_line(course, exercise, contradiction.index)
        report.add(exercise.id, contradiction.message + (f" (course.yaml:{line})" if line else ""),
                   _rel(course, exercise.path), contradiction.line)
    if found:
        report.misnamed.add(exercise.id)
    return bool(found)


def _yaml_line(course: Course, exercise: Exercise, index: int) -> int | None:
    """The line of course.yaml that declares this blank of this exercise (for the message only)."""
    try:
        _, lines = schema.load((course.root / COURSE_FILE).read_text(encoding="utf-8-sig"), COURSE_FILE)
    except (OSError, CourseError):
        return None
    where = (course.spec.assignments.index(exercise.assignment), exercise.assignment.exercises.index(exercise.spec))
    return lines.get(("assignments", where[0], "exercises", where[1], "blanks", index))


def _line_text(text: str, line: int) -> str:
    lines = text.splitlines()
    shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return shown if len(shown) <= 100 else shown[:99] + "…"


def _first_difference(template: str, copy: str) -> tuple[int | None, int | None]:
    """The first line where `copy` differs from `template` outside the blanks: (in copy, in template)."""
    a_tokens, b_tokens = blanks_mod.tokens(template), blanks_mod.tokens(copy)
    matcher = difflib.SequenceMatcher(None, [t.key() for t in a_tokens], [t.key() for t in b_tokens],
                                      autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == 1 and a_tokens[i1].is_blank):
            continue  # a blank and its fill: expected
        if j1 < len(b_tokens):
            tline = a_tokens[min(i1, len(a_tokens) - 1)].start[0] if a_tokens else None
            return b_tokens[j1].start[0], tline
    return None, None


def check_public(course: Course, exercise: Exercise, template: str, solution: str, pool: RunnerPool,
                 report: Report) -> None:
    path = _rel(course, exercise.checks_path)
    if not exercise.checks_path.exists():
        return
    try:
        checks = load_checks(exercise.checks_path)
    except Exception as exc:  # noqa: BLE001 - report any import problem of an author's file
        report.add(exercise.id, f"vérifications publiques illisibles : {type(exc).__name__}: {exc}", path)
        return
    ids = [b.id for b in exercise.blanks]
    for check in checks:
        if check.blank not in ids:
            report.add(exercise.id, f"« {check.name} » vérifie le trou « {check.blank} », absent de course.yaml "
                                    f"(trous : {', '.join(ids)})", path)
        for expect in check.expects:
            if expect.uses_solution:
                report.add(exercise.id, f"« {check.name} » attend SOLUTION : une vérification publique doit donner "
                                        "sa valeur attendue (les élèves n'ont pas la solution)", path)
    checked = {c.blank for c in checks}
    for blank in [b for b in exercise.blanks if b.id not in checked]:
        report.add(exercise.id, f"le trou « {blank.id} » n'a aucune vérification publique", path)
    checks = [c for c in checks if c.blank in ids and not any(e.uses_solution for e in c.expects)]
    if not checks:
        return
    # Each public check must fail with its blank put back, told it is filled (unfilled={}): the check
    # itself must notice.
    shown, fills = _rel(course, exercise.path), blanks_mod.align(template, solution)
    copies = [analyse_source(exercise, Source(shown, solution))]
    for index in range(len(exercise.blanks) if fills is not None else 0):
        put_back = blanks_mod.splice(solution, fills, {index: blanks_mod.BLANK})
        copies.append(replace(analyse_source(exercise, Source(shown, put_back)), unfilled={}))
    solved, *reverted = quality.run_public([(exercise, copy, checks) for copy in copies], pool)
    for blank in [b for b in solved.result.blanks if not b.passed]:
        report.add(exercise.id, f"la solution échoue à la vérification du trou « {blank.spec.id} » : "
                                + " / ".join(blank.problems), _rel(course, exercise.solution_path), blank.line)
    for index, (blank, run) in enumerate(zip(exercise.blanks, reverted)):
        # SUSPECT: its own checks pass, other blanks' checks point at it: they did not notice either.
        if run.result.blanks[index].status in (PASSED, SUSPECT):
            report.add(exercise.id, f"la vérification publique du trou « {blank.id} » passe même quand ce trou "
                                    "vaut ___ : elle ne le vérifie pas", path)


_NUMBER = re.compile(r"(?<![\w.,])-?\d+(?:[.,]\d+)?(?![\w])")
# Numbers written out count too (« sept caractères ») ; « un »/« une » are articles, « un seul » is not.
_WORDS = {w: float(n) for n, w in enumerate("zéro _ deux trois quatre cinq six sept huit neuf dix onze douze treize "
                                            "quatorze quinze seize dix-sept dix-huit dix-neuf vingt".split())}
_ONE = re.compile(r"\bune? seule?\b")


def _numbers(text: str) -> set[float]:
    found = {float(n.replace(",", ".")) for n in _NUMBER.findall(text)}
    lowered = text.lower()
    found |= {value for word, value in _WORDS.items() if re.search(rf"(?<![\w-]){word}(?![\w-])", lowered)}
    return found | ({1.0} if _ONE.search(lowered) else set())


def check_hidden_texts(course: Course, exercise: Exercise, report: Report) -> None:
    """What a student may read of a hidden grader: each expectation's label and each hidden variant's
    description. They must exist, and a description must not give away the variant's inputs."""
    path = _rel(course, exercise.grader_path)
    try:
        checks = load_checks(exercise.grader_path)
    except Exception:  # noqa: BLE001 - the grading part of the doctor reports a grader that does not load
        return
    told: set = set()  # each variant once, however many expectations share it
    for check in checks:
        for expect in check.expects:
            if not expect.label:
                report.add(exercise.id, f"« {check.name} » : l'attente {expect.expr[:80]!r} n'a pas d'étiquette "
                                        "(label=) : c'est le seul texte que l'élève en lira (ce qu'elle vérifie, "
                                        "sans ses entrées)", path)
            variant = expect.variant
            if variant is None or not variant.hidden or variant in told:
                continue
            told.add(variant)
            shown = _numbers(variant.description) & set().union(*(_numbers(v) for _, v in variant.overrides))
            if shown:
                values = ", ".join(sorted({f"{n:g}" for n in shown}))
                report.add(exercise.id, f"la variante cachée « {variant.description} » montre une de ses entrées "
                                        f"({values}) : décrivez-la sans ses valeurs", path)


def check_explorer(course: Course, report: Report) -> None:
    """The course's own notebook (course.yaml's `explorer:`) reads `needs` from an exercise: one must
    give them without a blank, or nbgrader hands it out with no assignment."""
    explorer = course.explorer
    if explorer is None or not explorer.needs:
        return
    if not any(blanks_mod.defines(e.template_path, explorer.needs) for e in course.exercises):
        report.add("explorer", f"aucun exercice ne définit {', '.join(explorer.needs)} sans trou au premier niveau "
                   f"de son fichier : explorer.needs ne peut venir de nulle part, et trous nbgrader build ne "
                   f"donnerait {explorer.file} avec aucun devoir", COURSE_FILE)


def run(course: Course, only: list[str] | None = None, graders: bool = True) -> Report:
    report = Report()
    with RunnerPool(mode=LIMITS, preload=preloaded(course, only)) as pool:
        if not only:
            check_explorer(course, report)
        for exercise in [e for e in course.exercises if not only or e.id in only]:
            report.checked.append(exercise.id)
            template, solution = check_files(course, exercise, report)
            if template is not None and solution is not None:
                check_public(course, exercise, template, solution, pool, report)
            if graders and exercise.grader_path.exists():
                check_hidden_texts(course, exercise, report)
        # An exercise whose ids contradict its file is not graded: its error is already said.
        wanted = [e for e in report.checked if e not in report.misnamed]
        if graders and wanted:
            quality.check(course, report, pool, only=wanted)
    return report
