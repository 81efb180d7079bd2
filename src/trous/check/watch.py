"""`trous watch` waits for a save: events (watchdog) when they work, and a poll all the time: on WSL,
network drives and with some editors' atomic saves, events never arrive."""

from __future__ import annotations

import threading
import time
from pathlib import Path


def signature(path: Path) -> tuple:
    try:
        info = path.stat()
        return (info.st_mtime_ns, info.st_size)
    except OSError:
        return (None, None)


def wait_for_save(path: Path, since: tuple, interval: float = 0.5, use_events: bool = True) -> None:
    """Block until the file differs from `since` (its signature when last checked)."""
    changed = threading.Event()
    observer = _observer(Path(path), changed) if use_events else None
    try:
        while True:
            if changed.wait(interval):  # an event, else a poll
                changed.clear()
                time.sleep(0.05)  # let the editor finish writing
            if signature(path) != since:
                time.sleep(0.05)
                return
    finally:
        if observer is not None:
            observer.stop()


def _observer(path: Path, changed: threading.Event):
    try:
        from watchdog.events import FileSystemEventHandler  # noqa: PLC0415
        from watchdog.observers import Observer  # noqa: PLC0415
    except ImportError:
        return None
    target = str(path.resolve())

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event):
            paths = {getattr(event, "src_path", ""), getattr(event, "dest_path", "")}
            if target in {str(Path(p).resolve()) for p in paths if p}:
                changed.set()

    try:
        observer = Observer()
        observer.schedule(Handler(), str(path.parent), recursive=False)
        observer.daemon = True
        observer.start()
    except OSError:
        return None
    return observer
