"""What the command line's commands share: messages on stderr, loading a model."""

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine


def err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_engine(model: str, device: str | None = None, precision: str = "fp32") -> "Engine":
    from chattts_studio.core.engine.engine import Engine

    engine = Engine()
    loaded = engine.load(
        model,
        device,
        precision,
        progress=lambda stage, _f: err(f"  {stage}") if stage.startswith("building") else None,
    )
    err(
        f"model: {loaded.info.label} on {loaded.device.id}, {loaded.precision.value}, "
        f"loaded in {loaded.load_seconds:.1f} s"
    )
    return engine
