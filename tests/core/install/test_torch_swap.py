"""The chosen torch build always ends up installed, proved with the real uv and pip against
package indexes served on 127.0.0.1 (local_index.py) that mimic PyTorch's (stand-in torch
wheels tagged +cu126 and +cpu, each with the torch/version.py of the real ones) and PyPI's: the
installer run again after a driver update swaps +cpu for +cu126, and a wrong build that stays is
one loud sentence and a failing exit status. Also the Makefile's step for Linux (ensure_torch)."""

import ensurepip
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_index import serve, torch_wheels

from chattts_studio.core.install import torch_env

ROOT = Path(__file__).resolve().parents[3]
RECORDED = Path(__file__).parent / "nvidia_smi"
UV = shutil.which("uv", path=str(Path(sys.executable).parent))

# A stand-in for the app's checkout: a project the installer installs with the lock, built by
# an in-tree backend that needs nothing from an index.
BACKEND = """
import base64, hashlib, zipfile

NAME, VERSION = "chattts_studio_standin", "0.0.1"


def _digest(data):
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"{NAME}-{VERSION}.dist-info"
    files = {
        "standin_app.py": b"def main():\\n    return 0\\n",
        f"{info}/METADATA": (
            b"Metadata-Version: 2.1\\nName: chattts-studio-standin\\nVersion: 0.0.1\\n"
            b"Requires-Dist: torch==2.14.1\\nRequires-Dist: torchaudio==2.11.1\\n"
            b"Provides-Extra: onnx\\n"
        ),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
        f"{info}/entry_points.txt": b"[console_scripts]\\nchattts-studio = standin_app:main\\n",
    }
    record = "".join(f"{p},sha256={_digest(d)},{len(d)}\\n" for p, d in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\\n").encode()
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(f"{wheel_directory}/{name}", "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return name
"""
PYPROJECT = """[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]

[project]
name = "chattts-studio-standin"
version = "0.0.1"
requires-python = ">=3.11,<3.15"
dependencies = ["torch==2.14.1", "torchaudio==2.11.1"]

[project.optional-dependencies]
onnx = []

[project.scripts]
chattts-studio = "standin_app:main"
"""


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """PyTorch's index (whl/cu126, whl/cpu), PyPI (pypi: Linux's CUDA 13.0 build), a PyPI
    that has only a CPU build (pypi-cpu), and whl/fake126, whose +cu126 wheels hold a CPU
    build's torch/version.py (cuda = None)."""
    root = tmp_path_factory.mktemp("indexes")
    torch_wheels(root / "whl" / "cu126", "cu126", "12.6")
    torch_wheels(root / "whl" / "cpu", "cpu", None)
    torch_wheels(root / "pypi", "cu130", "13.0", pypi=True)
    torch_wheels(root / "pypi-cpu", "cpu", None, pypi=True)
    torch_wheels(root / "whl" / "fake126", "cu126", None)  # a CPU build under cu126's name
    # pip for the environments the Makefile's step works on: the wheel Python itself carries.
    (root / "pypi" / "pip").mkdir()
    for wheel in (Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"):
        shutil.copy(wheel, root / "pypi" / "pip")
    with serve(root) as url:
        yield url


def _env(tmp_path: Path, url: str, torch_index: str = "{build}") -> dict[str, str]:
    assert UV, "uv is a dev dependency: make install puts it in .venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_", "VIRTUAL_ENV"))}
    return {
        **env,
        "UV": UV,
        "UV_DEFAULT_INDEX": f"{url}/pypi",
        "PIP_INDEX_URL": f"{url}/pypi",
        "CHATTTS_STUDIO_TORCH_INDEX": f"{url}/whl/{torch_index}",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_CACHE_DIR": "1",
    }


def _standin_checkout(tmp_path: Path) -> Path:
    src = tmp_path / "checkout"
    src.mkdir()
    (src / "backend.py").write_text(BACKEND)
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "constraints.txt").write_text("torch==2.14.1\ntorchaudio==2.11.1\n")
    return src


