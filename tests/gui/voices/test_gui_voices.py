"""The real window, offscreen, on demo weights: a cloned library voice used by Synthesize, a
voice made from a file in the "New voice from a recording" dialog (and a clip too short, which
adds nothing), the dialog recording from a virtual ALSA capture device, dialogue script mode,
and the pronunciation dictionary tab."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import GUI_WAIT_MS, REPO, microphone_env
from window_steps import fast
from worker_events import cancelled, done, failed

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.services import synthesize as synthesis
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.settings import Key, Settings
from chattts_studio.gui.voices import voice_dialog
from chattts_studio.gui.worker.jobs import JobKind

ROOT = REPO


pytestmark = pytest.mark.window(ready="idle")


def noise(seconds: float, seed: int = 5, rate: int = 24000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(int(seconds * rate)) * 0.2).astype(np.float32)


def synthesize(qtbot, window):  # type: ignore[no-untyped-def]
    """Synthesize and the outcome, with the SynthesisJob the worker was given."""
    given = []
    real = synthesis.synthesize

    def spy(engine, spec, *args):  # type: ignore[no-untyped-def]
        given.append(spec)
        return real(engine, spec, *args)

    synthesis.synthesize = spy
    try:
        with qtbot.waitSignal(
            window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=done(JobKind.SYNTHESIZE)
        ) as ended:
            assert window.synthesis.synthesize() is not None
        qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    finally:
        synthesis.synthesize = real
    return given[0], ended.args[0].value


def test_a_cloned_library_voice_is_the_voice_synthesize_uses(qtbot, make_window, engine) -> None:  # type: ignore[no-untyped-def]
    voice = engine.clone_voice(noise(4.0), "你好，这是一段录音。")
    SpeakerLibrary().add("Clone", "", sample=voice.sample, transcript=voice.transcript)
    Settings().set(Key.ENGINE, "torch")  # the reference below is the torch engine, bit for bit
    window = make_window()
    window.speakers.refresh(select="Clone")
    window.speakers.library_mode.setChecked(True)
    window.voices.lexicon.store.add("AI", "人工智能")
    fast(window, "AI 你好。", batch=2)
    spec, outcome = synthesize(qtbot, window)
    request = spec.request
    assert request.voice == voice and spec.speaker_seed is None
    assert request.lexicon == (("AI", "人工智能"),)
    # The same entry and generation seed through the engine, as the CLI runs it.
    plan = engine.plan(
        SynthesisRequest(
            text="AI 你好。",
            voice=SpeakerLibrary().get("Clone").voice,  # type: ignore[union-attr]
            seed=request.seed,
            temperature=request.temperature,
            top_p=request.top_p,
            top_k=request.top_k,
            refine_text=False,
            segment_size=10,
            batch_size=2,
            pause_seconds=request.pause_seconds,
            lexicon=(("AI", "人工智能"),),
        )
    )
    assert [s.shown for s in plan.segments] == [r.text for r in outcome.results]
    assert plan.segments[0].text.startswith("人工智能")  # what the model read
    expected = plan.join(list(engine.synthesize(plan)))
    assert np.array_equal(window.result.audio, expected)


def test_a_voice_from_a_file_is_kept_with_its_transcript_and_preview(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    clip = tmp_path / "me.flac"
    sf.write(clip, noise(4.0, rate=44100), 44100, format="FLAC")
    monkeypatch.setattr(voice_dialog, "open_recording", lambda _parent: clip)
    window.speakers.new_voice.click()
    dialog = window.voices.voice_dialog
    assert dialog.isVisible()
    dialog.open_button.click()
    assert "me.flac" in dialog.source_label.text()
    dialog.transcript.setText("今天天气很好。")
    dialog.name.setText("Me")
    dialog.keep_button.click()
    assert window.jobs.current is not None  # the worker clones and keeps it
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    assert dialog.status.text() == "Kept the voice in the library as 'Me'."
    entry = SpeakerLibrary().get("Me")
    assert entry is not None and entry.cloned and entry.transcript == "今天天气很好。"
    preview = SpeakerLibrary().file(entry.preview)
    assert preview is not None and preview.is_file() and sf.info(str(preview)).frames > 0
    assert dialog.status.text() == "Kept the voice in the library as 'Me'."
    assert window.speakers.current().label == "Me"
    assert window.speakers.current().voice == entry.voice
    assert window.speakers.play_preview.isEnabled()
    played = []
    window.result.player.play = played.append
    window.speakers.play_preview.click()
    assert played and np.allclose(played[0], sf.read(str(preview), dtype="float32")[0])


def test_a_one_second_clip_gets_one_sentence_and_adds_nothing(
    qtbot, make_window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    clip = tmp_path / "short.wav"
    sf.write(clip, noise(1.0), 24000)
    monkeypatch.setattr(voice_dialog, "open_recording", lambda _parent: clip)
    dialog = window.voices.voice_dialog
    window.voices.show_voice_dialog()
    dialog.open_button.click()
    dialog.transcript.setText("你好。")
    dialog.name.setText("Short")
    with qtbot.waitSignal(window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=failed):
        dialog.keep_button.click()
    qtbot.waitUntil(lambda: window.jobs.current is None)
    said = dialog.status.text()
    assert said.startswith("short.wav is only 1.0 s long; a reference recording must be 3-30")
    assert said.count(".") <= 3 and "\n" not in said
    assert SpeakerLibrary().names() == [] and window.speakers.library.names() == []
    assert dialog.keep_button.isEnabled()


RECORD = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import numpy as np
from PySide6.QtWidgets import QApplication
from chattts_studio.gui.voices.voice_dialog import VoiceDialog

app = QApplication([])
dialog = VoiceDialog()
dialog.max_seconds, dialog.rate = 4.0, 24000
dialog.show()
dialog.record_button.click()
assert dialog.record_button.text() == "Stop", dialog.status.text()
levels = []
deadline = time.monotonic() + 60
while dialog.recorder is not None and time.monotonic() < deadline:
    app.processEvents()
    levels.append(dialog.meter.value())
    time.sleep(0.01)
assert dialog.recorder is None, "the take never filled"
np.save(sys.argv[1], dialog.recording.take)
print(max(levels), dialog.seconds.text(), dialog.recording.rate)
"""


