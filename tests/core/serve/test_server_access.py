"""The speech API's edge, over raw HTTP: no web page can drive it (Host, Origin, Content-Type),
keys come from a file or the environment, and no input costs more than it is worth."""

import argparse
import dataclasses
import json
import lzma
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pybase16384 as b14
import pytest

from chattts_studio.core.cli import serve as serve_command
from chattts_studio.core.cli.serve import KEY_ENV
from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.engine.chattts.voice_checks import SPEAKER_VALUES_READ
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.errors import StudioError
from chattts_studio.core.serve.access import Access, new_api_key, read_key_file
from chattts_studio.core.serve.app import SpeechServer
from chattts_studio.core.serve.limits import ServeLimits
from chattts_studio.core.serve.running import serving_on_loopback, uvicorn_server
from chattts_studio.core.voices import speaker_codec
from chattts_studio.core.voices.blend import MAX_PARTS

PAGE = "http://localhost:3000"  # the one web page the served API lets in
GOOD = {"model": "chattts", "input": "你好。", "voice": "seed:1", "response_format": "pcm"}


@dataclass
class Served:
    url: str
    port: int
    server: SpeechServer


@pytest.fixture(scope="module")
def served(engine: Engine) -> Iterator[Served]:
    batcher = Batcher(engine, slots=2, max_waiting=8)
    access = Access(allow_hosts=("tts.example",), allow_origins=(PAGE,))
    server = SpeechServer(engine, batcher, limits=ServeLimits(max_input_chars=60), access=access)
    with serving_on_loopback(server, batcher) as port:
        yield Served(f"http://127.0.0.1:{port}", port, server)


