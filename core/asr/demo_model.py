"""A recogniser model with random weights in SenseVoice's sherpa-onnx layout (model.onnx with its
metadata, tokens.txt), for the tests and the benchmark, where the official one cannot be fetched.
Its transcripts are noise; everything around the model is the real path.

The graph takes what sherpa-onnx gives SenseVoice (stacked fbank features `x` [N, T, 560], lengths,
a language id and a normalisation id) and returns CTC logits [N, 4 + T, vocabulary]. `REAL` has
SenseVoice-Small's sizes (its cost), `SMALL` is for tests."""

import errno
import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from chattts_studio.core.asr import DEMO_MARKER
from chattts_studio.core.atomic import os_error_reason
from chattts_studio.core.errors import ModelError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

MODEL_FILE, TOKENS_FILE = "model.onnx", "tokens.txt"
FAILED_MARK = "demo recogniser not made: "  # the child's last stderr line starts so
LFR_INPUT = 560
# Query ids (the embedding's rows), as SenseVoice numbers them.
LANGUAGES = {"auto": 0, "zh": 3, "en": 4, "yue": 7, "ja": 11, "ko": 12}
WITH_ITN, WITHOUT_ITN = 14, 15
EVENT_EMOTION = (1, 2)
QUERY_ROWS = 16
SPECIALS = ["<blk>", "<sos/eos>", "<unk>"]


@dataclass(frozen=True)
class Sizes:
    layers: int
    width: int
    heads: int
    ffn: int
    vocabulary: int


REAL = Sizes(layers=70, width=512, heads=4, ffn=2048, vocabulary=25_055)
SMALL = Sizes(layers=2, width=64, heads=4, ffn=128, vocabulary=600)


