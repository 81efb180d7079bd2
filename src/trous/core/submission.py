"""What a grading run receives: one `Submission` per student, whatever its origin (folder, Moodle
archive, nbgrader's submitted notebooks), with what else its copy held (`ignored`, bounded per reason,
the rest counted in `unlisted`) and which file was graded for each exercise (`origins`). A class's
bytes are never all held: the intake leaves each copy's files where they are (`Stored`), read again
when the copy is graded and dropped once it is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class IgnoredFile:
    path: str  # in the student's copy (a folder ends with "/"); for a whole input, the entry's name
    reason: str  # French: why it is not graded
    exercise: str = ""  # the exercise it could have been (a renamed copy, an older version…)
    # False for what every copy holds and nobody needs to look at (the course's own files, caches, a
    # README): still named in the pages and the class report, only counted in the terminal.
    notable: bool = True


# How to read an exercise's file again (the intake's bounds), or its bytes themselves when they cannot be
# read again cheaply (a member of the student's own archive).
Again = Callable[[], "bytes | None"] | bytes


class Stored(Mapping):
    """A copy's files, read again at each access and never kept. Each file's SHA-256 (what the
    gradebook compares) is the intake's; a file changed or gone since has its digest follow what is
    read now, so that the grade recorded is always that of the bytes graded."""

    __slots__ = ("_found",)

    def __init__(self, found: dict[str, tuple[bytes, Again] | None]):
        self._found = found  # exercise id → (SHA-256 of the bytes, how to read them), None when absent

    def __getitem__(self, exercise_id: str) -> bytes | None:
        found = self._found[exercise_id]
        if found is None:
            return None
        sha, again = found
        data = again() if callable(again) else again
        if data is None:
            self._found[exercise_id] = None  # gone since: graded (and recorded) as absent
        elif hashlib.sha256(data).digest() != sha:
            self._found[exercise_id] = (hashlib.sha256(data).digest(), again)
        return data

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)

    def sha256(self, exercise_id: str) -> bytes | None:
        found = self._found.get(exercise_id)
        return None if found is None else found[0]

    def only(self, exercise_ids: Iterable[str]) -> "Stored":
        return Stored({i: self._found.get(i) for i in exercise_ids})

    def clear(self) -> None:
        self._found.clear()

    def __reduce__(self):
        return dict, (dict(self),)  # sent elsewhere (a Dask worker): the bytes themselves, read now


@dataclass(frozen=True)
class Submission:
    student: str  # identifier used in the gradebook and the exports (folder name, Moodle id…)
    files: Mapping[str, bytes | None]  # exercise id → the file's bytes, None when absent (a dict, or Stored)
    source: str = ""  # where it came from, for messages (a path, "moodle.zip:Alice_123")
    name: str = ""  # display name when known (Moodle's full name)
    warnings: tuple[str, ...] = field(default_factory=tuple)  # intake notes shown in the feedback
    ignored: tuple[IgnoredFile, ...] = field(default_factory=tuple)  # files not graded, named
    unlisted: tuple[tuple[str, int], ...] = field(default_factory=tuple)  # (reason, files not named)
    origins: dict[str, str] = field(default_factory=dict)  # exercise id → the file graded for it
    # The assignments this copy hands in, when its input says so (nbgrader's submitted/<student>/<devoir>/);
    # None: read from the files it holds (grade/assignments.py).
    assignments: tuple[str, ...] | None = None

    @property
    def digest(self) -> str:
        """Unchanged files, same digest (re-runs skip them); kept when the bytes go (`release`)."""
        if "_digest" in self.__dict__:
            return self.__dict__["_digest"]
        stored = isinstance(self.files, Stored)
        h = hashlib.sha256()
        for exercise_id in sorted(self.files):
            if stored:
                sha = self.files.sha256(exercise_id)
            else:
                data = self.files[exercise_id]
                sha = None if data is None else hashlib.sha256(data).digest()
            h.update(exercise_id.encode() + b"\0")
            h.update(b"<absent>" if sha is None else sha)
        return h.hexdigest()

    def only(self, exercise_ids: Iterable[str]) -> Mapping[str, bytes | None]:
        """Its files restricted to these exercises, nothing read."""
        if isinstance(self.files, Stored):
            return self.files.only(exercise_ids)
        return {i: self.files.get(i) for i in exercise_ids}

    def release(self) -> None:
        """Forget the files once the copy is graded (or skipped); what the reports need stays."""
        self.__dict__["_digest"] = self.digest  # frozen: set beside the fields, as a cached property is
        self.files.clear()

    def report(self) -> dict:
        """The `intake` part of results.json."""
        return {
            "files": dict(self.origins),
            "notes": list(self.warnings),
            "ignored": [{"path": i.path, "reason": i.reason, "exercise": i.exercise or None} for i in self.ignored],
            "unlisted": [{"reason": reason, "count": count} for reason, count in self.unlisted],
        }
