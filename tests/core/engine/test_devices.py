"""Devices and precisions decided per GPU from its compute capability, GPUs this PyTorch has no
kernels for listed but refused, and what the memory figures mean on each kind of device.

The CPU tests fake CUDA (torch.cuda's functions monkeypatched); the tests marked `gpu` need a
real CUDA GPU and are skipped without one (run them there with `pytest -m gpu`)."""

from types import SimpleNamespace

import pytest
import torch

from chattts_studio.core.engine.devices import (
    arch_supported,
    check_precision,
    default_device,
    list_devices,
    precision_support,
    resolve_device,
)
from chattts_studio.core.engine.metrics import MemorySnapshot, memory_snapshot, reset_peak
from chattts_studio.core.engine.request import Precision
from chattts_studio.core.errors import DeviceError

CUDA13_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]  # torch 2.14.1+cu130
GIB = 2**30
MIB = 2**20

T4 = ("Tesla T4", 7, 5, 15)
A100 = ("NVIDIA A100-SXM4-80GB", 8, 0, 80)
H200 = ("NVIDIA H200", 9, 0, 141)
K80 = ("Tesla K80", 3, 7, 12)


def fake_cuda(
    monkeypatch: pytest.MonkeyPatch,
    *gpus: tuple[str, int, int, int],
    arch_list: list[str] = CUDA13_ARCHS,
) -> None:
    """A machine with these GPUs (name, major, minor, GiB) and a PyTorch built for `arch_list`.
    is_bf16_supported says True for every GPU: the decision must not consult it."""
    props = [
        SimpleNamespace(name=name, total_memory=gib * GIB, major=major, minor=minor)
        for name, major, minor, gib in gpus
    ]

    def index(device: object = None) -> int:
        if device is None:
            return 0
        return device if isinstance(device, int) else (torch.device(device).index or 0)  # type: ignore[arg-type]

    def capability(device: object = None) -> tuple[int, int]:
        chosen = props[index(device)]
        return chosen.major, chosen.minor

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(props))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=None: props[index(d)])
    monkeypatch.setattr(torch.cuda, "get_device_capability", capability)
    monkeypatch.setattr(torch.cuda, "get_arch_list", lambda: list(arch_list))
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def one_sentence(text: str) -> bool:
    return text.endswith(".") and ". " not in text and "\n" not in text


# -- precisions, per device index ------------------------------------------------------------


def test_a_t4_is_offered_fp16_but_not_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cuda(monkeypatch, T4)
    gpu = list_devices()[0]
    assert (gpu.id, gpu.name, gpu.problem) == ("cuda:0", "Tesla T4", None)
    assert gpu.total_memory == 15 * GIB
    support = precision_support(gpu)
    assert support[Precision.FP32] is None and support[Precision.FP16] is None
    reason = support[Precision.BF16]
    assert reason and "7.5" in reason and "Ampere" in reason
    assert support[Precision.INT8]  # the CPU's option
    with pytest.raises(DeviceError, match="bf16 cannot be used on cuda:0") as caught:
        check_precision(gpu, "bf16")
    assert one_sentence(str(caught.value))
    assert check_precision(gpu, "fp16") is Precision.FP16


@pytest.mark.parametrize("gpu", [A100, H200], ids=["A100", "H200"])
def test_ampere_and_newer_get_fp16_and_bf16(
    monkeypatch: pytest.MonkeyPatch, gpu: tuple[str, int, int, int]
) -> None:
    fake_cuda(monkeypatch, gpu)
    device = resolve_device("cuda")
    assert device.id == "cuda:0" and device.name == gpu[0] and device.usable
    assert default_device() == device and resolve_device(None) == device
    support = precision_support(device)
    assert support[Precision.FP16] is None and support[Precision.BF16] is None
    assert support[Precision.INT8] is not None


def test_two_gpus_are_decided_each_by_its_own_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cuda(monkeypatch, T4, A100)
    t4, a100 = resolve_device("cuda:0"), resolve_device("cuda:1")
    assert precision_support(t4)[Precision.BF16] is not None
    assert precision_support(a100)[Precision.BF16] is None
    fake_cuda(monkeypatch, A100, T4)  # the other order: the answer follows the index
    assert precision_support(resolve_device("cuda:0"))[Precision.BF16] is None
    assert precision_support(resolve_device("cuda:1"))[Precision.BF16] is not None


def test_cpu_and_mps_precisions_are_unchanged() -> None:
    cpu = resolve_device("cpu")
    support = precision_support(cpu)
    assert support[Precision.FP16] and "not supported on the CPU" in support[Precision.FP16]
    assert support[Precision.BF16] is None and support[Precision.INT8] is None
    mps = precision_support(type(cpu)("mps", "Apple GPU (Metal)"))
    assert mps[Precision.FP32] is None
    assert all(mps[p] for p in (Precision.FP16, Precision.BF16, Precision.INT8))


