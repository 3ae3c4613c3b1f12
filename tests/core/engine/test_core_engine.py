"""The engine on the real ChatTTS package with the tiny random-init demo weights."""

import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from chattts_studio.core import SAMPLES_PER_STEP
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SynthesisRequest, join_audio
from chattts_studio.core.errors import (
    BadSettingError,
    Cancelled,
    DeviceError,
    ModelError,
    SpeakerError,
)
from chattts_studio.core.text.prepare import split_segments
from chattts_studio.core.weights import models

ZH = "今天天气很好。我们去公园散步吧！公园里有很多人，有的在跑步，有的在下棋。"
EN = "The quick brown fox jumps over the lazy dog. It costs 42 dollars, said the fox."
MIXED = "Hello，欢迎使用 ChatTTS Studio。我们在测试 mixed text [uv_break] 好吗？"


def fast(text: str, **kw: object) -> SynthesisRequest:
    base = {"segment_size": 20, "batch_size": 2, "refine_text": False}
    base.update(kw)
    return SynthesisRequest(text, **base)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [ZH, EN, MIXED], ids=["chinese", "english", "mixed"])
def test_synthesize_yields_every_segment_in_order_with_figures(engine: Engine, text: str) -> None:
    request = fast(text)
    planned = engine.plan(request).segments
    assert [s.text for s in planned] == [s.text for s in split_segments(text, 20, None, True)]
    results = list(engine.synthesize(request))
    assert [r.index for r in results] == list(range(len(planned)))
    assert [r.text for r in results] == [s.text for s in planned]
    for result, segment in zip(results, planned, strict=True):
        assert result.audio.dtype == np.float32 and np.isfinite(result.audio).all()
        # Demo weights run to the segment's cap: speech-like length, 512 samples a step.
        assert result.steps == segment.step_cap
        # The vocoder's centred STFT yields one hop (256 samples) less for the longest row.
        assert result.steps * SAMPLES_PER_STEP - 256 <= len(result.audio)
        assert len(result.audio) <= result.steps * SAMPLES_PER_STEP
        assert np.abs(result.audio).max() > 1e-4  # noise, not silence
        assert result.compute_seconds > 0 and result.rtf > 0
        assert result.memory is not None and result.memory.rss
    summary = engine.last_summary
    assert summary is not None and summary.segments == len(planned)
    assert summary.steps == sum(r.steps for r in results)
    assert summary.first_audio_seconds is not None
    assert summary.first_audio_seconds <= summary.wall_seconds
    joined = join_audio(results, 0.5)
    gaps = (len(results) - 1) * 12000
    assert len(joined) == sum(len(r.audio) for r in results) + gaps


def test_refine_text_pass_runs(engine: Engine) -> None:
    results = list(engine.synthesize(fast("你好。Hello.", refine_text=True)))
    assert len(results) == 2 and all(len(r.audio) > 0 for r in results)  # the first apart


def test_batch_size_does_not_change_segments_or_order(engine: Engine) -> None:
    text = ZH + EN
    one = list(engine.synthesize(fast(text, batch_size=1)))
    three = list(engine.synthesize(fast(text, batch_size=3)))
    assert [(r.index, r.text, r.steps) for r in one] == [(r.index, r.text, r.steps) for r in three]
    assert {r.batch_size for r in three} - {1} and {r.batch_size for r in one} == {1}


def test_same_request_and_seed_give_the_same_audio(engine: Engine) -> None:
    request = fast(ZH, seed=7, refine_text=True)
    first = join_audio(list(engine.synthesize(request)))
    again = join_audio(list(engine.synthesize(request)))
    other = join_audio(list(engine.synthesize(replace(request, seed=8))))
    assert np.array_equal(first, again)
    assert not np.array_equal(first[: len(other)], other[: len(first)])


def test_cancel_from_another_thread_stops_fast_and_keeps_finished_segments(
    engine: Engine,
) -> None:
    request = fast(ZH * 6, batch_size=1, segment_size=30)
    kept = []
    stopped_at: list[float] = []
    with pytest.raises(Cancelled):
        for result in engine.synthesize(request):
            kept.append(result)
            if len(kept) == 1:
                threading.Timer(0.05, engine.cancel).start()
                cancel_time = time.perf_counter()
        stopped_at.append(time.perf_counter())
    latency = time.perf_counter() - cancel_time
    assert 1 <= len(kept) < len(split_segments(request.text, 30))
    assert latency < 2.0
    assert engine.live.snapshot().stage == "cancelled"
    # The engine works again after a cancel.
    assert list(engine.synthesize(fast("你好。")))


