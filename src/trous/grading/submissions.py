"""What a grading run receives: one `Submission` per student, whatever its origin (a folder per
student, a Moodle archive, nbgrader's submitted notebooks). Intake modules produce these; the
engine and the gradebook consume them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Submission:
    student: str  # identifier used in the gradebook and the exports (folder name, Moodle id…)
    files: dict[str, bytes | None]  # exercise id → the file's bytes, None when absent
    source: str = ""  # where it came from, for messages (a path, "moodle.zip:Alice_123")
    name: str = ""  # display name when known (Moodle's full name)
    warnings: tuple[str, ...] = field(default_factory=tuple)  # intake notes shown in the feedback

    @property
    def digest(self) -> str:
        """Identifies the content: unchanged files, same digest (re-runs skip them)."""
        h = hashlib.sha256()
        for exercise_id in sorted(self.files):
            data = self.files[exercise_id]
            h.update(exercise_id.encode() + b"\0")
            h.update(b"<absent>" if data is None else hashlib.sha256(data).digest())
        return h.hexdigest()
