"""The judge: does one item of the check model (checks.py) hold on the student's program, and what may
a page say of it: an expectation, on what a run gave back (`judge`); a test function, on what its run
did (`judge_test`). The self-check and the grade both call it: « juste » means the same in both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .protocol import CRASH, SKIPPED, TIMEOUT, ErrorInfo, ProbeResult, UnitResult
from . import compare, glosses
from .checks import Expect, TestResult
from .wording import seconds


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""
    line: int | None = None
    kind: str = "error"  # "value": the program ran and gave other values; "structure": another kind or shape


def is_blank_name_error(error) -> bool:
    return error is not None and error.type == "NameError" and "'___'" in error.message


def not_checked(error, said=None) -> str:
    """An expectation not checked, as the program stopped on `error` before (`said`: how to say it)."""
    if is_blank_name_error(error):
        return f"non vérifié : le programme s'arrête ligne {error.line} sur un trou pas encore rempli (___)"
    return "non vérifié : " + (said or describe_error)(error)


def describe_error(error, message: bool = True, numbers: bool | None = None) -> str:
    """An error in French; `message=False`: its type and line only (the message could carry what a
    hidden run computed). `numbers`: whether what the run measured may be said (default: as messages)."""
    if error is None:
        return "erreur inconnue"
    if error.kind in ("timeout", "crash", "skipped", "files", "output", "protocol", "override"):
        return error.message
    if error.kind == "too_big":
        return f"valeur trop grande pour être vérifiée ({error.message})"
    if error.kind == "invalid":  # refused by the grader's reading (core/wire.py): its words, no data
        return f"valeur refusée par le correcteur : {error.message}"
    if error.kind == "memory":
        used, _, bound = (error.message or "").partition("/")
        said = (f"le programme a demandé plus de mémoire que la limite de {bound} Mio par exécution"
                if bound.isdigit() else "le programme demande trop de mémoire")
        if (message if numbers is None else numbers) and used.isdigit():
            said += f" (il en occupait déjà {used} Mio)"
        return f"mémoire épuisée (MemoryError) : {said}"
    if error.kind == "exit":
        where = f" ligne {error.line}" if error.line else ""
        # The child writes sys.exit's code only when it is a number: this never echoes the student's text.
        return f"le programme s'arrête{where} par {error.message or 'sys.exit'} avant la fin"
    text = f"{error.type}: {error.message}" if error.message and message else error.type
    if error.type == "RecursionError":
        text += " (une fonction s'appelle elle-même sans fin ?)"
    # A gloss is read from the message: only where the message itself may be shown.
    gloss = glosses.error_gloss(error.type, error.message) if message else None
    after = f"\npiste : {gloss}" if gloss else ""
    if error.line:
        shown = f"\n  {error.line} | {error.text.strip()}" if error.text else ""
        return f"erreur ligne {error.line} — {text}{shown}{after}"
    return text + after


def variant_context(expect: Expect, hidden: bool = False) -> str:
    """How feedback names a variant: its description, and a shown (never a hidden) variant's inputs."""
    variant = expect.variant
    if variant is None:
        return ""
    if hidden or variant.hidden:
        return f"sur d'autres entrées ({variant.description})"
    inputs = " ; ".join(f"{name} = {value}" for name, value in variant.overrides)
    return f"sur d'autres entrées ({variant.description} : {inputs})"


@dataclass(frozen=True)
class Disclosure:
    """What a verdict may show: each can carry hidden things into a page (a hidden check's inputs,
    what a spliced program computed from the reference), so only what is public is shown."""

    expression: bool = True  # the expression checked; else its French description
    expected: bool = True  # the expected value (else only kinds and shapes of what differs)
    obtained: str = "all"  # what was obtained: "all", "shaped" (only with the expected shape), "none"
    messages: bool = True  # exception messages; else the exception's type and line only


OPEN = Disclosure()


