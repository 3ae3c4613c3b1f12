"""Saving every format, atomic writes, and playback captured from a virtual ALSA device."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import read_capture

from core.audio import Player, output_available, save
from core.errors import AudioError


def noise(seconds: float = 0.5, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.5, 0.5, int(24000 * seconds))).astype(np.float32)


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


def test_no_output_device_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "asound.conf"
    empty.write_text("pcm.!default { type hw; card 99 }\n")
    code = (
        "from core.audio import Player, output_available; import numpy as np\n"
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
