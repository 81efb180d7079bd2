"""What a write of nbgrader's gradebook did, and what the terminal shows of it: written by
nbgrader.py, here or in the writing process (writing.py), read by both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.wording import count
from .overrides import Final


@dataclass
class WriteReport:
    """What a write of nbgrader's gradebook did (gradebook.py writes it, here or in the writing process)."""

    root: Path
    written: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment)
    problems: list[str] = field(default_factory=list)
    # (student, notebook) → what nbgrader's gradebook holds besides the autograder's scores: manual
    # scores from formgrader, extra credit, late penalty (overrides.py applies them)
    final: dict[tuple[str, str], Final] = field(default_factory=dict)


def say(report: WriteReport) -> WriteReport:
    """What the terminal shows of a write."""
    for problem in report.problems:
        print(f"nbgrader : {problem}")
    print(f"carnet de notes nbgrader : {count(len(report.written), 'copie enregistrée', 'copies enregistrées')} "
          f"dans {report.root / 'gradebook.db'}")
    return report
