"""What a test function of a course's test file is, and who answers its `eleve` fixture: shared by
the graders' pytest plugin, the engine's test worker and `pytest graders/`'s runner (author/copie.py),
which plugs in through a hook (the plugin never imports it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pytest

INFO = pytest.StashKey["TestInfo"]()
CAUSE = pytest.StashKey[tuple]()
BACKEND = pytest.StashKey[object]()


def set_backend(config, backend) -> None:
    """Who answers `eleve`: an object with `eleve(info, path) -> Eleve`."""
    config.stash[BACKEND] = backend


def skip_reason(report) -> str:
    """Why pytest skipped a test, from its report."""
    return str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)


class Hooks:
    """The hook a plugin implements to run the student's program for `pytest graders/`."""

    @pytest.hookspec(firstresult=True)
    def pytest_trous_backend(self, config):
        """The backend answering `eleve` when no worker set one (author/copie.py's runner)."""


@dataclass(frozen=True)
class TestInfo:
    """A test function of a course's test file, as grading sees it."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    nodeid: str
    path: str  # relative to the course's root
    name: str  # the item's name (with its parameters' ids)
    exercise: str | None
    blank: str | None
    hidden: bool
    description: str  # French: what a student reads of it (never its parameters)
    problem: str | None = None  # why grading refuses it

    @property
    def label(self) -> str:
        return f"{'vérification cachée' if self.hidden else 'vérification'} « {self.description} »"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "TestInfo":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})
