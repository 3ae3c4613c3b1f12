"""Fast start: the window is on screen before anything heavy is imported. The UI thread
never imports torch, ChatTTS, transformers or ONNX Runtime; the worker imports and probes the
devices in the background, and the controls that need the probe say "loading…" until it arrives.
scipy and pyqtgraph wait too: nothing the window shows first needs them (the plots are made
just after the first paint)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

HEAVY = ("torch", "ChatTTS", "transformers", "onnxruntime")  # never on the UI thread
LATER = (*HEAVY, "scipy", "pyqtgraph")  # none before the window's first paint
ROOT = REPO

# Run in a fresh interpreter: this test process has long imported torch. A finder first on
# sys.meta_path sees every import of a module not yet loaded, and which thread asked for it.
SCRIPT = r"""
import importlib.abc, json, sys, threading, time

HEAVY = {heavy!r}
LATER = {later!r}
main_thread = threading.main_thread()
heavy_on_ui = []


class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY and threading.current_thread() is main_thread:
            heavy_on_ui.append(name)
        return None


sys.meta_path.insert(0, Spy())
import chattts_studio.gui.app  # what `chattts-studio` imports before it shows the window
import chattts_studio.gui.window.main_window
imported = sorted(m for m in LATER if m in sys.modules)

from PySide6.QtCore import QEvent, QObject

import chattts_studio.gui.worker.worker


# The probe is held (in the worker thread, before it imports the engine) until the window has
# been painted, so what the window shows before it is certain.
gate = threading.Event()
real_engine = chattts_studio.gui.worker.worker.Worker._engine


def held_engine(self):
    gate.wait(120)
    return real_engine(self)


chattts_studio.gui.worker.worker.Worker._engine = held_engine
app = chattts_studio.gui.app.application()
painted = []


class FirstPaint(QObject):
    def eventFilter(self, _watched, event):
        if event.type() == QEvent.Type.Paint and not painted:
            painted.append(sorted(m for m in LATER if m in sys.modules))
        return False


spy = FirstPaint()
app.installEventFilter(spy)
window = chattts_studio.gui.app.build_window("demo")
window.show()


def spin(done, seconds=240.0):
    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.002)
    return done()


spin(lambda: painted)
app.removeEventFilter(spy)
# Right after that paint, on the UI thread: the waveform and, once its tab shows, the plots.
plots_made = spin(lambda: window.result._wave is not None, 60)
window.settings_tabs.setCurrentWidget(window.live)
plots_made = spin(lambda: window.live._plots is not None, 60) and plots_made
controls = window.controls
before = {{
    "device": controls.device_box.currentText(),
    "device_enabled": controls.device_box.isEnabled(),
    "precision": controls.precision_note.text(),
    "buttons": len(controls.precision_buttons),
    "models_row": window.model.dialog.rows["demo"].state.text(),
    "loading": window.jobs.current is not None,
}}
gate.set()
loaded = spin(lambda: window.model.loaded is not None and window.jobs.current is None)
window.editor.set_text("你好。")
window.controls.refine_box.setChecked(False)
window.result.stream_box.setChecked(False)
window.synthesis.synthesize()
spin(lambda: window.jobs.current is None)
after = {{
    "device": controls.device_box.currentData(),
    "device_enabled": controls.device_box.isEnabled(),
    "buttons": len(controls.precision_buttons),
    "fp32_checked": controls.precision_buttons[controls.precision()].isChecked(),
    "loaded": loaded,
    "notice": window.messages.notice.text(),
}}
window.close()
print(json.dumps({{"imported": imported, "painted": painted, "heavy_on_ui": heavy_on_ui,
                  "plots_made": plots_made, "before": before, "after": after}}))
"""


def test_the_window_is_shown_before_heavy_imports_and_torch_never_on_the_ui_thread(
    tmp_path: Path, demo_model: str
) -> None:
    from chattts_studio.core import paths

    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(paths.models_dir())  # the session's built demo weights
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "CHATTTS_STUDIO_HOME": str(home),
    }
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(heavy=HEAVY, later=LATER)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["imported"] == [], f"importing the window's modules imported {seen['imported']}"
    assert seen["painted"] == [[]], f"the window was painted after importing {seen['painted']}"
    assert seen["plots_made"], "the waveform or the live plots were never made"
    before, after = seen["before"], seen["after"]
    # Until the probe arrives: said, not guessed; the model asked for is already queued.
    assert before["device"] == "loading…" and not before["device_enabled"]
    assert before["buttons"] == 0 and before["precision"] == "loading…"
    assert before["loading"]
    assert after["loaded"], after["notice"]
    assert after["device"] not in (None, "cuda") and after["device_enabled"]
    assert after["buttons"] == 4 and after["fp32_checked"]
    assert after["notice"].startswith("Done"), after["notice"]
    # The worker imported torch; the UI thread never did, not even for the outcomes.
    assert seen["heavy_on_ui"] == [], seen["heavy_on_ui"]
