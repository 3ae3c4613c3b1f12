"""What each test's teardown checks of Qt: its messages while the fixtures close windows
(failed as pytest-qt fails them during the call), pytest-qt's signal timer stopped on its own
thread, and the top-level widgets a test left, deleted while their Python side is whole."""

import re

import pytest

_QT_LEVELS = {"DEBUG": 0, "INFO": 4, "WARNING": 1, "CRITICAL": 2}  # QtMsgType values
_QT_LEVEL_ORDER = ["DEBUG", "INFO", "WARNING", "CRITICAL"]


class TeardownQtLog:
    """Qt messages during one test's teardown, failed by pytest-qt's own rule: its
    qt_log_level_fail and qt_log_ignore settings and markers (no_qt_log turns it off)."""

    def __init__(self, level: str, ignore: list[str]) -> None:
        from PySide6.QtCore import qInstallMessageHandler

        failing = _QT_LEVEL_ORDER[_QT_LEVEL_ORDER.index(level) :]
        self._failing_types = {_QT_LEVELS[name] for name in failing} | {3}  # and QtFatalMsg
        self._ignore = [re.compile(pattern) for pattern in ignore]
        self.messages: list[str] = []
        self._previous = qInstallMessageHandler(self._handle)

    @classmethod
    def start(cls, item: pytest.Item) -> "TeardownQtLog | None":
        import sys

        if "PySide6.QtCore" not in sys.modules or item.get_closest_marker("no_qt_log"):
            return None
        marker = item.get_closest_marker("qt_log_level_fail")
        level = marker.args[0] if marker else item.config.getini("qt_log_level_fail")
        if level not in _QT_LEVELS:  # "NO": pytest-qt fails on nothing
            return None
        ignore = list(item.config.getini("qt_log_ignore"))
        marker = item.get_closest_marker("qt_log_ignore")
        if marker:
            ignore = (ignore if marker.kwargs.get("extend", True) else []) + list(marker.args)
        return cls(level, ignore)

    def _handle(self, msg_type, context, message) -> None:  # type: ignore[no-untyped-def]
        import sys

        line = f"{msg_type.name}: {message}"
        print(line, file=sys.stderr)  # shown with the test's teardown output, as before
        if int(getattr(msg_type, "value", msg_type)) not in self._failing_types:
            return
        if not any(pattern.search(message) for pattern in self._ignore):
            self.messages.append(line)

    def stop(self) -> list[str]:
        """Qt's handler as it was; the messages that fail the test."""
        from PySide6.QtCore import qInstallMessageHandler

        qInstallMessageHandler(self._previous)
        return self.messages


def _stop_signal_timer_on_its_thread() -> None:
    """pytest-qt's waitSignal stops its timeout timer in the slot the awaited signal calls;
    for a worker thread's signal (window.host.worker.finished) that runs on the worker
    thread, and Qt warns "QObject::killTimer: Timers cannot be stopped from another thread".
    The timer is stopped on its own thread instead, as pytest-qt's open pull request 649
    does; without this, every waitSignal on a worker's signal fails the test. From that thread
    the loop's quit is queued too: a direct quit() that comes after wait() looked for the signal
    and before its loop runs is lost, and with the timer stopped the wait never ended."""
    try:
        from pytestqt import wait_signal
    except ImportError:  # pytest-qt absent: nothing to mend
        return
    base = wait_signal._AbstractSignalBlocker
    if getattr(base, "_timer_stopped_on_its_thread", False):
        return

    def _cleanup(self) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtCore import QMetaObject, Qt, QThread

        self._timeout_message = self._get_timeout_error_message()
        if self._timer.thread() == QThread.currentThread():
            self._timer.stop()
        else:
            QMetaObject.invokeMethod(self._timer, "stop", Qt.ConnectionType.QueuedConnection)
            QMetaObject.invokeMethod(self._loop, "quit", Qt.ConnectionType.QueuedConnection)

    base._cleanup = _cleanup  # type: ignore[method-assign]
    base._timer_stopped_on_its_thread = True  # type: ignore[attr-defined]


_stop_signal_timer_on_its_thread()


def delete_leftover_widgets() -> None:
    """After each test, after its fixtures: the top-level widgets it left (a panel made without
    a window, a window closed but still referenced) are deleted now, C++ side first, while their
    Python side is whole. Left to a later garbage collection, a pyqtgraph plot's scene is torn
    down after gc has cleared the Python objects its overrides use, and PySide crashes (seen: a
    segfault in a core test after the GUI tests, in QGraphicsWidget's destructor)."""
    import sys

    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        return
    leftovers = [w for w in QApplication.topLevelWidgets() if w.parent() is None]
    if not leftovers:
        return
    for widget in leftovers:
        host = getattr(widget, "host", None)
        if host is not None and host.worker_thread.isRunning():
            widget.close()  # a window's worker thread must end before the window goes
        widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    import gc

    gc.collect()
