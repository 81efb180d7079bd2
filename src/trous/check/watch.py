"""`trous watch`: re-check the current exercise whenever its file is saved, then move on. Events
(watchdog) when they work, and a poll all the time: on WSL, network drives and with some editors'
atomic saves, events never arrive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path


def signature(path: Path) -> tuple:
    try:
        info = path.stat()
        return (info.st_mtime_ns, info.st_size)
    except OSError:
        return (None, None)


class FileWatcher:
    def __init__(self, path: Path, interval: float = 0.5, use_events: bool = True):
        self.path = Path(path)
        self.interval = interval
        self._changed = threading.Event()
        self._observer = None
        if use_events:
            self._start_events()

    def _start_events(self) -> None:
        try:
            from watchdog.events import FileSystemEventHandler  # noqa: PLC0415
            from watchdog.observers import Observer  # noqa: PLC0415
        except ImportError:
            return
        target = str(self.path.resolve())
        changed = self._changed

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                paths = {getattr(event, "src_path", ""), getattr(event, "dest_path", "")}
                if target in {str(Path(p).resolve()) for p in paths if p}:
                    changed.set()

        try:
            observer = Observer()
            observer.schedule(Handler(), str(self.path.parent), recursive=False)
            observer.daemon = True
            observer.start()
            self._observer = observer
        except OSError:
            self._observer = None

    def wait(self, since: tuple | None = None, stop: Callable[[], bool] = lambda: False) -> bool:
        """Block until the file differs from `since` (its signature when last checked), or `stop()`."""
        before = signature(self.path) if since is None else since
        self._changed.clear()
        while not stop():
            if self._changed.wait(self.interval):  # an event, else a poll
                self._changed.clear()
                time.sleep(0.05)  # let the editor finish writing
            if signature(self.path) != before:
                time.sleep(0.05)
                return True
        return False

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
