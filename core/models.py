"""The models the app knows: demo weights it builds, the official weights it downloads, and
folders the user already has. Every file is checked against a sha256 map before loading."""

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from . import demo_weights, paths
from .atomic import os_error_reason
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
    quick: bool = False,
) -> None:
    """Check every asset file against `hashes`; raise ModelError naming the first bad one.

    `quick` reuses a file's earlier verdict while its size and modification time are unchanged:
    for status displays only; loading always hashes every byte."""
    missing = [f for f in ASSET_FILES if not (folder / f).is_file()]
    if missing:
        raise ModelError(f"Model '{name}' is incomplete: {folder / missing[0]} is missing.")
    total = sum((folder / f).stat().st_size for f in ASSET_FILES)
    done = 0
    for relative in ASSET_FILES:
        path = folder / relative
        stat = path.stat()
        stamp = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        digest = _VERIFIED.get(stamp) if quick else None
        if digest is None:
            digest = sha256_file(path, progress, done, total, cancelled)
            _VERIFIED[stamp] = digest
        done += stat.st_size
        if digest != hashes.get(hash_key(relative)):
            raise ModelError(
                f"Model '{name}' is damaged: {path} does not match its sha256 "
                "hash. Download or build it again."
            )


# (path, size, mtime_ns) -> sha256 of files hashed in this process, for quick status checks.
_VERIFIED: dict[tuple[str, int, int], str] = {}


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
    if not folder.is_dir() and (os.sep in name or name.startswith((".", "~"))):
        raise ModelError(
            f"The model folder {folder} does not exist (moved or deleted?); choose the folder "
            "again, or use demo, demo-full or official."
        )
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


OFFICIAL_REVISION = "main"
STAGING = ".official.partial"  # in models_dir(): finished files and `.part` files being fetched


class _Transient(Exception):
    """A network failure worth another try from where the part file ends."""


@dataclass
class _Remote:
    relative: str
    url: str  # where to GET it (after the Hub's redirect)
    size: int | None
    etag: str
    same_host: bool  # send the Hub's headers (token) only to the Hub itself


def _network_sentence(exc: BaseException, timeout: float) -> str:
    """One sentence for a failure of huggingface_hub's HTTP client (httpx2) or of a socket."""
    name = type(exc).__name__
    if "Offline" in name:
        return "downloads are switched off (the HF_HUB_OFFLINE environment variable is set)"
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return f"the server did not answer within {timeout:g} seconds"
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(code, int):
        return f"the server answered HTTP {code}"
    if "Connect" in name or isinstance(exc, ConnectionRefusedError):
        return "cannot connect to the server (check the network)"
    if "Protocol" in name or "Read" in name or isinstance(exc, ConnectionError):
        return "the connection broke off"
    return f"{name}: {str(exc).splitlines()[0][:120]}" if str(exc) else name


def _content_range_start(value: str | None) -> int | None:
    """'bytes 100-199/200' -> 100."""
    if not value or not value.startswith("bytes "):
        return None
    try:
        return int(value[6:].split("-", 1)[0])
    except ValueError:
        return None


class _Progress:
    """Byte progress that never goes backwards (a restarted file holds it until it catches up)."""

    def __init__(self, callback: ByteProgress | None, cancelled: CancelCheck | None) -> None:
        self.callback, self.cancelled = callback, cancelled
        self.done = self.shown = self.total = 0

    def add(self, n: int) -> None:
        self.done += n
        if self.callback and self.done > self.shown:
            self.shown = self.done
            self.callback(self.shown, self.total)
        if self.cancelled and self.cancelled():
            raise Cancelled()


