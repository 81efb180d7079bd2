"""The package's structure is the flow it implements, and stays so: the layers of pyproject.toml's
import-linter contract (each layer imports only those below it), and no import cycle between modules
anywhere in the package. Imports inside functions count as any other: one placed there to dodge a
cycle is still a cycle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Cycles left from before the layers, each removed with the code that makes it: none may be added.
KNOWN_CYCLES: list[set[str]] = []


def test_the_layers_contract_is_kept():
    done = subprocess.run([str(BIN / "lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def cycles(graph) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(group)
    return found


def test_no_module_imports_itself_back():
    found = cycles(grimp.build_graph("trous"))
    new = [sorted(c) for c in found if c not in KNOWN_CYCLES]
    assert new == []


def test_the_cycle_finder_finds_cycles():
    class Graph:  # a → b → c → a, c → d
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
        modules = set(edges)

        def find_modules_directly_imported_by(self, module):
            return self.edges[module]

    assert cycles(Graph()) == [{"a", "b", "c"}]
