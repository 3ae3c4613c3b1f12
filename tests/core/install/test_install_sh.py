"""install.sh run for real under /bin/sh, in a copy of the checkout, with stand-ins: a PATH without
uv, a `curl` that fails (or serves a stand-in of uv's installer), a supported Python, and a
PyPI on 127.0.0.1 whose `uv` wheel wraps the real uv from .venv. It fetches uv at the pinned
version (from astral.sh, else from PyPI), says in one sentence when it cannot, and hands over to
the Python installer with the Python it found instead of downloading one."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_index import build_wheel, serve

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "resources" / "install" / "install.sh"
UV = shutil.which("uv", path=str(Path(sys.executable).parent))
SMI = Path(__file__).parent / "nvidia_smi" / "rtx3060_r551.txt"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="install.sh is for sh")


def _pinned(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    assert found, pattern
    return found.group(1)


UV_VERSION = _pinned(SCRIPT.read_text(), r"(?m)^UV_VERSION=(\S+)$")


def test_one_uv_version_is_pinned_everywhere_and_the_pythons_match_pyproject() -> None:
    ps1 = (ROOT / "resources" / "install" / "install.ps1").read_text(encoding="utf-8")
    lock = (ROOT / "constraints.txt").read_text()
    assert _pinned(ps1, r'\$uvVersion = "([^"]+)"') == UV_VERSION
    assert _pinned(lock, r"(?m)^uv==(\S+)$") == UV_VERSION
    text = SCRIPT.read_text()
    assert "https://astral.sh/uv/$UV_VERSION/install.sh" in text
    assert "https://astral.sh/uv/$uvVersion/install.ps1" in ps1
    assert "| sh" not in text and "| iex" not in ps1  # nothing piped into a shell
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low, high = (int(v) for v in re.findall(r"3\.(\d+)", requires))
    expected = " ".join(f"3.{minor}" for minor in range(high - 1, low - 1, -1))
    assert _pinned(text, r'(?m)^SUPPORTED="([^"]+)"$') == expected
    assert _pinned(ps1, r'\$supported = "([^"]+)"') == expected


@pytest.fixture(scope="module")
def pypi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PyPI whose uv (only at the pinned version) is a script running the real uv."""
    assert UV, "uv is a dev dependency: make install puts it in .venv"
    root = tmp_path_factory.mktemp("pypi")
    build_wheel(
        root / "simple" / "uv",
        "uv",
        UV_VERSION,
        {"uv/__init__.py": ""},
        scripts={"uv": f'#!/bin/sh\nexec {UV} "$@"\n'},
    )
    with serve(root) as url:
        yield f"{url}/simple"


def _checkout(tmp_path: Path) -> Path:
    """A copy of what install.sh and the Python installer read."""
    src = tmp_path / "my checkout"
    (src / "resources" / "install").mkdir(parents=True)
    shutil.copy(SCRIPT, src / "resources" / "install")
    shutil.copytree(ROOT / "core" / "install", src / "core" / "install")
    shutil.copy(ROOT / "core" / "errors.py", src / "core")
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, src)
    return src


