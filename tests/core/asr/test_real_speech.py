"""The check on real speech with a real recogniser: espeak-ng says a sentence whole and with a
word left out, PocketSphinx (a recogniser whose wheel ships its English model) listens, and
the check names the word that was left out. The speech is synthetic and the recogniser small:
this proves the plumbing and the alignment on audio, not a threshold for ChatTTS's voices."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.asr.recognizer import MODEL_RATE, at_model_rate, hear


class PocketSphinx:
    """English only: the test's recogniser (the product's are faster-whisper and SenseVoice)."""

    name = "pocketsphinx"

    def __init__(self) -> None:
        from pocketsphinx import Decoder

        self.decoder = Decoder(samprate=MODEL_RATE, loglevel="FATAL")

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        assert language == "en"
        pcm = np.clip(at_model_rate(audio, sample_rate) * 32767, -32768, 32767).astype("<i2")
        self.decoder.start_utt()
        self.decoder.process_raw(pcm.tobytes(), full_utt=True)
        self.decoder.end_utt()
        hyp = self.decoder.hyp()
        return "" if hyp is None else str(hyp.hypstr)


# espeak-ng's en-us+f2 voice at 150 words a minute: of the voices and speeds tried, the one
# PocketSphinx hears best (8% WER on the whole sentence below; 50-90% with the default voice).
VOICE, SPEED = "en-us+f2", "150"
TEXT = "The weather is very nice today so we will go to the park."


def _spoken(text: str, folder: Path) -> tuple[np.ndarray, int]:
    espeak = shutil.which("espeak-ng")
    assert espeak, "espeak-ng is missing: make test installs it (Debian package espeak-ng)"
    out = folder / "said.wav"
    subprocess.run([espeak, "-v", VOICE, "-s", SPEED, "-w", str(out), text], check=True)
    audio, rate = sf.read(out, dtype="float32")
    return audio, rate


@pytest.mark.parametrize("left_out", ["today", "very nice", "will"])
def test_words_left_out_of_real_speech_are_named(tmp_path: Path, left_out: str) -> None:
    recognizer = PocketSphinx()
    whole = hear(recognizer, TEXT, *_spoken(TEXT, tmp_path), "en")
    short = hear(recognizer, TEXT, *_spoken(TEXT.replace(f"{left_out} ", ""), tmp_path), "en")
    assert left_out in short.missing, short
    assert not whole.missing and whole.score < 0.1, whole  # only the recogniser's own slips
    assert short.score > whole.score
