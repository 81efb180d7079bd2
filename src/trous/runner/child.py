"""Inside the process that runs a student's code: run units, evaluate probes, report events.

This module is the only place where student code executes. It reports on its event pipe, one JSON
line per event; the supervising process (job.py) owns the clock and kills this process when a unit
runs too long, so nothing here has to be trusted to stop.
"""

from __future__ import annotations

import ast
import builtins
import json
import linecache
import os
import sys
import traceback

from .encode import encode
from .protocol import Unit

_write = os.write
_dumps = json.dumps


_owner = {"pid": None}  # the process that speaks for the runner; a fork of it must stay silent


def emit(fd: int, event: dict) -> None:
    if _owner["pid"] is not None and os.getpid() != _owner["pid"]:
        # A copy made by the student's own os.fork() came back into the runner: it must not report.
        os._exit(0)
    data = (_dumps(event, allow_nan=False) + "\n").encode()
    while data:
        written = _write(fd, data)
        data = data[written:]


def _where(exc: BaseException, filename: str) -> tuple[int | None, str | None]:
    """The innermost frame of the student's own file: where the student should look."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno, (exc.text or "").rstrip("\n") or None
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            line = lineno
    if line is None:
        return None, None
    return line, linecache.getline(filename, line).rstrip("\n") or None


def describe(exc: BaseException, filename: str) -> dict:
    line, text = _where(exc, filename)
    if isinstance(exc, SyntaxError):
        kind, message = "syntax", exc.msg or "syntaxe invalide"
    elif isinstance(exc, MemoryError):
        kind, message = "memory", str(exc)
    elif isinstance(exc, SystemExit):
        kind, message = "exit", f"sys.exit({exc.code!r})" if exc.code is not None else "sys.exit()"
    else:
        kind = "exception"
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - a hostile __str__
            message = ""
    try:
        type_name = type(exc).__name__
    except Exception:  # noqa: BLE001
        type_name = "Exception"
    return {"kind": kind, "type": type_name[:200], "message": message[:2000], "line": line, "text": text}


_programs: dict[tuple, object] = {}
OVERRIDES, OVERRIDE = "__trous_ov__", "__trous_override__"


def compile_unit(unit: Unit):
    """Parse and compile once per program: variants only change which values are overridden.

    Each top-level `name = expr` that a variant may override becomes
    `name = __trous_override__("name") if "name" in __trous_ov__ else expr`, so one code object
    serves every variant of a program. Raises SyntaxError, or LookupError for an unknown name.
    """
    names = frozenset(name for name, _ in unit.overrides)
    key = (unit.source, unit.filename, names)
    if key not in _programs:
        tree = ast.parse(unit.source, unit.filename)
        seen = set()
        for node in tree.body:
            if (isinstance(node, (ast.Assign, ast.AnnAssign)) and _target_name(node) in names
                    and node.value is not None):
                name = _target_name(node)
                test = ast.Compare(ast.Constant(name), [ast.In()], [ast.Name(OVERRIDES, ast.Load())])
                value = ast.Call(ast.Name(OVERRIDE, ast.Load()), [ast.Constant(name)], [])
                wrapped = ast.IfExp(test, value, node.value)
                _place(test, node.value)
                _place(value, node.value)
                _place(wrapped, node.value)
                node.value = wrapped
                seen.add(name)
        missing = sorted(names - seen)
        if missing:
            raise LookupError(", ".join(missing))
        _programs[key] = compile(tree, unit.filename, "exec", dont_inherit=True)
    return _programs[key]


def _namespace(unit: Unit) -> dict:
    namespace = {"__name__": unit.module_name, "__file__": unit.filename, "__builtins__": builtins}
    if unit.overrides:
        overrides = dict(unit.overrides)
        namespace[OVERRIDES] = overrides
        namespace[OVERRIDE] = lambda name: eval(_code(overrides[name], "eval", "<variante>"), namespace)  # noqa: S307
    return namespace


def _place(new: ast.AST, old: ast.AST) -> None:
    """Give new nodes the location of what they replace (cheaper than fixing the whole tree)."""
    for node in ast.walk(new):
        if hasattr(node, "lineno") and node is not new and getattr(node, "end_lineno", None):
            continue  # nodes of the original program keep their own place
        if "lineno" in node._attributes:
            node.lineno, node.col_offset = old.lineno, old.col_offset
            node.end_lineno, node.end_col_offset = old.end_lineno, old.end_col_offset


_compiled: dict[tuple[str, str], object] = {}


def _code(source: str, mode: str, filename: str = "<vérification>"):
    # The same probes come back for every unit and every student: compile each once per process.
    key = (source, mode, filename)
    if key not in _compiled:
        _compiled[key] = compile(source, filename, mode, dont_inherit=True)
    return _compiled[key]


def _target_name(node) -> str | None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    return None


_current = {"index": -1, "filename": "", "running": False}


class TimeoutInterrupt(BaseException):
    """Raised into the student's code when its time is up, so that what it computed so far can
    still be checked. Code that swallows it is killed a moment later anyway."""


def _report_where(events: int):
    """On SIGUSR1 (time is up), say which line of the student's file is running, then interrupt it."""
    def handler(signum, frame):
        line = None
        while frame is not None:
            if frame.f_code.co_filename == _current["filename"]:
                line = frame.f_lineno
                break
            frame = frame.f_back
        emit(events, {"ev": "where", "i": _current["index"], "line": line})
        if _current["running"]:
            raise TimeoutInterrupt()
    return handler


