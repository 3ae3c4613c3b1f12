"""Which PyTorch build to install: the newest CUDA build that the NVIDIA driver supports and whose
kernels include the card, an older build for cards the newer ones dropped, else the CPU build with
the reason; on macOS PyPI's default build (MPS). The tables follow PyTorch's and NVIDIA's
(docs/install.md cites both). Standard library only."""

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

TORCH = "2.14.1"
TORCHAUDIO = "2.11.1"
INDEX = "https://download.pytorch.org/whl/{build}"
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
    cuda: str  # 13.0
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

    @property
    def cap_text(self) -> str:
        return f"{self.compute_cap[0]}.{self.compute_cap[1]}"


@dataclass(frozen=True)
class Choice:
    build: str  # cu132, cu130, cu126, cpu, or default (macOS)
    reason: str
    command: str
    gpus: tuple[Gpu, ...] = ()  # what nvidia-smi found (none when it failed or is absent)
    smi_failed: bool = False

    def as_json(self) -> str:
        return json.dumps({"build": self.build, "reason": self.reason, "command": self.command})


class SmiError(ValueError):
    """nvidia-smi failed or printed something that is not its CSV answer."""


def parse_version(text: str) -> Version:
    parts = text.strip().split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise SmiError(f"{text.strip()!r} is not a driver version")
    return tuple(int(p) for p in parts)


def parse_smi(output: str) -> list[Gpu]:
    """The GPUs in `nvidia-smi --query-gpu=name,compute_cap,driver_version` CSV output."""
    gpus = []
    for line in output.splitlines():
        if not line.strip() or line.lower().startswith("name,"):  # blank, or a header kept
            continue
        fields = [f.strip() for f in line.rsplit(",", 2)]
        if len(fields) != 3 or not fields[0]:
            raise SmiError(f"unexpected line {line.strip()[:80]!r}")
        name, cap, driver = fields
        major, dot, minor = cap.partition(".")
        if not (major.isdigit() and dot and minor.isdigit()):
            raise SmiError(f"{cap[:40]!r} is not a compute capability")
        gpus.append(Gpu(name, (int(major), int(minor)), parse_version(driver)))
    return gpus


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


def install_command(build: str, python: str, platform: str, has_pip: bool = True) -> str:
    """The one command that puts `build` of torch and torchaudio into `python`'s environment."""
    if build == MAC_DEFAULT:
        packages = [f"torch=={TORCH}", f"torchaudio=={TORCHAUDIO}"]
        index: list[str] = []
    else:
        packages = [f"torch=={TORCH}+{build}", f"torchaudio=={TORCHAUDIO}+{build}"]
        index = ["--index-url", INDEX.format(build=build)]
    if has_pip:
        argv = [python, "-m", "pip", "install", *packages, *index]
    else:  # an environment made by uv has no pip
        argv = ["uv", "pip", "install", "--python", python, *packages, *index]
    return join_command(argv, platform)


def join_command(argv: list[str], platform: str) -> str:
    if platform == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def choose(gpus: list[Gpu], platform: str, python: str = "python", has_pip: bool = True) -> Choice:
    """The build for these GPUs on `platform` ("win32", "linux" or "darwin")."""
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
    first = gpus[0]
    driver = ".".join(map(str, first.driver))
    cards = " and ".join(sorted({f"{g.name} (compute {g.cap_text})" for g in gpus}))
    dropped = False  # a newer build the driver runs but without kernels for these cards
    for build in BUILDS:
        if first.driver < parse_version(build.min_driver[platform]):
            continue
        if not all(runs_on(build, gpu.compute_cap, platform) for gpu in gpus):
            dropped = True
            continue
        why = (
            f"newer builds dropped compute {first.cap_text}, and CUDA {build.cuda} is the "
            f"newest with kernels for the {cards}"
            if dropped
            else f"CUDA {build.cuda} is the newest PyTorch build that driver {driver} "
            f"supports with kernels for the {cards}"
        )
        return Choice(
            build.name,
            why[0].upper() + why[1:] + ".",
            install_command(build.name, python, platform, has_pip),
        )
    fits_card = [b for b in BUILDS if runs_on(b, first.compute_cap, platform)]
    if not fits_card:
        return cpu(
            f"PyTorch {TORCH} has no CUDA build for the {first.name} (compute {first.cap_text}; "
            f"its oldest supported is 5.0), so only the CPU build runs here."
        )
    need = min(fits_card, key=lambda b: parse_version(b.min_driver[platform]))
    wanted = need.min_driver[platform]
    return cpu(
        f"NVIDIA driver {driver} is too old for PyTorch's CUDA builds for the {first.name}: "
        f"update the driver to {wanted} or newer, then install again (the CPU build runs until "
        f"then)."
    )


def choose_here(
    platform: str,
    python: str,
    has_pip: bool,
    smi_file: Path | None = None,
) -> Choice:
    """The chooser on this machine's nvidia-smi (or a recorded output in `smi_file`); a failing
    or unreadable nvidia-smi gives the CPU build and says why."""
    try:
        recorded = None if smi_file is None else smi_file.read_text(encoding="utf-8")
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
    return Choice(choice.build, choice.reason, choice.command, tuple(gpus))
