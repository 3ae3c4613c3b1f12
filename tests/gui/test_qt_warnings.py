"""The GUI suite's rule: a Qt warning (from the test's call or from its teardown, where windows
close) or an exception nobody caught fails the test; only the offscreen platform's own
messages are let through. Checked in a pytest run of its own, under the project's settings."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

INNER = '''
import threading

from PySide6.QtCore import QObject, QThread, Signal, qWarning


def test_a_warning_in_the_call(qtbot):
    qWarning("a warning from our code")


def test_the_platform_talking_about_itself(qtbot):
    qWarning("This plugin does not support propagateSizeHints()")
    qWarning("This plugin does not support raise()")


def test_a_warning_while_closing(qtbot, request):
    request.addfinalizer(lambda: qWarning("a warning while the window closes"))


class Worker(QObject):
    done = Signal()


def test_waiting_for_a_worker_threads_signal(qtbot):
    """qtbot.waitSignal on a signal emitted on another thread (as a window's worker does)
    adds no warning of its own: pytest-qt alone warns "QObject::killTimer" here."""
    thread = QThread()
    worker = Worker()
    worker.moveToThread(thread)  # pytest-qt's slot for the signal then runs on `thread`
    thread.start()
    try:
        with qtbot.waitSignal(worker.done, timeout=10_000):
            threading.Timer(0.2, worker.done.emit).start()
    finally:
        thread.quit()
        thread.wait()
'''


def test_a_qt_warning_fails_the_test_and_platform_noise_does_not(tmp_path: Path) -> None:
    inner = tmp_path / "test_inner.py"
    inner.write_text(INNER)
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conftest", "-rA"),
            *("-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path), str(inner)),
        ],
        cwd=tmp_path,
        env={**_env(), "PYTHONPATH": str(REPO / "tests")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert "FAILED test_inner.py::test_a_warning_in_the_call" in out, out
    assert "a warning from our code" in out
    assert "PASSED test_inner.py::test_the_platform_talking_about_itself" in out, out
    assert "ERROR test_inner.py::test_a_warning_while_closing" in out, out
    assert "a warning while the window closes" in out
    assert "PASSED test_inner.py::test_waiting_for_a_worker_threads_signal" in out, out
    assert run.returncode == 1


def test_the_rule_is_in_the_projects_settings(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getini("qt_log_level_fail") == "WARNING"
    ignore = pytestconfig.getini("qt_log_ignore")
    assert ignore, "the offscreen platform's messages are listed"
    for ours in (
        "QObject::killTimer: Timers cannot be stopped from another thread",
        "QObject::startTimer: Timers cannot be started from another thread",
        "QObject: Cannot create children for a parent that is in a different thread.",
        "QPainter::begin: Paint device returned engine == 0, type: 1",
    ):
        assert not any(re.search(pattern, ours) for pattern in ignore), ours


def test_an_exception_left_in_a_thread_fails_a_gui_test(request: pytest.FixtureRequest) -> None:
    filters = [m.args[0] for m in request.node.iter_markers("filterwarnings")]
    assert "error::pytest.PytestUnhandledThreadExceptionWarning" in filters
    assert "error::pytest.PytestUnraisableExceptionWarning" in filters


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


def test_a_thread_s_signal_just_before_the_wait_runs_still_ends_it(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The signal comes from another thread after waitSignal looked for it and before its loop
    runs (a job that ends as the test releases it): the wait ends at once. It used to wait for
    ever: the direct quit() was lost before exec(), and the timeout timer had been stopped."""
    import threading
    import time

    from PySide6.QtCore import QMetaObject, QObject, Qt, QThread, Signal
    from pytestqt.qt_compat import qt_api

    class Source(QObject):
        fired = Signal()

    thread = QThread()
    source = Source()
    source.moveToThread(thread)  # pytest-qt's slot then runs on `thread`, as for a worker's
    thread.start()
    real_exec = qt_api.exec

    def exec_after_the_signal(loop, *args):  # type: ignore[no-untyped-def]
        emitter = threading.Thread(target=source.fired.emit)
        emitter.start()
        emitter.join()
        time.sleep(0.5)  # the slot has run on `thread` before the loop below starts
        # A rescue, so the old behaviour fails this test instead of hanging the run.
        rescue = threading.Timer(
            5.0,
            lambda: QMetaObject.invokeMethod(loop, "quit", Qt.ConnectionType.QueuedConnection),
        )
        rescue.start()
        try:
            return real_exec(loop, *args)
        finally:
            rescue.cancel()

    monkeypatch.setattr(qt_api, "exec", exec_after_the_signal)
    began = time.monotonic()
    try:
        with qtbot.waitSignal(source.fired, timeout=60_000):
            pass
    finally:
        thread.quit()
        thread.wait()
    assert time.monotonic() - began < 4.0
