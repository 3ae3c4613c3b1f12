"""Devices the engine can run on, why CUDA is or is not there, and what each precision means."""

import functools
import importlib.util
import sys
from dataclasses import dataclass

import torch

from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import DeviceError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence


def torch_dtype(precision: Precision) -> torch.dtype:
    """The dtype the GPT's weights are cast to at `precision` (int8 is applied by
    quantization instead: its weights stay fp32 until then)."""
    return {
        Precision.FP32: torch.float32,
        Precision.FP16: torch.float16,
        Precision.BF16: torch.bfloat16,
        Precision.INT8: torch.float32,
    }[precision]


@dataclass(frozen=True)
class Device:
    """One place to run: 'cpu', 'cuda:N' or 'mps'."""

    id: str
    name: str
    total_memory: int | None = None  # bytes; None where the platform does not say
    problem: str | None = None  # why it cannot be used (listed, greyed out); None: usable

    @property
    def usable(self) -> bool:
        return self.problem is None

    @property
    def kind(self) -> str:
        return self.id.split(":")[0]

    @property
    def label(self) -> str:
        if self.total_memory:
            return f"{self.id} - {self.name} ({self.total_memory / 2**30:.1f} GiB)"
        return f"{self.id} - {self.name}"

    def torch_device(self) -> torch.device:
        return torch.device(self.id)


@functools.cache
def cpu_build_status(platform: str | None = None) -> Sentence:
    """Why a CPU-only PyTorch has no CUDA, and on a PC with an NVIDIA GPU the one command that
    installs the build for it (asked of nvidia-smi once per process); no CUDA advice on a Mac."""
    from chattts_studio.core.install.torch_build import CPU, choose_here

    platform = platform or ("linux" if sys.platform.startswith("linux") else sys.platform)
    if platform == "darwin":
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core", "CUDA does not exist on macOS; PyTorch uses the Apple GPU through MPS."
            )
        )
    has_pip = importlib.util.find_spec("pip") is not None
    choice = choose_here(platform, sys.executable, has_pip)
    if choice.build != CPU:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "CUDA is unavailable: this PyTorch is a CPU-only build, but this computer has "
                "an NVIDIA GPU. Install the CUDA build with: {command}",
            ),
            command=choice.command,
        )
    if not choice.gpus and not choice.smi_failed:
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "CUDA is unavailable: this PyTorch is a CPU-only build and no NVIDIA GPU was "
                "found.",
            )
        )
    return Sentence(
        QT_TRANSLATE_NOOP("core", "CUDA is unavailable: this PyTorch is a CPU-only build. {why}"),
        why=choice.reason,
    )


def cuda_status() -> str:
    """One sentence on whether CUDA is usable, and if not, why (a Sentence: translatable)."""
    version = torch.version.cuda
    if version is None:
        return cpu_build_status()
    try:
        count = torch.cuda.device_count()
    except RuntimeError as exc:  # a driver that is present but broken
        return Sentence(QT_TRANSLATE_NOOP("core", "CUDA is unavailable: {reason}"), reason=str(exc))
    if not torch.cuda.is_available() or count == 0:
        try:
            torch.cuda.init()
        except Exception as exc:
            # The driver's message ends in a download link; its first sentence is the reason.
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            reason = text.split(". ")[0].rstrip(".")
            return Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "CUDA is unavailable: PyTorch is built for CUDA {version} but no usable GPU "
                    "or driver was found ({reason}).",
                ),
                version=version,
                reason=reason,
            )
        return Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "CUDA is unavailable: PyTorch is built for CUDA {version} but no GPU was found.",
            ),
            version=version,
        )
    return Sentence(
        QT_TRANSLATE_NOOP("core", "CUDA {version} is usable with {count} device(s)."),
        version=version,
        count=count,
    )