def _raw(port: int, request: str) -> tuple[int, bytes]:
    """One request as written, on a socket of its own: (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request.encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _get(port: int, path: str, host: str, *extra: str) -> tuple[int, bytes]:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", *extra, "Connection: close", "", ""]
    return _raw(port, "\r\n".join(lines))


def _openai_error(body: bytes) -> dict[str, Any]:
    assert b"Traceback" not in body
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return dict(error)


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return _openai_error(response.content)


# -- Host -----------------------------------------------------------------------------------
def test_only_hosts_that_name_this_server_are_answered(served: Served) -> None:
    port = served.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "tts.example"):
        status, body = _get(port, "/v1/models", host)
        assert status == 200 and b"tts-1" in body, host
    # A rebinding page's own name, another port, nothing: refused before any route runs,
    # so the page cannot read the voice list (names and notes) either.
    for host in (f"attacker.example:{port}", "127.0.0.1:1", "127.0.0.1.attacker.example"):
        status, body = _get(port, "/v1/audio/voices", host)
        assert status == 403 and b"alloy" not in body, host
        assert _openai_error(body)["code"] == "host_not_allowed"
    status, body = _raw(port, "GET /health HTTP/1.0\r\n\r\n")  # no Host at all
    assert status == 403 and _openai_error(body)["code"] == "host_not_allowed"
    requests = served.server.batcher.stats.requests
    request = json.dumps(GOOD)
    status, body = _raw(
        port,
        f"POST /v1/audio/speech HTTP/1.1\r\nHost: attacker.example:{port}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(request.encode())}\r\nConnection: close\r\n\r\n{request}",
    )
    assert status == 403 and served.server.batcher.stats.requests == requests


def test_beyond_loopback_ip_literals_and_the_machines_name_are_answered() -> None:
    """Bound to every address, other machines reach it by an address or by this machine's
    name; a rebinding attack needs a name of its own, which is still refused."""
    lan = Access("0.0.0.0")
    assert lan.host_allowed("192.168.1.20:8000", 8000)
    assert lan.host_allowed("[fe80::1]:8000", 8000)
    assert lan.host_allowed(f"{socket.gethostname()}:8000", 8000)
    assert not lan.host_allowed("attacker.example:8000", 8000)
    assert not lan.host_allowed("192.168.1.20:8001", 8000)
    assert Access("192.168.1.20").host_allowed("192.168.1.20:8000", 8000)
    # On loopback only loopback names: a LAN address in Host is someone else's request.
    assert not Access().host_allowed("192.168.1.20:8000", 8000)
    assert Access(allow_hosts=("Tts.Example:443",)).host_allowed("tts.example", 8000)
    # Whose page counts as ours (its Origin let in without --allow-origin): only names no
    # one else can re-point. The machine's name could be spoofed on the LAN (mDNS).
    assert lan.serves_own_page_at("192.168.1.20:8000")
    assert lan.serves_own_page_at("localhost:8000")
    assert not lan.serves_own_page_at(f"{socket.gethostname()}:8000")
    assert not lan.serves_own_page_at(f"{socket.gethostname()}.local:8000")
    assert not Access(allow_hosts=("tts.example",)).serves_own_page_at("tts.example")


# -- Origin and CORS ------------------------------------------------------------------------
def test_web_pages_are_refused_unless_listed_and_listed_ones_get_cors(served: Served) -> None:
    speech = f"{served.url}/v1/audio/speech"
    requests = served.server.batcher.stats.requests
    with httpx.Client(timeout=60) as http:
        for page in ("http://evil.example", "null", f"{PAGE}.evil.example"):
            refused = http.post(speech, json=GOOD, headers={"Origin": page})
            assert _error(refused, 403)["code"] == "origin_not_allowed", page
            assert "access-control-allow-origin" not in refused.headers
        preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
        assert http.options(speech, headers=preflight).status_code == 403
        assert served.server.batcher.stats.requests == requests
        # The listed page: its preflight is answered, then its request, with CORS headers.
        asked = {
            "Origin": PAGE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os",
        }
        answer = http.options(speech, headers=asked)
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == PAGE
        assert "POST" in answer.headers["access-control-allow-methods"]
        allowed = answer.headers["access-control-allow-headers"].lower()
        assert "authorization" in allowed and "content-type" in allowed
        odd = http.options(speech, headers={**asked, "Access-Control-Request-Method": "PUT"})
        _error(odd, 405)
        made = http.post(speech, json=GOOD, headers={"Origin": PAGE})
        assert made.status_code == 200 and len(made.content) > 0
        assert made.headers["access-control-allow-origin"] == PAGE
        # Its errors carry CORS too, so the page can read why.
        wrong = http.post(speech, json={**GOOD, "speed": 9}, headers={"Origin": PAGE})
        assert _error(wrong, 400)["param"] == "speed"
        assert wrong.headers["access-control-allow-origin"] == PAGE


def _post(port: int, host: str, origin: str, *extra: str) -> tuple[int, bytes, bytes]:
    """A speech request with these Host and Origin headers: (status, head, body)."""
    body = json.dumps(GOOD)
    lines = [
        "POST /v1/audio/speech HTTP/1.1",
        f"Host: {host}",
        f"Origin: {origin}",
        *extra,
        "Content-Type: application/json",
        f"Content-Length: {len(body.encode())}",
        "Connection: close",
        "",
        body,
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall("\r\n".join(lines).encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, answer = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), head.lower(), answer


def test_the_servers_own_page_may_post_and_no_other(served: Served) -> None:
    """A browser sends Origin on a same-origin POST too: the page at GET / is let in as the
    origin the request's own Host names, with no CORS; every other origin is refused."""
    port = served.port
    requests = served.server.batcher.stats.requests
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, head, body = _post(port, host, f"http://{host.upper()}/")
        assert status == 200 and len(body) > 0, (host, body[:200])
        assert b"access-control-allow-origin" not in head  # same origin: nothing to allow
    made = served.server.batcher.stats.requests
    assert made == requests + 3
    # Behind a local TLS proxy (uvicorn trusts its X-Forwarded-Proto) the scheme is https:
    # an http origin is another origin.
    proxied = "X-Forwarded-Proto: https"
    assert _post(port, f"127.0.0.1:{port}", f"https://127.0.0.1:{port}", proxied)[0] == 200
    assert _post(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}", proxied)[0] == 403
    for host, origin in [
        # An --allow-host name (a proxy may serve other apps under it) is not enough for a
        # page to be ours: its origin must be listed with --allow-origin.
        ("tts.example", "http://tts.example"),
        ("tts.example", "https://tts.example"),
        (f"127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}"),  # another program's page
        (f"127.0.0.1:{port}", f"https://127.0.0.1:{port}"),  # another scheme, another origin
        (f"127.0.0.1:{port}", f"http://localhost:{port}"),  # another name, another origin
        (f"127.0.0.1:{port}", "null"),  # a sandboxed frame or a file
        ("tts.example", "http://tts.example:8080"),
        ("127.0.0.1", "http://127.0.0.1"),  # the Host's port is not the one served
    ]:
        status, head, body = _post(port, host, origin)
        assert status == 403 and b"access-control-allow-origin" not in head, (host, origin)
        assert _openai_error(body)["code"] in {"origin_not_allowed", "host_not_allowed"}
    # DNS rebinding: the attacker's page is same-origin with its own name re-pointed here,
    # and that name is refused as a Host before its Origin is even looked at.
    for name in (f"attacker.example:{port}", f"127.0.0.1.attacker.example:{port}"):
        status, _, body = _post(port, name, f"http://{name}")
        assert status == 403 and _openai_error(body)["code"] == "host_not_allowed", name
    assert served.server.batcher.stats.requests == made + 1


