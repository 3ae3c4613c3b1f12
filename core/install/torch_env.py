"""The torch installed in an environment, and whether it is the chosen build: read from
torch/version.py without importing torch, and after an install asked of the environment's own
Python. Standard library only.
"""

import ast
import subprocess
from dataclasses import dataclass
from pathlib import Path

from chattts_studio.core.install.torch_build import MAC_DEFAULT, TORCH, TORCHAUDIO, cuda_of

# What the environment's Python prints after importing them: torch's version, its CUDA, and
# torchaudio's version.
CHECK = (
    "import torch, torchaudio; print(torch.__version__); print(torch.version.cuda); "
    "print(torchaudio.__version__)"
)


@dataclass(frozen=True)
class Installed:
    torch: str  # torch.__version__: 2.14.1+cu126
    cuda: str | None  # torch.version.cuda: 12.6, or None in a CPU build
    torchaudio: str | None  # its version, None when it is missing

    def describe(self) -> str:
        """'torch 2.14.1+cu126 (CUDA 12.6)' or 'torch 2.14.1+cpu (CPU only)'."""
        return f"torch {self.torch} ({f'CUDA {self.cuda}' if self.cuda else 'CPU only'})"


def _local(version: str) -> str:
    return version.partition("+")[2]


def _base(version: str) -> str:
    return version.partition("+")[0]


def is_build(installed: Installed | None, build: str) -> bool:
    """Whether `installed` is `build` (cu126, cu130, cpu or default) of the locked versions:
    the CUDA torch was built with, and a local tag that is the build's or none. torchaudio's
    tag is not compared: PyPI pairs its CUDA 13.0 torch with a torchaudio tagged cu132."""
    if installed is None or installed.torchaudio is None:
        return False
    tags = {""} if build == MAC_DEFAULT else {"", build}
    return (
        _base(installed.torch) == TORCH
        and _local(installed.torch) in tags
        and installed.cuda == cuda_of(build)
        and _base(installed.torchaudio) == TORCHAUDIO
    )


def site_packages(python: Path) -> list[Path]:
    """The folders a virtual environment's Python imports packages from, found from its layout
    (no process started); [] when `python` is not in a virtual environment."""
    venv = python.parent.parent
    if not (venv / "pyvenv.cfg").is_file():
        return []
    found = [venv / "Lib" / "site-packages"]  # Windows
    found += sorted((venv / "lib").glob("python3.*/site-packages"))
    version = _venv_version(venv / "pyvenv.cfg")
    if version:  # a folder left by an older Python of the same venv does not count
        found = [p for p in found if p.parent.name in (f"python{version}", "Lib")]
    return [p for p in found if p.is_dir()]


def _venv_version(cfg: Path) -> str:
    for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info"):
            return ".".join(value.strip().split(".")[:2])
    return ""


def _assignments(path: Path) -> dict[str, object]:
    """The module-level `name = constant` assignments of a Python file, without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


def _dist_version(site: Path, name: str) -> str | None:
    for info in sorted(site.glob(f"{name}-*.dist-info")):
        for line in (info / "METADATA").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Version:"):
                return line.partition(":")[2].strip()
    return None


def _run_python(python: Path, code: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -c code`, its output read as UTF-8 whatever the locale's code page."""
    return subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )


def _sites_from(python: Path) -> list[Path]:
    """The environment's package folders as its Python reports them (for a Python outside a
    virtual environment)."""
    code = "import sysconfig as s; print(s.get_path('purelib'), s.get_path('platlib'), sep=chr(10))"
    try:
        done = _run_python(python, code, 60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [Path(line) for line in dict.fromkeys(done.stdout.splitlines()) if line]


def read_installed(python: Path) -> Installed | None:
    """The torch and torchaudio in `python`'s environment, read from their files; None when
    torch is not installed there."""
    sites = site_packages(python) or _sites_from(python)
    for site in sites:
        version_file = site / "torch" / "version.py"
        if not version_file.is_file():
            continue
        values = _assignments(version_file)
        torch = values.get("__version__") or _dist_version(site, "torch")
        if not isinstance(torch, str):
            continue
        cuda = values.get("cuda")
        audio: object = None
        for audio_site in sites:
            audio = _assignments(audio_site / "torchaudio" / "version.py").get(
                "__version__"
            ) or _dist_version(audio_site, "torchaudio")
            if audio:
                break
        return Installed(
            torch,
            cuda if isinstance(cuda, str) else None,
            audio if isinstance(audio, str) else None,
        )
    return None


class CheckFailed(Exception):
    """The environment's torch is not the chosen build after installing it; str() is one
    sentence saying what is there instead and what to run."""


def verify(python: Path, build: str, command: str) -> Installed:
    """Imports torch in `python` (a child process), and returns what it reports when it is
    `build`; otherwise raises CheckFailed, naming `command` as the way to install it."""
    try:
        done = _run_python(python, CHECK, 600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckFailed(f"{python} could not run to check torch ({exc}).") from None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 3:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise CheckFailed(
            f"torch and torchaudio cannot be imported in {python} ({said[:200]}); install the "
            f"{build} build with: {command}"
        )
    installed = Installed(lines[0], None if lines[1] == "None" else lines[1], lines[2])
    if not is_build(installed, build):
        expected = f"CUDA {cuda_of(build)}" if cuda_of(build) else "no CUDA"
        raise CheckFailed(
            f"The environment has {installed.describe()} and torchaudio {installed.torchaudio} "
            f"(torch.version.cuda: {installed.cuda}), not the {build} build ({expected}) that "
            f"was chosen; install it with: {command}"
        )
    return installed
