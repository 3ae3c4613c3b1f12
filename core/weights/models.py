"""The models the app knows: demo weights, the official weights
(`chattts_studio.core.weights.download`) and folders the user has, each file checked against a
sha256 map. Importing this stays light.
"""

import errno
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chattts_studio.core import paths
from chattts_studio.core.atomic import (
    AccessDenied,
    FileInUse,
    new_folder,
    os_error_reason,
    replace_file,
)
from chattts_studio.core.errors import Cancelled, ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

# ChatTTS's on-disk layout (config/config.py); the same for every model.
ASSET_FILES = (
    "asset/Decoder.safetensors",
    "asset/DVAE.safetensors",
    "asset/Embed.safetensors",
    "asset/Vocos.safetensors",
    "asset/gpt/config.json",
    "asset/gpt/model.safetensors",
    "asset/tokenizer/special_tokens_map.json",
    "asset/tokenizer/tokenizer_config.json",
    "asset/tokenizer/tokenizer.json",
)
MANIFEST = "studio-model.json"
MANIFEST_FORMAT = 1
OFFICIAL_REPO = "2Noise/ChatTTS"
# Dimensions of the tiny demo model; demo-full uses ChatTTS's own Config defaults.
TINY_DIMS: dict[str, Any] = {
    "gpt": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 2,
        "num_hidden_layers": 2,
    },
    "decoder": {"idim": 32, "odim": 32, "hidden": 32, "n_layer": 1, "bn_dim": 16},
    "dvae_encoder": {"idim": 32, "odim": 64, "hidden": 32, "n_layer": 1, "bn_dim": 16},
    "dvae_decoder": {"idim": 32, "odim": 32, "hidden": 32, "n_layer": 1, "bn_dim": 16},
    "vq_dim": 64,
    "vocos": {"dim": 32, "intermediate_dim": 64, "num_layers": 1},
}
DEMO_SIZES: dict[str, dict[str, Any] | None] = {"demo": TINY_DIMS, "demo-full": None}
RANDOM_LABEL = QT_TRANSLATE_NOOP("core", "random weights: they produce noise, not speech")
# What a demo model's first build says (a load stage: the window shows it translated).
FIRST_BUILD = {
    "demo": QT_TRANSLATE_NOOP("Stage", "building the demo weights (first use)"),
    "demo-full": QT_TRANSLATE_NOOP("Stage", "building the demo-full weights (first use)"),
}

ByteProgress = Callable[[int, int], None]  # (done, total) bytes
CancelCheck = Callable[[], bool]


@dataclass(frozen=True)
class Transfer:
    """How a helper model's download talks to its server: the Hub's address (None: the
    default), how long it waits for an answer, how often it resumes a broken transfer."""

    endpoint: str | None = None
    timeout: float = 30.0
    retries: int = 2


DEFAULT_TRANSFER = Transfer()


@dataclass(frozen=True)
class ModelInfo:
    """A model the user can pick, with what kind it is."""

    name: str  # demo, demo-full, official, or a folder path
    kind: str  # "demo", "official" or "folder"
    folder: Path
    random_weights: bool
    dims: dict[str, Any] | None  # None: ChatTTS's real dimensions

    @property
    def label(self) -> str:
        if self.random_weights:
            return f"{self.name} ({RANDOM_LABEL})"
        if self.kind == "official":
            return "official ChatTTS weights (2Noise/ChatTTS)"
        return f"ChatTTS weights in {self.folder}"


def hash_key(relative: str) -> str:
    """The key ChatTTS's sha256 map uses for a file (utils/dl.py)."""
    return "sha256_" + relative.replace("/", "_").replace(".", "_")


def official_hashes() -> dict[str, str]:
    """ChatTTS's own sha256 map (res/sha256_map.json), read without importing the package,
    whose __init__ imports torch, transformers and the rest of its model code."""
    spec = importlib.util.find_spec("ChatTTS")
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not folders:
        raise ModelError("ChatTTS is not installed, so its sha256 hashes cannot be read.")
    with open(Path(folders[0]) / "res" / "sha256_map.json", encoding="utf-8") as fh:
        return dict(json.load(fh))


