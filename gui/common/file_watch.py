"""A data file the window shows and other processes change (the speaker library, the pronunciation
dictionary): `changed` once it has changed on disk, so the panel reads it again and never keeps or
writes back a stale copy.

The folder is watched besides the file, since an atomic write replaces the file and ends a watch on
it. Events come in bursts, so they are gathered for a moment, and `changed` is emitted only when
the file's stamp differs from the last one seen."""

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

SETTLE_MS = 150  # a burst of events from one write ends well within this

Stamp = tuple[int, int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class FileWatch(QObject):
    changed = Signal()

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self._seen = _stamp(self.path)
        self.watcher = QFileSystemWatcher(self)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SETTLE_MS)
        self.watcher.fileChanged.connect(lambda _p: self.timer.start())
        self.watcher.directoryChanged.connect(lambda _p: self.timer.start())
        self.timer.timeout.connect(self._settled)
        self._watch()

    def _watch(self) -> None:
        """Watch the file (when there is one) and its folder, again after a replace."""
        watched = set(self.watcher.files()) | set(self.watcher.directories())
        for path in (self.path.parent, self.path):
            if str(path) not in watched and path.exists():
                self.watcher.addPath(str(path))

    def _settled(self) -> None:
        self._watch()
        stamp = _stamp(self.path)
        if stamp != self._seen:
            self._seen = stamp
            self.changed.emit()