# -- GPUs this PyTorch has no kernels for ----------------------------------------------------


def test_a_gpu_outside_the_arch_list_is_listed_refused_and_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_cuda(monkeypatch, K80)
    gpu = next(d for d in list_devices() if d.id == "cuda:0")
    assert not gpu.usable and gpu.problem
    assert "3.7" in gpu.problem and "sm_75" in gpu.problem and torch.__version__ in gpu.problem
    with pytest.raises(DeviceError, match="cuda:0") as caught:
        resolve_device("cuda:0")
    message = str(caught.value)
    assert one_sentence(message) and "Tesla K80" in message and gpu.problem in message
    with pytest.raises(DeviceError, match=r"3\.7"):
        resolve_device("cuda")
    assert default_device().kind == "cpu" and resolve_device(None).kind == "cpu"
    assert resolve_device("auto").kind == "cpu"


def test_a_gpu_newer_than_the_build_is_told_to_look_for_a_newer_pytorch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_cuda(monkeypatch, ("Future GPU", 13, 0, 200))
    problem = list_devices()[0].problem
    assert problem and "13.0" in problem and problem.endswith("a newer one may")


def test_the_default_skips_an_unsupported_gpu_for_a_supported_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_cuda(monkeypatch, K80, H200)
    devices = list_devices()
    assert [d.id for d in devices] == ["cuda:0", "cuda:1", "cpu"]
    assert [d.usable for d in devices] == [False, True, True]
    assert default_device().id == "cuda:1"


def test_cli_devices_and_doctor_show_the_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    fake_cuda(monkeypatch, K80, T4)
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    lines = {line[2:].split(" ")[0]: line for line in out.splitlines() if line[1:2] == " "}
    assert "unusable:" in lines["cuda:0"] and "3.7" in lines["cuda:0"]
    assert lines["cuda:1"].startswith("* ") and "precisions: fp32, fp16" in lines["cuda:1"]
    assert "bf16" not in lines["cuda:1"]
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "unusable: PyTorch" in out and "compute capability 3.7" in out
    assert "bf16: this GPU (compute capability 7.5) has no bf16" in out


@pytest.mark.parametrize(
    ("capability", "arch_list", "runs"),
    [
        ((9, 0), ["sm_90"], True),  # exactly listed
        ((8, 9), ["sm_80", "sm_86"], True),  # a same-major cubin with a lower minor
        ((8, 6), ["sm_89"], False),  # a higher minor never runs
        ((9, 0), ["sm_80", "sm_86"], False),  # another major: no cubin runs
        ((9, 0), ["sm_80", "compute_80"], True),  # PTX for an older capability is compiled
        ((12, 0), ["sm_90", "compute_90"], True),
        ((7, 5), ["sm_80", "compute_80"], False),  # PTX for a newer one is not
        ((9, 0), ["sm_90a"], True),  # arch-specific code: that exact capability only
        ((9, 1), ["sm_90a"], False),
        ((10, 3), ["sm_100f"], True),  # a family cubin, like the plain sm_100
        ((3, 7), CUDA13_ARCHS, False),
        ((6, 1), CUDA13_ARCHS, False),
        ((7, 5), CUDA13_ARCHS, True),
        ((12, 1), CUDA13_ARCHS, True),
        ((3, 7), [], True),  # a build that does not say: PyTorch decides at run time
        ((9, 0), ["nonsense", "sm_x"], False),
    ],
)
def test_arch_compatibility_rule(
    capability: tuple[int, int], arch_list: list[str], runs: bool
) -> None:
    assert arch_supported(capability, arch_list) is runs


def test_the_device_picker_greys_out_an_unsupported_gpu_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("PySide6")
    from PySide6.QtCore import Qt

    from chattts_studio.core.engine.devices import cuda_status
    from chattts_studio.core.services.model_jobs import DeviceProbe
    from chattts_studio.gui.app import application
    from chattts_studio.gui.panels.controls import ControlsPanel

    fake_cuda(monkeypatch, K80, A100)
    application()
    panel = ControlsPanel()
    # What the worker's probe sends once torch is imported (the panel says "loading..." before).
    devices = list_devices()
    panel.show_probe(
        DeviceProbe(
            devices,
            default_device().id,
            cuda_status(),
            {d.id: precision_support(d) for d in devices if d.usable},
            tuple(Precision),
        )
    )
    box = panel.device_box
    model = box.model()
    ids = [box.itemData(i) for i in range(box.count())]
    assert ids == ["cuda:0", "cuda:1", "cpu"]
    bad = ids.index("cuda:0")
    assert not model.flags(model.index(bad, 0)) & Qt.ItemFlag.ItemIsEnabled
    tooltip = box.itemData(bad, Qt.ItemDataRole.ToolTipRole)
    assert tooltip == panel.devices[bad].problem and "3.7" in tooltip
    assert "unsupported" in box.itemText(bad)
    assert model.flags(model.index(ids.index("cuda:1"), 0)) & Qt.ItemFlag.ItemIsEnabled
    assert panel.device().id == "cuda:1"  # never starts on the greyed-out one
    panel.select("cuda:0", "fp32")  # a saved choice that no longer works is not taken
    assert panel.device().id == "cuda:1"
    assert "cuda:0 cannot be used" in panel.device_note.text()
    panel.deleteLater()


