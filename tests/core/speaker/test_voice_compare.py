"""`chattts-studio-cli voice compare` on real speech the test makes (espeak-ng voices, a sox-
altered copy, a noisy copy at another sample rate), through the real CAM++
encoder: the same voice says same, another says different, at the documented threshold. The
sentences are not the ones the threshold was measured on (core/devtools/voiceeer.py)."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import run_cli

from chattts_studio.core.devtools.voiceeer import speak
from chattts_studio.core.speaker.encoder import THRESHOLD

HELD_OUT = [
    "The library closes early on Sundays, so we went to the museum instead.",
    "My brother fixed the old bicycle with a bag of spare parts.",
    "Three green apples were left in the basket on the kitchen table.",
]


def _wav(folder: Path, name: str, voice: str, text: str) -> Path:
    audio, rate = speak(voice, text)
    path = folder / name
    sf.write(path, audio, rate)
    return path


def test_the_same_voice_is_same_and_others_are_different(
    tmp_path: Path, real_speaker_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _wav(tmp_path, "ref.wav", "en+m1", HELD_OUT[0])
    same = [_wav(tmp_path, f"same{i}.wav", "en+m1", t) for i, t in enumerate(HELD_OUT[1:])]
    other = [
        _wav(tmp_path, "f3.wav", "en+f3", HELD_OUT[1]),
        _wav(tmp_path, "grandma.wav", "en+grandma", HELD_OUT[2]),
    ]
    files = [str(p) for p in [*same, *other]]
    code, out, err = run_cli(
        capsys, "voice", "compare", str(ref), *files, "--model", str(real_speaker_model), "--json"
    )
    assert code == 0, err
    body = json.loads(out)
    assert body["threshold"] == THRESHOLD and body["files"] == files and not body["demo"]
    assert body["same"] == [True, True, False, False], body["scores"]
    assert all(s >= THRESHOLD for s in body["scores"][:2])
    assert all(s < THRESHOLD for s in body["scores"][2:])
    model = str(real_speaker_model)
    code, out, _ = run_cli(capsys, "voice", "compare", str(ref), *files, "--model", model)
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"reference: {ref}"
    assert [line.split()[1] for line in lines[1:5]] == ["same", "same", "different", "different"]
    assert lines[-1].startswith(f"threshold {THRESHOLD:g}")


def test_altered_copies_of_the_voice_stay_the_same_voice(
    tmp_path: Path, real_speaker_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same voice resampled to 48 kHz with a little white noise, and made 3% slower by sox
    (tempo: the pitch kept), is still itself."""
    ref = _wav(tmp_path, "ref.wav", "en-us+f2", HELD_OUT[0])
    other = _wav(tmp_path, "other.wav", "en-us+f2", HELD_OUT[1])
    audio, _ = sf.read(other, dtype="float32")
    from scipy.signal import resample_poly

    noisy = resample_poly(audio, 320, 147).astype(np.float32)  # 22,050 Hz to 48 kHz
    noisy += 0.003 * np.random.default_rng(3).standard_normal(len(noisy)).astype(np.float32)
    sf.write(tmp_path / "48k.wav", noisy, 48_000)
    slower = tmp_path / "slower.wav"
    subprocess.run(["sox", str(other), str(slower), "tempo", "0.97"], check=True)
    code, out, err = run_cli(
        capsys, "voice", "compare", str(ref), str(tmp_path / "48k.wav"), str(slower),
        "--model", str(real_speaker_model), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["same"] == [True, True], out


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: None, "{p} cannot be read as audio: there is no such file."),
        (lambda p: p.write_bytes(b"not audio at all"), "{p} cannot be read as audio: "),
        (lambda p: sf.write(p, np.zeros(24_000 * 2, "f4"), 24_000),
         "{p} is silent: there is no voice to compare."),
        (lambda p: sf.write(p, 0.1 * np.ones(12_000, "f4"), 24_000),
         "{p} is 0.50 s long; the voice check needs at least 1 s."),
        (lambda p: sf.write(p, 0.1 * np.ones(8_000 * 2, "f4"), 8_000),
         "{p} is 8,000 Hz audio; the voice check needs at least 16,000 Hz."),
    ],
    ids=["missing", "not-audio", "silent", "short", "8-khz"],
)  # fmt: skip
def test_a_file_it_cannot_judge_is_one_sentence_and_exit_2(
    tmp_path: Path,
    real_speaker_model: Path,
    capsys: pytest.CaptureFixture[str],
    make,
    said: str,  # type: ignore[no-untyped-def]
) -> None:
    ref = _wav(tmp_path, "ref.wav", "en+m1", HELD_OUT[0])
    bad = tmp_path / "bad.wav"
    make(bad)
    code, out, err = run_cli(
        capsys, "voice", "compare", str(ref), str(bad), "--model", str(real_speaker_model)
    )
    assert code == 2 and out == ""
    assert err.startswith("error: " + said.format(p=bad)), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_without_the_official_model_it_says_how_to_get_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _wav(tmp_path, "ref.wav", "en+m1", HELD_OUT[0])
    code, out, err = run_cli(capsys, "voice", "compare", str(ref), str(ref))
    assert code == 2 and out == ""
    assert err == (
        "error: The voice check's speaker model is not downloaded yet: run 'chattts-studio-cli "
        "model download-speaker' or use the Models dialog.\n"
    )


def test_the_demo_model_runs_and_says_it_judges_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = _wav(tmp_path, "ref.wav", "en+m1", HELD_OUT[0])
    code, out, err = run_cli(
        capsys, "voice", "compare", str(ref), str(ref), "--model", "demo", "--json"
    )
    assert code == 0 and json.loads(out)["demo"] is True
    assert "random weights: these scores judge noise" in err
