"""Saving every format, atomic writes, and playback captured from a virtual ALSA device."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from audio_fakes import noise, paced_output
from conftest import read_capture

from chattts_studio.core.audio.output import save
from chattts_studio.core.audio.player import Player, output_available
from chattts_studio.core.errors import AudioError


@pytest.mark.parametrize("ext", [".wav", ".flac", ".ogg", ".mp3"])
def test_every_format_reads_back(tmp_path: Path, ext: str) -> None:
    audio = noise()
    path = save(tmp_path / f"out{ext}", audio)
    back, rate = sf.read(str(path), dtype="float32")
    assert rate == 24000
    assert abs(len(back) - len(audio)) <= 2048  # lossy codecs pad a frame
    if ext in (".wav", ".flac"):
        np.testing.assert_allclose(back, audio, atol=1 / 32768 + 1e-6)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp file left"


def test_float_wav_is_bit_exact(tmp_path: Path) -> None:
    audio = noise()
    back, _ = sf.read(str(save(tmp_path / "f.wav", audio, float_wav=True)), dtype="float32")
    assert np.array_equal(back, audio)


def test_bad_targets_give_one_sentence_and_leave_no_file(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match="is a folder"):
        save(tmp_path, noise())
    with pytest.raises(AudioError, match="does not exist"):
        save(tmp_path / "missing" / "x.wav", noise())
    with pytest.raises(AudioError, match=r"use \.wav"):
        save(tmp_path / "x.txt", noise())
    with pytest.raises(AudioError, match="Cannot"):
        save(Path("/proc/x.wav"), noise())
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "keep.wav"
    save(target, noise(seed=1))
    before = target.read_bytes()

    def broken_write(*_args: object, **_kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sf, "write", broken_write)
    with pytest.raises(AudioError, match="No space left"):
        save(target, noise(seed=2))
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.wav"]


def test_playback_is_captured_bit_exactly(capture_dir: Path) -> None:
    audio = noise(0.3, seed=3)
    player = Player()
    player.play(audio)
    assert player.wait(10)
    captured = read_capture(capture_dir)
    start = int(np.flatnonzero(captured)[0])
    assert np.array_equal(captured[start : start + len(audio)], audio)
    assert player.position == len(audio)


def test_playback_from_an_offset_and_stop(capture_dir: Path) -> None:
    audio = noise(0.3, seed=4)
    player = Player()
    player.play(audio, start=2400)
    assert player.wait(10)
    captured = read_capture(capture_dir)
    start = int(np.flatnonzero(captured)[0])
    assert np.array_equal(captured[start : start + len(audio) - 2400], audio[2400:])
    player.play(noise(30, seed=5))
    player.stop()
    assert not player.playing


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def captured_audio(capture_dir: Path) -> np.ndarray:
    """What the device received, from its first non-zero sample (priming zeros dropped)."""
    captured = read_capture(capture_dir)
    return captured[int(np.flatnonzero(captured)[0]) :]  # type: ignore[no-any-return]


def test_a_stream_fed_in_chunks_plays_them_without_a_gap(
    capture_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = paced_output(monkeypatch)  # real time: short waits between feeds do not starve it
    chunks = [noise(0.25, seed=10 + k) for k in range(5)]
    player = Player()
    player.open_stream(24000)
    for k, chunk in enumerate(chunks):
        assert player.feed(chunk)
        if k in (1, 3):
            time.sleep(0.03)  # far shorter than what is queued
    assert player.playing
    player.end_of_stream()
    assert player.wait(20)
    assert len(opened) == 1  # one stream for all the chunks
    whole = np.concatenate(chunks)
    captured = captured_audio(capture_dir)
    assert np.array_equal(captured[: len(whole)], whole)
    assert not captured[len(whole) :].any()
    assert player.underruns == 0 and player.silences == []
    assert player.position == len(whole)
    assert not player.feed(chunks[0])  # an ended stream takes nothing more


def test_a_starved_stream_plays_silence_and_goes_on(
    capture_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paced_output(monkeypatch, silence_only=True)
    first, second = noise(0.2, seed=20), noise(0.2, seed=21)
    player = Player()
    player.open_stream(24000, first)
    wait_until(lambda: player.underruns >= 1)  # everything queued has played: it waits
    time.sleep(0.1)
    assert player.playing and player.position == len(first)
    assert player.feed(second)
    player.end_of_stream()
    assert player.wait(20)
    assert player.underruns >= 1
    at, gap = player.silences[0]
    # The gap is counted in samples the device played; a loaded machine paces them slower
    # than the wall clock, so only its exact place in the capture is checked.
    assert at == len(first) and gap > 0
    captured = captured_audio(capture_dir)
    assert np.array_equal(captured[: len(first)], first)
    assert not captured[len(first) : len(first) + gap].any()
    assert np.array_equal(captured[len(first) + gap : len(first) + gap + len(second)], second)
    assert player.position == len(first) + len(second)


def test_truncate_drops_queued_audio(capture_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paced_output(monkeypatch)
    first, second, third = noise(0.4, seed=30), noise(0.4, seed=31), noise(0.2, seed=32)
    player = Player()
    player.open_stream(24000, first)
    player.feed(second)
    cut = len(first) + 1000
    assert player.position < cut
    assert player.truncate(cut) == cut  # not played yet: dropped exactly there
    player.feed(third)
    player.end_of_stream()
    assert player.wait(20)
    expected = np.concatenate([first, second[:1000], third])
    captured = captured_audio(capture_dir)
    assert np.array_equal(captured[: len(expected)], expected)
    assert not captured[len(expected) :].any()


def test_truncate_behind_what_played_drops_only_the_queue(
    capture_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paced_output(monkeypatch)
    first, second, third = noise(0.2, seed=40), noise(1.0, seed=41), noise(0.2, seed=42)
    player = Player()
    player.open_stream(24000, first, start=500)  # positions count from 500
    player.feed(second)
    wait_until(lambda: player.position >= 500 + len(first) + 2400)
    end = player.truncate(500 + len(first))  # already played: it cannot be unheard
    assert 500 + len(first) + 2400 <= end < 500 + len(first) + len(second)
    assert player.feed(third)
    player.end_of_stream()
    assert player.wait(20)
    heard = end - 500
    expected = np.concatenate([first, second, third])
    expected = np.concatenate([expected[:heard], third])
    captured = captured_audio(capture_dir)
    assert np.array_equal(captured[: len(expected)], expected)
    assert player.position == end + len(third)


def test_stop_ends_a_stream_and_play_still_plays_a_whole_buffer(capture_dir: Path) -> None:
    player = Player()
    player.open_stream(24000, noise(0.1, seed=50))
    player.stop()
    assert not player.playing and not player.feed(noise(0.1))
    audio = noise(0.2, seed=51)
    player.play(audio)
    assert not player.feed(noise(0.1))  # a whole buffer takes nothing more
    assert player.wait(10)
    captured = captured_audio(capture_dir)
    assert np.array_equal(captured[: len(audio)], audio) and not captured[len(audio) :].any()


def test_no_output_device_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "asound.conf"
    empty.write_text("pcm.!default { type hw; card 99 }\n")
    code = (
        "from chattts_studio.core.audio.player import Player, output_available\n"
        "import numpy as np\n"
        "print(output_available())\n"
        "try:\n    Player().play(np.zeros(10, dtype=np.float32))\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    env = {**os.environ, "ALSA_CONFIG_PATH": str(empty)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    ).stdout
    assert "No audio output device" in out and "AudioError" in out
    assert output_available() is None  # the test session's virtual device is fine


def test_a_stop_while_a_stream_opens_leaves_nothing_playing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A growing stream is opened on a thread of its own: a stop() that comes while it opens
    (before the player holds the stream) still ends it, or it would play silence for ever."""
    import sounddevice as sd

    player = Player()
    real = sd.OutputStream
    opened: list[object] = []

    def stopped_while_opening(*args: object, **kwargs: object) -> object:
        stream = real(*args, **kwargs)
        opened.append(stream)
        player.stop()  # the UI thread's Stop, while this thread opens the stream
        return stream

    monkeypatch.setattr(sd, "OutputStream", stopped_while_opening)
    ticket = player.expect_stream()
    assert player.playing
    assert player.open_stream(24000, noise(0.2), ticket=ticket) is False
    assert len(opened) == 1 and opened[0].closed  # type: ignore[attr-defined]
    assert not player.playing and not player.feed(noise(0.1))
    ticket = player.expect_stream()
    player.play(noise(0.05))  # a whole buffer (an audition) takes the player over
    assert player.open_stream(24000, noise(0.2), ticket=ticket) is False
    assert len(opened) == 2  # the audition's: the voided stream was never made
    player.stop()


def test_a_feeder_stopped_while_its_stream_opens_leaves_nothing_playing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result panel's Stop (or the window closing) while the feeder's thread is still
    opening the stream: once that open returns, nothing plays and nothing waits to."""
    import threading

    import sounddevice as sd

    from chattts_studio.core.results.feeder import StoreFeeder
    from chattts_studio.core.results.result_store import ResultStore

    store = ResultStore.create(tmp_path)
    store.append(noise(0.5))
    player = Player()
    real = sd.OutputStream
    opening, go_on = threading.Event(), threading.Event()
    opened: list[object] = []

    def slow(*args: object, **kwargs: object) -> object:
        opening.set()
        go_on.wait(10)
        stream = real(*args, **kwargs)
        opened.append(stream)
        return stream

    monkeypatch.setattr(sd, "OutputStream", slow)
    feeder = StoreFeeder(player, store, 0)
    feeder.open()
    assert opening.wait(10) and player.playing
    player.stop()  # as ResultPlayback.stop: the feeder's stop, then the player's
    go_on.set()
    feeder.stop()
    assert not feeder.alive and feeder.lost
    assert not player.playing
    assert all(stream.closed for stream in opened)  # type: ignore[attr-defined]