def test_live_snapshot_moves_during_a_run(engine: Engine) -> None:
    seen: list[tuple[str, int, float]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            snap = engine.live.snapshot()
            seen.append((snap.stage, snap.steps_done, snap.fraction))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        results = list(engine.synthesize(fast(ZH * 3, batch_size=1, segment_size=30)))
    finally:
        done.set()
        watcher.join()
    steps = [s for stage, s, _ in seen if stage == "decode"]
    assert len(set(steps)) >= 3, "steps_done should move several times while decoding"
    assert steps == sorted(steps)
    final = engine.live.snapshot()
    assert final.stage == "done" and final.steps_done == sum(r.steps for r in results)
    assert final.rtf and final.rtf > 0 and final.memory and final.memory.rss


def test_speaker_from_seed_is_reproducible_and_validated(engine: Engine) -> None:
    a, b, c = engine.sample_speaker(1), engine.sample_speaker(1), engine.sample_speaker(2)
    assert a == b and a != c
    assert engine.check_speaker(a) == a
    request = fast("你好。", speaker=a)
    assert np.array_equal(
        join_audio(list(engine.synthesize(request))), join_audio(list(engine.synthesize(request)))
    )
    with pytest.raises(SpeakerError, match="not a valid"):
        engine.check_speaker("not an embedding")
    import torch
    from ChatTTS.model.speaker import Speaker

    too_wide = Speaker._encode(torch.zeros(768))
    with pytest.raises(SpeakerError, match="768 values"):
        list(engine.synthesize(fast("你好。", speaker=too_wide)))


@pytest.mark.parametrize(
    "change", [{"segment_size": 0}, {"batch_size": 1000}, {"temperature": -1}, {"top_k": 0}]
)
def test_settings_out_of_range_are_refused(engine: Engine, change: dict[str, object]) -> None:
    with pytest.raises(BadSettingError):
        list(engine.synthesize(fast("你好。", **change)))


def test_devices_and_precisions_refused_with_reasons(demo_model: str) -> None:
    engine = Engine()
    with pytest.raises(DeviceError, match="cuda:7"):
        engine.load(demo_model, "cuda:7")
    with pytest.raises(DeviceError, match="fp16"):
        engine.load(demo_model, "cpu", "fp16")
    assert engine.loaded is None


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_cpu_precisions_load_and_speak(demo_model: str, precision: str) -> None:
    import torch

    engine = Engine()
    loaded = engine.load(demo_model, "cpu", precision)
    try:
        assert loaded.precision.value == precision
        layer = engine.model.gpt.layers[0].mlp.up_proj  # type: ignore[union-attr]
        if precision == "bf16":
            assert layer.weight.dtype == torch.bfloat16
        else:  # quantized: the module is replaced by its dynamic-int8 counterpart
            assert "quantized" in type(layer).__module__
        results = list(engine.synthesize(fast("你好。")))
        assert np.isfinite(results[0].audio).all() and len(results[0].audio) > 0
    finally:
        engine.unload()


def _copy_model(tmp_path, demo_model: str):  # type: ignore[no-untyped-def]
    import shutil

    folder = tmp_path / "my-model"
    shutil.copytree(models.resolve(demo_model).folder, folder)
    return folder


def test_a_damaged_folder_model_is_reported_and_left_untouched(tmp_path, demo_model: str) -> None:  # type: ignore[no-untyped-def]
    folder = _copy_model(tmp_path, demo_model)
    target = folder / "asset" / "Vocos.safetensors"
    damaged = bytearray(target.read_bytes())
    damaged[100] ^= 0xFF
    target.write_bytes(bytes(damaged))
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(ModelError, match=r"Vocos\.safetensors does not match"):
        Engine().load(str(folder), "cpu")
    target.unlink()
    with pytest.raises(ModelError, match=r"Vocos\.safetensors is missing"):
        Engine().load(str(folder), "cpu")
    after = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == {p: b for p, b in before.items() if p != target}
    assert not list(folder.rglob("*.bak"))


def test_a_folder_without_official_hashes_is_refused(tmp_path, demo_model: str) -> None:  # type: ignore[no-untyped-def]
    folder = _copy_model(tmp_path, demo_model)
    (folder / models.MANIFEST).unlink()  # now it claims to be official weights
    with pytest.raises(ModelError, match="does not match its sha256"):
        Engine().load(str(folder), "cpu")


def test_a_damaged_demo_model_is_rebuilt(private_home, demo_model: str) -> None:  # type: ignore[no-untyped-def]
    # Build a separate copy so the session's shared weights stay intact.
    home_models = private_home / "models"
    home_models.unlink()
    home_models.mkdir()
    info = models.ensure("demo")
    target = info.folder / "asset" / "Embed.safetensors"
    target.write_bytes(b"garbage")
    models.ensure("demo")
    models.verify(info.folder, models.hashes_for(info), "demo")
    assert target.stat().st_size > 1000


def test_unknown_model_name_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="Unknown model 'nope'"):
        Engine().load("nope", "cpu")