def run_units(units: list[tuple[int, Unit]], events: int, first_probe: int = 0) -> None:
    """Run each (index, unit), reporting start, module, probe and end events."""
    import signal  # noqa: PLC0415

    signal.signal(signal.SIGUSR1, _report_where(events))
    _owner["pid"] = os.getpid()
    for position, (index, unit) in enumerate(units):
        skip = first_probe if position == 0 else 0
        _current.update(index=index, filename=unit.filename)
        emit(events, {"ev": "start", "i": index})
        lines = unit.source.splitlines(keepends=True)
        linecache.cache[unit.filename] = (len(unit.source), None, lines, unit.filename)
        namespace = _namespace(unit)
        try:
            code = compile_unit(unit)
        except SyntaxError as exc:
            module = {"status": "error", "error": describe(exc, unit.filename)}
            code = None
        except LookupError as exc:
            module = {"status": "error", "error": {
                "kind": "override", "type": "LookupError",
                "message": f"variable(s) introuvable(s) au premier niveau du fichier : {exc}"}}
            code = None
        if code is not None:
            try:
                _current["running"] = True
                exec(code, namespace)  # noqa: S102 - this is the sandboxed runner
                _current["running"] = False
                module = {"status": "ok"}
            except TimeoutInterrupt as exc:
                _current["running"] = False
                module = {"status": "timeout", "error": {**describe(exc, unit.filename), "kind": "timeout"}}
            except SystemExit as exc:
                module = {"status": "exit", "error": describe(exc, unit.filename)}
            except BaseException as exc:  # noqa: BLE001 - report anything the program raised
                _current["running"] = False
                module = {"status": "error", "error": describe(exc, unit.filename)}
        _flush()
        emit(events, {"ev": "module", "i": index, **module})
        for j, probe in enumerate(unit.probes):
            if j < skip:
                continue
            emit(events, {"ev": "probe-start", "i": index, "j": j})
            emit(events, {"ev": "probe", "i": index, "j": j, "result": _probe(probe, namespace, unit.filename)})
        _flush()
        emit(events, {"ev": "end", "i": index})


def _probe(probe, namespace: dict, filename: str) -> dict:
    try:
        _current["running"] = True
        if probe.setup:
            exec(_code(probe.setup, "exec"), namespace)  # noqa: S102
        value = eval(_code(probe.expr, "eval"), namespace)  # noqa: S307
        _current["running"] = False
        return {"value": encode(value)}
    except TimeoutInterrupt as exc:
        _current["running"] = False
        return {"error": {**describe(exc, filename), "kind": "timeout"}}
    except SystemExit as exc:
        return {"error": describe(exc, filename)}
    except BaseException as exc:  # noqa: BLE001
        _current["running"] = False
        return {"error": describe(exc, filename)}
    finally:
        _current["running"] = False
        _flush()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the student may have replaced or closed them
            pass
