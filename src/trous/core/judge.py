"""The judge: does one expectation hold on what a run of the student's program gave back, and what
may a page say of it. The self-check and the grade both call it: « juste » means the same in both."""

from __future__ import annotations

from dataclasses import dataclass

from .protocol import CRASH, SKIPPED, TIMEOUT, ProbeResult, UnitResult
from . import compare, glosses
from .checks import Expect


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
