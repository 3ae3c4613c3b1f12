"""Background tasks (gui/common/tasks.py): the work runs on a thread Python made, its result or its
exception comes back on the UI thread, and nothing comes back to an owner that is gone."""

import threading

from PySide6.QtWidgets import QWidget

from chattts_studio.gui.common.tasks import in_background


def test_work_runs_on_a_python_thread_and_the_answer_on_the_ui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A thread born outside Python (Qt's pool) enters Python through PyGILState_Ensure with a
    new thread state per task; with tracemalloc tracing (the memory tests) CPython 3.11 can
    crash there (found under gdb). Python's own threads show as threading.Thread, a foreign
    one as a _DummyThread."""
    seen: dict[str, object] = {}

    def work() -> int:
        seen["thread"] = threading.current_thread()
        return 42

    def done(value: object) -> None:
        seen["value"], seen["delivered on"] = value, threading.current_thread()

    in_background(work, done)
    qtbot.waitUntil(lambda: "value" in seen, timeout=10_000)
    worker = seen["thread"]
    assert not isinstance(worker, threading._DummyThread), worker  # type: ignore[attr-defined]
    assert worker is not threading.main_thread()
    assert seen["value"] == 42 and seen["delivered on"] is threading.main_thread()


def test_a_failure_reaches_failed_and_a_gone_owner_gets_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    got: list[object] = []
    release = threading.Event()

    def fail() -> None:
        raise OSError("disk gone")

    in_background(fail, got.append, lambda exc: got.append(("failed", str(exc))))
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    assert got == [("failed", "disk gone")]

    owner = QWidget()
    late: list[object] = []
    ran = threading.Event()

    def slow() -> str:
        release.wait(10)
        ran.set()
        return "late"

    in_background(slow, late.append, owner=owner)
    owner.deleteLater()
    qtbot.waitUntil(lambda: not _alive(owner), timeout=10_000)
    release.set()
    assert ran.wait(10)
    qtbot.wait(200)  # the queued answer has been handled (and dropped) by now
    assert late == []


def _alive(widget: QWidget) -> bool:
    from shiboken6 import isValid

    return isValid(widget)