class _Layer(nn.Module):
    def __init__(self, width_in: int, sizes: Sizes) -> None:
        super().__init__()
        width = sizes.width
        self.width, self.heads, self.residual = width, sizes.heads, width_in == width
        self.norm1, self.qkv = nn.LayerNorm(width_in), nn.Linear(width_in, 3 * width)
        self.out = nn.Linear(width, width)
        self.fsmn = nn.Conv1d(width, width, 11, padding=5, groups=width, bias=False)
        self.norm2 = nn.LayerNorm(width)
        self.ffn = nn.Sequential(
            nn.Linear(width, sizes.ffn), nn.ReLU(), nn.Linear(sizes.ffn, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(self.width, -1)
        memory = self.fsmn(v.transpose(1, 2)).transpose(1, 2) + v
        heads = [z.view(batch, steps, self.heads, -1).transpose(1, 2) for z in (q, k, v)]
        att = nn.functional.scaled_dot_product_attention(*heads)
        y = self.out(att.transpose(1, 2).reshape(batch, steps, self.width)) + memory
        if self.residual:
            y = y + x
        out: torch.Tensor = y + self.ffn(self.norm2(y))
        return out


class RandomSenseVoice(nn.Module):
    def __init__(self, sizes: Sizes) -> None:
        super().__init__()
        self.queries = nn.Embedding(QUERY_ROWS, LFR_INPUT)
        layers = [
            _Layer(LFR_INPUT, sizes),
            *(_Layer(sizes.width, sizes) for _ in range(sizes.layers - 1)),
        ]
        self.layers = nn.Sequential(*layers)
        self.ctc = nn.Linear(sizes.width, sizes.vocabulary)

    def forward(
        self,
        x: torch.Tensor,
        x_length: torch.Tensor,
        language: torch.Tensor,
        text_norm: torch.Tensor,
    ) -> torch.Tensor:
        batch, steps, _ = x.shape
        # Frames past a row's length are zero (a batch of several lengths); it also keeps
        # x_length an input of the graph, as sherpa-onnx passes it.
        valid = torch.arange(steps).unsqueeze(0) < x_length.unsqueeze(1)
        x = x * valid.unsqueeze(-1).to(x.dtype)
        middle = self.queries(torch.tensor(EVENT_EMOTION)).expand(batch, -1, -1)
        front = [self.queries(language).unsqueeze(1), middle, self.queries(text_norm).unsqueeze(1)]
        logits: torch.Tensor = self.ctc(self.layers(torch.cat([*front, x], 1)))
        return logits


def vocabulary(size: int) -> list[str]:
    """SenseVoice's kinds of token: specials, language and event tags, CJK characters and
    sentencepiece word pieces ("▁" starts a word)."""
    tags = [f"<|{name}|>" for name in ("zh", "en", "yue", "ja", "ko", "nospeech", "Speech")]
    tags += ["<|NEUTRAL|>", "<|withitn|>", "<|woitn|>"]
    words = "the of and to in is you that it he was for on are with as his they at be".split()
    pieces = [f"▁{w}" for w in words] + ["s", "ed", "ing"]
    out = SPECIALS + tags + pieces
    code = 0x4E00
    while len(out) < size:
        out.append(chr(code))
        code += 1
    return out[:size]


def build(folder: Path, sizes: Sizes = SMALL, seed: int = 0) -> Path:
    """Writes model.onnx (with sherpa-onnx's metadata) and tokens.txt into `folder`; returns
    it. Random weights, seeded: the same folder every time.

    Made in a child process (`python -m chattts_studio.core.asr.demo_model ORDER`): torch's
    ONNX exporter leaves its objects alive in the process that ran it, and every full garbage
    collection then walks them on whatever thread triggers it, the window's UI thread included
    (core/engine/onnxrt/exporter.py says the same of the decode step's export)."""
    from chattts_studio.core.child_process import run_python

    order = json.dumps({"folder": str(folder), "sizes": asdict(sizes), "seed": seed})
    done = run_python([sys.executable, "-m", __name__, order])  # UTF-8 whatever the locale
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        said = [line[len(FAILED_MARK) :] for line in lines if line.startswith(FAILED_MARK)]
        reason = said[-1] if said else lines[-1][:200]
        if not said and _nearly_full(folder):  # torch's exporter says a full disk its own way
            reason = os_error_reason(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
        raise ModelError(
            Sentence(
                QT_TRANSLATE_NOOP("core", "Could not make the demo recogniser: {reason}"),
                reason=reason,
            )
        )
    return folder


def _nearly_full(folder: Path) -> bool:
    for place in (folder, *folder.parents):  # the nearest folder that exists
        try:
            return shutil.disk_usage(place).free < 1 << 20
        except OSError:
            continue
    return False


def _write(folder: Path, sizes: Sizes, seed: int) -> None:
    """build's work, in the child process."""
    import onnx

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = RandomSenseVoice(sizes).eval()
    sample = (
        torch.randn(1, 20, LFR_INPUT),
        torch.tensor([20], dtype=torch.int32),
        torch.tensor([LANGUAGES["zh"]], dtype=torch.int32),
        torch.tensor([WITHOUT_ITN], dtype=torch.int32),
    )
    path = folder / MODEL_FILE
    with torch.no_grad():
        torch.onnx.export(
            model,
            sample,
            str(path),
            dynamo=False,
            input_names=["x", "x_length", "language", "text_norm"],
            output_names=["logits"],
            dynamic_axes={
                "x": {0: "N", 1: "T"},
                "x_length": {0: "N"},
                "language": {0: "N"},
                "text_norm": {0: "N"},
                "logits": {0: "N", 1: "T"},
            },
        )
    graph = onnx.load(str(path))
    meta = {
        "vocab_size": sizes.vocabulary,
        "blank_id": 0,
        "lfr_window_size": 7,
        "lfr_window_shift": 6,
        "normalize_samples": 0,
        "with_itn": WITH_ITN,
        "without_itn": WITHOUT_ITN,
        **{f"lang_{name}": index for name, index in LANGUAGES.items()},
        "neg_mean": ",".join(["-8.0"] * LFR_INPUT),
        "inv_stddev": ",".join(["0.25"] * LFR_INPUT),
        "comment": "ChatTTS Studio's random-weight stand-in of SenseVoice: noise, not speech",
    }
    for key, value in meta.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.save(graph, str(path))
    (folder / DEMO_MARKER).write_text(f"{meta['comment']}\n", encoding="utf-8")
    lines = [f"{token} {i}" for i, token in enumerate(vocabulary(sizes.vocabulary))]
    (folder / TOKENS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def demo_folder() -> Path:
    """The demo recogniser's folder in the app's cache, made on first use (under a temporary
    name, then renamed: a reader never sees half a model)."""
    import uuid

    from chattts_studio.core import paths
    from chattts_studio.core.atomic import replace_file

    folder = paths.cache_dir() / "asr" / "sensevoice-demo"
    if (folder / TOKENS_FILE).is_file():  # written last
        return folder
    building = folder.with_name(f"{folder.name}.building-{uuid.uuid4().hex[:8]}")
    try:
        build(building)
        try:
            replace_file(building, folder)  # tried again while a scanner holds a new file
        except OSError as exc:  # another process made it meanwhile, or the disk refused
            if not (folder / TOKENS_FILE).is_file():
                raise ModelError(
                    Sentence(
                        QT_TRANSLATE_NOOP("core", "Could not make the demo recogniser: {reason}"),
                        reason=os_error_reason(exc),
                    )
                ) from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder


if __name__ == "__main__":
    _order = json.loads(sys.argv[1])
    try:
        _write(Path(_order["folder"]), Sizes(**_order["sizes"]), int(_order["seed"]))
    except OSError as _exc:  # the disk's refusal, said as the app says it (build reads it)
        _where = f" ({_exc.filename})" if _exc.filename else ""
        print(f"{FAILED_MARK}{os_error_reason(_exc)}{_where}", file=sys.stderr)
        sys.exit(1)
