"""A dialog that runs one job on the worker (gui/common/job_dialog.py): its Cancel button is
enabled only while the job runs and asks the window to cancel it; closing the dialog while the
job runs asks the same, closing it otherwise asks nothing. Blend and Audition are such
dialogs."""

from PySide6.QtCore import Qt

from chattts_studio.core.audio.player import Player
from chattts_studio.gui.common.job_dialog import JobDialog
from chattts_studio.gui.panels.blend import BlendDialog
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.voices.audition_dialog import AuditionDialog


def test_closing_cancels_only_a_running_job(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = JobDialog("Stop it")
    qtbot.addWidget(dialog)
    asked: list[bool] = []
    dialog.cancel_requested.connect(lambda: asked.append(True))
    assert dialog.cancel.text() == "Stop it" and not dialog.running
    dialog.show()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert asked == [] and not dialog.isVisible()
    dialog.cancel.setEnabled(True)  # the job was asked for
    assert dialog.running
    dialog.cancel.click()
    assert asked == [True]
    dialog.show()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert asked == [True, True] and not dialog.isVisible()


def test_the_audition_dialog_is_one(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = AuditionDialog(Player())
    qtbot.addWidget(dialog)
    assert isinstance(dialog, JobDialog)
    assert dialog.cancel.text() == "Cancel" and not dialog.running
    asked: list[bool] = []
    dialog.cancel_requested.connect(lambda: asked.append(True))
    dialog.generate_requested.connect(lambda *_: None)
    dialog.generate.click()  # the job runs
    assert dialog.running
    dialog.reject()
    assert asked == [True]


def test_the_blend_dialog_is_one(qtbot, private_home) -> None:  # type: ignore[no-untyped-def]
    panel = SpeakerPanel()
    dialog = BlendDialog(panel, Player())
    qtbot.addWidget(panel)
    qtbot.addWidget(dialog)
    assert isinstance(dialog, JobDialog) and not dialog.running
    asked: list[bool] = []
    dialog.cancel_requested.connect(lambda: asked.append(True))
    dialog.preview_requested.connect(lambda *_: None)
    dialog.preview.click()  # seed:1 and seed:2: the preview runs
    assert dialog.running
    dialog.reject()
    assert asked == [True]
