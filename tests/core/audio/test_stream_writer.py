"""Flat-memory output: segments streamed to the file as they are finished equal the
audio the segments made, joined with the pauses; nothing is left half-written."""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.audio.m4b import AacWriter
from chattts_studio.core.audio.output import NO_AUDIO
from chattts_studio.core.audio.stream_writer import AudioStreamWriter, SegmentSink
from chattts_studio.core.audio.subtitles import parse_subtitles
from chattts_studio.core.engine.request import SynthesisRequest, join_clips
from chattts_studio.core.errors import AudioError


def clips(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = [24000, 1, 7919, 36000]
    clips = [(rng.standard_normal(n) * 0.3).astype(np.float32) for n in sizes]
    clips[0][:10] = 1.5  # out of range: clipped, as audio.save clips
    return clips


def test_streamed_wav_equals_the_joined_segments(tmp_path: Path) -> None:
    parts = clips()
    want = np.clip(join_clips(parts, 0.25), -1.0, 1.0)
    float_wav, pcm_wav = tmp_path / "f.wav", tmp_path / "p.wav"
    for path, as_float in ((float_wav, True), (pcm_wav, False)):
        with AudioStreamWriter(path, float_wav=as_float, pause_seconds=0.25) as out:
            places = [out.add_segment(p) for p in parts]
        assert out.frames == len(want)
    got, rate = sf.read(str(float_wav), dtype="float32")
    assert rate == 24000 and sf.info(str(float_wav)).subtype == "FLOAT"
    np.testing.assert_array_equal(got, want)  # sample for sample
    pcm, _ = sf.read(str(pcm_wav), dtype="float32")
    assert sf.info(str(pcm_wav)).subtype == "PCM_16"
    assert np.max(np.abs(pcm - want)) <= 1 / 32768 + 1e-7  # within quantisation
    # Each segment's place: after the previous one and one pause.
    assert places[0] == (0, 24000) and places[1] == (30000, 30001)
    assert places[-1][1] == len(want)


@pytest.mark.parametrize("ext", ["flac", "ogg", "mp3"])
def test_streamed_compressed_formats(tmp_path: Path, ext: str) -> None:
    parts = clips(1)
    path = tmp_path / f"a.{ext}"
    with AudioStreamWriter(path, pause_seconds=0.1, tags={"comment": "noise, not speech"}) as out:
        for part in parts:
            out.add_segment(part)
    info = sf.info(str(path))
    want = len(join_clips(parts, 0.1))
    assert info.samplerate == 24000 and abs(info.frames - want) <= 2048  # codec padding
    assert sf.SoundFile(str(path)).copy_metadata().get("comment") == "noise, not speech"
    if ext == "flac":
        got, _ = sf.read(str(path), dtype="float32")
        want_audio = np.clip(join_clips(parts, 0.1), -1, 1)
        assert np.max(np.abs(got - want_audio)) <= 1 / 32768 + 1e-7


def test_a_failed_or_empty_write_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "keep.wav"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt), AudioStreamWriter(target) as out:
        out.add_segment(np.ones(100, np.float32) * 0.1)
        raise KeyboardInterrupt  # Ctrl+C in the middle
    assert target.read_bytes() == b"old"
    with pytest.raises(AudioError, match="no audio"), AudioStreamWriter(tmp_path / "e.wav"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.wav"]
    with pytest.raises(AudioError, match=r"use \.wav"):
        AudioStreamWriter(tmp_path / "a.xyz")


@pytest.mark.parametrize("writer", [AudioStreamWriter, AacWriter])
def test_every_streaming_writer_shares_the_sink(
    tmp_path: Path, writer: Callable[..., SegmentSink]
) -> None:
    """SegmentSink's part of each writer: the gain applied and the samples clipped as the file
    gets them, the pause counted, an empty file refused in the one sentence audio.save says,
    and nothing left in the folder but the finished file."""
    path = tmp_path / ("a.wav" if writer is AudioStreamWriter else "a.m4b")
    sink = writer(path, pause_seconds=0.5, gain=2.0)
    samples = sink._samples(np.array([0.25, -0.75, 0.0], np.float32), scale=True)
    np.testing.assert_array_equal(samples, np.array([0.5, -1.0, 0.0], np.float32))
    assert sink._samples(np.array([[0.25]]), scale=False).tolist() == [0.25]
    with sink as out:
        out.add_segment(np.full(2400, 0.1, np.float32))
        assert out.add_segment(np.full(2400, 0.1, np.float32)) == (2400 + 12000, 16800)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    empty = path.with_stem("empty")
    with pytest.raises(AudioError) as refused, writer(empty):
        pass
    assert str(refused.value) == NO_AUDIO == "There is no audio to save."
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_synth_streams_what_the_engine_makes_with_subtitles(
    engine, private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """`synth -o` (streamed) against the same request run through the engine and joined."""
    from chattts_studio.core.cli.main import main

    text = "你好。今天很好，世界也好。Hello world. We walk home."
    out, subs = tmp_path / "s.wav", tmp_path / "s.srt"
    argv = ["synth", text, "-o", str(out), "--float", "--no-refine", "--seed", "3"]
    argv += ["--segment-size", "8", "--device", "cpu", "--subtitles", str(subs)]
    argv += ["--engine", "torch"]  # the reference below is the torch engine
    assert main(argv) == 0, capsys.readouterr().err
    got, _ = sf.read(str(out), dtype="float32")
    request = SynthesisRequest(text, seed=3, refine_text=False, segment_size=8)
    results = list(engine.synthesize(request))
    want = np.clip(join_clips([r.audio for r in results], 0.25), -1.0, 1.0)
    np.testing.assert_array_equal(got, want)
    assert "noise, not speech" in sf.SoundFile(str(out)).copy_metadata()["comment"]

    # One cue per sentence (the first sentence a segment of its own); the two sentences of the
    # last segment share its time by length.
    assert [r.text for r in results] == [
        "你好。",
        "今天很好，世界也好。",
        "Hello world. We walk home.",
    ]
    cues = parse_subtitles(subs.read_text(encoding="utf-8"))
    assert [c.text for c in cues] == [
        "你好。",
        "今天很好，世界也好。",
        "Hello world.",
        "We walk home.",
    ]
    first, second, third = (len(r.audio) for r in results)
    last = first + second + 12000
    starts = [0, first + 6000, last, None]
    ends = [first, first + 6000 + second, None, len(got)]
    for cue, start, end in zip(cues, starts, ends, strict=True):
        assert start is None or abs(cue.start * 24000 - start) <= 256
        assert end is None or abs(cue.end * 24000 - end) <= 256
    # 10 of 20 letters.
    assert cues[2].end == pytest.approx((last + third / 2) / 24000, abs=0.002)
