"""A model that is loaded, replaced under Windows' rules (tests/windows_rules.py, applied to
this folder): a file of it open elsewhere is a sharing violation, its weights mapped into
memory are access denied, and either way Windows refuses to rename or delete its folder. A
download or a rebuild of it then says, in one sentence, to load another model first; nothing
of the loaded model changes, and a download keeps what it fetched, so the next try (the model
unloaded) installs it without fetching anything again."""

import errno
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_download import FakeHub, check_installed, hashes_of, hub, official, staging
from windows_rules import ACCESS_DENIED, ERROR_ACCESS_DENIED, WindowsRules

from chattts_studio.core import paths, platforms
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.errors import DownloadError, ModelError
from chattts_studio.core.weights import download, models

__all__ = ["hub"]  # a fixture of test_download, used here


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_download_over_loaded_weights_says_to_load_another_model(
    online: Path, hub: FakeHub, windows_rules: WindowsRules
) -> None:
    hashes = hashes_of(hub.files)
    download.download_official(endpoint=hub.endpoint, hashes=hashes)
    loaded = official() / "asset" / "gpt" / "model.safetensors"
    before = tree(official())
    hub.requests.clear()
    shutil.rmtree(paths.models_dir() / download.STAGING, ignore_errors=True)
    with pytest.raises(DownloadError) as caught, open(loaded, "rb"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes)
    assert str(caught.value) == (
        f"Cannot install the official weights: the files in {official()} are in use (loaded "
        "here or in another program). Load another model or close that program, then download "
        "again; the downloaded files are kept, so that takes a moment."
    )
    assert windows_rules.refused and tree(official()) == before
    assert sorted(tree(staging())) == sorted(hub.files)  # fetched and verified, kept
    assert not list(paths.models_dir().glob(".official.old*"))
    fetched = len(hub.gets())
    assert fetched == len(hub.files)
    # Mapped by numpy, whose mapping keeps a handle of its own (Python's mmap does, on
    # Windows too): refused as in use.
    mapped = np.memmap(loaded, dtype=np.uint8, mode="r")
    with pytest.raises(DownloadError, match="in use"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes)
    del mapped
    assert len(hub.gets()) == fetched  # nothing fetched again
    download.download_official(endpoint=hub.endpoint, hashes=hashes)  # let go: installed
    assert len(hub.gets()) == fetched
    check_installed(hub.files)


def test_a_download_over_weights_windows_denies_says_so_and_keeps_both(
    online: Path, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Access denied (a mapping with no handle left, a read-only folder): not retried, its own
    sentence, the installed weights as they were and the fetched files kept."""
    hashes = hashes_of(hub.files)
    download.download_official(endpoint=hub.endpoint, hashes=hashes)
    folder = official()
    before = tree(folder)
    real_replace, tries = os.replace, []

    def replace(src: object, dst: object) -> None:
        if Path(str(src)) == folder:
            tries.append(src)
            exc = PermissionError(errno.EACCES, ACCESS_DENIED)
            exc.winerror = ERROR_ACCESS_DENIED  # type: ignore[attr-defined]
            raise exc
        real_replace(src, dst)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(platforms, "OS_NAME", "nt")
        patch.setattr(os, "replace", replace)
        with pytest.raises(DownloadError) as caught:
            download.download_official(endpoint=hub.endpoint, hashes=hashes)
    assert str(caught.value) == (
        f"Cannot install the official weights: Windows denied access to {folder} (a "
        "program has its weights loaded, or it is read-only or not your account's). Load "
        "another model or close that program, then download again; the downloaded files are "
        "kept, so that takes a moment."
    )
    assert len(tries) == 1 and tree(folder) == before
    assert sorted(tree(staging())) == sorted(hub.files)


@pytest.fixture
def demo_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_model: str) -> Path:
    """A data folder with a copy of the session's demo weights, its own to rebuild."""
    shared = paths.models_dir() / demo_model
    home = tmp_path / "home"
    shutil.copytree(shared, home / "models" / demo_model)
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


def test_rebuilding_loaded_demo_weights_says_to_load_another_model(
    demo_home: Path, demo_model: str, windows_rules: WindowsRules
) -> None:
    info = models.resolve(demo_model)
    before = tree(info.folder)
    engine = Engine()
    engine.load(demo_model, "cpu", "fp32", engine="torch")
    try:
        with pytest.raises(ModelError) as caught:
            models.build_demo(demo_model)
        assert str(caught.value) == (  # its weights are mapped: access denied
            "Windows denied access to model 'demo': a program has its weights loaded, or its "
            "folder is read-only or not your account's; load another model or close that "
            "program, then build it again."
        )
        assert windows_rules.refused
        assert tree(info.folder) == before  # whole, as loaded
        assert sorted(p.name for p in info.folder.parent.iterdir()) == [demo_model]
    finally:
        engine.unload()
    models.build_demo(demo_model)  # unloaded: rebuilt in place
    models.verify(info.folder, models.hashes_for(info), demo_model)
    assert sorted(p.name for p in info.folder.parent.iterdir()) == [demo_model]


def test_an_onnx_export_in_use_is_deleted_later_not_said_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, windows_rules: WindowsRules
) -> None:
    """An export of older software still loaded by that software (its graph's weights mapped)
    stays, is not reported deleted, and goes at the next prune once let go."""
    from chattts_studio.core.engine.onnxrt import export

    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))
    current = "0123456789abcdef-f4-torch2.9.0-ort1.23.0"
    older = export.export_root() / "0123456789abcdef-f1-torch2.0.0-ort1.0.0"
    (older / "fp32").mkdir(parents=True)
    data = older / "fp32" / "step.onnx.data"
    data.write_bytes(b"\0" * 4096)
    mapped = np.memmap(data, dtype=np.uint8, mode="r")
    assert export.prune(current) == []
    assert data.exists() and windows_rules.refused
    del mapped
    assert export.prune(current) == [older] and not older.exists()
