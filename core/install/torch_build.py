"""Which PyTorch build to install: the newest CUDA build the driver and cards support, an older one
for cards newer builds dropped, else the CPU build with the reason; PyPI's default on macOS. See
docs/install.md. Standard library only.
"""

import codecs
import json
import os
import shlex
import socket
import subprocess
import unicodedata
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from chattts_studio.core.errors import StudioError

TORCH = "2.14.1"
TORCHAUDIO = "2.11.1"
INDEX = "https://download.pytorch.org/whl/{build}"
# PyTorch's index or a mirror of it, as a URL in which {build} stands for cu126, cpu, ...
INDEX_VARIABLE = "CHATTTS_STUDIO_TORCH_INDEX"
# uv's option for the one index to use: --index-url loses to a UV_DEFAULT_INDEX in the
# environment (uv 0.13), --default-index does not.
UV_INDEX_FLAG = "--default-index"
NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    "--query-gpu=name,compute_cap,driver_version",
    "--format=csv,noheader",
)

Version = tuple[int, ...]

# Compute capabilities each build carries kernels (SASS) for, on Linux x86-64 and Windows.
_TURING_ON = ((7, 5), (8, 0), (8, 6), (9, 0), (10, 0), (12, 0))
_LEGACY = ((5, 0), (6, 0), (7, 0), (7, 5), (8, 0), (8, 6), (9, 0))


@dataclass(frozen=True)
class CudaBuild:
    name: str  # the index's name: cu130
    cuda: str  # 13.0, what torch.version.cuda says in this build
    archs: tuple[tuple[int, int], ...]
    min_driver: dict[str, str]  # by platform ("linux", "win32"), as NVIDIA writes it
    ptx_on_linux: bool  # the newest arch also as PTX, which newer cards compile at first use


# Newest first. Why these drivers: CUDA 13.x needs the R580 branch at least; 13.2 is taken
# only with the branch it shipped with; the 12.6 build runs on any 12.x driver (NVIDIA's minor
# version compatibility: its kernels are all compiled ahead, nothing is compiled at run time).
BUILDS = (
    CudaBuild("cu132", "13.2", _TURING_ON, {"linux": "595.00", "win32": "595.00"}, True),
    CudaBuild("cu130", "13.0", _TURING_ON, {"linux": "580.65.06", "win32": "580.88"}, True),
    CudaBuild("cu126", "12.6", _LEGACY, {"linux": "525.60.13", "win32": "528.33"}, False),
)
CPU = "cpu"
MAC_DEFAULT = "default"  # macOS: PyPI's build, with MPS


@dataclass(frozen=True)
class Gpu:
    name: str
    compute_cap: tuple[int, int]
    driver: Version
    # The driver version as nvidia-smi printed it (575.64.03, not 575.64.3).
    driver_text: str = field(default="", compare=False)

    @property
    def cap_text(self) -> str:
        return f"{self.compute_cap[0]}.{self.compute_cap[1]}"

    @property
    def driver_shown(self) -> str:
        return self.driver_text or ".".join(map(str, self.driver))

    @property
    def label(self) -> str:
        return f"{self.name} (compute {self.cap_text})"


@dataclass(frozen=True)
class Choice:
    build: str  # cu132, cu130, cu126, cpu, or default (macOS)
    reason: str
    command: str
    gpus: tuple[Gpu, ...] = ()  # what nvidia-smi found (none when it failed or is absent)
    smi_failed: bool = False
    left_out: tuple[Gpu, ...] = ()  # cards the chosen build does not serve

    def as_json(self) -> str:
        return json.dumps({"build": self.build, "reason": self.reason, "command": self.command})


class SmiError(ValueError):
    """nvidia-smi failed or printed something that is not its CSV answer."""


class SmiFileError(StudioError):
    """A saved nvidia-smi output that is missing, unreadable, empty or not text: the user's to
    fix, so one sentence and no fallback."""


