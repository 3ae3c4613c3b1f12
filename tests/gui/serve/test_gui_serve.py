"""Run > Serve on localhost: the window's loaded model behind the speech API (no second copy),
its URL and live request count, refusals while it serves, and a clean stop; Run > Allow other
machines: every interface, with a key made for the session and shown in the panel."""

import io
import os
import socket
import threading
from pathlib import Path

import httpx2 as httpx
import numpy as np
import soundfile as sf
from worker_events import done, failed

from chattts_studio.core.services.audition import seed_speaker
from chattts_studio.core.services.serve_session import ModelServing
from chattts_studio.gui.worker.jobs import JobKind
from chattts_studio.gui.worker.ops import Op

API_THREADS = ("speech-api", "batcher")
WAIT_MS = 60_000


def _api_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name in API_THREADS and t.is_alive()]


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


SPEECH = {
    "model": "chattts",
    "input": "Hello from the window.",
    "voice": "seed:7",
    "response_format": "wav",
}


def _serve(window, qtbot) -> str:  # type: ignore[no-untyped-def]
    window.serve.port = 0  # one the system picks: tests may run side by side
    window.serve.action.trigger()  # the menu action, as a click would
    qtbot.waitUntil(lambda: window.serve.session is not None, timeout=WAIT_MS)
    assert window.serve.action.isChecked() and window.serve.panel.isVisible()
    url = window.serve.session.url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    shown = window.serve.session.lan_url or url
    assert shown in window.serve.panel.status.text()
    return url


