"""The check's recogniser on its real path: sherpa-onnx's SenseVoice recogniser (features,
CTC decoding, tokens) over a model built here in its layout with random weights (its
transcripts are noise: what is tested is that audio goes in and the model's tokens come out,
per language, the same every time, and through the check)."""

from pathlib import Path

import numpy as np
import pytest

from chattts_studio.core.asr import DEMO_MARKER, demo_model
from chattts_studio.core.asr.recognizer import hear
from chattts_studio.core.asr.score import DEMO_RECOGNIZER, AsrCheck
from chattts_studio.core.asr.sensevoice import SenseVoice
from chattts_studio.core.errors import ModelError


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_model.build(tmp_path_factory.mktemp("sensevoice"))


def _noise(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    audio = np.random.default_rng(seed).standard_normal(round(seconds * rate)) * 0.1
    return audio.astype(np.float32)


def test_audio_at_the_engine_s_rate_comes_out_as_the_model_s_tokens(folder: Path) -> None:
    recognizer = SenseVoice(folder, threads=2)
    symbols = set(demo_model.vocabulary(demo_model.SMALL.vocabulary))
    for language in ("zh", "en"):
        text = recognizer.transcribe(_noise(2.0, 24_000), 24_000, language)
        assert text, language
        assert set(text.replace(" ", "")) <= {c for s in symbols for c in s}, text
    # The same audio heard again: the same text; other audio: another.
    again = recognizer.transcribe(_noise(2.0, 24_000), 24_000, "zh")
    assert again == recognizer.transcribe(_noise(2.0, 24_000), 24_000, "zh")
    assert again != recognizer.transcribe(_noise(2.0, 24_000, seed=1), 24_000, "zh")
    assert set(recognizer._by_language) == {"zh", "en"}
    recognizer.unload()
    assert not recognizer._by_language


def test_a_take_is_checked_through_it(folder: Path) -> None:
    recognizer = SenseVoice(folder)
    got = hear(recognizer, "今天天气很好。", _noise(1.5, 24_000), 24_000, "zh")
    assert got.transcript == recognizer.transcribe(_noise(1.5, 24_000), 24_000, "zh")
    assert got.score > 0.0  # noise is not the text
    # The demo's random weights are named in the check, kept through the project's JSON.
    assert recognizer.name == DEMO_RECOGNIZER and got.recognizer == DEMO_RECOGNIZER and got.demo
    assert AsrCheck.from_json(got.to_json()) == got


def test_a_real_model_folder_is_not_the_demo(folder: Path, tmp_path: Path) -> None:
    """A folder with the same files but no demo marker (the official model's layout) is
    heard by "sensevoice"; a check written before the recogniser was recorded reads as ""."""
    real = tmp_path / "real"
    real.mkdir()
    for name in (demo_model.MODEL_FILE, demo_model.TOKENS_FILE):
        (real / name).write_bytes((folder / name).read_bytes())
    assert (folder / DEMO_MARKER).is_file() and not (real / DEMO_MARKER).exists()
    got = hear(SenseVoice(real), "今天天气很好。", _noise(1.5, 24_000), 24_000, "zh")
    assert got.recognizer == "sensevoice" and not got.demo
    old = {k: v for k, v in got.to_json().items() if k != "recognizer"}
    assert AsrCheck.from_json(old).recognizer == ""


def test_a_folder_without_a_model_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as caught:
        SenseVoice(tmp_path)
    assert "No speech recognition model in" in str(caught.value)
    assert "\n" not in str(caught.value)