def test_the_dialog_records_a_clip_equal_to_the_capture_devices_samples(tmp_path: Path) -> None:
    from chattts_studio.core.voices.clone import check_clip

    known = noise(4.0, seed=11)
    out = tmp_path / "take.npy"
    env = microphone_env(tmp_path, known)
    proc = subprocess.run(
        [sys.executable, "-c", RECORD, str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    peak, seconds, _unit, rate = proc.stdout.split()
    take = np.load(out)
    assert np.array_equal(take, known)
    assert seconds == "4.0" and rate == "24000" and int(peak) > 0  # the meter moved
    assert np.array_equal(check_clip(take, 24000), check_clip(known, 24000))


def test_a_two_speaker_script_names_each_segments_speaker(qtbot, make_window, engine) -> None:  # type: ignore[no-untyped-def]
    library = SpeakerLibrary()
    library.add("Alice", engine.sample_speaker(1))
    library.add("Bob", engine.sample_speaker(2))
    window = make_window()
    window.speakers.refresh()
    window.voices.script_action.setChecked(True)
    assert window.voices.highlighter is not None
    fast(window, "Alice: 你好。\nBob: 再见。", batch=2)
    assert window.voices.script_label.isHidden()
    spec, outcome = synthesize(qtbot, window)
    assert set(spec.voices) == {"Alice", "Bob"}
    assert [r.speaker for r in outcome.results] == ["Alice", "Bob"]
    assert window.live.speaking.text() == "Bob"

    window.editor.set_text("Alice: 你好。\n\nCarol: 早上好。")
    said = window.voices.script_label.text()
    assert said.startswith("Line 3: there is no speaker named 'Carol' in the library")
    assert window.voices.script_label.isVisible()
    assert window.synthesis.synthesize() is None and window.jobs.current is None
    assert window.messages.notice.text() == said


def test_an_entry_added_in_the_dictionary_tab_is_saved_and_changes_the_preview(
    qtbot, make_window, private_home
) -> None:  # type: ignore[no-untyped-def]
    window = make_window(model=None, wait=False)
    panel = window.voices.lexicon
    window.editor.set_text("GPU 很快。")
    with qtbot.waitSignal(panel.previewed, timeout=GUI_WAIT_MS) as before:
        panel.update_preview()
    panel.word.setText("GPU")
    panel.replacement.setText("图形处理器")
    with qtbot.waitSignal(panel.previewed, timeout=GUI_WAIT_MS) as after:
        panel.add_button.click()
    saved = json.loads((private_home / "lexicon.json").read_text(encoding="utf-8"))
    assert saved["entries"] == [{"word": "GPU", "replacement": "图形处理器"}]
    assert "图形处理器" not in before.args[0] and "图形处理器" in after.args[0]
    assert panel.preview.toPlainText() == after.args[0]
    assert panel.table.rowCount() == 1 and panel.table.item(0, 1).text() == "图形处理器"
    assert window.synthesis.settings_request("x").lexicon == (("GPU", "图形处理器"),)
    panel.table.setCurrentCell(0, 0)
    panel.remove_button.click()
    assert json.loads((private_home / "lexicon.json").read_text())["entries"] == []


# -- the dialog's microphone take kept, a cancelled keep, an audition heard ------------------
RECORD_AND_KEEP = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
app = QApplication([])
from chattts_studio.gui.app import build_window

def until(done, what, seconds=120):
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        app.processEvents()
        time.sleep(0.01)

window = build_window("demo", None)
window.show()
until(
    lambda: window.model.loaded is not None and window.jobs.current is None,
    "the model never loaded",
)
dialog = window.voices.voice_dialog
dialog.max_seconds, dialog.rate = 4.0, 24000
window.voices.show_voice_dialog()
dialog.record_button.click()
until(lambda: dialog.recorder is None, "the take never filled", 60)
dialog.transcript.setText(sys.argv[1])
dialog.name.setText("Mic")
dialog.keep_button.click()
assert window.jobs.current is not None, dialog.status.text()
until(lambda: window.jobs.current is None, "the keep never ended")
print(dialog.status.text())
print(window.speakers.current().label)
window.close()
"""


def files_in(folder: Path) -> set[str]:
    """Every file under `folder`, the shared models (a link) left out."""
    return {
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and path.relative_to(folder).parts[0] != "models"
    }


def test_a_microphone_take_kept_adds_one_voice_and_no_recording(
    tmp_path: Path, private_home: Path, engine
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.voices.clone import check_clip

    known = noise(4.0, seed=12)
    env = microphone_env(tmp_path, known)  # its CHATTTS_STUDIO_HOME is private_home
    transcript = "今天我们来聊聊天气。"
    proc = subprocess.run(
        [sys.executable, "-c", RECORD_AND_KEEP, transcript],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-2:] == ["Kept the voice in the library as 'Mic'.", "Mic"]
    library = SpeakerLibrary()
    assert library.names() == ["Mic"]
    entry = library.get("Mic")
    assert entry is not None and entry.cloned and entry.transcript == transcript
    # The sample encoded from the microphone's samples, as the CLI encodes that clip.
    assert entry.voice == engine.clone_voice(check_clip(known, 24000), transcript)
    # The dialog offers no "keep the recording": only the library and the preview are written.
    assert entry.recording == "" and entry.preview
    assert {f for f in files_in(private_home) if f.startswith("speaker")} == {
        "speakers.json",
        "speakers.json.lock",  # file_lock.py: stays, empty
        entry.preview,
    }


@pytest.fixture
def blocked(monkeypatch):  # type: ignore[no-untyped-def]
    """block(module, name): that function waits on the worker thread until released (the
    test cancels meanwhile); returns (entered, release) events."""
    import threading

    def block(owner, name: str):  # type: ignore[no-untyped-def]
        entered, release = threading.Event(), threading.Event()
        real = getattr(owner, name)

        def waiting(*args, **kwargs):  # type: ignore[no-untyped-def]
            entered.set()
            assert release.wait(60)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, waiting)
        return entered, release

    return block


def ready_dialog(window, tmp_path: Path, monkeypatch, name: str = "Gone"):  # type: ignore[no-untyped-def]
    clip = tmp_path / "me.wav"
    sf.write(clip, noise(4.0), 24000)
    monkeypatch.setattr(voice_dialog, "open_recording", lambda _parent: clip)
    window.voices.show_voice_dialog()
    dialog = window.voices.voice_dialog
    dialog.open_button.click()
    dialog.transcript.setText("今天天气很好。")
    dialog.name.setText(name)
    return dialog


def test_closing_the_dialog_while_it_encodes_adds_nothing_and_writes_nothing(
    qtbot, make_window, tmp_path, monkeypatch, private_home, blocked
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.engine.engine import Engine

    window = make_window()
    dialog = ready_dialog(window, tmp_path, monkeypatch)
    assert not dialog.cancel_button.isEnabled() and dialog.cancel_button.accessibleName()
    before = files_in(private_home)
    entered, release = blocked(Engine, "clone_voice")
    dialog.keep_button.click()
    assert dialog.cancel_button.isEnabled()
    qtbot.waitUntil(entered.is_set, timeout=GUI_WAIT_MS)
    with qtbot.waitSignal(window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=cancelled):
        dialog.reject()  # Esc, or the title bar's close button
        assert not dialog.isVisible()
        release.set()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    assert SpeakerLibrary().names() == [] and window.speakers.library.names() == []
    assert files_in(private_home) - before <= {"gui-settings.ini", "editor-draft.txt"}
    assert dialog.status.text() == "Cancelled."
    assert dialog.keep_button.isEnabled() and not dialog.cancel_button.isEnabled()


def test_cancel_while_the_preview_is_made_adds_nothing(
    qtbot, make_window, tmp_path, monkeypatch, private_home, blocked
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.services import keep_voice

    window = make_window()
    dialog = ready_dialog(window, tmp_path, monkeypatch)
    before = files_in(private_home)
    entered, release = blocked(keep_voice, "make_preview")
    dialog.keep_button.click()
    qtbot.waitUntil(entered.is_set, timeout=GUI_WAIT_MS)
    with qtbot.waitSignal(window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=cancelled):
        dialog.cancel_button.click()
        release.set()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    assert SpeakerLibrary().names() == []
    assert files_in(private_home) - before <= {"gui-settings.ini", "editor-draft.txt"}


def test_an_audition_in_the_dialog_is_played_on_the_output_device(
    qtbot, make_window, tmp_path, monkeypatch, capture_dir
) -> None:  # type: ignore[no-untyped-def]
    from conftest import read_capture

    window = make_window()
    dialog = ready_dialog(window, tmp_path, monkeypatch)
    dialog.sentence.setText("你好。")
    with qtbot.waitSignal(
        window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=done(JobKind.VOICE)
    ) as made:
        dialog.audition_button.click()
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    audio = made.args[0].value.audio
    assert audio is not None and len(audio) > 0 and dialog.audio is audio
    assert dialog.play_button.isEnabled()
    assert window.result.player.wait(30)  # auditioned() played it at once
    captured = read_capture(capture_dir)  # the device's priming zeros, then the audition
    first, start = int(np.flatnonzero(audio)[0]), int(np.flatnonzero(captured)[0])
    heard = captured[start : start + len(audio) - first]
    assert np.array_equal(heard, audio[first:])  # every sample, as the worker made it
    assert SpeakerLibrary().names() == []  # an audition keeps nothing
