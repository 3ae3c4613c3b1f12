"""The parts of the GPU run (gpucheck.py), each run in its own process. Every part returns a
dict of figures; an exception is recorded in it, never lost."""

import contextlib
import json
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

import torch

from chattts_studio.core import child_process
from chattts_studio.core.atomic import replace_file

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine

Part = Callable[["Mode"], dict[str, Any]]


class Mode:
    def __init__(self, cpu: bool, limit: float, result: Path | None = None) -> None:
        self.cpu = cpu
        self.result = result
        self.device = "cpu" if cpu else "cuda:0"
        self.model = "demo" if cpu else "demo-full"
        self.deadline = time.perf_counter() + limit

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def keep(self, data: dict[str, Any]) -> None:
        """Writes what a part has measured so far: a part killed at its time limit (a compile
        or a batch that ran long) still leaves its figures to the report."""
        if self.result is None:
            return
        partial = self.result.with_suffix(".partial")
        partial.write_text(
            json.dumps(data | {"partial": True}, indent=2, default=str), encoding="utf-8"
        )
        replace_file(partial, self.result)

    def sync(self) -> None:
        if not self.cpu:
            torch.cuda.synchronize()


def env(mode: Mode) -> dict[str, Any]:
    from chattts_studio.core.engine.devices import cuda_status, list_devices, precision_support

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cuda_status": cuda_status(),
        "devices": [],
    }
    if torch.cuda.is_available():
        info["arch_list"] = torch.cuda.get_arch_list()
        info["driver_capability"] = [
            list(torch.cuda.get_device_capability(i)) for i in range(torch.cuda.device_count())
        ]
    for device in list_devices():
        info["devices"].append(
            {
                "id": device.id,
                "label": device.label,
                "problem": getattr(device, "problem", None),
                "precisions": {
                    p.value: why or "ok" for p, why in precision_support(device).items()
                },
            }
        )
    return info


def pytest_gpu(mode: Mode) -> dict[str, Any]:
    # Only the files that hold gpu or fake-CUDA tests: the others import PySide6 and the
    # server's client, which the GPU machine lacks, and one collection error stops the whole
    # run. Searched in every test folder (tests/ mirrors the packages): with no file, pytest
    # would collect the whole suite.
    files = sorted(
        str(path)
        for path in Path("tests").rglob("test_*.py")
        if any(
            mark in path.read_text(encoding="utf-8")
            for mark in ("@pytest.mark.gpu", "pytest.mark.fake_cuda")
        )
    )
    if not files:
        return {"exit": 5, "summary": "no test file marks gpu tests", "ok": mode.cpu} | (
            {} if mode.cpu else {"error": "no test file under tests/ marks gpu tests"}
        )
    # The fake-CUDA tests (every CUDA path on fake tensors) run on the card's machine too: its
    # torch is not the suite's. On the CPU they are in the suite already: one proves the command.
    if mode.cpu:
        return _pytest(["-m", "gpu or fake_cuda", "-k", "not fake_cuda or plain-fp32"], files, mode)
    # On the card the gpu tests first, on their own: the fake-CUDA ones can outlast the part's
    # time there, and their timeout would hide the gpu tests' result.
    real = _pytest(["-m", "gpu"], files, mode)
    fake = _pytest(["-m", "fake_cuda"], files, mode)
    out = {
        "exit": real["exit"] or fake["exit"],
        "summary": f"gpu: {real['summary']}; fake_cuda: {fake['summary']}",
        "ok": real["ok"] and fake["ok"],
    }
    errors = [
        f"{name}: {r['error']}" for name, r in (("gpu", real), ("fake_cuda", fake)) if "error" in r
    ]
    return out | ({"error": "\n".join(errors)} if errors else {})