def _assert_speech(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    audio, rate = sf.read(io.BytesIO(response.content), dtype="float32")
    assert rate == 24_000 and len(audio) > 2_400 and np.isfinite(audio).all()


def test_the_window_serves_its_own_model_and_stops_cleanly(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    worker = window.host.worker
    url = _serve(window, qtbot)
    session = window.serve.session
    # One copy of the model: the batcher decodes with the very object the worker loaded.
    assert session.batcher.model is worker.engine.model
    assert session.batcher.engine is worker.engine
    assert "0 requests" in window.serve.panel.status.text()
    # This machine only, no key (none shown), and the browser checks apply to the window too.
    assert session.address == "127.0.0.1" and session.api_key is None
    assert session.lan_url is None and not window.serve.panel.key_row.isVisible()
    foreign = httpx.get(f"{url}/models", headers={"Host": "rebound.example"}, timeout=10)
    page = httpx.get(f"{url}/models", headers={"Origin": "https://page.example"}, timeout=10)
    assert 400 <= foreign.status_code < 500 and 400 <= page.status_code < 500

    _assert_speech(httpx.post(f"{url}/audio/speech", json=SPEECH, timeout=60))
    # The API runs the window's loaded engine (auto: onnx on the CPU here), and says which.
    health = httpx.get(f"{url.removesuffix('/v1')}/health", timeout=10).json()
    assert health["engine"] == window.model.loaded.engine.value == "onnx"
    # The label is polled (2 Hz), not told: it catches up within a tick or two.
    qtbot.waitUntil(lambda: "1 request " in window.serve.panel.status.text(), timeout=5_000)
    assert session.requests == 1

    # While it serves, the window's own synthesis is refused with one sentence: no job runs.
    window.editor.set_text("A sentence for the window.")
    assert window.synthesis.synthesize() is None and window.jobs.current is None
    assert "serving the local speech API" in window.messages.notice.text()

    # Any other job that would run the model is refused by the worker itself.
    with qtbot.waitSignal(worker.ended, timeout=WAIT_MS, check_params_cb=failed) as refused:
        window.host.submit(Op(JobKind.SPEAKER, seed_speaker(3)))
    assert isinstance(refused.args[0].error, ModelServing)

    port = session.port
    window.serve.action.trigger()  # off
    qtbot.waitUntil(lambda: window.serve.session is None, timeout=WAIT_MS)
    assert not window.serve.action.isChecked() and not window.serve.panel.isVisible()
    assert not _port_open(port)
    assert _api_threads() == []
    assert worker.session is None

    # The model is the window's again: a synthesis runs to its end.
    with qtbot.waitSignal(worker.ended, timeout=WAIT_MS, check_params_cb=done(JobKind.SYNTHESIZE)):
        assert window.synthesis.synthesize() is not None


def test_loading_another_model_or_closing_stops_the_api(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    _serve(window, qtbot)
    port = window.serve.session.port
    window.model.reload()  # another precision or device reloads the same way
    qtbot.waitUntil(
        lambda: window.serve.session is None and window.jobs.current is None, timeout=WAIT_MS
    )
    assert window.model.loaded is not None and not window.serve.action.isChecked()
    assert not _port_open(port) and _api_threads() == []

    _serve(window, qtbot)
    port = window.serve.session.port
    window.close()  # the fixture checks the worker thread; the API's threads end too
    assert not window.host.worker_thread.isRunning()
    assert not _port_open(port) and _api_threads() == []


def test_serving_needs_a_loaded_model(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None)
    window.serve.action.trigger()
    assert window.serve.session is None and window.jobs.current is None
    assert not window.serve.action.isChecked()
    assert "Load a model" in window.messages.notice.text()


def test_a_render_queued_while_serving_waits_and_runs_when_serving_stops(  # type: ignore[no-untyped-def]
    make_window, qtbot, monkeypatch, tmp_path
) -> None:
    """The queue does not hand the model's owner a job it would refuse: the job waits (it used
    to fail with the serving sentence) and starts once the API has stopped."""
    from chattts_studio.gui.render import queue as render_queue

    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    monkeypatch.setattr(render_queue, "open_folder", lambda _folder: None)
    window = make_window()
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(1)
    window.controls.refine_box.setChecked(False)
    _serve(window, qtbot)
    failures: list[object] = []
    window.host.worker.ended.connect(lambda o: failed(o) and failures.append(o))
    window.editor.set_text("你好。Hello there.")
    window.render_jobs.text_action.trigger()
    (item,) = window.render_jobs.queue.items
    assert "starts when serving stops" in window.messages.notice.text()
    qtbot.wait(500)  # a worker that was handed the job would have failed it by now
    assert item.state == "waiting" and window.jobs.current is None and failures == []

    window.serve.action.trigger()  # off: the queue goes on by itself
    qtbot.waitUntil(lambda: item.state == "done", timeout=180_000)
    assert failures == [] and item.outcome is not None and item.outcome.made > 0
    assert sorted(item.spec.folder.glob("*.flac"))


def test_the_serving_port_is_chosen_saved_and_used(make_window, qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Run > Serving port…: the port is kept in the settings, a new window reads it back, and
    serving listens on it (when it is free)."""
    from chattts_studio.gui.serve import serve_control as serve_control

    with socket.socket() as probe:  # a port that is free now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    asked: list[int] = []

    def get_int(_parent, _title, _label, value, low, high):  # type: ignore[no-untyped-def]
        asked.append(value)
        assert (low, high) == (1, 65535)
        return port, True

    monkeypatch.setattr(serve_control.QInputDialog, "getInt", get_int)
    window = make_window()
    assert window.serve.port == 8000  # the default: the CLI's
    window.serve.port_action.trigger()
    assert asked == [8000] and window.serve.port == port
    assert f"port {port}" in window.messages.notice.text()
    window.close()

    again = make_window()
    assert again.serve.port == port  # saved
    again.serve.action.trigger()
    qtbot.waitUntil(lambda: again.serve.session is not None, timeout=WAIT_MS)
    assert again.serve.session.port == port and again.serve.session.url.startswith(
        f"http://127.0.0.1:{port}/"
    )
    again.serve.action.trigger()
    qtbot.waitUntil(lambda: again.serve.session is None, timeout=WAIT_MS)


def _files_mention(folder: Path, text: str) -> list[str]:
    """The files under `folder` (not following links: the shared models) that hold `text`."""
    found = []
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if text.encode() in path.read_bytes():
                found.append(str(path))
    return found


def test_allowing_other_machines_asks_for_the_key_the_panel_shows(  # type: ignore[no-untyped-def]
    make_window, qtbot, private_home
) -> None:
    from PySide6.QtGui import QGuiApplication

    window = make_window()
    assert not window.serve.others_action.isChecked()  # off until chosen
    window.serve.others_action.trigger()  # Run > Allow other machines
    url = _serve(window, qtbot)
    session = window.serve.session
    panel = window.serve.panel
    assert session.address == "0.0.0.0"  # every interface: only now
    assert session.lan_url is not None and session.lan_url in panel.status.text()
    assert panel.key_row.isVisible() and session.api_key in panel.key_label.text()
    QGuiApplication.clipboard().clear()
    panel.copy_key_button.click()
    key = QGuiApplication.clipboard().text()
    assert key == session.api_key and len(key) >= 32

    refused = httpx.post(f"{url}/audio/speech", json=SPEECH, timeout=60)
    assert refused.status_code == 401
    wrong = httpx.post(
        f"{url}/audio/speech", json=SPEECH, headers={"Authorization": "Bearer x"}, timeout=60
    )
    assert wrong.status_code == 401
    bearer = {"Authorization": f"Bearer {key}"}
    _assert_speech(httpx.post(f"{url}/audio/speech", json=SPEECH, headers=bearer, timeout=60))
    # As another machine addresses it: by this machine's network address.
    lan = {**bearer, "Host": f"{session.lan_host}:{session.port}"}
    assert httpx.get(f"{url}/models", headers=lan, timeout=10).status_code == 200

    window.serve.action.trigger()  # off: the key ends with the session
    qtbot.waitUntil(lambda: window.serve.session is None, timeout=WAIT_MS)
    assert not panel.key_row.isVisible() and key not in panel.key_label.text()
    window.serve.action.trigger()  # the option stays on: a new session, a new key
    qtbot.waitUntil(lambda: window.serve.session is not None, timeout=WAIT_MS)
    assert window.serve.session.api_key not in (None, key)
    window.close()
    assert _files_mention(private_home, key) == []  # never saved (settings included)
