"""Start-up and switch costs that do not depend on the machine: unchanged weights are not
hashed again, ChatTTS's own second hash check is not run, and a precision switch keeps what is
in memory."""

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.weights import hashcache, models


def _count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every file Studio hashes; and fail if ChatTTS's own check hashes anything."""
    hashed: list[Path] = []
    real = models.sha256_file

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        hashed.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(models, "sha256_file", counting)
    import ChatTTS.utils.dl as dl

    def chattts_hash(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("ChatTTS hashed the weights a second time")

    monkeypatch.setattr(dl, "sha256", chattts_hash)
    return hashed


def test_unchanged_weights_are_not_hashed_again_and_a_change_is(
    private_home: Path, demo_model: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "weights"
    shutil.copytree(models.resolve(demo_model).folder, folder)
    hashed = _count_hashes(monkeypatch)
    Engine().load(str(folder), "cpu")  # first time: every file
    assert len(hashed) == len(models.ASSET_FILES)
    hashed.clear()
    Engine().load(str(folder), "cpu")  # unchanged: none
    assert hashed == []
    # A changed file (same size, new bytes and time) is hashed again, and refused.
    target = folder / "asset" / "Vocos.safetensors"
    data = bytearray(target.read_bytes())
    data[200] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(models.ModelError, match="Vocos"):
        Engine().load(str(folder), "cpu")
    assert hashed == [target]  # the unchanged files before it were not read again
    # `model verify` always reads every byte.
    hashed.clear()
    with pytest.raises(models.ModelError):
        models.verify(folder, models.hashes_for(models.resolve(str(folder))), "x")
    assert target in hashed and len(hashed) > 1


def test_the_cache_keys_on_inode_too(private_home: Path, tmp_path: Path) -> None:
    """A file replaced by another of the same size and time (a copy with preserved times) is
    a new inode: not trusted. A damaged cache file is no verdict."""
    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 100)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    hashcache.remember({path: hashcache.Hashed(digest, hashcache.stamp(path.stat()))})
    assert hashcache.cached(path) == digest
    stat = path.stat()
    other = tmp_path / "g.bin"
    other.write_bytes(b"b" * 100)
    os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(other, path)
    assert hashcache.cached(path) is None
    hashcache.remember({path: hashcache.Hashed("x" * 64, hashcache.stamp(path.stat()))})
    (private_home / hashcache.CACHE_NAME).write_text("{ damaged")
    assert hashcache.cached(path) is None


def test_a_precision_switch_keeps_the_model_and_gives_the_same_audio(
    private_home: Path, demo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fp32 -> int8 -> bf16 -> fp32 in memory: no new ChatTTS load, and fp32 after the round
    trip speaks exactly as before it (the GPT is read from its file again, not cast back)."""
    import ChatTTS

    engine = Engine()
    engine.load(demo_model, "cpu", "fp32")
    request = SynthesisRequest("你好。", refine_text=False, seed=3)
    before = np.concatenate([r.audio for r in engine.synthesize(request)])
    loads: list[int] = []
    real = ChatTTS.Chat._load

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        loads.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ChatTTS.Chat, "_load", counting)
    model = engine.model
    for precision in ("int8", "bf16", "fp32"):
        loaded = engine.load(demo_model, "cpu", precision)
        assert loaded.precision.value == precision and engine.model is model
    assert loads == []
    after = np.concatenate([r.audio for r in engine.synthesize(request)])
    assert np.array_equal(before, after)
    engine.load(demo_model, "cpu", "fp32", compile=True)  # anything else: a real load
    assert loads == [1]
    engine.unload()
