"""The check's recogniser: SenseVoice-Small through sherpa-onnx, one non-autoregressive pass per
transcript. A folder holds model.onnx (or model.int8.onnx) and tokens.txt; one recogniser per
language, made on first use.
"""

from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core.asr import models
from chattts_studio.core.asr.recognizer import MODEL_RATE, at_model_rate
from chattts_studio.core.asr.score import DEMO_RECOGNIZER
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

TOKENS_FILE = "tokens.txt"
MODEL_FILES = ("model.int8.onnx", "model.onnx")  # the first found is used
LANGUAGES = ("zh", "en", "yue", "ja", "ko", "auto")


class SenseVoice:
    name = "sensevoice"  # DEMO_RECOGNIZER for the demo's random weights (models.is_demo)

    def __init__(self, folder: Path, threads: int = 1, provider: str = "cpu") -> None:
        """Raises ModelError (one sentence) when `folder` holds no model."""
        model = next((folder / n for n in MODEL_FILES if (folder / n).is_file()), None)
        if model is None or not (folder / TOKENS_FILE).is_file():
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "No speech recognition model in {folder}: it needs model.onnx and "
                        "tokens.txt (download it from the Models dialog or with "
                        "chattts-studio-cli model).",
                    ),
                    folder=str(folder),
                )
            )
        self.model, self.tokens = model, folder / TOKENS_FILE
        if models.is_demo(folder):
            self.name = DEMO_RECOGNIZER
        self.threads, self.provider = max(1, threads), provider
        self._by_language: dict[str, Any] = {}

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        """What the model hears in mono float32 `audio` (any rate), in `language` (one of
        LANGUAGES; another is heard as "auto")."""
        recognizer = self._recognizer(language if language in LANGUAGES else "auto")
        stream = recognizer.create_stream()
        stream.accept_waveform(MODEL_RATE, at_model_rate(audio, sample_rate))
        recognizer.decode_stream(stream)
        return str(stream.result.text)

    def timed(self, audio: np.ndarray, sample_rate: int, language: str) -> list[tuple[str, float]]:
        """The tokens the model hears, each with the second its CTC spike sits at (word pieces
        start with "▁"; each Chinese character is a token)."""
        recognizer = self._recognizer(language if language in LANGUAGES else "auto")
        stream = recognizer.create_stream()
        stream.accept_waveform(MODEL_RATE, at_model_rate(audio, sample_rate))
        recognizer.decode_stream(stream)
        result = stream.result
        return [(str(t), float(s)) for t, s in zip(result.tokens, result.timestamps, strict=False)]

    def unload(self) -> None:
        self._by_language.clear()

    def _recognizer(self, language: str) -> Any:
        made = self._by_language.get(language)
        if made is None:
            import sherpa_onnx

            made = sherpa_onnx.OfflineRecognizer.from_sense_voice(
                model=str(self.model),
                tokens=str(self.tokens),
                num_threads=self.threads,
                provider=self.provider,
                language=language,
                use_itn=False,  # the check reads numbers itself, as the model read them
            )
            self._by_language[language] = made
        return made