def disclosure(expect: Expect, *, graded: bool, own_file: bool) -> Disclosure:
    """The rule. A hidden check is described, never shown, nor are values on hidden inputs. When
    grading, what a program computed reaches a page only from a public check on the course's inputs
    (asked first, before anything hidden reaches the process); exception messages only from the
    student's own file (a spliced program holds the reference's code and values)."""
    hidden_inputs = expect.hidden or (expect.variant is not None and expect.variant.hidden)
    if not graded:
        return Disclosure(expression=not expect.hidden, expected=not hidden_inputs,
                          obtained="none" if hidden_inputs else "all", messages=not hidden_inputs)
    first = expect.variant is None and not expect.hidden
    return Disclosure(expression=not expect.hidden, expected=not hidden_inputs,
                      obtained="shaped" if first else "none", messages=own_file and first)


def judge(expect: Expect, expected, unit: UnitResult, probe: ProbeResult, *, say: Disclosure = OPEN) -> Verdict:
    """Does one expectation hold? When not, why, within what `say` allows to be shown."""
    # A hidden variant stays a description: neither its inputs nor the values they give are shown.
    context = variant_context(expect, hidden=not say.expected)
    name = expect.name if say.expression else expect.description
    if not probe.evaluated or probe.error is not None:
        text, line = _unanswered(name, unit, probe, say)
        return Verdict(False, in_context(context, text), line)
    mismatch = compare.compare(expected, probe.value, decimals=expect.decimals, rtol=expect.rtol, atol=expect.atol)
    if mismatch is None:
        return Verdict(True)
    where = f" (élément {mismatch.where})" if mismatch.where else ""
    gloss = None
    if not say.expected:
        # Kinds, shapes and lengths show no value; anything else is only « valeur fausse ».
        text = f"{name} : {mismatch.reason if mismatch.structural else 'valeur fausse'}"
    elif say.obtained == "none":
        detail = mismatch.reason if mismatch.structural else "une autre valeur"
        text = f"{name} : attendu {compare.format_value(expected, expect.decimals)} — obtenu {detail}"
    elif say.obtained == "shaped" and not compare.same_shape(expected, probe.value):
        obtained = compare.decode(probe.value)
        # The reason names types and lengths; text the student's code produced is never echoed.
        detail = "" if compare.has_text(obtained) else f" — {mismatch.reason}"
        text = (f"{name} : attendu {compare.format_value(expected, expect.decimals)}, "
                f"obtenu {compare.describe_type(obtained)}{where}{detail}")
    elif mismatch.structural and compare.same_values(expected, probe.value):
        # The right numbers in another kind of value: said so, without writing them twice.
        text = f"{name}{where} : les bonnes valeurs, mais {mismatch.reason}"
        gloss = glosses.kind_gloss(compare.decode(expected, arrays=True), compare.decode(probe.value, arrays=True))
        text += f"\npiste : {gloss}" if gloss else ""
        return Verdict(False, in_context(context, text), kind="structure")
    else:
        shown_expected = compare.format_value(expected, expect.decimals, precise=mismatch.precise)
        shown_obtained = compare.format_value(probe.value, expect.decimals, precise=mismatch.precise)
        # "attendu 2, obtenu 3 — 3 au lieu de 2" says it twice: the reason only when it adds something.
        restated = not mismatch.where and mismatch.reason == f"{shown_obtained} au lieu de {shown_expected}"
        reason = "" if restated else f" — {mismatch.reason}"
        text = f"{name} : attendu {shown_expected}, obtenu {shown_obtained}{where}{reason}"
        gloss = glosses.value_gloss(compare.decode(expected), compare.decode(probe.value))
    text += (f"\npiste : {gloss}" if gloss else "") + (f"\n{expect.message}" if expect.message else "")
    return Verdict(False, in_context(context, text), kind="structure" if mismatch.structural else "value")