def _pytest(select: list[str], files: list[str], mode: Mode) -> dict[str, Any]:
    command = [sys.executable, "-m", "pytest", *select, "-q", "-p", "no:cacheprovider", *files]
    seconds = max(10.0, mode.left() - 5)
    try:
        proc = child_process.run_python(command, timeout=seconds)
    except subprocess.TimeoutExpired as exc:
        tail = child_process.text(exc.stdout).strip().splitlines()[-1:]
        return {"exit": None, "summary": f"did not finish in {seconds:.0f} s {tail}", "ok": False}
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    # 5: nothing selected (the CPU mode, where every gpu test is skipped or deselected).
    ok = proc.returncode == 0 or (mode.cpu and proc.returncode == 5)
    return {"exit": proc.returncode, "summary": lines[-1] if lines else "", "ok": ok} | (
        {} if ok else {"error": "\n".join(lines[-40:])}
    )


def _engine(mode: Mode, precision: str = "fp32") -> "Engine":
    from chattts_studio.core.engine.engine import Engine

    engine = Engine()
    engine.load(mode.model, mode.device, precision)
    return engine


def _equality(engine: Any, mode: Mode) -> dict[str, Any]:
    """Studio's codes against ChatTTS's own generate loop at batch 1, same seed."""
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.chattts.chat import StockSettings
    from chattts_studio.core.engine.decode.job import Job
    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.engine.request import Sampling

    model = engine.model
    speaker = engine.sample_speaker(3)
    text = model.normalize("今天天气很好我们去公园散步")
    steps = 40 if mode.cpu else 120
    forms: dict[str, dict[str, Any]] = {
        "eager": {},
        "static": {"static": True},
        "static, flags read first": {"static": True, "late_flags": False},
        "fused steps": {"static": True, "late_flags": True, "fused_steps": 8},
    }
    if not mode.cpu:  # the replayed forms: the GPT step, and whole units (sampling inside)
        forms["graphs"] = {"graphs": True}
        forms["graphs, fused steps"] = {"graphs": True, "fused_steps": 8}
    rows = []
    for top_k, temperature in ((1, 0.3), (20, 0.7)):
        settings = StockSettings(speaker, 5, temperature, 0.7, top_k, steps, steps)
        torch.manual_seed(11)
        ids, hiddens = model.stock_codes([text], settings, CancelToken())
        emb = model.embed(model.prompt_ids(text, 5, speaker), speaker)
        for name, options in forms.items():
            decoder = FastDecoder(model, 1, emb.shape[1] + steps + 1, **options)
            torch.manual_seed(11)
            run = decoder.run([Job(0, emb, steps, steps)], Sampling(temperature, 0.7, top_k), bool)
            job = next(j for j in run if j)
            ours = torch.stack(job.tokens).cpu()
            rows.append(
                {
                    "form": name,
                    "top_k": top_k,
                    "tokens_equal": bool(torch.equal(ours, ids[0].cpu())),
                    "hidden_max_diff": float(
                        (torch.stack(job.hiddens).float() - hiddens[0].float()).abs().max()
                    ),
                    "graphs_problem": getattr(decoder._graphs, "problem", None)
                    or getattr(decoder._fused, "problem", None),
                    "fused_replays": getattr(decoder._fused, "replays", 0),
                }
            )
    return {"rows": rows, "all_equal": all(r["tokens_equal"] for r in rows)}


def _nan(mode: Mode) -> dict[str, Any]:
    """A NaN in one row's logits: one sentence, and the process (CUDA context) still works."""
    from chattts_studio.core.engine.decode.job import NonFiniteError
    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.engine.request import SynthesisRequest

    engine = _engine(mode, "fp32" if mode.cpu else "fp16")
    real = FastDecoder._logits
    calls = [0]

    def poisoned(self: Any, hidden: torch.Tensor) -> torch.Tensor:
        logits = real(self, hidden)
        calls[0] += 1
        if calls[0] == 3:
            logits[0] = float("nan")
        return logits

    request = SynthesisRequest("你好。今天天气很好。", refine_text=False, batch_size=2)
    try:
        with mock.patch.object(FastDecoder, "_logits", poisoned):
            list(engine.synthesize(request))
        sentence = "no error"
    except NonFiniteError as exc:
        sentence = str(exc)
    after = list(engine.synthesize(request))
    mode.sync()
    planned = len(engine.plan(request).segments)
    return {
        "sentence": sentence,
        "caught": sentence != "no error",
        "next_job_segments": len(after),
        "planned_segments": planned,
    }


