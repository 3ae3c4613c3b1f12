"""Package indexes on 127.0.0.1 for the installer's tests: wheels built here with the standard
library (zipfile, METADATA, WHEEL, RECORD), served by http.server as PEP 503 simple indexes (a
folder per project, whose listing links its files), one per URL prefix: `whl/cu126` mimics
PyTorch's index, `pypi` a PyPI."""

import base64
import hashlib
import http.server
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(
    folder: Path,
    name: str,
    version: str,
    files: dict[str, str],
    requires: tuple[str, ...] = (),
    scripts: dict[str, str] | None = None,
) -> Path:
    """A py3-none-any wheel of `files` (path in site-packages -> text); `scripts` go to the
    environment's bin folder as they are (the .data/scripts of a wheel)."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    entries = {path: text.encode() for path, text in files.items()}
    for script, text in (scripts or {}).items():
        entries[f"{name}-{version}.data/scripts/{script}"] = text.encode()
    entries[f"{info}/METADATA"] = metadata.encode()
    entries[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(f"{p},sha256={_digest(d)},{len(d)}\n" for p, d in entries.items())
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in entries.items():
            entry = zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0))
            # Scripts executable, as in real wheels (installers keep the mode's x bits).
            entry.external_attr = (0o100755 if ".data/scripts/" in path else 0o100644) << 16
            archive.writestr(entry, data)
    return wheel


def torch_wheels(index: Path, tag: str, cuda: str | None, pypi: bool = False) -> None:
    """Stand-ins for torch 2.14.1+`tag` and torchaudio 2.11.1+`tag` in index/torch and
    index/torchaudio, laid out as the real ones: torch/version.py holds __version__ and `cuda`
    (None in a CPU build). With `pypi`, named as PyPI names them: no local tag in the wheel's
    version, while torch.__version__ keeps it."""
    version = f"2.14.1+{tag}"
    audio = f"2.11.1+{tag}"
    build_wheel(
        index / "torch",
        "torch",
        "2.14.1" if pypi else version,
        {
            "torch/__init__.py": "from torch import version as version\n"
            "__version__ = version.__version__\n",
            "torch/version.py": "from typing import Optional\n\n"
            f"__version__ = {version!r}\ndebug = False\ncuda: Optional[str] = {cuda!r}\n",
        },
    )
    build_wheel(
        index / "torchaudio",
        "torchaudio",
        "2.11.1" if pypi else audio,
        {
            "torchaudio/__init__.py": "from torchaudio.version import __version__\n",
            "torchaudio/version.py": f"__version__ = {audio!r}\n",
        },
        requires=("torch",),
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serves `root` on 127.0.0.1; yields its base URL (no trailing slash)."""

    def handler(*args: object) -> http.server.BaseHTTPRequestHandler:
        return _Quiet(*args, directory=str(root))  # type: ignore[arg-type]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