def _install(src: Path, smi: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bootstrap = ROOT / "core" / "install" / "bootstrap.py"
    argv = [sys.executable, str(bootstrap), "--root", str(src), "--nvidia-smi-output"]
    return subprocess.run(
        [*argv, str(RECORDED / smi)], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stand-in index is Linux's")
def test_a_rerun_swaps_the_cpu_build_for_cu126_and_a_wrong_build_fails_loudly(
    tmp_path: Path, indexes: str
) -> None:
    src = _standin_checkout(tmp_path)
    python = src / ".venv" / "bin" / "python"
    env = _env(tmp_path, indexes)

    # No GPU: the CPU build from PyTorch's (stand-in) index, checked in the environment.
    first = _install(src, "no_devices.txt", env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "PyTorch build: cpu." in first.stdout
    assert "Checked: torch 2.14.1+cpu (CPU only) (torch.version.cuda: None)." in first.stdout
    assert torch_env.read_installed(python) == torch_env.Installed("2.14.1+cpu", None, "2.11.1+cpu")

    # The driver was updated: the rerun replaces +cpu with +cu126, which uv alone would keep.
    second = _install(src, "rtx3060_r551.txt", env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "torch 2.14.1+cpu (CPU only); the cu126 build replaces it." in second.stdout
    assert "--reinstall-package torch" in second.stdout
    assert "(torch.version.cuda: 12.6)" in second.stdout
    installed = torch_env.read_installed(python)
    assert installed == torch_env.Installed("2.14.1+cu126", "12.6", "2.11.1+cu126")

    # Once it is there, a third run installs no torch.
    third = _install(src, "rtx3060_r551.txt", env)
    assert third.returncode == 0 and "torch==" not in third.stdout, third.stdout

    # The lock's own build (cu130, PyPI's on Linux) is reinstalled from PyPI; this PyPI has
    # only a CPU build, so the check after the install fails in one sentence.
    fourth = _install(src, "rtx4090_r581.txt", {**env, "UV_DEFAULT_INDEX": f"{indexes}/pypi-cpu"})
    assert fourth.returncode == 1, fourth.stdout + fourth.stderr
    said = fourth.stderr.strip().splitlines()[-1]  # after uv's own lines
    assert "Traceback" not in fourth.stderr and "Checked" not in fourth.stdout
    assert said.startswith("The environment has torch 2.14.1+cpu (CPU only)")
    assert "torch.version.cuda: None), not the cu130 build (CUDA 13.0) that was chosen" in said
    assert "--reinstall-package torch" in fourth.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stand-in index is Linux's")
def test_a_cu126_named_wheel_without_cuda_fails_the_check(tmp_path: Path, indexes: str) -> None:
    src = _standin_checkout(tmp_path)
    done = _install(src, "rtx3060_r551.txt", _env(tmp_path, indexes, torch_index="fake126"))
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stderr.strip().splitlines()[-1]
    assert "torch.version.cuda: None), not the cu126 build (CUDA 12.6)" in said


def _pip_venv(tmp_path: Path, env: dict[str, str]) -> Path:
    """An environment made as the Makefile makes it (with pip), holding PyPI's stand-in torch."""
    venv = tmp_path / "venv"
    subprocess.run([UV or "uv", "venv", str(venv)], env=env, check=True, capture_output=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [UV or "uv", "pip", "install", "--python", str(python), "pip", "torch", "torchaudio"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return python


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Makefile's step is Linux's")
def test_the_makefile_step_swaps_with_pip_and_keeps_the_build_without_a_gpu(
    tmp_path: Path, indexes: str
) -> None:
    env = _env(tmp_path, indexes)
    python = _pip_venv(tmp_path, env)
    step = [sys.executable, "-m", "chattts_studio.core.install.ensure_torch"]
    step += ["--python", str(python)]

    # No GPU: what PyPI gave stays, one sentence says so and how to get the CPU-only build.
    kept = subprocess.run(
        [*step, "--nvidia-smi-output", str(RECORDED / "no_devices.txt")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.startswith(
        "No NVIDIA GPU was found, so torch 2.14.1+cu130 (CUDA 13.0) stays"
    )
    assert "pip install torch==2.14.1+cpu torchaudio==2.11.1+cpu --index-url" in kept.stdout
    assert kept.stdout.count("\n") == 1

    # Driver 551 with an RTX 3060: the venv's pip installs cu126 from PyTorch's index.
    swapped = subprocess.run(
        [*step, "--nvidia-smi-output", str(RECORDED / "rtx3060_r551.txt")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert swapped.returncode == 0, swapped.stdout + swapped.stderr
    assert f"{python} -m pip install torch==2.14.1+cu126" in swapped.stdout
    assert swapped.stdout.rstrip().endswith("(torch.version.cuda: 12.6).")
    assert torch_env.read_installed(python) == torch_env.Installed(
        "2.14.1+cu126", "12.6", "2.11.1+cu126"
    )

    # Nothing to do: one line, no install.
    again = subprocess.run(
        [*step, "--nvidia-smi-output", str(RECORDED / "rtx3060_r551.txt")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert again.returncode == 0
    assert again.stdout == ("PyTorch build: cu126, torch 2.14.1+cu126 (CUDA 12.6), is installed.\n")
