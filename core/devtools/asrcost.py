"""What a Chinese-first, non-autoregressive recogniser of SenseVoice-Small's size costs on this
machine: the figure that picks the speech recognition check's engine (issue 33).

    python -m chattts_studio.core.devtools.asrcost [--seconds 5,10] [--threads 2]

SenseVoice-Small's weights cannot be fetched here, and its exact graph is FunASR's, so this
times a stand-in of the same sizes (FunASR's published configuration): 80-dim fbank stacked
7 frames a 6-frame hop (560 inputs every 60 ms), four query frames in front, 1 + 49 + 20
encoder layers of 512 dimensions (4 heads, an FSMN depthwise convolution of kernel 11 beside
attention, feed-forward 2048), and a CTC head over 25,055 tokens: 234 M parameters, random
init, exported to ONNX and timed in ONNX Runtime, fp32 and int8 (dynamic quantization). One
pass makes the whole transcript (CTC), so random weights cost what real ones do; the fbank
front end (a few ms) is not counted. A measure of cost, never of accuracy.
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

LFR_INPUT, WIDTH, HEADS, FFN, KERNEL = 560, 512, 4, 2048, 11
LAYERS = 1 + 49 + 20  # the first maps 560 -> 512; then the encoder; then the "tp" encoder
VOCABULARY = 25_055
QUERIES = 4  # language, event, emotion, text normalisation
FRAMES_PER_SECOND = 100 / 6  # 10 ms fbank frames, an LFR hop of 6


class _Layer(nn.Module):
    def __init__(self, width_in: int) -> None:
        super().__init__()
        self.norm1, self.qkv = nn.LayerNorm(width_in), nn.Linear(width_in, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)
        self.fsmn = nn.Conv1d(WIDTH, WIDTH, KERNEL, padding=KERNEL // 2, groups=WIDTH, bias=False)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.ffn = nn.Sequential(nn.Linear(WIDTH, FFN), nn.ReLU(), nn.Linear(FFN, WIDTH))
        self.residual = width_in == WIDTH

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(WIDTH, -1)
        memory = self.fsmn(v.transpose(1, 2)).transpose(1, 2) + v
        heads = [z.view(batch, steps, HEADS, -1).transpose(1, 2) for z in (q, k, v)]
        att = nn.functional.scaled_dot_product_attention(*heads)
        y = self.out(att.transpose(1, 2).reshape(batch, steps, WIDTH)) + memory
        if self.residual:
            y = y + x
        out: torch.Tensor = y + self.ffn(self.norm2(y))
        return out


class StandIn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.queries = nn.Parameter(torch.randn(QUERIES, LFR_INPUT))
        layers = [_Layer(LFR_INPUT), *(_Layer(WIDTH) for _ in range(LAYERS - 1))]
        self.layers = nn.Sequential(*layers)
        self.ctc = nn.Linear(WIDTH, VOCABULARY)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.queries.expand(feats.shape[0], -1, -1), feats], 1)
        out: torch.Tensor = self.ctc(self.layers(x)).log_softmax(-1)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", default="5,10")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)
    model = StandIn().eval()
    count = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"stand-in of SenseVoice-Small: {count:.0f} M parameters, random init (not a recogniser)")
    with tempfile.TemporaryDirectory() as folder:
        fp32, int8 = Path(folder) / "fp32.onnx", Path(folder) / "int8.onnx"
        torch.onnx.export(
            model,
            (torch.randn(1, 80, LFR_INPUT),),
            str(fp32),
            dynamo=False,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {1: "t"}, "y": {1: "t"}},
        )
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
        for path in (fp32, int8):
            options = ort.SessionOptions()
            options.intra_op_num_threads = args.threads
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            for seconds in (float(s) for s in args.seconds.split(",")):
                frames = round(seconds * FRAMES_PER_SECOND)
                feats = np.random.default_rng(0).standard_normal((1, frames, LFR_INPUT))
                feed = {"x": feats.astype(np.float32)}
                session.run(None, feed)  # warm
                runs = []
                for _ in range(3):
                    started = time.perf_counter()
                    session.run(None, feed)
                    runs.append(time.perf_counter() - started)
                print(
                    f"{path.stem}: {seconds:g} s of audio ({frames} frames): "
                    f"{min(runs) * 1000:.0f} ms, best of 3, {args.threads} threads"
                )


if __name__ == "__main__":
    main()
