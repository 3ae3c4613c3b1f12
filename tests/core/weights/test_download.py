"""Downloading the official weights from a fake Hugging Face hub on 127.0.0.1: resume after a
broken connection, a wrong file, a server that never answers, cancel, and byte progress."""

import hashlib
import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chattts_studio.core import paths
from chattts_studio.core.asr import models as asr_models
from chattts_studio.core.errors import Cancelled, DownloadError, ModelError
from chattts_studio.core.weights import download, models
from chattts_studio.core.weights.models import Transfer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def fake_files() -> dict[str, bytes]:
    """Small stand-ins for every official file, different from each other."""
    files = {}
    for number, relative in enumerate(models.ASSET_FILES):
        size = 64 * 1024 + 777 * number if relative.endswith(".safetensors") else 300 + number
        files[relative] = bytes((number * 7 + i * 13) % 251 for i in range(size))
    return files


def hashes_of(files: dict[str, bytes]) -> dict[str, str]:
    return {models.hash_key(r): hashlib.sha256(b).hexdigest() for r, b in files.items()}


class FakeHub:
    """Speaks the part of the Hub's file API that the download uses: HEAD and GET (with Range)
    on /{repo}/resolve/{revision}/{filename}, with X-Repo-Commit, ETag, X-Linked-Etag,
    X-Linked-Size and Content-Length as huggingface_hub's get_hf_file_metadata reads them."""

    def __init__(self, files: dict[str, bytes], repo: str = models.OFFICIAL_REPO) -> None:
        self.files = dict(files)
        self.repo = repo
        self.requests: list[tuple[str, str, str | None]] = []  # method, filename, Range
        self.paths: list[str] = []  # the paths of the file API's requests
        self.break_after: dict[str, int] = {}  # filename -> bytes sent before hanging up
        self.breaks_left = 0  # how many GETs are cut off
        self.wrong: dict[str, bytes] = {}  # filename -> what is served instead
        self.extra: dict[str, bytes] = {}  # filename -> bytes a GET sends beyond the HEAD size
        self.hang_head = False
        self.unsized: set[str] = set()  # files sent with no length (HEAD and GET)
        self.commit = COMMIT  # the commit "main" is at
        self.sent_commit: str | None = None  # what X-Repo-Commit says instead, when set
        self.listing = True  # answers the Hub's listing (paths-info) with every file's size
        self.stall_body_after: int | None = None  # bytes sent before the body stalls
        self.release = threading.Event()
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.answer(head=True)

            def do_GET(self) -> None:
                self.answer(head=False)

            def do_POST(self) -> None:
                """The Hub's listing of some files (HfApi.get_paths_info): their sizes."""
                from urllib.parse import parse_qs

                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                hub.requests.append(("POST", self.path, None))
                listed = f"/api/models/{hub.repo}/paths-info/main"
                if not hub.listing or self.path != listed:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                entries = [
                    {"type": "file", "path": name, "size": len(hub.files[name]), "oid": "0" * 40}
                    for name in form.get("paths", [])
                    if name in hub.files
                ]
                body = json.dumps(entries).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def answer(self, head: bool) -> None:
                name = ""
                for revision in ("main", hub.commit):  # the branch, or the commit it is at
                    prefix = f"/{hub.repo}/resolve/{revision}/"
                    if self.path.startswith(prefix):
                        name = self.path[len(prefix) :]
                hub.requests.append((self.command, name, self.headers.get("Range")))
                hub.paths.append(self.path)
                if head and hub.hang_head:
                    hub.release.wait(20)
                    return
                if name not in hub.files:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = hub.wrong.get(name, hub.files[name])
                if not head:
                    body += hub.extra.get(name, b"")
                start = 0
                ranged = self.headers.get("Range")
                if not head and ranged and ranged.startswith("bytes=") and ranged.endswith("-"):
                    start = int(ranged[6:-1])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", hub.sent_commit or hub.commit)
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Type", "application/octet-stream")
                # The hashes are those of the file the Hub holds (hub.files), whatever it sends.
                held = hub.files[name]
                unsized = name in hub.unsized
                if name.endswith((".safetensors", ".onnx")):  # LFS: the etag is its sha256
                    etag = hashlib.sha256(held).hexdigest()
                    self.send_header("X-Linked-Etag", f'"{etag}"')
                    if not unsized:
                        self.send_header("X-Linked-Size", str(len(body)))
                    self.send_header("ETag", f'"{etag}"')
                else:  # kept in git: the etag is the git blob id
                    blob = hashlib.sha1(b"blob %d\0" % len(held) + held)
                    self.send_header("ETag", f'"{blob.hexdigest()}"')
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                if unsized:  # the body ends when the connection does
                    self.send_header("Connection", "close")
                    self.close_connection = True
                else:
                    self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                if head:
                    return
                payload = body[start:]
                if hub.stall_body_after is not None:
                    self.wfile.write(payload[: hub.stall_body_after])
                    self.wfile.flush()
                    hub.release.wait(20)
                    self.close_connection = True
                    return
                if name in hub.break_after and hub.breaks_left > 0:
                    hub.breaks_left -= 1
                    self.wfile.write(payload[: hub.break_after[name]])
                    self.wfile.flush()
                    self.close_connection = True  # hang up in the middle of the body
                    return
                for offset in range(0, len(payload), 8192):  # several chunks for progress
                    self.wfile.write(payload[offset : offset + 8192])
                self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def gets(self, name: str | None = None) -> list[tuple[str, str, str | None]]:
        return [r for r in self.requests if r[0] == "GET" and (name is None or r[1] == name)]

    def __enter__(self) -> "FakeHub":
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(fake_files()) as server:
        yield server