def test_only_json_bodies_are_read(served: Served) -> None:
    """A page may POST text/plain anywhere without a preflight: such a body is never read."""
    speech = f"{served.url}/v1/audio/speech"
    requests = served.server.batcher.stats.requests
    body = json.dumps(GOOD).encode()
    with httpx.Client(timeout=60) as http:
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
            response = http.post(speech, content=body, headers={"Content-Type": kind})
            assert "application/json" in _error(response, 415)["message"], kind
        assert _error(http.post(speech, content=body), 415)
        assert served.server.batcher.stats.requests == requests
        typed = {"Content-Type": "application/json; charset=utf-8"}
        assert http.post(speech, content=body, headers=typed).status_code == 200


# -- keys -----------------------------------------------------------------------------------
def _serve_from_cli(
    argv: list[str],
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    check: Callable[[SpeechServer, str], None],
) -> None:
    """`serve` as the command line runs it (on the session's engine), with `check` run
    against the real server it builds while it listens."""

    def serve_app(server: SpeechServer, host: str, port: int, ready: Callable[[], None]) -> None:
        listening = threading.Event()
        uv = uvicorn_server(server, host, port, listening.set)
        thread = threading.Thread(target=uv.run, daemon=True)
        thread.start()
        try:
            assert listening.wait(60)
            check(server, f"http://{host}:{port}")
        finally:
            uv.should_exit = True
            thread.join(30)

    monkeypatch.setattr("chattts_studio.core.cli.common.load_engine", lambda *a: engine)
    monkeypatch.setattr("chattts_studio.core.serve.running.serve_app", serve_app)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    parser = argparse.ArgumentParser()
    serve_command.add_parser(parser.add_subparsers())
    serve_command.run(parser.parse_args(["serve", "--port", str(port), "--slots", "1", *argv]))


def _needs_key(key: str) -> Callable[[SpeechServer, str], None]:
    def check(server: SpeechServer, url: str) -> None:
        with httpx.Client(timeout=60) as http:
            models = f"{url}/v1/models"
            assert _error(http.get(models), 401)["code"] == "invalid_api_key"
            wrong = {"Authorization": f"Bearer {key}x"}
            assert _error(http.get(models, headers=wrong), 401)["code"] == "invalid_api_key"
            right = {"Authorization": f"Bearer {key}"}
            assert http.get(models, headers=right).status_code == 200
            assert http.get(f"{url}/health").status_code == 200  # open to probes
            # A listed page's preflight carries no key (browsers never send it there).
            ask = {"Origin": PAGE, "Access-Control-Request-Method": "POST"}
            assert http.options(f"{url}/v1/audio/speech", headers=ask).status_code == 200

    return check


