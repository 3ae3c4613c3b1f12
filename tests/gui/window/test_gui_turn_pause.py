"""The real window, offscreen, on the stand-in engine (window logic: tests/standin_engine.py):
script mode's "Pause between turns" spin box is shown only in script mode, goes into the
request, puts exactly that silence between a dialogue's two turns, and is kept across a
restart (with its Chinese translation)."""

import numpy as np
import pytest
from conftest import GUI_WAIT_MS
from standin_engine import StandinEngine
from worker_events import done

from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.i18n import qm_path
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.worker.jobs import JobKind

TURN_PAUSE = 1.3  # seconds: not the default (0.4), nor the segment pause


pytestmark = pytest.mark.window(ready="idle", engine="standin")


def test_the_turn_pause_is_the_silence_between_two_speakers_and_is_kept(
    qtbot, make_window, private_home
) -> None:  # type: ignore[no-untyped-def]
    engine = StandinEngine()
    engine.load("demo", "cpu")  # its speakers have the demo model's width
    library = SpeakerLibrary()
    library.add("Alice", engine.sample_speaker(1))
    library.add("Bob", engine.sample_speaker(2))
    window = make_window()
    box = window.voices.turn_pause.box
    assert box.accessibleName() == "Pause between turns"
    assert (box.minimum(), box.maximum(), box.singleStep()) == (0.0, 5.0, 0.1)
    assert box.value() == SynthesisRequest("").turn_pause_seconds
    assert not window.voices.turn_pause.isVisible() and not box.isEnabled()  # plain text: no turns
    window.speakers.refresh()
    window.voices.script_action.setChecked(True)
    assert window.voices.turn_pause.isVisible() and box.isEnabled()
    box.setValue(TURN_PAUSE)
    window.editor.set_text("Alice: 你好。\nBob: 再见。")
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(2)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(False)

    with qtbot.waitSignal(
        window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=done(JobKind.SYNTHESIZE)
    ) as ended:
        assert window.synthesis.synthesize() is not None
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    outcome = ended.args[0].value
    assert outcome.job.request.turn_pause_seconds == TURN_PAUSE
    assert [r.speaker for r in sorted(outcome.results, key=lambda r: r.index)] == ["Alice", "Bob"]
    (_, first), (second, end) = [span for _, span in sorted(window.result.store.segments.items())]
    assert second - first == pause_samples(TURN_PAUSE) == round(TURN_PAUSE * 24000)
    audio = window.result.audio
    assert end == window.result.length == len(audio)
    assert not audio[first:second].any()  # silence, exactly that long
    assert audio[first - 200 : first].any() and audio[second : second + 200].any()

    # Kept across a restart; out of script mode it is hidden again but keeps its value.
    window.voices.script_action.setChecked(False)
    assert not window.voices.turn_pause.isVisible() and not box.isEnabled()
    window.close()
    assert Settings().seconds(Key.TURN_PAUSE) == TURN_PAUSE
    again = make_window(model=None, wait=False)
    assert again.voices.turn_pause.box.value() == TURN_PAUSE
    assert again.synthesis.settings_request("x").turn_pause_seconds == TURN_PAUSE


def test_a_damaged_turn_pause_setting_falls_back_to_the_default(
    qtbot, make_window, private_home
) -> None:  # type: ignore[no-untyped-def]
    settings = Settings()
    settings.set(Key.TURN_PAUSE, "nan")
    settings.sync()
    window = make_window(model=None, wait=False)
    assert window.voices.turn_pause.box.value() == SynthesisRequest("").turn_pause_seconds
    settings.set(Key.TURN_PAUSE, 99)
    settings.sync()
    again = make_window(model=None, wait=False)
    assert again.voices.turn_pause.box.value() == 5.0  # clamped to the range the request allows
    assert np.isclose(again.synthesis.settings_request("x").turn_pause_seconds, 5.0)


def test_the_turn_pause_control_is_translated() -> None:
    from PySide6.QtCore import QTranslator

    translator = QTranslator()
    assert translator.load(qm_path("zh_CN"))
    for source in ("Pause between turns", "Pause between &turns:"):
        said = translator.translate("Voices", source)
        assert said and said != source and said.isascii() is False, source
