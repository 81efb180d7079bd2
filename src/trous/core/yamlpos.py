"""Load YAML and remember the line of every value, so that errors can name it."""

from __future__ import annotations

from typing import Any

import yaml


class YamlError(Exception):
    def __init__(self, path: str, line: int | None, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line} : {message}" if line else f"{path} : {message}")


class _Loader(yaml.SafeLoader):
    pass


# libyaml's parser when PyYAML has it: the same constructors, a tenth of the time. Its messages are
# worded otherwise: on an error, the pure-Python parser reads the text again, to translate its own.
class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


def _no_duplicates(loader: _Loader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"la clé « {key} » apparaît deux fois (d'abord ligne {seen[key]})", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


for _loader in (_Loader, _FastLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def load(text: str, path: str, kinds: tuple = (_FastLoader, _Loader)) -> tuple[Any, dict[tuple, int]]:
    """The data, and {path of keys/indexes: line} for every node."""
    for kind in kinds:
        loader = kind(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                lines: dict[tuple, int] = {}
                _walk(node, (), lines)
                return loader.construct_document(node), lines
        except yaml.MarkedYAMLError as exc:
            if kind is _Loader:  # else said by the parser whose messages are translated
                mark = exc.problem_mark or exc.context_mark
                raise YamlError(path, mark.line + 1 if mark else None, _french(exc)) from None
        except yaml.YAMLError:
            if kind is _Loader:
                raise
        finally:
            loader.dispose()
    raise YamlError(path, 1, "le fichier est vide")


def _load_slowly(text: str, path: str) -> tuple[Any, dict[tuple, int]]:
    return load(text, path, (_Loader,))


def _walk(node, where: tuple, lines: dict[tuple, int]) -> None:
    lines[where] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[where + (key, "__key__")] = key_node.start_mark.line + 1
            _walk(value_node, where + (key,), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, where + (i,), lines)


def line_of(lines: dict[tuple, int], where: tuple) -> int | None:
    """The line of the deepest known node on `where` (a pydantic error location)."""
    where = tuple(where)
    while where:
        if where in lines:
            return lines[where]
        where = where[:-1]
    return lines.get(())


def _french(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or ""
    hints = {
        "found character '\\t' that cannot start any token": "tabulation interdite en YAML : indente avec des espaces",
        "mapping values are not allowed here": "« : » inattendu ; mets la valeur entre guillemets si elle contient « : »",
        "could not find expected ':'": "« : » manquant après une clé (ou guillemet non refermé)",
        "found unexpected end of stream": "fin de fichier inattendue (guillemet ou crochet non refermé ?)",
    }
    for english, french in hints.items():
        if english in problem:
            return f"YAML invalide : {french}"
    if "apparaît deux fois" in problem:
        return problem
    return f"YAML invalide : {problem or exc}"