def cuda_of(build: str) -> str | None:
    """What torch.version.cuda says in `build`: None for the CPU and macOS builds."""
    for known in BUILDS:
        if known.name == build:
            return known.cuda
    return None


def index_url(build: str) -> str:
    """PyTorch's index for `build`, or the mirror named by CHATTTS_STUDIO_TORCH_INDEX."""
    template = os.environ.get(INDEX_VARIABLE, "").strip() or INDEX
    return template.replace("{build}", build)


def unreachable(index: str) -> str | None:
    """Why a package index cannot be reached at all (no route, no name, refused, timed out), or
    None. Any other answer (an HTTP error, a certificate a proxy replaced) counts as reached:
    the installer then tries it and reports what fails."""
    try:
        with urllib.request.urlopen(index.rstrip("/") + "/torch/", timeout=30):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, (socket.gaierror, ConnectionError, TimeoutError)):
            return str(reason)
        return None


def parse_version(text: str) -> Version:
    parts = text.strip().split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise SmiError(f"{text.strip()!r} is not a driver version")
    return tuple(int(p) for p in parts)


def parse_smi(output: str) -> list[Gpu]:
    """The GPUs in `nvidia-smi --query-gpu=name,compute_cap,driver_version` CSV output (none
    when it says "No devices were found": a driver without a card)."""
    gpus = []
    for line in output.replace("\ufeff", "").splitlines():
        if not line.strip() or line.lower().startswith("name,"):  # blank, or a header kept
            continue
        if line.strip() == "No devices were found":
            continue
        fields = [f.strip() for f in line.rsplit(",", 2)]
        if len(fields) != 3 or not fields[0]:
            raise SmiError(f"unexpected line {line.strip()[:80]!r}")
        name, cap, driver = fields
        major, dot, minor = cap.partition(".")
        if not (major.isdigit() and dot and minor.isdigit()):
            raise SmiError(f"{cap[:40]!r} is not a compute capability")
        gpus.append(Gpu(name, (int(major), int(minor)), parse_version(driver), driver))
    return gpus


_SAVE_HINT = (
    "save it with `nvidia-smi --query-gpu=name,compute_cap,driver_version "
    "--format=csv,noheader > FILE`"
)


def decode_smi(data: bytes, path: Path) -> str:
    """A saved nvidia-smi output's text: UTF-8 (with or without a BOM) or UTF-16 (what
    PowerShell 5.1's `>` writes); anything else is a SmiFileError."""
    if data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif b"\x00" in data and len(data) % 2 == 0:  # UTF-16 without a BOM: ASCII's zero bytes
        encoding = "utf-16-le" if data[1::2].count(0) > len(data) // 4 else "utf-16-be"
    else:
        encoding = "utf-8"
    text: str | None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        text = None
    if text is not None:
        text = text.replace("\ufeff", "")
    if text is not None and not text.strip():
        raise SmiFileError(f"{path} is empty; {_SAVE_HINT}.")
    if text is None or any(unicodedata.category(c) == "Cc" and c not in "\t\r\n\f" for c in text):
        raise SmiFileError(
            f"{path} is not text (neither UTF-8 nor UTF-16), so it is not a saved nvidia-smi "
            f"output; {_SAVE_HINT}."
        )
    return text