def _bin(tmp_path: Path, curl: str | None, python: bool, tools: bool = True) -> Path:
    """A folder for PATH: a stand-in curl, a python3.13 that is this test's Python, and (when
    `tools` is false, for a PATH with nothing else) the few programs install.sh runs."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if curl is not None:
        (folder / "curl").write_text(f"#!/bin/sh\n{curl}\n")
        (folder / "curl").chmod(0o755)
    if python:
        (folder / "python3.13").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        (folder / "python3.13").chmod(0o755)
    if not tools:
        for tool in ("dirname", "mktemp", "rm"):
            found = shutil.which(tool)
            assert found
            (folder / tool).symlink_to(found)
    return folder


def _run(tmp_path: Path, src: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("UV", "PIP_", "XDG_"))}
    keep.pop("CHATTTS_STUDIO_PYTHON", None)
    full = {
        **keep,
        "PATH": path,
        "HOME": str(home),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_PYTHON_INSTALL_DIR": str(tmp_path / "uv-pythons"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_CONFIG_FILE": os.devnull,  # this machine's pip settings (extra indexes) left out
        **env,
    }
    script = src / "resources" / "install" / "install.sh"
    return subprocess.run(
        ["/bin/sh", str(script), "--dry-run", "--nvidia-smi-output", str(SMI)],
        capture_output=True,
        text=True,
        env=full,
        timeout=180,
    )


def test_a_failed_download_says_so_and_uv_comes_from_pypi_with_the_python_found(
    tmp_path: Path, pypi: str
) -> None:
    src = _checkout(tmp_path)
    fake = _bin(tmp_path, 'echo "curl: (6) Could not resolve host: astral.sh" >&2; exit 6', True)
    done = _run(tmp_path, src, f"{fake}:/usr/bin:/bin", PIP_INDEX_URL=pypi)
    assert done.returncode == 0, done.stderr
    assert (
        f"Could not download uv's installer from https://astral.sh/uv/{UV_VERSION}/install.sh "
        "(curl: exit status 6).\n" in done.stderr
    )
    assert f"Installing uv {UV_VERSION} from PyPI with {fake}/python3.13 instead..." in done.stderr
    assert "exec: uv: not found" not in done.stderr
    assert (src / "build" / "uv" / "bin" / "uv").is_file()
    # The Python installer ran, planned with the Python found, and no Python was downloaded.
    assert done.stdout.startswith("PyTorch build: cu126.")
    assert f"venv --allow-existing --python {sys.executable} " in done.stdout
    assert not (tmp_path / "uv-pythons").exists() or not any((tmp_path / "uv-pythons").iterdir())

    # A second run finds the uv the first one installed: no download, no PyPI.
    again = _run(tmp_path, src, f"{fake}:/usr/bin:/bin", PIP_INDEX_URL="http://127.0.0.1:9/")
    assert again.returncode == 0, again.stderr
    assert "Could not download" not in again.stderr and "PyPI" not in again.stderr


def test_uvs_pinned_installer_is_downloaded_to_a_file_then_run(tmp_path: Path) -> None:
    src = _checkout(tmp_path)
    seen = tmp_path / "curl-args"
    # A curl that writes a stand-in of uv's installer where -o says: it puts a uv in
    # UV_INSTALL_DIR that runs the real one.
    curl = (
        f'printf "%s\\n" "$@" > {seen}\n'
        'while [ "$#" -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n'
        "cat > \"$out\" <<'EOF'\n"
        'mkdir -p "$UV_INSTALL_DIR"\n'
        f'printf \'#!/bin/sh\\nexec {UV} "$@"\\n\' > "$UV_INSTALL_DIR/uv"\n'
        'chmod +x "$UV_INSTALL_DIR/uv"\n'
        "EOF"
    )
    fake = _bin(tmp_path, curl, True)
    done = _run(tmp_path, src, f"{fake}:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    args = seen.read_text().splitlines()
    assert f"https://astral.sh/uv/{UV_VERSION}/install.sh" in args and "--proto" in args
    assert (src / "build" / "uv" / "bin" / "uv").is_file()  # beside the checkout, not ~/.local
    assert not (tmp_path / "home" / ".local").exists()
    assert done.stdout.startswith("PyTorch build: cu126.")


def test_a_uv_of_another_version_is_left_alone_and_the_pinned_one_fetched(
    tmp_path: Path, pypi: str
) -> None:
    src = _checkout(tmp_path)
    fake = _bin(tmp_path, "exit 6", True)
    used = tmp_path / "old-uv-used"
    (fake / "uv").write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && echo "uv 0.4.0" && exit\ntouch {used}\n'
    )
    (fake / "uv").chmod(0o755)
    done = _run(tmp_path, src, f"{fake}:/usr/bin:/bin", PIP_INDEX_URL=pypi)
    assert done.returncode == 0, done.stderr
    assert f"Installing uv {UV_VERSION} from PyPI" in done.stderr and not used.exists()
    assert done.stdout.startswith("PyTorch build: cu126.")


@pytest.mark.parametrize("tool", ["curl", "wget"])
def test_no_download_and_no_python_is_one_sentence_and_exit_2(tmp_path: Path, tool: str) -> None:
    src = _checkout(tmp_path)
    fake = _bin(tmp_path, "exit 7", python=False, tools=False)
    if tool == "wget":  # a machine with wget and no curl
        (fake / "curl").rename(fake / "wget")
    done = _run(tmp_path, src, str(fake))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].endswith(f"({tool}: exit status 7).")
    assert len(lines) == 2 and lines[1].startswith(f"uv {UV_VERSION} could not be downloaded")
    assert "no supported Python (3.14 3.13 3.12 3.11) is installed" in lines[1]
    assert done.stdout == ""


def test_no_download_and_no_pypi_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    src = _checkout(tmp_path)
    fake = _bin(tmp_path, "exit 6", True)
    done = _run(
        tmp_path,
        src,
        f"{fake}:/usr/bin:/bin",
        PIP_INDEX_URL="http://127.0.0.1:9/simple",  # nothing listens there
        PIP_RETRIES="0",
        PIP_TIMEOUT="2",
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"uv {UV_VERSION} could not be downloaded from astral.sh nor installed")
    assert done.stdout == "" and not (src / ".venv").exists()


def test_a_checkout_in_a_hostile_folder_name_installs_as_any_other(tmp_path: Path) -> None:
    """Quotes, `$(...)`, backticks, brackets, spaces and non-ASCII letters in the checkout's path
    are data to install.sh and the Python installer: the plan names the folder, nothing runs."""
    hostile = tmp_path / "O'Brien ‘x’ $(touch INJECTED) `touch INJECTED` [1] Zoë"
    hostile.mkdir()
    src = _checkout(hostile)
    assert UV
    done = _run(
        tmp_path,
        src,
        f"{Path(UV).parent}:/usr/bin:/bin",
        CHATTTS_STUDIO_PYTHON=sys.executable,
        UV_PYTHON_DOWNLOADS="never",
    )
    assert done.returncode == 0, done.stderr
    assert "PyTorch build: cu126." in done.stdout
    assert shlex.quote(f"{src}[onnx]") in done.stdout
    assert not any(p.name == "INJECTED" for p in tmp_path.rglob("*"))
    assert not (ROOT / "INJECTED").exists() and not Path("INJECTED").exists()