# -- memory figures ----------------------------------------------------------------------------


def test_cpu_and_cuda_descriptions_are_unchanged() -> None:
    cpu = memory_snapshot("cpu")
    assert cpu.rss and cpu.allocated is None and cpu.in_use == cpu.rss
    assert cpu.describe() == f"process memory {cpu.rss / MIB:.0f} MiB (CPU)"
    cuda = MemorySnapshot(
        "cuda:0", allocated=100 * MIB, reserved=200 * MIB, peak=150 * MIB, total=1024 * MIB
    )
    assert cuda.describe() == ("VRAM 100 MiB allocated, 200 MiB reserved, peak 150 MiB of 1024 MiB")


def test_mps_memory_is_metal_s_figures_plus_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.mps, "current_allocated_memory", lambda: 300 * MIB, raising=False)
    monkeypatch.setattr(torch.mps, "driver_allocated_memory", lambda: 512 * MIB, raising=False)
    snap = memory_snapshot("mps")
    assert (snap.mps_allocated, snap.mps_driver) == (300 * MIB, 512 * MIB)
    assert snap.rss and snap.allocated is None  # not VRAM: never drawn as CUDA figures
    text = snap.describe()
    assert text.startswith("MPS 300 MiB allocated, 512 MiB held by the Metal driver")
    assert f"process memory {snap.rss / MIB:.0f} MiB" in text
    assert text.endswith("(the GPT runs on the CPU there)")
    reset_peak("mps")  # nothing to reset there, and no error


def test_mps_memory_without_torch_mps_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> int:
        raise RuntimeError("MPS backend is not available")

    monkeypatch.delattr(torch.mps, "current_allocated_memory", raising=False)
    monkeypatch.setattr(torch.mps, "driver_allocated_memory", broken, raising=False)
    snap = memory_snapshot("mps")
    assert snap.mps_allocated is None and snap.mps_driver is None and snap.rss
    assert snap.describe().startswith("MPS figures unavailable")
    assert "(the GPT runs on the CPU there)" in snap.describe()


# -- on a real GPU (pytest -m gpu) -------------------------------------------------------------


@pytest.mark.gpu
def test_real_gpu_is_listed_usable_and_the_default() -> None:
    gpu = next(d for d in list_devices() if d.id == "cuda:0")
    assert gpu.usable, gpu.problem
    assert gpu.name and gpu.total_memory and gpu.total_memory > GIB
    assert default_device().id == "cuda:0" and resolve_device("cuda") == gpu


@pytest.mark.gpu
def test_real_gpu_precisions_match_its_capability() -> None:
    for device in list_devices():
        if device.kind != "cuda":
            continue
        major, minor = torch.cuda.get_device_capability(int(device.id.split(":")[1]))
        support = precision_support(device)
        assert (support[Precision.FP16] is None) == (major >= 6), (device, major, minor)
        assert (support[Precision.BF16] is None) == (major >= 8), (device, major, minor)
        assert support[Precision.INT8] is not None


@pytest.mark.gpu
def test_real_gpu_memory_snapshot_matches_torch() -> None:
    reset_peak("cuda:0")
    block = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda:0")
    snap = memory_snapshot("cuda:0")
    assert snap.allocated == torch.cuda.memory_allocated(0)
    assert snap.reserved == torch.cuda.memory_reserved(0)
    assert snap.peak == torch.cuda.max_memory_allocated(0)
    assert snap.allocated is not None and snap.allocated >= block.numel()
    assert snap.in_use == snap.allocated
    assert snap.free is not None and snap.total is not None and 0 < snap.free <= snap.total
    assert snap.describe().startswith("VRAM ")
    del block
    reset_peak("cuda:0")
    after = memory_snapshot("cuda:0")
    assert after.peak == torch.cuda.max_memory_allocated(0) == torch.cuda.memory_allocated(0)