def read_smi_file(path: Path) -> str:
    """The text of a saved nvidia-smi output, or a SmiFileError with one sentence."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SmiFileError(f"{path} does not exist; {_SAVE_HINT}.") from None
    except IsADirectoryError:
        raise SmiFileError(f"{path} is a folder, not a saved nvidia-smi output.") from None
    except OSError as exc:
        raise SmiFileError(f"{path} cannot be read ({exc.strerror or exc}).") from None
    return decode_smi(data, path)


def query_gpus(smi_output: str | None = None) -> list[Gpu]:
    """This machine's NVIDIA GPUs, or those in recorded output; [] when nvidia-smi is absent.

    Raises SmiError when it fails or answers in a way we cannot read."""
    if smi_output is None:
        try:
            done = subprocess.run(
                NVIDIA_SMI_QUERY,
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=20,
                check=False,
            )
        except FileNotFoundError:
            return []
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SmiError(f"nvidia-smi could not run ({exc})") from exc
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines()
            raise SmiError(
                f"nvidia-smi failed ({said[0][:160] if said else f'exit {done.returncode}'})"
            )
        smi_output = done.stdout
    return parse_smi(smi_output)


def runs_on(build: CudaBuild, cap: tuple[int, int], platform: str) -> bool:
    """Whether `build` has kernels for a card of compute capability `cap`.

    Kernels for X.y run on X.z for z >= y (same major); newer majors only through PTX."""
    if any(major == cap[0] and minor <= cap[1] for major, minor in build.archs):
        return True
    return build.ptx_on_linux and platform == "linux" and cap > max(build.archs)


def serves(build: CudaBuild, gpu: Gpu, platform: str) -> bool:
    """Whether `build` has kernels for the card and its driver is new enough for the build."""
    return runs_on(build, gpu.compute_cap, platform) and gpu.driver >= parse_version(
        build.min_driver[platform]
    )


def install_command(build: str, python: str, platform: str, has_pip: bool = True) -> str:
    """The one command that puts `build` of torch and torchaudio into `python`'s environment."""
    if build == MAC_DEFAULT:
        packages = [f"torch=={TORCH}", f"torchaudio=={TORCHAUDIO}"]
        index: list[str] = []
    else:
        packages = [f"torch=={TORCH}+{build}", f"torchaudio=={TORCHAUDIO}+{build}"]
        index = [index_url(build)]
    if has_pip:
        source = ["--index-url", *index] if index else []
        argv = [python, "-m", "pip", "install", *packages, *source]
    else:  # an environment made by uv has no pip
        source = [UV_INDEX_FLAG, *index] if index else []
        argv = ["uv", "pip", "install", "--python", python, *packages, *source]
    return join_command(argv, platform)


def join_command(argv: list[str], platform: str) -> str:
    if platform == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _cudas(builds: list[CudaBuild]) -> str:
    return "CUDA " + _and([b.cuda for b in builds])


def _left_out_because(gpu: Gpu, platform: str) -> str:
    """Why the chosen build leaves `gpu` out, as a relative clause."""
    with_kernels = [b for b in BUILDS if runs_on(b, gpu.compute_cap, platform)]
    if not with_kernels:
        return f"which no PyTorch {TORCH} CUDA build has kernels for"
    usable = [b for b in with_kernels if serves(b, gpu, platform)]
    if not usable:
        need = min(with_kernels, key=lambda b: parse_version(b.min_driver[platform]))
        return (
            f"whose builds need driver {need.min_driver[platform]} or newer "
            f"(this is {gpu.driver_shown})"
        )
    verb = "has" if len(usable) == 1 else "have"
    return f"which only {_cudas(usable)} {verb} kernels for"