def test_official_weights_not_downloaded_is_a_clear_error(private_home) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelError, match="not downloaded"):
        Engine().load("official", "cpu")


def test_a_job_cancelled_while_queued_never_runs_and_leaves_nothing_behind(engine: Engine) -> None:
    """A job's token is made when it is queued: cancelled before it starts, it stops before
    it makes anything; the next job has its own token and runs fully. Engine.cancel() between
    jobs has nothing to cancel and stops nothing later."""
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        list(engine.synthesize(fast("你好。"), cancel=token))
    engine.cancel()  # no job runs: nothing to cancel, nothing kept for later
    assert [r.index for r in engine.synthesize(fast("你好。"))] == [0]


def test_cancel_during_load_stops_after_chattts_load(demo_model: str) -> None:
    import ChatTTS

    engine = Engine()
    real = ChatTTS.Chat._load

    def load_then_cancel(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        ok = real(self, *args, **kwargs)
        engine.cancel()  # the user pressed Cancel while ChatTTS was loading
        return ok

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChatTTS.Chat, "_load", load_then_cancel)
        with pytest.raises(Cancelled):
            engine.load(demo_model, "cpu")
    assert engine.loaded is None and engine.model is None
    assert engine.load(demo_model, "cpu").info.name == demo_model
    engine.unload()


def test_a_vanished_model_folder_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelError, match="does not exist"):
        Engine().load(str(tmp_path / "gone"), "cpu")


def test_a_failed_device_switch_leaves_the_live_panel_on_the_device_in_use(
    demo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live figures follow the device that holds the model, never the one asked for:
    a switch that fails leaves them where they were."""
    import chattts_studio.core.engine.engine
    from chattts_studio.core.engine.chattts.chat import ChatModel
    from chattts_studio.core.engine.devices import Device
    from chattts_studio.core.engine.request import Precision

    engine = Engine()
    engine.load(demo_model, "cpu")
    assert engine.live.device == "cpu"
    monkeypatch.setattr(
        chattts_studio.core.engine.engine,
        "resolve_device",
        lambda _id: Device("cuda:0", "Fake GPU"),
    )
    monkeypatch.setattr(
        chattts_studio.core.engine.engine, "check_precision", lambda _d, _p: Precision.FP32
    )

    def no_room(*_args: object, **_kwargs: object) -> ChatModel:
        raise ModelError("Model 'demo' could not be loaded: CUDA error (test)")

    monkeypatch.setattr(ChatModel, "load", no_room)
    with pytest.raises(ModelError):
        engine.load(demo_model, "cuda:0")
    assert engine.live.device == "cpu"
    assert engine.live.snapshot().memory is not None
    assert engine.live.snapshot().memory.device == "cpu"  # type: ignore[union-attr]


def test_a_cancelled_engine_switch_says_what_the_model_runs_now(
    demo_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Torch int8 -> ONNX Runtime cancelled during the export leaves the
    GPT in fp32 on torch; the engine says so (not int8 on torch), and it speaks as a fresh
    fp32 torch model does."""
    import chattts_studio.core.engine.onnxrt.export
    from chattts_studio.core.engine.engine_choice import EngineKind
    from chattts_studio.core.engine.request import Precision
    from chattts_studio.core.errors import Cancelled

    engine = Engine()
    fresh = Engine()
    try:
        engine.load(demo_model, "cpu", "int8", engine="torch")

        def cancelled(*_args: object, **_kwargs: object) -> None:
            raise Cancelled()

        monkeypatch.setattr(chattts_studio.core.engine.onnxrt.export, "ensure_export", cancelled)
        with pytest.raises(Cancelled):
            engine.load(demo_model, "cpu", "fp32", engine="onnx")
        assert engine.loaded is not None and engine.model is not None
        assert engine.loaded.precision is Precision.FP32
        assert engine.loaded.engine is EngineKind.TORCH and engine.model.decode_step is None
        layer = engine.model.gpt.layers[0].mlp.up_proj
        assert "quantized" not in type(layer).__module__  # the int8 GPT is gone: fp32 again
        fresh.load(demo_model, "cpu", "fp32", engine="torch")
        said = next(iter(engine.synthesize(fast("你好。")))).audio
        assert np.array_equal(said, next(iter(fresh.synthesize(fast("你好。")))).audio)
    finally:
        engine.unload()
        fresh.unload()