def download_official(
    progress: ByteProgress | None = None,
    cancelled: CancelCheck | None = None,
    endpoint: str | None = None,
    *,
    hashes: dict[str, str] | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    revision: str = OFFICIAL_REVISION,
) -> ModelInfo:
    """Fetch 2Noise/ChatTTS into the data folder, verify every file, then move it in place.

    Each file is fetched over the Hub's HTTP file API into `<file>.part` in a staging folder;
    an interrupted or cancelled download keeps its part and the next call resumes it with a
    Range request (files already finished are not fetched again). A file is kept only when its
    sha256 matches `hashes` (ChatTTS's own map by default); the models folder is replaced only
    when every file matches. Only the listed safetensors and JSON files are fetched: nothing
    downloaded is executed or unpickled. `timeout` bounds every wait for the server; `retries`
    is how many times a broken transfer is resumed within this call.
    """
    info = resolve("official")
    hashes = official_hashes() if hashes is None else hashes
    missing = [f for f in ASSET_FILES if hash_key(f) not in hashes]
    if missing:
        raise DownloadError(f"There is no sha256 hash for {missing[0]}; nothing was downloaded.")
    root = paths.models_dir()
    staging = root / STAGING
    with _download_lock(root):
        staging.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # left by hf_hub_download
        bar = _Progress(progress, cancelled)
        try:
            _download_into(staging, hashes, endpoint, revision, timeout, retries, bar)
        except (Cancelled, DownloadError):
            raise
        except _Transient as exc:
            raise DownloadError(
                f"Could not download the official weights: {exc}. Partial files are kept "
                "and the next try resumes."
            ) from None
        except OSError as exc:
            if getattr(exc, "response", None) is None and exc.errno is not None:
                raise DownloadError(
                    f"Could not download the official weights into {staging}: "
                    f"{os_error_reason(exc)}. Partial files are kept and the next try resumes."
                ) from None
            raise DownloadError(
                f"Could not download the official weights: {_network_sentence(exc, timeout)}. "
                "Partial files are kept and the next try resumes."
            ) from None
        except Exception as exc:  # httpx2 and huggingface_hub errors, whatever their class
            raise DownloadError(
                f"Could not download the official weights: {_network_sentence(exc, timeout)}. "
                "Partial files are kept and the next try resumes."
            ) from None
        _install(staging, info.folder)
    return info


