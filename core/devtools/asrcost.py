"""What the speech recognition check costs on this machine, timed on a model of SenseVoice-Small's
sizes with random weights (core/asr/demo_model.py): a measure of cost, never of accuracy.

    python -m chattts_studio.core.devtools.asrcost [--seconds 5,10] [--threads 2]
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.asr import demo_model
from chattts_studio.core.asr.sensevoice import SenseVoice


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", default="5,10")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    print("SenseVoice-Small's sizes, random weights (noise, not a recogniser's output)")
    with tempfile.TemporaryDirectory() as root:
        fp32 = demo_model.build(Path(root) / "fp32", demo_model.REAL)
        int8 = Path(root) / "int8"
        int8.mkdir()
        (int8 / demo_model.TOKENS_FILE).write_bytes((fp32 / demo_model.TOKENS_FILE).read_bytes())
        source, target = fp32 / demo_model.MODEL_FILE, int8 / "model.int8.onnx"
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
        for name, folder in (("fp32", fp32), ("int8", int8)):
            recognizer = SenseVoice(folder, threads=args.threads)
            for seconds in (float(s) for s in args.seconds.split(",")):
                noise = np.random.default_rng(0).standard_normal(round(seconds * SAMPLE_RATE))
                audio = (noise * 0.1).astype(np.float32)
                recognizer.transcribe(audio, SAMPLE_RATE, "zh")  # warm: the session is made
                runs = []
                for _ in range(3):
                    started = time.perf_counter()
                    recognizer.transcribe(audio, SAMPLE_RATE, "zh")
                    runs.append(time.perf_counter() - started)
                print(
                    f"{name}: {seconds:g} s of audio: {min(runs) * 1000:.0f} ms, best of 3, "
                    f"{args.threads} threads"
                )


if __name__ == "__main__":
    main()
