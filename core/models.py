"""The models the app knows: demo weights it builds, the official weights it downloads, and
folders the user already has. Every file is checked against a sha256 map before loading."""

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import demo_weights, paths
from .errors import Cancelled, DownloadError, ModelError

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
DEMO_SIZES: dict[str, dict[str, Any] | None] = {"demo": demo_weights.TINY_DIMS, "demo-full": None}
RANDOM_LABEL = "random weights: they produce noise, not speech"

ByteProgress = Callable[[int, int], None]  # (done, total) bytes
CancelCheck = Callable[[], bool]


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
    import ChatTTS

    with open(Path(ChatTTS.__file__).parent / "res" / "sha256_map.json") as fh:
        return dict(json.load(fh))


def sha256_file(
    path: Path,
    progress: ByteProgress | None = None,
    done: int = 0,
    total: int = 0,
    cancelled: CancelCheck | None = None,
) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
            if cancelled and cancelled():
                raise Cancelled()
    return digest.hexdigest()


def verify(
    folder: Path,
    hashes: dict[str, str],
    name: str,
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
) -> None:
    """Check every asset file against `hashes`; raise ModelError naming the first bad one."""
    missing = [f for f in ASSET_FILES if not (folder / f).is_file()]
    if missing:
        raise ModelError(f"Model '{name}' is incomplete: {folder / missing[0]} is missing.")
    total = sum((folder / f).stat().st_size for f in ASSET_FILES)
    done = 0
    for relative in ASSET_FILES:
        path = folder / relative
        digest = sha256_file(path, progress, done, total, cancelled)
        done += path.stat().st_size
        if digest != hashes.get(hash_key(relative)):
            raise ModelError(
                f"Model '{name}' is damaged: {path} does not match its sha256 "
                "hash. Download or build it again."
            )


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
    if not folder.is_dir():
        raise ModelError(
            f"Unknown model '{name}': use demo, demo-full, official, or a folder "
            "with ChatTTS weights."
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


def build_demo(name: str, progress: Callable[[str], None] | None = None) -> ModelInfo:
    """(Re)build demo weights into the data folder, atomically: a temp folder, then rename."""
    info = resolve(name)
    if info.kind != "demo":
        raise ModelError(f"'{name}' is not a demo model; demo models are: demo, demo-full.")
    root = info.folder.parent
    tmp = Path(tempfile.mkdtemp(prefix=f".{info.folder.name}.", dir=root))
    try:
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
        if info.folder.exists():
            shutil.rmtree(info.folder)
        os.replace(tmp, info.folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return info


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
            "The official weights are not downloaded yet: run "
            "'chattts-studio-cli model download' or use the Models dialog."
        )
    if info.kind != "demo":
        verify(info.folder, hashes_for(info), info.name, progress, cancelled)
        return info
    try:
        verify(info.folder, hashes_for(info), info.name, progress, cancelled)
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


def status(names: tuple[str, ...] = ("demo", "demo-full", "official")) -> list[ModelStatus]:
    rows = []
    for name in names:
        info = resolve(name)
        if not info.folder.is_dir():
            rows.append(ModelStatus(info, False, False, "not downloaded or built yet"))
            continue
        try:
            verify(info.folder, hashes_for(info), info.name)
            rows.append(ModelStatus(info, True, True))
        except ModelError as exc:
            rows.append(ModelStatus(info, True, False, str(exc)))
    return rows


def download_official(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
) -> ModelInfo:
    """Fetch 2Noise/ChatTTS into the data folder, verify every file, then move it in place.

    Files land in a staging folder first; huggingface_hub resumes partial files there after an
    interruption, and the finished folder replaces nothing until every hash matches.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import HfHubHTTPError
    from tqdm.auto import tqdm

    info = resolve("official")
    staging = paths.models_dir() / ".official.partial"
    staging.mkdir(parents=True, exist_ok=True)
    hashes = official_hashes()
    done_before = [0]

    class ByteBar(tqdm):  # type: ignore[misc, type-arg]
        """Routes huggingface_hub's byte progress to our callback and checks for cancel."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = False
            kwargs["file"] = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the bar
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            result = super().update(n)
            if progress:
                progress(done_before[0] + int(self.n), 0)
            if cancelled and cancelled():
                raise Cancelled()
            return result

    try:
        for relative in ASSET_FILES:
            target = staging / relative
            if target.is_file() and sha256_file(target) == hashes[hash_key(relative)]:
                done_before[0] += target.stat().st_size
                continue
            hf_hub_download(
                OFFICIAL_REPO,
                relative,
                local_dir=str(staging),
                tqdm_class=ByteBar,
                endpoint=endpoint,
                etag_timeout=30,
            )
            if sha256_file(target) != hashes[hash_key(relative)]:
                target.unlink(missing_ok=True)
                raise DownloadError(
                    f"The downloaded {relative} does not match ChatTTS's sha256 "
                    "hash; it was discarded and nothing was replaced."
                )
            done_before[0] += target.stat().st_size
    except (Cancelled, DownloadError):
        raise
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise DownloadError(
            f"Could not download the official weights from Hugging Face "
            f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]}). "
            "Partial files are kept and the next try resumes."
        ) from None
    except Exception as exc:  # connection and timeout errors come from several libraries
        raise DownloadError(
            f"Could not download the official weights ({type(exc).__name__}). "
            "Partial files are kept and the next try resumes."
        ) from None
    verify(staging, hashes, "official")
    if info.folder.exists():
        shutil.rmtree(info.folder)
    for relative in ASSET_FILES:
        (info.folder / relative).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / relative, info.folder / relative)
    shutil.rmtree(staging, ignore_errors=True)
    return info