def _arch_code(entry: str) -> tuple[str, int, int, str] | None:
    """'sm_86' -> ('sm', 8, 6, ''), 'compute_90a' -> ('compute', 9, 0, 'a'); None if unknown."""
    kind, _, code = entry.strip().lower().partition("_")
    suffix = code[-1] if code[-1:] in ("a", "f") else ""
    digits = code.removesuffix(suffix) if suffix else code
    if kind not in ("sm", "compute") or len(digits) < 2 or not digits.isdigit():
        return None
    return kind, int(digits[:-1]), int(digits[-1]), suffix


def arch_supported(capability: tuple[int, int], arch_list: list[str]) -> bool:
    """Whether this PyTorch build has code a GPU of `capability` (major, minor) can run.

    The rule (CUDA's compatibility guarantees):
    - a cubin for sm_XY runs on a GPU of the same major X with minor >= Y (binary
      compatibility within a major version; an exact sm_XY is the case minor == Y);
    - PTX for compute_XY is compiled by the driver for any GPU with capability >= X.Y;
    - arch-specific code (an 'a' suffix, as in sm_90a) runs only on exactly X.Y; a family
      suffix ('f', as in sm_100f) is treated like the plain sm_XY.
    An empty list (a build that does not say) counts as supported: PyTorch decides at run time.
    Integrated Jetson GPUs (5.3, 6.2, 7.2, 8.7) are exceptions to the first rule that this does
    not model: desktop builds, the ones this check is for, never meet them.
    """
    if not arch_list:
        return True
    major, minor = capability
    for entry in arch_list:
        code = _arch_code(entry)
        if code is None:
            continue
        kind, code_major, code_minor, suffix = code
        if suffix == "a":
            if (code_major, code_minor) == (major, minor):
                return True
        elif kind == "sm":
            if code_major == major and code_minor <= minor:
                return True
        elif (code_major, code_minor) <= (major, minor):
            return True
    return False


def _cuda_problem(index: int) -> str | None:
    """Why CUDA device `index` cannot run this PyTorch's kernels, or None when it can."""
    try:
        major, minor = torch.cuda.get_device_capability(index)
        arch_list = list(torch.cuda.get_arch_list())
    except (RuntimeError, AssertionError) as exc:  # a device the driver cannot describe
        return Sentence(
            QT_TRANSLATE_NOOP("core", "its compute capability cannot be read ({reason})"),
            reason=str(exc),
        )
    if arch_supported((major, minor), arch_list):
        return None
    codes = [code[1:3] for code in map(_arch_code, arch_list) if code is not None]
    older = bool(codes) and (major, minor) < min(codes)
    hint = Sentence(
        QT_TRANSLATE_NOOP("core", "a PyTorch build for an older CUDA may support it")
        if older
        else QT_TRANSLATE_NOOP("core", "a newer one may")
    )
    return Sentence(
        QT_TRANSLATE_NOOP(
            "core",
            "PyTorch {torch} (CUDA {cuda}) has no kernels for its compute capability "
            "{capability} (it is built for {archs}); {hint}",
        ),
        torch=torch.__version__,
        cuda=torch.version.cuda,
        capability=f"{major}.{minor}",
        archs=", ".join(arch_list),
        hint=hint,
    )


def list_devices() -> list[Device]:
    """CPU, every CUDA device (name, total memory) and MPS when present; CUDA first. A GPU this
    PyTorch has no kernels for is listed with its `problem`, so it can be shown greyed out."""
    devices: list[Device] = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            devices.append(
                Device(f"cuda:{index}", props.name, int(props.total_memory), _cuda_problem(index))
            )
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append(Device("mps", "Apple GPU (Metal)"))
    import platform

    devices.append(Device("cpu", platform.processor() or platform.machine() or "CPU"))
    return devices


def default_device() -> Device:
    """The first usable CUDA device, else the CPU (MPS is opt-in: ChatTTS runs its GPT on CPU
    there)."""
    devices = list_devices()
    for device in devices:
        if device.kind == "cuda" and device.usable:
            return device
    return next(d for d in devices if d.kind == "cpu")


