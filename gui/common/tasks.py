"""Short tasks off the UI thread, on a pool of Python threads: exports, model checks, draft writes
and segment counts. Each result or exception comes back to a callback on the UI thread.

Python's threads, not Qt's pool: a Qt pool thread enters Python with a fresh thread state per
task, which can crash CPython 3.11 under tracemalloc (docs/architecture.md, "Short tasks on
Python's threads"). Callbacks hold widgets, so they never leave the UI thread: a task carries
only its number and its work, and a callback whose owner is destroyed is dropped with it."""

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

from PySide6.QtCore import QObject, QThread, Signal, Slot
from shiboken6 import isValid

Deliver = Callable[[object, bool], None]
T = TypeVar("T")  # what a task's work returns and its `done` takes


class _Relay(QObject):
    """One for the app, living on the UI thread: a pool thread emits `ended` with its task's
    number and outcome, Qt queues it to this thread, the callback waiting under it runs."""

    ended = Signal(int, bool, object)  # number, ok, result or exception

    def __init__(self) -> None:
        super().__init__()
        self.waiting: dict[int, Deliver] = {}
        self._owned: dict[int, set[int]] = {}  # id(owner): numbers of its waiting tasks
        self._numbers = itertools.count(1)
        self.ended.connect(self._deliver)

    def add(self, deliver: Deliver, owner: QObject | None) -> int:
        number = next(self._numbers)
        self.waiting[number] = deliver
        if owner is not None:
            key = id(owner)
            if key not in self._owned:
                self._owned[key] = set()
                owner.destroyed.connect(lambda *_args, key=key: self._forget(key))
            self._owned[key].add(number)
        return number

    def _forget(self, key: int) -> None:
        for number in self._owned.pop(key, set()):
            self.waiting.pop(number, None)

    @Slot(int, bool, object)
    def _deliver(self, number: int, ok: bool, value: object) -> None:
        deliver = self.waiting.pop(number, None)
        for numbers in self._owned.values():
            numbers.discard(number)
        if deliver is not None:
            deliver(value, ok)


_relay: _Relay | None = None
_pool: ThreadPoolExecutor | None = None


def pool() -> ThreadPoolExecutor:
    """The app's task threads (as many as Qt's pool would have had), made on first use."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max(2, QThread.idealThreadCount()), "task")
    return _pool


def _run(work: Callable[[], object], number: int, relay: _Relay) -> None:
    try:
        value, ok = work(), True
    except Exception as exc:
        exc.__traceback__ = None  # its frames may hold large arrays
        value, ok = exc, False
    del work  # nothing of the task outlives it on this thread
    relay.ended.emit(number, ok, value)


def in_background(
    work: Callable[[], T],
    done: Callable[[T], None],
    failed: Callable[[Exception], None] | None = None,
    owner: QObject | None = None,
) -> None:
    """Run `work` on the thread pool; `done(result)` or `failed(exception)` runs on this
    (the UI) thread once it ends, unless `owner` was destroyed by then. Without `failed`, an
    exception is raised there (a bug: Qt prints it, the app's excepthook says it). `work`
    must hold no widget."""
    global _relay
    if _relay is None or not isValid(_relay):
        _relay = _Relay()

    def deliver(value: object, ok: bool) -> None:
        if owner is not None and not isValid(owner):
            return  # the widget it was for is gone (a closed window)
        if ok:
            done(cast(T, value))  # what `work` returned, through the queued signal
            return
        assert isinstance(value, Exception)  # what `work` raised (_run)
        if failed is None:
            raise value
        failed(value)

    pool().submit(_run, work, _relay.add(deliver, owner), _relay)