@contextlib.contextmanager
def _download_lock(root: Path) -> Iterator[None]:
    """One download at a time (the window and the command line share the staging folder)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the staging folder is still safe to reuse
        yield
        return
    with open(root / ".official.lock", "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DownloadError(
                "Another download of the official weights is running; wait for it to finish."
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _download_into(
    staging: Path,
    hashes: dict[str, str],
    endpoint: str | None,
    revision: str,
    timeout: float,
    retries: int,
    bar: _Progress,
) -> None:
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    headers = build_hf_headers()
    todo: list[_Remote] = []
    total: int | None = 0
    for relative in ASSET_FILES:
        target = staging / relative
        if target.is_file():
            if sha256_file(target, cancelled=bar.cancelled) == hashes[hash_key(relative)]:
                bar.done += target.stat().st_size
                total = None if total is None else total + target.stat().st_size
                continue
            target.unlink()  # stale or damaged: fetch it again
        url = hf_hub_url(OFFICIAL_REPO, relative, revision=revision, endpoint=endpoint)
        meta = _attempts(
            retries, bar, partial(get_hf_file_metadata, url, timeout=timeout, headers=dict(headers))
        )
        if not meta.etag:
            raise DownloadError(
                f"Could not download the official weights: the server gave no ETag for "
                f"{relative}, so it does not look like a Hugging Face hub."
            )
        location = meta.location or url
        todo.append(
            _Remote(relative, location, meta.size, meta.etag, _host(location) == _host(url))
        )
        total = None if total is None or meta.size is None else total + meta.size
    bar.total = total or 0
    needed = sum((r.size or 0) - _part_size(staging, r) for r in todo)
    free = shutil.disk_usage(staging).free
    if needed > free:
        raise DownloadError(
            f"The official weights need {needed / 2**20:.0f} MiB more disk space in {staging}; "
            f"only {free / 2**20:.0f} MiB are free."
        )
    bar.add(0)
    for remote in todo:
        _fetch(staging, remote, headers, timeout, retries, bar)
        target = staging / remote.relative
        if sha256_file(target, cancelled=bar.cancelled) != hashes[hash_key(remote.relative)]:
            target.unlink(missing_ok=True)
            raise DownloadError(
                f"The downloaded {remote.relative} does not match ChatTTS's sha256 "
                "hash; it was discarded and nothing was replaced."
            )


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc.lower()


def _part_paths(staging: Path, relative: str) -> tuple[Path, Path]:
    part = staging / f"{relative}.part"
    return part, part.with_name(part.name + ".etag")


def _part_size(staging: Path, remote: _Remote) -> int:
    part, tag = _part_paths(staging, remote.relative)
    try:
        if tag.read_text(encoding="utf-8") == remote.etag:
            return part.stat().st_size
    except (OSError, UnicodeDecodeError):
        pass
    return 0


T = TypeVar("T")


def _attempts(retries: int, bar: _Progress, call: Callable[[], T]) -> T:
    """Run `call`, again up to `retries` times after a network failure (not after an HTTP error
    such as 404, which another try does not fix)."""
    for attempt in range(retries + 1):
        try:
            return call()
        except (Cancelled, DownloadError):
            raise
        except Exception as exc:
            code = getattr(getattr(exc, "response", None), "status_code", 0) or 0
            final = (isinstance(code, int) and 0 < code < 500) or "Offline" in type(exc).__name__
            if attempt >= retries or final:
                raise
            for _ in range(int(5 * (attempt + 1))):  # back off up to a second per try
                time.sleep(0.1)
                bar.add(0)
    raise AssertionError("unreachable")


def _fetch(
    staging: Path,
    remote: _Remote,
    headers: dict[str, str],
    timeout: float,
    retries: int,
    bar: _Progress,
) -> None:
    """Fetch one file into `<file>.part` (resuming what is there), then rename it into place."""
    part, tag = _part_paths(staging, remote.relative)
    part.parent.mkdir(parents=True, exist_ok=True)
    have = _part_size(staging, remote)
    if have == 0:
        part.unlink(missing_ok=True)
        tag.write_text(remote.etag, encoding="utf-8")
    bar.add(have)

    def once() -> None:
        nonlocal have
        _get_range(part, remote, headers if remote.same_host else {}, timeout, have, bar)
        have = part.stat().st_size
        if remote.size is not None and have < remote.size:
            raise _Transient("the server sent less than the whole file")

    def tracked() -> None:
        nonlocal have
        try:
            once()
        except BaseException:
            have = part.stat().st_size if part.exists() else 0
            raise

    if remote.size is None or have < remote.size:
        _attempts(retries, bar, tracked)
    os.replace(part, staging / remote.relative)
    tag.unlink(missing_ok=True)


def _get_range(
    part: Path,
    remote: _Remote,
    headers: dict[str, str],
    timeout: float,
    have: int,
    bar: _Progress,
) -> None:
    from huggingface_hub.utils import get_session, hf_raise_for_status

    request_headers = {**headers, "Accept-Encoding": "identity"}
    if have:
        request_headers["Range"] = f"bytes={have}-"
    try:
        with get_session().stream(
            "GET", remote.url, headers=request_headers, timeout=timeout, follow_redirects=True
        ) as response:
            if response.status_code == 416:  # our part is longer than the file: start again
                part.unlink(missing_ok=True)
                raise _Transient("the server refused to resume a partial file")
            hf_raise_for_status(response)
            start = 0
            if have and response.status_code == 206:
                start = _content_range_start(response.headers.get("Content-Range")) or 0
            if start != have:  # the server ignored the Range: take the file from the start
                bar.done -= have
                have = 0
            with open(part, "r+b" if have else "wb") as fh:
                fh.seek(have)
                fh.truncate()
                for chunk in response.iter_bytes():  # as it arrives: nothing held back
                    fh.write(chunk)
                    have += len(chunk)
                    if remote.size is not None and have > remote.size:
                        break
                    bar.add(len(chunk))
    except (Cancelled, DownloadError, _Transient, OSError):
        raise  # OSError: the disk, or an HTTP error status from huggingface_hub
    except Exception as exc:
        name = type(exc).__name__
        if any(k in name for k in ("Timeout", "Protocol", "Network", "Read", "Connect")):
            raise _Transient(_network_sentence(exc, timeout)) from None
        raise
    if remote.size is not None and have > remote.size:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"The server sent more than the {remote.size} bytes of {remote.relative}; it was "
            "discarded and nothing was replaced."
        )


def _install(staging: Path, folder: Path) -> None:
    """Swap the verified staging folder in for the models folder in two renames."""
    extra = [p for p in staging.rglob("*") if p.is_file()]
    allowed = {staging / f for f in ASSET_FILES}
    for path in extra:
        if path not in allowed:
            path.unlink()
    old = folder.with_name(".official.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    try:
        os.replace(staging, folder)
    except OSError:
        if old.exists():
            os.replace(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)