def resolve_device(device_id: str | None) -> Device:
    """Turn a user's choice ('cpu', 'cuda', 'cuda:1', 'mps', None) into a Device, or refuse."""
    if device_id is None or device_id == "auto":
        return default_device()
    device_id = device_id.strip().lower()
    if device_id == "cuda":
        device_id = "cuda:0"
    devices = list_devices()
    for device in devices:
        if device.id == device_id:
            if device.problem:
                raise DeviceError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "Device {device} ({name}) cannot be used: {problem}."
                        ),
                        device=device.id,
                        name=device.name,
                        problem=device.problem,
                    )
                )
            return device
    if device_id.startswith("cuda"):
        if not torch.cuda.is_available():
            raise DeviceError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Device {device} cannot be used. {status}"),
                    device=device_id,
                    status=cuda_status(),
                )
            )
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "Device {device} does not exist; this machine has {count} CUDA device(s).",
                ),
                device=device_id,
                count=torch.cuda.device_count(),
            )
        )
    raise DeviceError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "Unknown device '{device}'; choose one of: {known}."),
            device=device_id,
            known=", ".join(d.id for d in devices),
        )
    )


def precision_support(device: Device) -> dict[Precision, str | None]:
    """For each precision: None when the device can do it, else the reason it cannot.

    The one place that decides what each precision means: on CUDA fp16/bf16 run the GPT in that
    dtype and the vocoder stays fp32; on the CPU bf16 casts the GPT (no fp16 kernels worth
    having, and MKL's FFT has no half support) and int8 quantizes the GPT's linear layers
    (4x fewer bytes to read per step); on MPS ChatTTS runs its GPT on the CPU, so only fp32.
    """
    support: dict[Precision, str | None] = {Precision.FP32: None}
    cpu_only = Sentence(
        QT_TRANSLATE_NOOP(
            "core", "int8 is the CPU's option (dynamic quantization); on a GPU use fp16 or bf16"
        )
    )
    if device.kind == "cuda":
        # Decided per device index from its compute capability: torch.cuda.is_bf16_supported()
        # asks about the current device only and counts emulation, which is slow.
        index = int(device.id.split(":")[1])
        major, minor = torch.cuda.get_device_capability(index)
        capability = f"{major}.{minor}"
        support[Precision.FP16] = (
            None
            if major >= 6
            else Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "this GPU (compute capability {capability}) has no fast fp16 (before Pascal)",
                ),
                capability=capability,
            )
        )
        support[Precision.BF16] = (
            None
            if major >= 8
            else Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "this GPU (compute capability {capability}) has no bf16 (it needs Ampere or "
                    "newer, 8.0)",
                ),
                capability=capability,
            )
        )
        support[Precision.INT8] = cpu_only
    elif device.kind == "cpu":
        support[Precision.FP16] = Sentence(
            QT_TRANSLATE_NOOP("core", "fp16 is not supported on the CPU; use fp32, bf16 or int8")
        )
        support[Precision.BF16] = None
        support[Precision.INT8] = None
    else:
        reason = Sentence(
            QT_TRANSLATE_NOOP(
                "core", "on Apple MPS ChatTTS runs its GPT on the CPU, so only fp32 applies"
            )
        )
        support[Precision.FP16] = reason
        support[Precision.BF16] = reason
        support[Precision.INT8] = reason
    return support


def check_precision(device: Device, precision: str | Precision) -> Precision:
    try:
        chosen = Precision(str(precision).lower())
    except ValueError:
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Unknown precision '{precision}'; choose fp32, fp16, bf16 or int8."
                ),
                precision=precision,
            )
        ) from None
    reason = precision_support(device)[chosen]
    if reason:
        raise DeviceError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "{precision} cannot be used on {device}: {reason}."),
                precision=chosen.value,
                device=device.id,
                reason=reason,
            )
        )
    return chosen