def _unanswered(name: str, unit: UnitResult, probe: ProbeResult, say: Disclosure) -> tuple[str, int | None]:
    """Why a probe gave no value (the run stopped, or the expression raised), and at which line."""
    def said(error) -> str:
        return describe_error(error, message=say.messages, numbers=say.obtained != "none")

    stopped, error = unit.error.line if unit.error else None, probe.error
    if not probe.evaluated:
        return (said(unit.error), stopped) if unit.status in (TIMEOUT, CRASH, SKIPPED) else ("non vérifié", None)
    if unit.status == TIMEOUT and error.kind == "timeout":
        return "non vérifié : " + said(unit.error), stopped
    if error.kind in ("timeout", "crash", "protocol"):
        return f"{name} : {error.message}", None
    if unit.status != "ok" and unit.error is not None and error.type == "NameError":
        return not_checked(unit.error, said), unit.error.line
    if is_blank_name_error(error):
        return f"le trou de la ligne {error.line} n'est pas encore rempli", error.line
    if error.type == "NameError" and error.line is None:
        found = f" ({error.message})" if say.messages and say.expression else ""
        return f"{name} : introuvable{found}", None
    return f"{name} : " + said(error), error.line


def in_context(context: str, text: str) -> str:
    return f"{context} : {text}" if context else text


# How a failed test reads to the student (hidden tests: never a value, never a message of the code).
SAID = {
    "assert": "ne passe pas",
    "reading": "ce que donne ton code ne permet pas de la vérifier ({type})",
}


def judge_test(result: TestResult, line: Callable[[int | None], int | None] = lambda n: n) -> Verdict | None:
    """Did a test function hold on the student's program, and what may a page say of it (None: skipped,
    it says nothing). `line` places a line of the program graded in the student's own file."""
    if result.outcome == "passed":
        return Verdict(True)
    if result.outcome == "skipped":
        return None
    label = result.test.label
    if result.outcome == "bug":  # on a copy: the test passes on the reference, these values took it elsewhere
        return Verdict(False, f"{label} : le test n'a pas pu se servir de ce que donne ton code", kind="error")
    if result.cause == "overrun":  # past its own bounds on the copy's values
        kind, spent = result.info.get("kind"), seconds(result.info.get("seconds"))
        said = ("a manqué de mémoire sur ce que donne ton code" if kind == "memory" else
                f"n'a pas fini sur ce que donne ton code (plus de {spent} de calcul)" if kind == "time" else
                "n'a pas fini sur ce que donne ton code (son processus a dû être arrêté)")
        return Verdict(False, f"{label} : le test {said}", kind="error")
    if result.cause == "student":
        where = line(result.info.get("line"))
        said = f"ton code lève {result.info.get('type') or 'une erreur'}" + (f" (ligne {where})" if where else "")
        return Verdict(False, f"{label} : {said}", where)
    if result.cause == "stopped":
        error = ErrorInfo(kind=str(result.info.get("kind") or "crash"), type=str(result.info.get("type") or ""),
                          message=str(result.info.get("message") or ""), line=line(result.info.get("line")))
        return Verdict(False, f"{label} : {describe_error(error, message=False)}", error.line)
    said = SAID.get(result.cause, SAID["assert"]).format(type=result.info.get("type") or "erreur")
    return Verdict(False, f"{label} : {said}", kind="value" if result.cause == "assert" else "error")


def incident(result: TestResult) -> str | None:
    """For the teacher, on a copy: a test that did not behave as on the reference (None: it did)."""
    where = f"{result.test.path}::{result.test.name} (trou « {result.test.blank} »)"
    if result.outcome == "bug":
        last = [line for line in result.detail.splitlines() if line.strip()][-3:]
        return (f"{where} : erreur du test lui-même sur cette copie, alors qu'il passe sur la solution — "
                f"compté faux pour la copie ; à vérifier : {' | '.join(last) or result.cause}")
    if result.cause == "overrun":
        said = {"memory": "a manqué de mémoire", "time": f"a dépassé {seconds(result.info.get('seconds'))} de calcul"
                }.get(result.info.get("kind"), str(result.info.get("message") or "n'a pas fini"))
        return f"{where} : {said} sur cette copie (compté faux pour elle)"
    return None
