"""`synth --speaker`: a name the speaker library lacks is refused in one sentence before the
model loads (naming the library and how to list it); every form it takes still reaches it."""

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.cli.main import main
from chattts_studio.core.errors import ModelError

LOADING = "the test stopped the model load here"


@pytest.fixture
def no_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine.load ends the command with LOADING: a run that says it got as far as the load."""
    from chattts_studio.core.engine.engine import Engine

    def stopped(*_args: object, **_kwargs: object) -> None:
        raise ModelError(LOADING)

    monkeypatch.setattr(Engine, "load", stopped)


def synth(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> tuple[int, str]:
    code = main(["synth", "你好。", "-o", str(out), *argv])
    return code, capsys.readouterr().err


def test_a_speaker_the_library_lacks_is_refused_before_the_model_loads(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_load: None
) -> None:
    code, stderr = synth(capsys, tmp_path / "a.wav", "--speaker", "Nobody")
    assert code == 2
    assert LOADING not in stderr  # refused before the load
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr
    said = lines[0]
    assert said.startswith("error: 'Nobody' is not a valid speaker")
    assert str(private_home / "speakers.json") in said  # the library it looked in
    assert "chattts-studio-cli speakers list" in said  # and how to see what is there
    assert not (tmp_path / "a.wav").exists()


def test_a_blend_with_a_part_the_library_lacks_is_refused_before_the_load(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_load: None
) -> None:
    code, stderr = synth(capsys, tmp_path / "a.wav", "--speaker", "seed:3*0.5+Nobody*0.5")
    assert code == 2 and LOADING not in stderr
    assert "'Nobody' in the voice blend is not a library speaker" in stderr


@pytest.mark.parametrize(
    "speaker",
    ["42", "seed:7", "alloy", "Ann", "Ann*0.5+seed:3*0.5", "Ann (2)", "x" * 150],
)
def test_every_speaker_form_still_reaches_the_load(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_load: None,
    speaker: str,
) -> None:
    """A seed, an OpenAI voice name, a library name (one with a space and a number too), a
    blend, and a string as long as an embedding: the check lets each through (an embedding's
    values are checked once the model is loaded)."""
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary()
    library.add("Ann", "豆" * 40 + "a", seed=5)  # a library keeps the form, not a model's check
    library.add("Ann (2)", "豆" * 40 + "b", seed=6)
    code, stderr = synth(capsys, tmp_path / "a.wav", "--speaker", speaker)
    assert code == 2 and LOADING in stderr, stderr


def test_seed_colon_n_is_the_seed_s_voice(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--speaker seed:5` speaks as `--speaker 5` (as in a blend), where it used to be read as
    an embedding and refused after the load."""
    argv = ("--no-refine", "--device", "cpu", "--engine", "torch", "--float")
    plain, named = tmp_path / "plain.wav", tmp_path / "named.wav"
    assert synth(capsys, plain, "--speaker", "5", *argv)[0] == 0
    code, stderr = synth(capsys, named, "--speaker", "seed:5", *argv)
    assert code == 0, stderr
    assert np.array_equal(sf.read(str(plain))[0], sf.read(str(named))[0])
