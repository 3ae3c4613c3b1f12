"""Reference cycles are collected on the UI thread while the window's worker thread exists
(gui/common/garbage.py): a cycle holding a Qt object collected on the worker thread deadlocks
PySide.
The real window, offscreen, with the demo weights."""

import gc
import threading
import time
from typing import ClassVar

import pytest

from chattts_studio.core.engine import pipeline
from chattts_studio.gui.common import garbage


class Cycle:
    """Garbage that only a collection frees; says on which thread it was freed."""

    freed_on: ClassVar[list[threading.Thread]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        Cycle.freed_on.append(threading.current_thread())


pytestmark = pytest.mark.window(ready="loaded")


@pytest.fixture(autouse=True)
def no_cycle_freed() -> None:
    """Each test counts the cycles freed since it began."""
    Cycle.freed_on = []


def from_another_thread(work) -> threading.Thread:  # type: ignore[no-untyped-def]
    thread = threading.Thread(target=work, name="not-the-ui")
    thread.start()
    return thread


def test_the_worker_releasing_memory_collects_on_the_ui_thread(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    assert gc.isenabled()
    window = make_window()
    assert garbage.collecting_on_ui_thread() and not gc.isenabled()
    # The imports are frozen out of collections, the model loaded after them is not.
    assert gc.get_freeze_count() > 100_000
    model = window.host.worker.engine.model
    assert model is not None and any(o is model for o in gc.get_objects())
    answers: list[object] = []

    def unload_like_the_worker() -> None:
        Cycle()
        pipeline.release_memory("cpu")  # what Engine.unload calls
        answers.append(garbage._garbage.collect() if garbage._garbage else None)

    thread = from_another_thread(unload_like_the_worker)
    qtbot.waitUntil(lambda: len(answers) == 1, timeout=10_000)  # the UI thread runs its loop
    thread.join()
    assert Cycle.freed_on == [threading.main_thread()]
    assert answers == [True]
    began = time.perf_counter()
    window.close()  # the model is unloaded on this, the UI, thread: collected here, no wait
    assert time.perf_counter() - began < garbage.WAIT_S
    assert gc.isenabled() and not garbage.collecting_on_ui_thread()  # Python's own again
    assert gc.get_freeze_count() == 0


def test_the_ui_thread_collects_on_a_timer(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    make_window()
    for _ in range(2000):  # past the first generation's threshold, as normal work would be
        Cycle()
    qtbot.waitUntil(lambda: len(Cycle.freed_on) == 2000, timeout=5 * garbage.INTERVAL_S * 1000)
    assert set(Cycle.freed_on) == {threading.main_thread()}


def test_a_busy_ui_thread_is_not_waited_for_long(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    make_window()
    monkeypatch.setattr(garbage, "WAIT_S", 0.2)
    answers: list[object] = []

    def ask() -> None:
        Cycle()
        answers.append(garbage._garbage.collect() if garbage._garbage else None)

    from_another_thread(ask).join(timeout=5)  # the UI thread waits here: no events run
    assert answers == [False]
    assert Cycle.freed_on == []  # not on the asking thread either
    qtbot.waitUntil(lambda: Cycle.freed_on == [threading.main_thread()], timeout=5_000)
