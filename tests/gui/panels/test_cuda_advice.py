"""The Engine tab on a CPU-only PyTorch on a PC with an NVIDIA card: the CUDA entry stays greyed
and the note under the device says which build to install, with the command, selectable."""

import os
import stat
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from chattts_studio.core.engine import devices
from chattts_studio.core.engine.devices import default_device, precision_support
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.services.model_jobs import DeviceProbe
from chattts_studio.gui.panels.controls import ControlsPanel


def test_the_engine_tab_gives_the_command_for_the_cards_build(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!{sys.executable}\nprint('NVIDIA GeForce RTX 4090, 8.9, 581.57')\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(devices.torch.version, "cuda", None)
    monkeypatch.setattr(devices.torch.cuda, "is_available", lambda: False)
    devices.cpu_build_status.cache_clear()
    try:
        found = devices.list_devices()
        probe = DeviceProbe(
            found,
            default_device().id,
            devices.cuda_status(),
            {d.id: precision_support(d) for d in found if d.usable},
            tuple(Precision),
        )
    finally:
        devices.cpu_build_status.cache_clear()
    panel = ControlsPanel()
    qtbot.addWidget(panel)
    panel.show_probe(probe)
    note = panel.device_note
    assert "NVIDIA GPU" in note.text() and "torch==2.14.1+cu130" in note.text()
    assert "download.pytorch.org/whl/cu130" in note.text()
    assert note.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    box = panel.device_box
    cuda = [box.itemData(i) for i in range(box.count())].index("cuda")
    assert not box.model().flags(box.model().index(cuda, 0)) & Qt.ItemFlag.ItemIsEnabled
    assert "+cu130" in box.itemData(cuda, Qt.ItemDataRole.ToolTipRole)