def sha256_file(
    path: Path,
    progress: ByteProgress | None = None,
    done: int = 0,
    total: int = 0,
    cancelled: CancelCheck | None = None,
    stamps: list[os.stat_result] | None = None,
) -> str:
    """The file's sha256; `stamps`, when given, receives the fstat of the handle read, taken
    before and after reading it (equal: the bytes hashed are the file's as it stands)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        if stamps is not None:
            stamps.append(os.fstat(fh.fileno()))
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
            if cancelled and cancelled():
                raise Cancelled()
        if stamps is not None:
            stamps.append(os.fstat(fh.fileno()))
    return digest.hexdigest()


def verify(
    folder: Path,
    hashes: dict[str, str],
    name: str,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    quick: bool = False,
    files: tuple[str, ...] = ASSET_FILES,
) -> None:
    """Check every file of the model (ChatTTS's `files` by default) against `hashes` (keyed by
    hash_key); raise ModelError naming the first bad one.

    `quick` reuses a file's verdict from an earlier full hash (this run or an earlier one, see
    hashcache.py) while its size, modification time and inode are unchanged; without it every
    byte is hashed again and the cache refreshed (`model verify`, downloads, builds)."""
    from chattts_studio.core.weights import hashcache

    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Model '{name}' is incomplete: {path} is missing."),
                name=name,
                path=str(folder / missing[0]),
            )
        )
    total = sum((folder / f).stat().st_size for f in files)
    done = 0
    hashed: dict[Path, hashcache.Hashed] = {}
    try:
        for relative in files:
            path = folder / relative
            size = path.stat().st_size
            digest = hashcache.cached(path) if quick else None
            if digest is None:
                stamps: list[os.stat_result] = []
                digest = sha256_file(path, progress, done, total, cancelled, stamps=stamps)
                read_as_is = len(stamps) == 2 and len({hashcache.stamp(s) for s in stamps}) == 1
                if digest == hashes.get(hash_key(relative)) and read_as_is:
                    hashed[path] = hashcache.Hashed(digest, hashcache.stamp(stamps[0]))
            done += size
            if progress:
                progress(done, total)
            if digest != hashes.get(hash_key(relative)):
                raise ModelError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core",
                            "Model '{name}' is damaged: {path} does not match its sha256 "
                            "hash. Download or build it again.",
                        ),
                        name=name,
                        path=str(path),
                    )
                )
    finally:
        hashcache.remember(hashed)


def _manifest(folder: Path) -> dict[str, Any] | None:
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None


def resolve(name: str) -> ModelInfo:
    """Map a model name or folder to a ModelInfo (nothing is read or checked yet)."""
    if name in DEMO_SIZES:
        return ModelInfo(name, "demo", paths.models_dir() / name, True, DEMO_SIZES[name])
    if name == "official":
        return ModelInfo(name, "official", paths.models_dir() / "official", False, None)
    folder = Path(name).expanduser()
    if not folder.is_dir() and ("/" in name or os.sep in name or name.startswith((".", "~"))):
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The model folder {folder} does not exist (moved or deleted?); choose the "
                    "folder again, or use demo, demo-full or official.",
                ),
                folder=str(folder),
            )
        )
    if not folder.is_dir():
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Unknown model '{name}': use demo, demo-full, official, or a folder "
                    "with ChatTTS weights.",
                ),
                name=name,
            )
        )
    manifest = _manifest(folder)
    if manifest and manifest.get("random_weights"):
        # A copy of demo weights: labelled as random, but a user's folder is never rebuilt.
        return ModelInfo(str(folder), "folder", folder, True, manifest.get("dims"))
    return ModelInfo(str(folder), "folder", folder, False, None)


def hashes_for(info: ModelInfo) -> dict[str, str]:
    if not info.random_weights:
        return official_hashes()
    manifest = _manifest(info.folder)
    if manifest is None:
        raise ModelError(f"Model '{info.name}' has no valid {MANIFEST}; build it again.")
    return dict(manifest["sha256"])


def weights_identity(info: ModelInfo) -> str:
    """A short hash that names the weights a verified model holds: verify() checked every
    asset file against these sha256 hashes before the model loaded, so other bytes in any file
    are another identity, while the same weights moved or copied elsewhere keep theirs. Nothing
    is read but the hash map."""
    hashes = hashes_for(info)
    record = {"sha256": [hashes.get(hash_key(f)) for f in ASSET_FILES], "dims": info.dims}
    data = json.dumps(record, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def build_demo(name: str, progress: Callable[[str], None] | None = None) -> ModelInfo:
    """(Re)build demo weights into the data folder, atomically: a temp folder, then renames
    (the old folder aside, the new one in place, the old one removed). Weights that are
    loaded (mapped into memory, here or by another program) cannot be renamed on Windows:
    ModelError says to unload them, and the old folder stays as it was."""
    info = resolve(name)
    if info.kind != "demo":
        raise ModelError(f"'{name}' is not a demo model; demo models are: demo, demo-full.")
    root = info.folder.parent
    try:
        tmp = new_folder(root, f".{info.folder.name}.")  # its mode follows the umask, as mkdir's
    except OSError as exc:
        raise ModelError(_not_built(name, root, exc)) from None
    old = info.folder.with_name(f".{info.folder.name}.old-{secrets.token_hex(4)}")
    try:
        from chattts_studio.core.weights import demo_weights

        demo_weights.build(tmp, info.dims, progress=progress)
        hashes = {hash_key(f): sha256_file(tmp / f) for f in ASSET_FILES}
        (tmp / MANIFEST).write_text(
            json.dumps(
                {
                    "format": MANIFEST_FORMAT,
                    "kind": "demo",
                    "name": name,
                    "random_weights": True,
                    "note": RANDOM_LABEL,
                    "dims": info.dims,
                    "sha256": hashes,
                },
                indent=2,
            )
        )
        _swap_in(tmp, info.folder, old, name)
    except ModelError:
        raise
    except Exception as exc:  # the disk (safetensors and tokenizers say it in their words)
        if isinstance(exc, OSError) or _nearly_full(root):
            raise ModelError(_not_built(name, root, exc)) from None
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return info


def _not_built(name: str, folder: Path, exc: BaseException) -> Sentence:
    """A demo build the disk refused, in one sentence; the weights there stay as they were."""
    if not isinstance(exc, OSError):
        exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "The demo weights '{name}' cannot be built in {folder}: {reason}; the files there "
            "are as they were.",
        ),
        name=name,
        folder=str(folder),
        reason=os_error_reason(exc),
    )


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 1 << 20
    except OSError:
        return False


def _swap_in(new: Path, folder: Path, old: Path, name: str) -> None:
    """`new` in place of `folder`, whose files wait in `old` until the caller removes them."""
    if folder.exists():
        try:
            replace_file(folder, old)
        except FileInUse:
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Model '{name}' is in use (loaded here or in another program): load "
                        "another model or close that program, then build it again.",
                    ),
                    name=name,
                )
            ) from None
        except AccessDenied:
            raise ModelError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core",
                        "Windows denied access to model '{name}': a program has its weights "
                        "loaded, or its folder is read-only or not your account's; load another "
                        "model or close that program, then build it again.",
                    ),
                    name=name,
                )
            ) from None
    try:
        replace_file(new, folder)
    except OSError:
        if old.exists():
            replace_file(old, folder)
        raise


def ensure(
    name: str,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    log: Callable[[str], None] | None = None,
) -> ModelInfo:
    """A verified model ready to load. Demo weights are built on first use and rebuilt when a
    file is missing or damaged; other models are never touched, only reported."""
    info = resolve(name)
    if info.kind == "official" and not info.folder.is_dir():
        raise ModelError(
            QT_TRANSLATE_NOOP(
                "core",
                "The official weights are not downloaded yet: run "
                "'chattts-studio-cli model download' or use the Models dialog.",
            )
        )
    # Files verified before and unchanged since (path, size, mtime, inode) are not hashed again.
    if info.kind != "demo":
        verify(info.folder, hashes_for(info), info.name, progress, cancelled, quick=True)
        return info
    if not info.folder.exists():  # first use: nothing is damaged, there is nothing yet
        if log:
            log(FIRST_BUILD[name])
        build_demo(name, progress=log)
        verify(info.folder, hashes_for(info), info.name, progress, cancelled)
        return info
    try:
        verify(info.folder, hashes_for(info), info.name, progress, cancelled, quick=True)
    except ModelError as problem:
        if log:
            log(f"building {info.name} ({RANDOM_LABEL}); reason: {problem}")
        build_demo(name, progress=log)
        verify(info.folder, hashes_for(info), info.name, progress, cancelled)
    return info


@dataclass(frozen=True)
class ModelStatus:
    info: ModelInfo
    present: bool
    verified: bool
    problem: str = ""


def status(
    names: tuple[str, ...] = ("demo", "demo-full", "official"), quick: bool = False
) -> list[ModelStatus]:
    """Each model's kind, folder and whether it verified; `quick` trusts files unchanged since
    this process last hashed them (for a window that must not freeze)."""
    rows = []
    for name in names:
        info = resolve(name)
        if not info.folder.is_dir():
            rows.append(ModelStatus(info, False, False, "not downloaded or built yet"))
            continue
        try:
            verify(info.folder, hashes_for(info), info.name, quick=quick)
            rows.append(ModelStatus(info, True, True))
        except ModelError as exc:
            rows.append(ModelStatus(info, True, False, str(exc)))
    return rows