def test_the_key_comes_from_a_file_or_the_environment(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = new_api_key()
    assert len(key) >= 40 and key != new_api_key()
    key_file = tmp_path / "key"
    key_file.write_text(f"{key}\n")
    origin = ["--allow-origin", PAGE]
    _serve_from_cli(
        ["--api-key-file", str(key_file), *origin], engine, monkeypatch, _needs_key(key)
    )
    assert "Warning" not in capsys.readouterr().err
    env_key = new_api_key()
    monkeypatch.setenv(KEY_ENV, env_key)
    _serve_from_cli(origin, engine, monkeypatch, _needs_key(env_key))
    # The file wins over the environment.
    _serve_from_cli(
        ["--api-key-file", str(key_file), *origin], engine, monkeypatch, _needs_key(key)
    )
    assert "Warning" not in capsys.readouterr().err
    # On the command line it still works, with a warning that `ps` shows it.
    _serve_from_cli(["--api-key", "cli-key", *origin], engine, monkeypatch, _needs_key("cli-key"))
    warned = capsys.readouterr().err
    assert "Warning" in warned and "ps" in warned and "--api-key-file" in warned


def test_a_key_file_that_cannot_be_used_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.write_text(" \n")
    with pytest.raises(StudioError, match="is empty"):
        read_key_file(empty)
    with pytest.raises(StudioError, match=r"Cannot read the API key file .*missing"):
        read_key_file(tmp_path / "missing")
    spaced = tmp_path / "spaced"
    spaced.write_text("two words")
    with pytest.raises(StudioError, match="visible ASCII"):
        read_key_file(spaced)
    monkeypatch.setattr(
        "chattts_studio.core.cli.common.load_engine", lambda *a: pytest.fail("loaded")
    )
    parser = argparse.ArgumentParser()
    serve_command.add_parser(parser.add_subparsers())
    both = ["serve", "--api-key", "a", "--api-key-file", str(spaced)]
    with pytest.raises(StudioError, match="not both"):
        serve_command.run(parser.parse_args(both))
    with pytest.raises(StudioError, match="is empty"):
        serve_command.run(
            parser.parse_args(["serve", "--host", "0.0.0.0", "--api-key-file", str(empty)])
        )
    monkeypatch.setenv(KEY_ENV, "")  # set but empty: no key, so no listening beyond loopback
    with pytest.raises(StudioError, match="without --api-key"):
        serve_command.run(parser.parse_args(["serve", "--host", "0.0.0.0"]))
    with pytest.raises(StudioError, match="not a web page's origin"):
        serve_command.run(parser.parse_args(["serve", "--allow-origin", "*"]))


# -- what an input may cost -----------------------------------------------------------------
@pytest.fixture
def decompressions(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The max_length of every LZMA decompression from now on (None: unbounded), ChatTTS's
    own included (its lzma.decompress makes its decompressors through the same name)."""
    calls: list[int | None] = []
    real = lzma.LZMADecompressor

    class Spy:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._real = real(*args, **kwargs)

        def decompress(self, data: bytes, max_length: int = -1) -> bytes:
            calls.append(None if max_length < 0 else max_length)
            return self._real.decompress(data, max_length)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

    monkeypatch.setattr(lzma, "LZMADecompressor", Spy)
    return calls


def _bomb(size: int, chars: int) -> str:
    """A speaker string of at most `chars` characters that LZMA expands to `size` zero bytes."""
    text = str(b14.encode_to_string(speaker_codec.compress(bytes(size))))
    assert len(text) <= chars, len(text)
    return text


def test_a_voice_longer_than_any_embedding_is_refused_before_decoding(
    served: Served, engine: Engine, decompressions: list[int | None]
) -> None:
    assert engine.model is not None
    hidden = engine.model.hidden_size
    real = engine.sample_speaker(3)
    # One voice is no longer than an embedding string; a blend holds up to MAX_PARTS of them.
    part, limit = served.server.max_part, served.server.max_voice
    assert len(real) <= part <= max(100, len(real) + 40)
    assert part < limit <= MAX_PARTS * (part + 20)
    speech = f"{served.url}/v1/audio/speech"
    with httpx.Client(timeout=60) as http:
        huge = _bomb(20_000_000, 60_000)  # 20 MB of zeros in a few KiB
        small = _bomb(200_000, part)  # 1,500 times an embedding
        decompressions.clear()  # the encoders' own checks above
        error = _error(http.post(speech, json={**GOOD, "voice": huge}), 400)
        assert error["param"] == "voice" and str(limit) in error["message"]
        assert _error(http.post(speech, json={**GOOD, "voice": "x" * (limit + 1)}), 400)
        error = _error(http.post(speech, json={**GOOD, "voice": "x" * (part + 1)}), 400)
        assert error["param"] == "voice" and str(part) in error["message"]
        assert decompressions == [], "a voice too long to be an embedding was decompressed"
        # A short one that expands past any embedding is cut off right after 8 KiB.
        error = _error(http.post(speech, json={**GOOD, "voice": small}), 400)
        assert error["param"] == "voice" and f"this model needs {hidden}" in error["message"]
        bound = 2 * SPEAKER_VALUES_READ + 1
        assert decompressions and all(n is not None and n <= bound for n in decompressions)
        assert http.post(speech, json={**GOOD, "voice": real}).status_code == 200


def test_voices_are_read_off_the_event_loop(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real_voice = served.server.voice

    def voice(name: str) -> Any:
        threads.append(threading.current_thread().name)
        return real_voice(name)

    from chattts_studio.core.voices.speakers import SpeakerLibrary

    real_open = SpeakerLibrary.open_or_locked.__func__  # type: ignore[attr-defined]

    def open_or_locked(cls: type, path: Path | None = None) -> Any:
        threads.append(threading.current_thread().name)
        return real_open(cls, path)

    monkeypatch.setattr(served.server, "voice", voice)
    monkeypatch.setattr(SpeakerLibrary, "open_or_locked", classmethod(open_or_locked))
    with httpx.Client(timeout=60) as http:
        assert http.post(f"{served.url}/v1/audio/speech", json=GOOD).status_code == 200
        assert http.get(f"{served.url}/v1/audio/voices").status_code == 200
    loop_thread = "speech-api"  # serving_on_loopback's uvicorn thread runs the event loop
    assert len(threads) == 3 and loop_thread not in threads, threads


def test_every_field_is_checked_and_named(served: Served) -> None:
    speech = f"{served.url}/v1/audio/speech"
    with httpx.Client(timeout=60) as http:

        def refused(**fields: Any) -> dict[str, Any]:
            return _error(http.post(speech, json={**GOOD, **fields}), 400)

        for voice in ("seed:²", "seed:٣", "seed:1e3", "seed:-1", "seed:" + "9" * 90):
            error = refused(voice=voice)
            assert error["param"] == "voice" and "seed" in error["message"], voice[:20]
        assert refused(voice="seed:2147483648")["param"] == "voice"
        for name, value in [
            ("response_format", []),
            ("response_format", {"a": 1}),
            ("speed", "1"),
            ("speed", True),
            ("seed", 1.5),
            ("seed", "3"),
            ("model", 5),
            ("input", ["a"]),
            ("voice", None),
            ("instructions", 3),
            ("stream_format", "events"),
        ]:
            error = refused(**{name: value})
            assert error["param"] == name and name in error["message"], (name, value)
        nested = b"[" * 30_000 + b"]" * 30_000  # deeper than Python's JSON parser goes
        typed = {"Content-Type": "application/json"}
        deep = _error(http.post(speech, content=nested, headers=typed), 400)
        assert "not valid JSON" in deep["message"]
        # Fields OpenAI's clients send that the API does not know are ignored.
        extra = {"instructions": "cheerful", "stream_format": "audio", "user": "me", "x": [1]}
        assert http.post(speech, json={**GOOD, **extra}).status_code == 200


def test_no_answer_names_a_path_of_this_machine(
    served: Served, engine: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The model's folder (under the user's home, so naming them) is said by its own name."""
    folder = tmp_path / "secret-user" / "my-weights"
    loaded = engine.loaded
    assert loaded is not None
    info = dataclasses.replace(loaded.info, name=str(folder), kind="folder", folder=folder)
    monkeypatch.setattr(engine, "loaded", dataclasses.replace(loaded, info=info))
    with httpx.Client(timeout=60) as http:
        health = http.get(f"{served.url}/health")
        assert health.json()["model"] == "my-weights"
        answers = [
            health,
            http.post(f"{served.url}/v1/audio/speech", json={**GOOD, "model": "nope"}),
            http.get(f"{served.url}/etc/passwd"),
            http.get(f"{served.url}/v1/audio/speech"),
        ]
        _error(answers[1], 404)
        assert "my-weights" in answers[1].json()["error"]["message"]
        assert "no such endpoint" in _error(answers[2], 404)["message"]
        assert "passwd" not in answers[2].text
        _error(answers[3], 405)
        for answer in answers:
            assert str(tmp_path) not in answer.text and "secret-user" not in answer.text
            assert os.path.expanduser("~") not in answer.text


def test_connections_past_the_limit_get_503(engine: Engine) -> None:
    """uvicorn answers past the limit at once; the limit counts kept-alive connections too."""
    batcher = Batcher(engine, slots=1, max_waiting=2)
    server = SpeechServer(engine, batcher, limits=ServeLimits(max_connections=2))
    default = SpeechServer(engine, batcher)
    assert default.max_connections == 64 + 1
    uv = uvicorn_server(server, "127.0.0.1", 0, lambda: None)
    assert uv.config.limit_concurrency == 2 and uv.config.timeout_keep_alive == 5
    with serving_on_loopback(server, batcher) as port:
        alone, _ = _get(port, "/health", f"127.0.0.1:{port}")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as kept:
            # A first request on a kept-alive connection: once answered, it is counted.
            kept.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert kept.recv(65536).startswith(b"HTTP/1.1 200")
            beyond, _ = _get(port, "/health", f"127.0.0.1:{port}")
    assert alone == 200 and beyond == 503