def choose(gpus: list[Gpu], platform: str, python: str = "python", has_pip: bool = True) -> Choice:
    """The build for these GPUs on `platform` ("win32", "linux" or "darwin").

    The newest build the driver runs for the most capable card (the app runs on one GPU, and
    that is the one to make fast), naming the cards it leaves out and why; the CPU build only
    when no build serves any card. The order nvidia-smi lists the cards in makes no
    difference."""
    if platform == "darwin":
        return Choice(
            MAC_DEFAULT,
            "macOS has no CUDA; PyPI's build uses the Apple GPU through MPS.",
            install_command(MAC_DEFAULT, python, platform, has_pip),
        )

    def cpu(reason: str) -> Choice:
        return Choice(CPU, reason, install_command(CPU, python, platform, has_pip))

    if not gpus:
        return cpu("No NVIDIA GPU was found, so the CPU build is the one that runs here.")
    # Most capable first; equal cards once.
    cards = sorted(
        set(gpus), key=lambda g: (-g.compute_cap[0], -g.compute_cap[1], g.name, g.driver)
    )
    served = {b.name: [g for g in cards if serves(b, g, platform)] for b in BUILDS}
    reachable = [g for g in cards if any(g in served[b.name] for b in BUILDS)]
    if not reachable:
        return cpu(_no_build_reason(cards, platform))
    build = next(b for b in BUILDS if reachable[0] in served[b.name])
    kept = served[build.name]
    left_out = [g for g in cards if g not in kept]
    newer = BUILDS[: BUILDS.index(build)]
    dropped = sorted(
        {
            g.cap_text
            for g in kept
            for b in newer
            if not runs_on(b, g.compute_cap, platform)
            and g.driver >= parse_version(b.min_driver[platform])
        }
    )
    labels = _and([g.label for g in kept])
    driver = _and(sorted({g.driver_shown for g in kept}))
    if dropped:
        why = (
            f"Newer builds dropped compute {_and(dropped)}, and CUDA {build.cuda} is the newest "
            f"with kernels for the {labels}"
        )
    else:
        why = (
            f"CUDA {build.cuda} is the newest PyTorch build that driver {driver} supports with "
            f"kernels for the {labels}"
        )
    if left_out:
        why += f"; the most capable card, the {reachable[0].name}, decides"
        why += "; it leaves out " + ", and ".join(
            f"the {g.label}, {_left_out_because(g, platform)}" for g in left_out
        )
    return Choice(
        build.name,
        why + ".",
        install_command(build.name, python, platform, has_pip),
        left_out=tuple(left_out),
    )


def _no_build_reason(cards: list[Gpu], platform: str) -> str:
    """Why no CUDA build serves any of the cards: the driver is too old for every build with
    kernels for them, or no build has kernels for them."""
    with_kernels = [g for g in cards if any(runs_on(b, g.compute_cap, platform) for b in BUILDS)]
    without = [g for g in cards if g not in with_kernels]
    if not with_kernels:
        return (
            f"PyTorch {TORCH} has no CUDA build for the {_and([g.label for g in cards])}; its "
            f"oldest supported is compute 5.0, so only the CPU build runs here."
        )
    top = with_kernels[0]
    need = min(
        (b for b in BUILDS if runs_on(b, top.compute_cap, platform)),
        key=lambda b: parse_version(b.min_driver[platform]),
    )
    reason = (
        f"NVIDIA driver {top.driver_shown} is too old for PyTorch's CUDA builds for the "
        f"{_and([g.label for g in with_kernels])}: update the driver to "
        f"{need.min_driver[platform]} or newer, then install again (the CPU build runs until "
        f"then)"
    )
    if without:
        reason += f"; no build has kernels for the {_and([g.label for g in without])}"
    return reason + "."


def choose_here(
    platform: str,
    python: str,
    has_pip: bool,
    smi_file: Path | None = None,
) -> Choice:
    """The chooser on this machine's nvidia-smi (or a recorded output in `smi_file`); a failing
    or unreadable nvidia-smi gives the CPU build and says why.

    A recorded file that is missing, empty or not text raises SmiFileError (the user's
    mistake: one sentence)."""
    recorded = None if smi_file is None else read_smi_file(smi_file)
    try:
        gpus = [] if platform == "darwin" else query_gpus(recorded)
    except SmiError as exc:
        return Choice(
            CPU,
            f"The NVIDIA GPU could not be read: {exc}. The CPU build runs anywhere; fix the "
            f"driver and install again for the GPU.",
            install_command(CPU, python, platform, has_pip),
            smi_failed=True,
        )
    choice = choose(gpus, platform, python, has_pip)
    return Choice(
        choice.build, choice.reason, choice.command, tuple(gpus), left_out=choice.left_out
    )
