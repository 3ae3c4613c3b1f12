"""The speaker panel's Blend dialog, offscreen: a blend of two library speakers previewed on the
worker (an audition job) and kept in the library with the embedding core mixes for that spec;
a cloned voice in a blend is one sentence and nothing is kept or run."""

import pytest
from worker_events import done

from chattts_studio.core.audio.player import Player
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.voices.blend import blend_speakers, library_resolver
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.panels.blend import MAX_PARTS, BlendDialog
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.worker.jobs import JobKind

RUN_MS = 120_000
CLONED = "'Clone' is a cloned voice: it speaks through its recording, which a voice blend cannot "
SHORT = "你好。"


pytestmark = pytest.mark.window(ready="idle")


def _library(engine: Engine) -> SpeakerLibrary:
    library = SpeakerLibrary()  # the private data folder's
    library.add("Ann", engine.sample_speaker(3), seed=3)
    library.add("Bob", engine.sample_speaker(4))
    library.add("Clone", "", sample="x" * 40, transcript="你好。")
    return library


def test_a_blend_is_previewed_on_the_worker_and_kept_in_the_library(
    qtbot, make_window, engine: Engine
) -> None:  # type: ignore[no-untyped-def]
    library = _library(engine)
    voices = {e.name: e.voice for e in library.entries}
    window = make_window()
    window.speakers.blend.click()
    dialog = window.auditions.blend_dialog
    assert dialog.isVisible()
    dialog.set_parts([("Ann", 0.7), ("Bob", 0.3)])
    dialog.sentence.setText(SHORT)
    spec = "Ann*0.7+Bob*0.3"
    assert dialog.spec.text() == spec and dialog.problem() == ""
    expected = blend_speakers(spec, library_resolver(voices, engine), engine.speaker_dim())
    assert expected not in (voices["Ann"].embedding, voices["Bob"].embedding)

    # Keep before hearing it: nothing is kept.
    dialog.name.setText("Annbob")
    dialog.keep.click()
    assert dialog.status.text() == "Preview this blend first: Keep saves the voice heard."
    assert SpeakerLibrary().get("Annbob") is None

    with qtbot.waitSignal(
        window.host.worker.ended, timeout=RUN_MS, check_params_cb=done(JobKind.AUDITION)
    ) as ended:
        dialog.preview.click()
        assert window.jobs.current is not None and window.jobs.current.kind is JobKind.AUDITION
        assert dialog.job == window.jobs.current and not dialog.preview.isEnabled()
    candidates = ended.args[0].value
    assert [c.embedding for c in candidates] == [expected]  # mixed on the worker
    assert candidates[0].seed is None and len(candidates[0].audio) > 2400
    qtbot.waitUntil(lambda: dialog.heard is not None, timeout=RUN_MS)
    assert dialog.heard is not None and dialog.heard[:2] == (spec, expected)
    assert window.jobs.current is None and dialog.job is None and dialog.preview.isEnabled()
    assert not window.auditions.dialog.isVisible()  # the Audition dialog was not told

    dialog.keep.click()
    assert dialog.status.text() == "Kept the blend in the library as 'Annbob'."
    kept = SpeakerLibrary().get("Annbob")
    assert kept is not None and kept.embedding == expected and kept.seed is None
    assert kept.note == "Blend of Ann 70%, Bob 30%"
    assert window.speakers.current().label == "Annbob"  # selected, as a kept audition is

    # A taken name is one sentence; the speaker of that name keeps its voice.
    dialog.name.setText("Ann")
    dialog.keep.click()
    assert dialog.status.text() == (
        "Not kept: the library already has a speaker named 'Ann'; choose another name."
    )
    assert SpeakerLibrary().get("Ann").embedding == voices["Ann"].embedding  # type: ignore[union-attr]
    # The blend changed since it was heard: kept only once heard again.
    dialog.set_parts([("Ann", 0.5), ("Bob", 0.5)])
    assert dialog.status.text() == "The blend changed: preview it again."
    dialog.name.setText("Other")
    dialog.keep.click()
    assert SpeakerLibrary().get("Other") is None


def test_a_blend_with_a_cloned_voice_says_so_and_keeps_nothing(
    qtbot, private_home, engine: Engine
) -> None:  # type: ignore[no-untyped-def]
    _library(engine)
    panel = SpeakerPanel()
    dialog = BlendDialog(panel, Player())
    qtbot.addWidget(panel)
    qtbot.addWidget(dialog)
    asked: list[tuple[str, str]] = []
    dialog.preview_requested.connect(lambda spec, text: asked.append((spec, text)))
    # Two parts to start, different voices; up to four.
    assert [r.source() for r in dialog.rows] == ["Ann", "Bob"]
    assert dialog.spec.text() == "Ann*0.5+Bob*0.5" and dialog.preview.isEnabled()
    while dialog.add_button.isEnabled():
        dialog.add_button.click()
    assert len(dialog.rows) == MAX_PARTS and dialog.rows[2].source() == "Clone"
    assert dialog.status.text().startswith(CLONED)  # said as soon as it is picked
    assert not dialog.preview.isEnabled() and not dialog.keep.isEnabled()
    dialog.rows[2].remove.click()
    dialog.rows[2].who.setCurrentText("seed:42")
    assert dialog.spec.text() == "Ann*0.5+Bob*0.5+seed:42*0.5" and dialog.problem() == ""

    dialog.set_parts([("Ann", 0.5), ("Clone", 0.5)])
    assert len(dialog.rows) == 2 and dialog.status.text().startswith(CLONED)
    dialog.name.setText("Mix")
    dialog.keep.click()
    dialog.preview.click()  # disabled: nothing is asked of the worker
    dialog._preview()  # even when asked for directly
    assert dialog.status.text().startswith(CLONED)
    assert asked == [] and SpeakerLibrary().names() == ["Ann", "Bob", "Clone"]
    # A part that is no speaker is one sentence too.
    dialog.set_parts([("Ann", 1.0), ("Nobody", 1.0)])
    assert dialog.status.text() == (
        "'Nobody' in the voice blend is not a library speaker, a voice seed (seed:42) or a "
        "speaker embedding."
    )
    dialog.set_parts([("Ann", 1.0), ("seed:42", 1.0)])
    dialog.preview.click()
    assert asked == [("Ann*1+seed:42*1", dialog.sentence.text())]
