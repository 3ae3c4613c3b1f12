"""What the window hands each of its controls: one object in place of a list of
collaborators. A control that asks another (the model, voices, serving) names it as a
keyword argument."""

from dataclasses import dataclass

from PySide6.QtWidgets import QMainWindow

from chattts_studio.gui.control.job_slot import JobSlot
from chattts_studio.gui.control.messages import Messages
from chattts_studio.gui.panels.controls import ControlsPanel
from chattts_studio.gui.panels.editor import EditorPanel
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.result.panel import ResultPanel
from chattts_studio.gui.settings import Settings
from chattts_studio.gui.worker.host import WorkerHost


@dataclass(frozen=True)
class Panels:
    """The window's panels: what a control shows its state in and reads its settings from."""

    editor: EditorPanel
    controls: ControlsPanel
    speakers: SpeakerPanel
    result: ResultPanel
    live: LivePanel


@dataclass(frozen=True)
class WindowContext:
    """The window (parent of dialogs and menus), its settings, the worker, the one-job slot,
    the message line and the panels."""

    window: QMainWindow
    settings: Settings
    host: WorkerHost
    jobs: JobSlot
    messages: Messages
    panels: Panels
