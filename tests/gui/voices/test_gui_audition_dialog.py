"""The real Audition dialog, offscreen: a Close button (and Esc) that closes it, cancelling a
generation under way, and each kept candidate marked in its row with the name it was kept as."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from chattts_studio.core.services.audition import Candidate
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.common import dialogs

EMB = "豆" * 40


pytestmark = pytest.mark.window(ready="idle")


def candidates() -> list[Candidate]:
    return [Candidate(seed, EMB + str(seed), np.zeros(2400, np.float32)) for seed in (11, 12)]


def test_a_kept_candidate_is_marked_with_its_name(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    first, second = candidates()
    dialog.show_candidates([first, second])
    label, keep, other_keep = dialog.rows[0], dialog.rows[2], dialog.rows[6]
    monkeypatch.setattr(dialogs, "ask_name", lambda *_args, **_kw: "Ann")
    keep.click()
    assert SpeakerLibrary().get("Ann") is not None
    assert keep.text() == "Kept as 'Ann'" and not keep.isEnabled()
    assert keep.toolTip() == "This voice is in the speaker library as 'Ann'."
    assert label.text().startswith("#1  voice seed 11") and label.text().endswith("Kept as 'Ann'")
    # The other candidate is still there to keep, unmarked.
    assert other_keep.text() == "Keep…" and other_keep.isEnabled()
    assert "Kept" not in dialog.rows[4].text()
    # Kept under a taken name by replacing that speaker: marked with that name too.
    other_keep.click()
    assert other_keep.text() == "Keep…"  # nothing kept yet: the name is taken
    dialog.replace_button.click()
    assert other_keep.text() == "Kept as 'Ann'" and not other_keep.isEnabled()
    # New candidates start unmarked.
    dialog.show_candidates(candidates())
    assert dialog.rows[2].text() == "Keep…" and dialog.rows[2].isEnabled()


def test_close_and_esc_close_the_dialog_and_cancel_a_generation(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    window.auditions.show_audition()
    dialog = window.auditions.dialog
    close = dialog.buttons.button(QDialogButtonBox.StandardButton.Close)
    assert close is not None and close.isVisible()
    close.click()
    assert not dialog.isVisible()
    window.auditions.show_audition()
    assert dialog.isVisible()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
    # While candidates are generated, Close cancels them.
    window.auditions.show_audition()
    cancelled: list[bool] = []
    dialog.cancel_requested.connect(lambda: cancelled.append(True))
    dialog.cancel.setEnabled(True)  # as _generate leaves it while the worker runs
    close.click()
    assert cancelled == [True] and not dialog.isVisible()