def _cancel(engine: Any, mode: Mode) -> dict[str, Any]:
    from chattts_studio.core.engine.cancel import CancelToken
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.errors import Cancelled

    token = CancelToken()
    request = SynthesisRequest(
        "今天天气很好。" * 12, segment_size=7, batch_size=2, refine_text=False
    )
    kept, started = 0, time.perf_counter()
    latency = None
    try:
        for _ in engine.synthesize(request, cancel=token):
            kept += 1
            if kept == 1:
                cancelled_at = time.perf_counter()
                threading.Timer(0.0, token.cancel).start()
    except Cancelled:
        latency = time.perf_counter() - cancelled_at
    again = len(list(engine.synthesize(SynthesisRequest("你好。", refine_text=False))))
    return {
        "kept": kept,
        "stopped_after_s": latency,
        "wall_s": time.perf_counter() - started,
        "next_job_segments": again,
    }


def _oom(engine: Any, mode: Mode) -> dict[str, Any]:
    """Out of memory for real on CUDA: hold most of the card so that a batch's KV cache does
    not fit, synthesize, and see the batch halve and every segment come out. On the CPU the
    error is injected (filling the RAM is no test)."""
    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.engine.request import SynthesisRequest

    batch = 4 if mode.cpu else 16
    engine.decoders.clear()  # kept decoders (earlier checks') would hold the memory meant here
    text = "今天天气很好，我们去公园散步。" * batch
    request = SynthesisRequest(text, segment_size=15, batch_size=batch, refine_text=False)
    plan = engine.plan(request)
    held: list[torch.Tensor] = []
    real_init = FastDecoder.__init__
    injected: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if mode.cpu:
        failed: list[int] = []

        def failing(self: Any, model: Any, slots: int, max_len: int, **kw: Any) -> None:
            if slots > 1 and not failed:
                failed.append(slots)
                raise torch.OutOfMemoryError("CUDA out of memory (injected)")
            real_init(self, model, slots, max_len, **kw)

        injected = mock.patch.object(FastDecoder, "__init__", failing)
    else:
        cfg = engine.model.gpt.config
        head_dim = cfg.hidden_size // cfg.num_attention_heads
        max_len = 120 + max(s.step_cap for s in plan.segments)
        kv = 2 * cfg.num_hidden_layers * batch * cfg.num_key_value_heads * max_len * head_dim * 4
        torch.cuda.empty_cache()
        free, _total = torch.cuda.mem_get_info()
        target = int(kv * 0.7)  # less than the batch's KV cache, more than half of it
        while free > target + 2**28:
            size = min(free - target - 2**27, 2**33)
            held.append(torch.empty(size, dtype=torch.uint8, device=mode.device))
            free, _total = torch.cuda.mem_get_info()
    try:
        with injected:
            results = list(engine.synthesize(plan))
    finally:
        held.clear()
        if not mode.cpu:
            torch.cuda.empty_cache()
    summary = engine.last_summary
    return {
        "segments_planned": len(plan.segments),
        "segments_made": len(results),
        "in_order": [r.index for r in results] == list(range(len(plan.segments))),
        "batch_asked": batch,
        "batch_finished": summary.batch_size if summary else None,
        "note": engine.live.snapshot().note,
        "audio_s": sum(r.audio_seconds for r in results),
    }


