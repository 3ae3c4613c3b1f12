"""The real window, offscreen, on demo weights: Save with "Subtitles" ticked writes an .srt (or
.vtt) beside the audio whose cues sit on the result's real segment boundaries (and none when it
is not ticked), and a dialogue script's result has the turn pause between its lines, as the
CLI's JobPlan.join puts it."""

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import GUI_WAIT_MS
from window_steps import fast
from worker_events import done

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.audio.subtitles import Cue, parse_subtitles
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.engine.script_plan import plan_dialogue
from chattts_studio.core.text.dialogue import parse_script
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.gui.worker.jobs import JobKind

TOLERANCE = 0.0107  # seconds: a cue's millisecond stamp against the segment's sample


pytestmark = pytest.mark.window(ready="idle")


def synthesize(qtbot, window):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(
        window.host.worker.ended, timeout=GUI_WAIT_MS, check_params_cb=done(JobKind.SYNTHESIZE)
    ) as ended:
        assert window.synthesis.synthesize() is not None
    qtbot.waitUntil(lambda: window.jobs.current is None, timeout=GUI_WAIT_MS)
    return ended.args[0].value


def check_cues(cues: list[Cue], segments: list[tuple[int, int]]) -> None:
    """Every segment starts a cue and ends one where it sits in the audio; no cue runs over
    a pause (each lies inside one segment)."""
    assert cues
    bounds = [(first / SAMPLE_RATE, end / SAMPLE_RATE) for first, end in segments]
    for start, end in bounds:
        assert any(abs(c.start - start) <= TOLERANCE for c in cues), (start, cues)
        assert any(abs(c.end - end) <= TOLERANCE for c in cues), (end, cues)
    for cue in cues:
        assert cue.end > cue.start
        assert any(
            start - TOLERANCE <= cue.start and cue.end <= end + TOLERANCE for start, end in bounds
        ), cue


def test_save_with_subtitles_ticked_writes_cues_on_the_segment_boundaries(
    qtbot, make_window, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    out.mkdir()
    window = make_window()
    fast(window, "你好。今天天气不错。我们去散步吧。明天见，再见。", batch=2)
    outcome = synthesize(qtbot, window)
    result = window.result
    segments = [span for _, span in sorted(result.store.segments.items())]
    assert len(segments) >= 2 and len(outcome.results) == len(segments)

    # Unticked: the audio alone.
    assert not result.subtitles_box.isChecked()
    assert result.save_to(out / "plain.wav") == [out / "plain.wav"]
    assert sorted(p.name for p in out.iterdir()) == ["plain.wav"]

    # Ticked: name.srt beside name.wav, one cue a sentence on the real boundaries.
    result.subtitles_box.setChecked(True)
    assert result.subtitle_format.isEnabled()
    assert result.subtitles_box.accessibleName() and result.subtitle_format.accessibleName()
    target = out / "speech.wav"
    assert result.save_to(target) == [target, out / "speech.srt"]
    assert sf.info(str(target)).frames == result.length
    srt = (out / "speech.srt").read_text(encoding="utf-8")
    cues = parse_subtitles(srt)
    check_cues(cues, segments)
    assert "".join(c.text for c in cues).replace(" ", "") == (
        "你好。今天天气不错。我们去散步吧。明天见，再见。"
    )
    assert "subtitles" in window.messages.notice.text()

    # WebVTT, saved on the pool as Save does; nothing left in the folder but the files.
    result.subtitle_format.setCurrentIndex(result.subtitle_format.findData("vtt"))
    result.export(out / "pooled.wav")
    qtbot.waitUntil(lambda: not result.exporting, timeout=GUI_WAIT_MS)
    vtt = (out / "pooled.vtt").read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT")
    check_cues(parse_subtitles(vtt), segments)
    assert sorted(p.name for p in out.iterdir()) == [
        "plain.wav",
        "pooled.vtt",
        "pooled.wav",
        "speech.srt",
        "speech.wav",
    ]

    # One file per segment: each gets its own subtitles, timed from its own start.
    result.per_segment.setChecked(True)
    written = result.save_to(out / "part.wav")
    audio = [p for p in written if p.suffix == ".wav"]
    subs = [p for p in written if p.suffix == ".vtt"]
    assert len(audio) == len(subs) == len(segments)
    for sub, (first, end) in zip(subs, segments, strict=True):
        check_cues(parse_subtitles(sub.read_text(encoding="utf-8")), [(0, end - first)])


def test_a_dialogue_has_the_turn_pause_between_its_lines(qtbot, make_window, engine) -> None:  # type: ignore[no-untyped-def]
    library = SpeakerLibrary()
    library.add("Alice", engine.sample_speaker(1))
    library.add("Bob", engine.sample_speaker(2))
    window = make_window()
    window.speakers.refresh()
    window.voices.script_action.setChecked(True)
    fast(window, "Alice: 你好。今天天气不错。我们去散步吧。\nBob: 好的，再见。", batch=2)
    window.controls.pause_box.setValue(0.1)  # the segment pause, inside a turn
    outcome = synthesize(qtbot, window)
    store = window.result.store
    speakers = [r.speaker for r in sorted(outcome.results, key=lambda r: r.index)]
    assert speakers[0] == "Alice" and speakers[-1] == "Bob"
    assert speakers.count("Alice") >= 2  # a pause inside a turn too
    spans = [span for _, span in sorted(store.segments.items())]
    turn = pause_samples(SynthesisRequest("").turn_pause_seconds)  # the CLI's --turn-pause default
    assert outcome.job.request.turn_pause_seconds == SynthesisRequest("").turn_pause_seconds
    gaps = [spans[i][0] - spans[i - 1][1] for i in range(1, len(spans))]
    expected = [
        turn if speakers[i] != speakers[i - 1] else pause_samples(0.1) for i in range(1, len(spans))
    ]
    assert gaps == expected and turn in gaps and turn != pause_samples(0.1)
    assert spans[-1][1] == window.result.length
    audio = window.result.audio
    for i in range(1, len(spans)):
        assert not audio[spans[i - 1][1] : spans[i][0]].any()  # silence

    # The CLI's way (JobPlan.join of the same plan, seed and voices) gives the same audio.
    text = window.editor.text()
    plan = plan_dialogue(engine, parse_script(text), outcome.job.voices, outcome.job.request)
    joined = plan.join(list(engine.synthesize(plan)))
    assert len(joined) == len(audio)
    # Same places to the sample; the samples themselves to float rounding (streamed pieces).
    assert np.allclose(joined, audio, atol=1e-4)
