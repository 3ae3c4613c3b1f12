"""The static step through torch.compile ("fewer kernels"): its results agree with
the eager step's, its artefacts are cached under the app's cache folder and a second process
loads them, and a compiler that fails leaves the eager step."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch._dynamo.exc import TorchDynamoException

from chattts_studio.core.engine.decode.job import Job
from chattts_studio.core.engine.decode.loop import FastDecoder
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import Sampling

# A child process: the same step compiled again, reporting inductor's FX graph cache hits.
CHILD = """
import torch
from torch._dynamo.utils import counters
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.decode.loop import FastDecoder
engine = Engine()
engine.load("demo", "cpu", "fp32")
decoder = FastDecoder(engine.model, 2, 64, static=True, compiled=True)
codes = torch.zeros(2, engine.model.num_vq, dtype=torch.long)
pos = torch.full((2,), 9, dtype=torch.long)
with torch.inference_mode():
    decoder._gpt_step(codes, pos, 64)
assert decoder._compiled.problem is None, decoder._compiled.problem
print("hits", counters["inductor"]["fxgraph_cache_hit"])
"""


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's home in tmp, and inductor's cache variables unset (the app sets them)."""
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(tmp_path / "home"))
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "home" / "cache" / "compiled"


def test_the_compiled_step_agrees_and_a_second_process_loads_it_from_the_cache(
    engine: Engine, cache_env: Path
) -> None:
    model = engine.model
    assert model is not None
    decoder = FastDecoder(model, 2, 64, static=True, compiled=True)
    codes = torch.randint(0, 100, (2, model.num_vq))
    pos = torch.tensor([9, 9])
    with torch.inference_mode():
        ours = decoder._gpt_step(codes, pos, 64).clone()
        eager = decoder._static_step(codes, pos, 64)  # the same keys and values again
    assert decoder._compiled is not None and decoder._compiled.problem is None
    assert decoder._compiled.calls == 1
    assert torch.allclose(ours, eager, atol=1e-4, rtol=1e-4)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(cache_env / "inductor")
    assert any((cache_env / "inductor").rglob("*")), "nothing was cached"
    child = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
        env=os.environ.copy(),
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-3000:]
    hits = int(child.stdout.split("hits")[-1])
    assert hits >= 1, child.stdout


def test_a_compiler_that_fails_leaves_the_eager_step(
    engine: Engine, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole decode with compiling broken: the eager decoder's codes, the reason kept."""

    def broken(fn, **options):  # type: ignore[no-untyped-def]
        def call(*args):  # type: ignore[no-untyped-def]
            raise TorchDynamoException("no C++ compiler")  # as inductor's failures are

        return call

    monkeypatch.setattr(torch, "compile", broken)
    model = engine.model
    assert model is not None
    speaker = engine.sample_speaker(1)
    emb = model.embed(model.prompt_ids("你好", 5, speaker), speaker)

    def decode(compiled: bool) -> tuple[FastDecoder, torch.Tensor]:
        decoder = FastDecoder(model, 1, emb.shape[1] + 20, static=True, compiled=compiled)
        torch.manual_seed(3)
        job = next(j for j in decoder.run([Job(0, emb, 12, 12)], Sampling(0.3, 0.7, 20), bool) if j)
        return decoder, torch.stack(job.tokens)

    failed, codes = decode(True)
    assert failed._compiled is not None and "no C++ compiler" in str(failed._compiled.problem)
    assert torch.equal(codes, decode(False)[1])