def _batcher(engine: Any, mode: Mode) -> dict[str, Any]:
    """The API's one continuous batch (static cache and CUDA graphs on CUDA): requests at once
    share decode steps, and each request's audio equals what it gets alone (exact rows)."""
    import numpy as np

    from chattts_studio.core.engine.batch.batcher import Batcher
    from chattts_studio.core.engine.batch.tickets import Delivery, Failed, SpeechOrder, collect
    from chattts_studio.core.engine.request import AudioChunk

    texts = ["你好。今天天气很好。", "Hello there. Good day.", "我们。去公园。", "明天见。再见。"]
    count = 3 if mode.cpu else 8
    orders = [
        SpeechOrder(texts[i % len(texts)], engine.sample_speaker(i + 1), i + 1)
        for i in range(count)
    ]
    batcher = Batcher(engine, slots=count)
    widest: list[int] = [0]
    batcher.step_listeners.append(lambda ids: widest.append(len(set(ids))))

    def run(order: SpeechOrder) -> tuple[threading.Event, list[Delivery]]:
        return collect(batcher, order)

    def audio(got: list[Delivery]) -> np.ndarray:
        return np.concatenate([c.audio for c in got if isinstance(c, AudioChunk)])

    batcher.start()
    try:
        started = time.perf_counter()
        together = [run(order) for order in orders]
        finished = all(done.wait(max(1.0, mode.left())) for done, _ in together)
        together_s = time.perf_counter() - started
        failed = [str(g[-1].error) for _, g in together if g and isinstance(g[-1], Failed)]
        if not finished or failed:
            return {"error": f"finished {finished}, failed {failed[:2]}"}
        equal, worst, alone_s = [], 0.0, 0.0
        for order, (_, got) in zip(orders, together, strict=True):
            began = time.perf_counter()
            done, alone = run(order)
            if not done.wait(max(1.0, mode.left())):
                return {"error": "a request alone did not finish in time"}
            alone_s += time.perf_counter() - began
            a, b = audio(got), audio(alone)
            equal.append(a.shape == b.shape and bool(np.array_equal(a, b)))
            if a.shape == b.shape:
                worst = max(worst, float(np.max(np.abs(a - b))))
        audio_s = sum(len(audio(g)) for _, g in together) / 24_000
    finally:
        batcher.close()
    return {
        "requests": count,
        "widest_step_requests": max(widest),
        "all_equal_alone": all(equal),
        "max_abs_diff": worst,
        "together_s": together_s,
        "one_by_one_s": alone_s,
        "speedup": alone_s / together_s if together_s else None,
        "audio_s": audio_s,
    }


def checks(mode: Mode) -> dict[str, Any]:
    from chattts_studio.core.devtools.gpulevers import vocoder_stream_check

    out: dict[str, Any] = {}
    engine = _engine(mode)
    for name, fn in (
        ("equality", lambda: _equality(engine, mode)),
        ("cancel", lambda: _cancel(engine, mode)),
        ("oom", lambda: _oom(engine, mode)),
        ("batcher", lambda: _batcher(engine, mode)),
        ("vocoder_stream", lambda: vocoder_stream_check(engine)),
        ("nan", lambda: _nan(mode)),
    ):
        try:
            out[name] = fn()
        except Exception as exc:  # recorded; the other checks still run
            out[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
    failed = [k for k, v in out.items() if "error" in v]
    if failed:
        out["error"] = f"checks failed: {', '.join(failed)}"
    return out


def bench(mode: Mode) -> dict[str, Any]:
    from chattts_studio.core.devtools.gpubench import run_bench

    return run_bench(mode)


PARTS: dict[str, Part] = {"env": env, "pytest": pytest_gpu, "checks": checks, "bench": bench}


def run_part(name: str, cpu: bool, limit: float, result: Path) -> int:
    from chattts_studio.core.engine.quiet import quiet_libraries

    quiet_libraries()
    mode = Mode(cpu, limit, result)
    try:
        data = PARTS[name](mode)
    except Exception as exc:
        data = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
    result.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    return 1 if "error" in data else 0
