"""What a grading run receives: one `Submission` per student, whatever its origin (a folder per
student, a Moodle archive, nbgrader's submitted notebooks). Besides the exercises' bytes, it says
what else its copy held (`ignored`, bounded per reason, the rest counted in `unlisted`) and which
file was graded for each exercise (`origins`), for the feedback page, results JSON and summary.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class IgnoredFile:
    path: str  # in the student's copy (a folder ends with "/"); for a whole input, the entry's name
    reason: str  # French: why it is not graded
    exercise: str = ""  # the exercise it could have been (a renamed copy, an older version…)
    # False for what every copy holds and nobody needs to look at (the course's own files, caches, a
    # README): still named in the pages and the class report, only counted in the terminal.
    notable: bool = True


@dataclass(frozen=True)
class Submission:
    student: str  # identifier used in the gradebook and the exports (folder name, Moodle id…)
    files: dict[str, bytes | None]  # exercise id → the file's bytes, None when absent
    source: str = ""  # where it came from, for messages (a path, "moodle.zip:Alice_123")
    name: str = ""  # display name when known (Moodle's full name)
    warnings: tuple[str, ...] = field(default_factory=tuple)  # intake notes shown in the feedback
    ignored: tuple[IgnoredFile, ...] = field(default_factory=tuple)  # files not graded, named
    unlisted: tuple[tuple[str, int], ...] = field(default_factory=tuple)  # (reason, files not named)
    origins: dict[str, str] = field(default_factory=dict)  # exercise id → the file graded for it
    # The assignments this copy hands in, when its input says so (nbgrader's submitted/<student>/<devoir>/);
    # None: read from the files it holds (grade/assignments.py).
    assignments: tuple[str, ...] | None = None

    @functools.cached_property
    def digest(self) -> str:
        """Identifies the content: unchanged files, same digest (re-runs skip them). Computed once:
        it outlives the bytes (`release`)."""
        h = hashlib.sha256()
        for exercise_id in sorted(self.files):
            data = self.files[exercise_id]
            h.update(exercise_id.encode() + b"\0")
            h.update(b"<absent>" if data is None else hashlib.sha256(data).digest())
        return h.hexdigest()

    def release(self) -> None:
        """Forget the files' bytes once the copy is graded (or skipped): a class's copies are never all
        held at once. What the reports need (digest, origins, notes, files not graded) stays."""
        self.digest  # noqa: B018 - computed while the bytes are here
        self.files.clear()

    @property
    def ignored_total(self) -> int:
        return len(self.ignored) + sum(n for _, n in self.unlisted)

    def report(self) -> dict:
        """The `intake` part of results.json (see results.schema.json)."""
        return {
            "files": dict(self.origins),
            "notes": list(self.warnings),
            "ignored": [{"path": i.path, "reason": i.reason, "exercise": i.exercise or None} for i in self.ignored],
            "unlisted": [{"reason": reason, "count": count} for reason, count in self.unlisted],
        }
