"""The window's engine choice (Auto, PyTorch, ONNX Runtime): greyed with the reason where it
cannot run, kept across starts, and a change reloads the model with that engine."""

import importlib.util

import pytest
from PySide6.QtCore import Qt
from worker_events import done

from chattts_studio.core.engine.request import Precision
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.worker.jobs import JobKind

LOAD_MS = 120_000
MISSING = "ONNX Runtime is not installed (onnxruntime missing)"


def _onnx_item(window):  # type: ignore[no-untyped-def]
    box = window.controls.engine_choice.box
    index = box.findData("onnx")
    return box.model().item(index), box.itemData(index, Qt.ItemDataRole.ToolTipRole)


def _reload(window, qtbot, change) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(
        window.host.worker.ended, timeout=LOAD_MS, check_params_cb=done(JobKind.LOAD)
    ):
        change()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=LOAD_MS)


def test_auto_runs_onnx_and_a_chosen_engine_reloads_and_is_kept(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = make_window(device="cpu")
    controls = window.controls
    choice = controls.engine_choice
    # auto: ONNX Runtime on the CPU here (installed), named where the model is.
    assert controls.engine_value() == "auto" and window.model.loaded.engine.value == "onnx"
    assert " · fp32 · ONNX Runtime · random weights" in window.model.label.text()
    assert choice.effective.text() == "in use: ONNX Runtime"
    item, tip = _onnx_item(window)
    assert item.isEnabled() and "decode step on the CPU" in tip

    # PyTorch chosen: the model reloads with torch (the worker's spec carries it).
    _reload(window, qtbot, lambda: choice.box.setCurrentIndex(choice.box.findData("torch")))
    assert (
        window.model.loaded.engine.value == "torch" and " · PyTorch · " in window.model.label.text()
    )
    assert choice.effective.text() == "in use: PyTorch"
    window.persistence.persist()
    assert Settings().text(Key.ENGINE) == "torch"
    window.close()

    # The next start loads with the saved engine.
    again = make_window(device="cpu")
    assert again.controls.engine_value() == "torch" and again.model.loaded.engine.value == "torch"


def test_onnx_is_greyed_with_the_reason_and_restored(make_window, qtbot) -> None:  # type: ignore[no-untyped-def]
    window = make_window(device="cpu")
    controls = window.controls
    choice = controls.engine_choice
    _reload(window, qtbot, lambda: choice.box.setCurrentIndex(choice.box.findData("onnx")))
    assert window.model.loaded.engine.value == "onnx"
    # bf16: ONNX Runtime cannot run it; greyed with why, and the choice falls back to auto,
    # the one reload (precision) resolving it to torch.
    _reload(window, qtbot, lambda: controls.precision_buttons[Precision.BF16].setChecked(True))
    item, tip = _onnx_item(window)
    assert not item.isEnabled() and tip == "the ONNX engine runs fp32 or int8, not bf16"
    assert choice.reason("onnx") == tip and choice.reason("torch") is None
    assert controls.engine_value() == "auto" and window.model.loaded.engine.value == "torch"
    # Back to fp32: ONNX Runtime can be chosen again, with its own tooltip.
    _reload(window, qtbot, lambda: controls.precision_buttons[Precision.FP32].setChecked(True))
    item, tip = _onnx_item(window)
    assert item.isEnabled() and "decode step on the CPU" in tip
    assert window.model.loaded.engine.value == "onnx"  # auto again


def test_without_onnxruntime_onnx_is_greyed_and_auto_is_torch(  # type: ignore[no-untyped-def]
    make_window, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        return None if name == "onnxruntime" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    saved = Settings()
    saved.set(Key.ENGINE, "onnx")  # saved where it could run: settled to auto here
    saved.sync()
    window = make_window(device="cpu")
    item, tip = _onnx_item(window)
    assert not item.isEnabled() and tip.startswith(MISSING)
    assert "pip install 'chattts-studio[onnx]'" in tip
    assert window.controls.engine_value() == "auto" and window.model.loaded.engine.value == "torch"