def staging() -> Path:
    return paths.models_dir() / download.STAGING


def official() -> Path:
    return paths.models_dir() / "official"


def check_installed(files: dict[str, bytes]) -> None:
    folder = official()
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(
        files
    )
    for relative, body in files.items():
        assert (folder / relative).read_bytes() == body
    models.verify(folder, hashes_of(files), "official")
    assert not staging().exists()


def test_a_clean_download_verifies_and_reports_byte_progress(online: Path, hub: FakeHub) -> None:
    seen: list[tuple[int, int]] = []
    info = download.download_official(
        lambda d, t: seen.append((d, t)), endpoint=hub.endpoint, hashes=hashes_of(hub.files)
    )
    assert info.folder == official()
    check_installed(hub.files)
    total = sum(len(b) for b in hub.files.values())
    done = [d for d, _ in seen]
    assert done == sorted(done) and len(set(done)) == len(done), "progress went backwards"
    assert done[-1] == total and {t for _, t in seen} == {total}
    assert len(seen) >= len(hub.files)
    # only the listed safetensors and JSON files were asked for
    assert {r[1] for r in hub.requests} == set(models.ASSET_FILES)


def test_a_broken_download_is_resumed_by_the_next_call(online: Path, hub: FakeHub) -> None:
    broken = "asset/gpt/model.safetensors"
    half = len(hub.files[broken]) // 2
    hub.break_after[broken], hub.breaks_left = half, 1
    hashes = hashes_of(hub.files)
    with pytest.raises(DownloadError, match=r"connection broke off.*next try resumes"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes, retries=0, timeout=5)
    part = staging() / f"{broken}.part"
    assert part.stat().st_size == half  # the partial file is kept
    assert not official().exists()
    finished_before = {r[1] for r in hub.gets()} - {broken}
    assert finished_before  # files before the broken one were finished
    hub.requests.clear()
    seen: list[int] = []
    download.download_official(
        lambda d, _t: seen.append(d), endpoint=hub.endpoint, hashes=hashes, retries=0
    )
    assert hub.gets(broken) == [("GET", broken, f"bytes={half}-")]  # resumed, not restarted
    assert not finished_before & {r[1] for r in hub.requests}  # finished files not re-sent
    assert seen == sorted(seen) and seen[-1] == sum(len(b) for b in hub.files.values())
    check_installed(hub.files)


