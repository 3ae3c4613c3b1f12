"""The voice check's tests hear real speech (espeak-ng, core/devtools/voiceeer.py's speak)
through the real speaker encoder: 3D-Speaker's CAM++ as tests/speaker_model.py builds it from
the weights `make check` and `make test` fetch."""

from pathlib import Path

import pytest
from speaker_model import real_model_file

from chattts_studio.core.speaker.encoder import SpeakerEncoder


@pytest.fixture(scope="session")
def real_model() -> Path:
    return real_model_file()


@pytest.fixture(scope="session")
def encoder(real_model: Path) -> SpeakerEncoder:
    return SpeakerEncoder(real_model)