def test_a_broken_connection_is_resumed_within_the_call(online: Path, hub: FakeHub) -> None:
    broken = "asset/Vocos.safetensors"
    hub.break_after[broken], hub.breaks_left = 1000, 1
    download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files), retries=1)
    assert [r[2] for r in hub.gets(broken)] == [None, "bytes=1000-"]
    check_installed(hub.files)


def test_a_wrong_file_is_rejected_and_nothing_is_replaced(online: Path, hub: FakeHub) -> None:
    old = official()
    (old / "asset").mkdir(parents=True)
    (old / "asset" / "DVAE.safetensors").write_bytes(b"the user's old weights")
    bad = "asset/Embed.safetensors"
    hub.wrong[bad] = b"x" * len(hub.files[bad])
    with pytest.raises(DownloadError, match=r"Embed\.safetensors does not match.*nothing was"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    assert [p.name for p in old.rglob("*") if p.is_file()] == ["DVAE.safetensors"]
    assert (old / "asset" / "DVAE.safetensors").read_bytes() == b"the user's old weights"
    assert not (staging() / bad).exists() and not (staging() / f"{bad}.part").exists()
    # more bytes than the HEAD announced are caught while they arrive, before hashing
    del hub.wrong[bad]
    hub.extra[bad] = b"tail" * 1000
    with pytest.raises(DownloadError, match="more than"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    assert not (staging() / f"{bad}.part").exists()
    # the server fixed: the next call completes and replaces the old folder in one go
    del hub.extra[bad]
    download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    check_installed(hub.files)


def test_a_missing_file_is_a_clear_error(online: Path, hub: FakeHub) -> None:
    del hub.files["asset/Decoder.safetensors"]
    started = time.monotonic()
    with pytest.raises(DownloadError, match="HTTP 404"):
        download.download_official(endpoint=hub.endpoint, hashes=hashes_of(fake_files()))
    assert time.monotonic() - started < 5  # a 404 is not retried
    assert not official().exists()


@pytest.mark.parametrize("where", ["head", "body"])
def test_a_server_that_never_answers_times_out(online: Path, hub: FakeHub, where: str) -> None:
    if where == "head":
        hub.hang_head = True
    else:
        hub.stall_body_after = 100
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"did not answer within 0\.5 seconds"):
        download.download_official(
            endpoint=hub.endpoint, hashes=hashes_of(hub.files), timeout=0.5, retries=1
        )
    assert time.monotonic() - started < 6
    assert not official().exists()
    if where == "body":  # what came is kept, and the one retry resumed from there
        first = models.ASSET_FILES[0]
        assert [r[2] for r in hub.gets(first)] == [None, "bytes=100-"]
        assert (staging() / f"{first}.part").stat().st_size == 200


def test_nothing_listens_is_a_clear_error(online: Path) -> None:
    with FakeHub({}) as closed:
        endpoint = closed.endpoint
    started = time.monotonic()
    with pytest.raises(DownloadError, match="cannot connect"):
        download.download_official(endpoint=endpoint, hashes=hashes_of(fake_files()), retries=0)
    assert time.monotonic() - started < 5


def test_cancel_keeps_the_partial_file_for_resume(online: Path, hub: FakeHub) -> None:
    hashes = hashes_of(hub.files)
    first = models.ASSET_FILES[0]
    hub.stall_body_after = 20000  # the first file stops there until the test ends
    stop = threading.Event()
    seen: list[int] = []

    def progress(done: int, _total: int) -> None:
        seen.append(done)
        if done >= 20000:
            stop.set()  # what the Cancel button does

    started = time.monotonic()
    with pytest.raises(Cancelled):
        download.download_official(progress, stop.is_set, endpoint=hub.endpoint, hashes=hashes)
    assert time.monotonic() - started < 5  # cancel does not wait for the stalled server
    assert seen[-1] == 20000
    part = staging() / f"{first}.part"
    assert part.stat().st_size == 20000
    assert not official().exists()
    hub.stall_body_after = None
    hub.requests.clear()
    download.download_official(endpoint=hub.endpoint, hashes=hashes)
    assert hub.gets(first) == [("GET", first, "bytes=20000-")]
    check_installed(hub.files)


def test_offline_mode_is_a_clear_error(online: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(DownloadError, match="HF_HUB_OFFLINE"):
        download.download_official(
            endpoint="http://127.0.0.1:9", hashes=hashes_of(fake_files()), retries=3
        )


def test_a_second_download_at_the_same_time_is_refused(online: Path, hub: FakeHub) -> None:
    import fcntl

    lock = paths.models_dir() / ".official.lock"
    with open(lock, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        with pytest.raises(DownloadError, match="Another download"):
            download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    assert hub.requests == []


ASR_FILES = {"model.int8.onnx": bytes(range(256)) * 300, "tokens.txt": "<blk> 0\n的 1\n".encode()}


@pytest.fixture
def unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recogniser with no pinned revision or hashes: its first download trusts the Hub's."""
    monkeypatch.setattr(asr_models, "SENSEVOICE_REVISION", None, raising=False)
    monkeypatch.setattr(asr_models, "SENSEVOICE_SHA256", None, raising=False)


def test_the_recogniser_is_checked_against_the_hubs_own_hashes(
    online: Path, unpinned: None
) -> None:
    """Unpinned, SenseVoice's first download checks each file against the hash the Hub gives
    for it (an LFS file's sha256, a git file's blob id), and `verify` finds a file changed on
    disk later."""
    files = ASR_FILES
    with FakeHub(files, asr_models.SENSEVOICE_REPO) as hub:
        with pytest.raises(ModelError, match="not downloaded yet"):
            asr_models.recognizer_folder(asr_models.OFFICIAL)
        hub.wrong["tokens.txt"] = "<blk> 0\n的 2\n".encode()  # not the file the Hub names
        with pytest.raises(DownloadError, match=r"tokens\.txt does not match its published hash"):
            asr_models.download(transfer=Transfer(hub.endpoint))
        assert not asr_models.official_present()
        del hub.wrong["tokens.txt"]
        onnx_gets = len(hub.gets("model.int8.onnx"))
        folder = asr_models.download(transfer=Transfer(hub.endpoint))
    assert len(hub.gets("model.int8.onnx")) == onnx_gets  # verified already: not fetched again
    assert folder == asr_models.recognizer_folder(asr_models.OFFICIAL)
    for name, body in files.items():
        assert (folder / name).read_bytes() == body
    assert {r[1] for r in hub.requests} == set(files)
    asr_models.verify()
    (folder / "tokens.txt").write_bytes("<blk> 0\n了 1\n".encode())  # damaged on disk
    with pytest.raises(ModelError, match="does not match its sha256"):
        asr_models.verify()


def test_a_file_sent_without_a_length_stops_at_its_listed_size(online: Path, hub: FakeHub) -> None:
    """A server that gives no length (no Content-Length, no X-Linked-Size) and sends more than
    the file: the Hub's listing gives its size, and the download stops there, before any hash,
    in one sentence; nothing is replaced and no part is left to grow."""
    unsized = "asset/gpt/model.safetensors"
    hub.unsized.add(unsized)
    hub.extra[unsized] = bytes(4 << 20)  # 4 MiB past the file's end: a part without end
    seen: list[int] = []
    with pytest.raises(DownloadError) as caught:
        download.download_official(
            lambda d, _t: seen.append(d), endpoint=hub.endpoint, hashes=hashes_of(hub.files)
        )
    size = len(hub.files[unsized])
    assert str(caught.value) == (
        f"The server sent more than the {size} bytes of {unsized}; it was discarded and "
        "nothing was replaced."
    )
    assert ("POST", f"/api/models/{hub.repo}/paths-info/main", None) in hub.requests
    assert max(seen) <= sum(len(b) for b in hub.files.values())  # never past the listed size
    assert not (staging() / f"{unsized}.part").exists() and not official().exists()
    del hub.extra[unsized]  # the server sends the file, still without a length: installed
    download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    check_installed(hub.files)


def test_a_file_with_no_size_anywhere_is_refused_before_any_byte(
    online: Path, hub: FakeHub
) -> None:
    unsized = "asset/gpt/config.json"
    hub.unsized.add(unsized)
    hub.listing = False
    with pytest.raises(DownloadError) as caught:
        download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    assert "gives no size for asset/gpt/config.json" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert hub.gets() == [] and not official().exists()


def test_too_little_free_space_is_said_before_any_byte(
    online: Path, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sizes of every file (one of them known only from the Hub's listing) against the
    free space, before anything is fetched: one sentence naming both."""
    unsized = "asset/gpt/model.safetensors"
    hub.unsized.add(unsized)
    total = sum(len(b) for b in hub.files.values())
    free = total - len(hub.files[unsized]) // 2
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real(path)._replace(free=free))
    with pytest.raises(DownloadError) as caught:
        download.download_official(endpoint=hub.endpoint, hashes=hashes_of(hub.files))
    assert str(caught.value) == (
        f"Downloading the official weights needs {total / 2**20:.1f} MiB more disk space in "
        f"{staging()}; only {free / 2**20:.1f} MiB are free."
    )
    assert hub.gets() == [] and not official().exists()


def _trusted() -> dict[str, object]:
    return json.loads(asr_models.trusted_file().read_text(encoding="utf-8"))


def _installed() -> dict[str, bytes]:
    folder = asr_models.official_folder()
    return {name: (folder / name).read_bytes() for name in asr_models.SENSEVOICE_FILES}


def test_the_recogniser_asks_for_its_pinned_commit_and_hashes(
    online: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first download asks for the pinned commit (never the branch) and must match the
    pinned sha256: a Hub serving other files there is refused, nothing installed or recorded."""
    pinned = asr_models.SENSEVOICE_REVISION
    assert pinned is not None and len(pinned) == 40 and asr_models.SENSEVOICE_SHA256 is not None
    with FakeHub(ASR_FILES, asr_models.SENSEVOICE_REPO) as hub:
        hub.commit = pinned
        with pytest.raises(DownloadError, match=r"does not match its published hash"):
            asr_models.download(transfer=Transfer(hub.endpoint))
    assert {path.split("/")[4] for path in hub.paths} == {pinned}
    assert not asr_models.official_present() and not asr_models.trusted_file().exists()
    digests = {name: hashlib.sha256(body).hexdigest() for name, body in ASR_FILES.items()}
    monkeypatch.setattr(asr_models, "SENSEVOICE_SHA256", digests)  # pins these files match
    with FakeHub(ASR_FILES, asr_models.SENSEVOICE_REPO) as hub:
        hub.commit = pinned
        asr_models.download(transfer=Transfer(hub.endpoint))
    assert _trusted()["revision"] == pinned and _trusted()["files"] == digests
    assert _installed() == ASR_FILES


def test_the_recogniser_is_trusted_on_first_use_and_held_to_it(
    online: Path, unpinned: None
) -> None:
    """The first verified download records the commit the Hub resolved and each file's sha256
    in the data folder; a later download asks for that commit and is refused (one sentence,
    nothing replaced) when the Hub now serves another file there, or another commit."""
    digests = {name: hashlib.sha256(body).hexdigest() for name, body in ASR_FILES.items()}
    with FakeHub(ASR_FILES, asr_models.SENSEVOICE_REPO) as hub:
        asr_models.download(transfer=Transfer(hub.endpoint))
        assert {r[1] for r in hub.requests} == set(ASR_FILES)
    record = _trusted()
    assert record["revision"] == COMMIT and record["files"] == digests
    assert record["repo"] == asr_models.SENSEVOICE_REPO
    changed = {**ASR_FILES, "tokens.txt": "<blk> 0\n了 1\n".encode()}
    with FakeHub(changed, asr_models.SENSEVOICE_REPO) as hub:
        hub.commit = "f" * 40  # "main" moved on...
        with pytest.raises(DownloadError, match=r"404"):  # ...and the recorded commit is asked
            asr_models.download(transfer=Transfer(hub.endpoint))
        assert hub.paths and all(f"/resolve/{COMMIT}/" in path for path in hub.paths)
        hub.commit = COMMIT  # the same commit, a changed file: the Hub's own hash agrees
        with pytest.raises(DownloadError) as caught:
            asr_models.download(transfer=Transfer(hub.endpoint))
        assert str(caught.value) == (
            "The downloaded tokens.txt does not match the sha256 recorded at the model's "
            "first download; it was discarded and nothing was replaced."
        )
        hub.files = dict(ASR_FILES)
        hub.sent_commit = "e" * 40  # the right files, said to be another commit
        with pytest.raises(DownloadError) as caught:
            asr_models.download(transfer=Transfer(hub.endpoint))
        assert str(caught.value) == (
            f"The server did not send revision {COMMIT} of the speech recognition model; "
            "nothing was replaced."
        )
    assert _installed() == ASR_FILES and _trusted() == record
    asr_models.verify()


def test_verify_holds_the_recogniser_to_its_first_download(online: Path, unpinned: None) -> None:
    """A file changed beside its folder's own list of hashes (changed to agree) is still
    found: verify compares with the record in the data folder."""
    with FakeHub(ASR_FILES, asr_models.SENSEVOICE_REPO) as hub:
        folder = asr_models.download(transfer=Transfer(hub.endpoint))
    asr_models.verify()
    changed = "<blk> 0\n了 1\n".encode()
    (folder / "tokens.txt").write_bytes(changed)
    beside = folder / download.HUB_HASHES
    listed = json.loads(beside.read_text(encoding="utf-8"))
    listed["tokens.txt"] = hashlib.sha256(changed).hexdigest()
    beside.write_text(json.dumps(listed), encoding="utf-8")
    with pytest.raises(ModelError, match=r"tokens\.txt does not match its sha256"):
        asr_models.verify()
    asr_models.trusted_file().write_text("{", encoding="utf-8")  # a torn record: said, not trusted
    with pytest.raises(ModelError, match=r"is damaged; delete it to trust"):
        asr_models.verify()
    with pytest.raises(ModelError, match=r"is damaged; delete it to trust"):
        asr_models.download(transfer=Transfer("http://127.0.0.1:9"))


def test_the_speaker_model_is_pinned_trusted_and_verified(
    online: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The voice check's model goes the recogniser's way (core/weights/pinned.py): the pinned
    commit and sha256 refuse other bytes, a matching first download is recorded, verify finds
    a file changed later, and its own sentence says when it is not downloaded."""
    from dataclasses import replace

    from chattts_studio.core.speaker import models as speaker_models

    name = speaker_models.CAMPPLUS_FILE
    files = {name: b"onnx bytes of a speaker model"}
    pinned = speaker_models.CAMPPLUS.revision
    assert pinned is not None and len(pinned) == 40
    with pytest.raises(ModelError, match=r"not downloaded yet: run 'chattts-studio-cli model "):
        speaker_models.verify()
    with FakeHub(files, speaker_models.CAMPPLUS.repo) as hub:
        hub.commit = pinned
        with pytest.raises(DownloadError, match=r"does not match its published hash"):
            speaker_models.download(transfer=Transfer(hub.endpoint))
    assert not speaker_models.CAMPPLUS.present()
    digests = {name: hashlib.sha256(files[name]).hexdigest()}
    monkeypatch.setattr(
        speaker_models, "CAMPPLUS", replace(speaker_models.CAMPPLUS, sha256=digests)
    )
    with FakeHub(files, speaker_models.CAMPPLUS.repo) as hub:
        hub.commit = pinned
        path = speaker_models.download(transfer=Transfer(hub.endpoint))
    assert path == speaker_models.official_file() and path.read_bytes() == files[name]
    record = json.loads(speaker_models.CAMPPLUS.trusted_file().read_text(encoding="utf-8"))
    assert record["revision"] == pinned and record["files"] == digests
    speaker_models.verify()
    path.write_bytes(b"changed")
    with pytest.raises(ModelError, match=r"does not match its sha256"):
        speaker_models.verify()
