"""The voice check's error rates on real speech (espeak-ng's voices): equal error rate, its
threshold and the cost per audio second. See docs/voice-check.md.

    python -m chattts_studio.core.devtools.voiceeer --model FILE.onnx [--json]

The same-language split (calibrate on half the voices, measure on the other): voicesplit.py.
"""

import argparse
import io
import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from chattts_studio.core.speaker.encoder import SpeakerEncoder, similarity

# One of each variant: a variant is one timbre whatever the language it speaks (espeak-ng
# ignores a variant on en-gb, so British English is `en`).
VOICES = (
    "en+m1,en-us+m2,en+m4,en-us+m5,en+m6,en-us+m7,en+m8,en+f1,en-us+f2,en+f3,"
    "en+Andy,en+Annie,en+Denis,en+grandma,en+travis,en+michel,en+klatt3,"
    "cmn+m3,cmn+f4,cmn+f5"
).split(",")
ENGLISH = [
    "The weather was calm when the boat finally left the small harbour.",
    "She opened the window and listened to the birds in the garden.",
    "Our train was delayed by almost an hour this morning.",
    "Please remember to bring the blue folder to the meeting.",
    "He painted the old fence white before the summer guests arrived.",
    "Nobody expected the little shop to stay open so late.",
    "The children counted the stars until they fell asleep.",
    "A cup of hot tea is the best thing on a rainy day.",
    "Every letter on the desk was answered before lunch.",
    "The old dog slept by the fire while the rain kept falling.",
    "They bought fresh bread and cheese at the market on Friday.",
    "We walked along the river until the sun went down.",
]
CHINESE = [
    "今天天气很好。",
    "请把那本书递给我。",
    "他每天六点起床跑步。",
    "这家面馆很好吃。",
    "明天下午在图书馆见。",
    "妈妈在厨房里做饭。",
    "火车站离这里不远。",
    "孩子们在操场踢球。",
    "这个周末我们去爬山吧。",
    "老师在黑板上写了一首诗。",
    "冰箱里还有三个苹果。",
    "请在门口等我十分钟。",
]


SET_B_SENTENCES = 8  # the set B measure (docs) reads the first eight of each language


def language(voice: str) -> str:
    return "zh" if voice.split("+")[0] in ("cmn", "zh", "yue") else "en"


@dataclass(frozen=True)
class Spread:
    count: int
    min: float
    median: float
    max: float


@dataclass(frozen=True)
class Rates:
    """The equal-error point of one set of pairs, and the threshold that reaches it."""

    eer: float
    threshold: float
    same: Spread
    different: Spread


def speak(voice: str, text: str) -> tuple[np.ndarray, int]:
    """espeak-ng's WAV for `text` (22.05 kHz mono, as it writes), as float32 samples."""
    import soundfile

    wav = subprocess.run(
        ["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True
    ).stdout
    audio, rate = soundfile.read(io.BytesIO(wav), dtype="float32")
    return audio, int(rate)


def spread(scores: Sequence[float]) -> Spread:
    values = np.asarray(scores)
    return Spread(len(values), float(values.min()), float(np.median(values)), float(values.max()))


def equal_error(same: Sequence[float], different: Sequence[float]) -> Rates:
    """The threshold where the same-voice pairs said different (below it) and the different
    pairs said same (at or above it) are as frequent as can be; the rate their mean there."""
    same_a, different_a = np.sort(same), np.sort(different)
    best: tuple[float, float, float] | None = None  # (gap, rate, threshold)
    for threshold in np.unique(np.concatenate([same_a, different_a])):
        misses = np.searchsorted(same_a, threshold, side="left") / len(same_a)
        accepts = 1 - np.searchsorted(different_a, threshold, side="left") / len(different_a)
        gap = abs(misses - accepts)
        if best is None or gap < best[0]:
            best = (gap, (misses + accepts) / 2, float(threshold))
    assert best is not None
    return Rates(best[1], best[2], spread(same), spread(different))


def at_threshold(same: Sequence[float], different: Sequence[float], threshold: float) -> dict:
    """How a threshold fitted elsewhere does on these pairs."""
    return {
        "threshold": threshold,
        "false_reject": float(np.mean(np.asarray(same) < threshold)),
        "false_accept": float(np.mean(np.asarray(different) >= threshold)),
    }


def pair_scores(
    embeddings: dict[str, list[np.ndarray]], sentences: Sequence[int]
) -> tuple[list[float], list[float]]:
    """Cosine similarity of every pair of clips among `sentences` (indices): same voice, or
    different voices."""
    clips = [(voice, embeddings[voice][i]) for voice in embeddings for i in sentences]
    same: list[float] = []
    different: list[float] = []
    for a in range(len(clips)):
        for b in range(a + 1, len(clips)):
            score = similarity(clips[a][1], clips[b][1])
            (same if clips[a][0] == clips[b][0] else different).append(score)
    return same, different


def measure(model: Path, voices: Sequence[str], threads: int) -> dict:
    encoder = SpeakerEncoder(model, threads=threads)
    embeddings: dict[str, list[np.ndarray]] = {}
    audio_s = cpu_s = wall_s = 0.0
    lengths = []
    started = time.perf_counter()
    encoder.embed(*speak(voices[0], ENGLISH[0]))  # the model's load, with one clip
    load_s = time.perf_counter() - started
    for voice in voices:
        texts = (CHINESE if language(voice) == "zh" else ENGLISH)[:SET_B_SENTENCES]
        clips = [speak(voice, text) for text in texts]
        cpu, wall = time.process_time(), time.perf_counter()
        embeddings[voice] = [encoder.embed(audio, rate) for audio, rate in clips]
        cpu_s += time.process_time() - cpu
        wall_s += time.perf_counter() - wall
        lengths += [len(audio) / rate for audio, rate in clips]
        audio_s += sum(len(audio) / rate for audio, rate in clips)
    count = min(len(e) for e in embeddings.values())
    tuned = equal_error(*pair_scores(embeddings, range(count // 2)))
    held = pair_scores(embeddings, range(count // 2, count))
    return {
        "model": str(model),
        "voices": list(voices),
        "sentences_per_voice": count,
        "clip_seconds": asdict(spread(lengths)),
        "all": asdict(equal_error(*pair_scores(embeddings, range(count)))),
        "tuned_on_first_half": asdict(tuned),
        "held_out_second_half": at_threshold(*held, tuned.threshold)
        | {"own_eer": equal_error(*held).eer},
        "cpu_s_per_audio_s": cpu_s / audio_s,
        "wall_s_per_audio_s": wall_s / audio_s,
        "threads": threads,
        "load_s": load_s,
    }


def table(result: dict) -> str:
    rates, tuned = result["all"], result["tuned_on_first_half"]
    held = result["held_out_second_half"]
    clip = result["clip_seconds"]
    lines = [
        f"{len(result['voices'])} espeak-ng voices x {result['sentences_per_voice']} sentences "
        f"({clip['min']:.1f}-{clip['max']:.1f} s, median {clip['median']:.1f} s)",
        f"{'pairs':<12}{'count':>7}{'min':>8}{'median':>8}{'max':>8}",
    ]
    for name in ("same", "different"):
        s = rates[name]
        lines.append(
            f"{name:<12}{s['count']:>7}{s['min']:>8.3f}{s['median']:>8.3f}{s['max']:>8.3f}"
        )
    lines += [
        f"equal error rate {rates['eer']:.1%} at threshold {rates['threshold']:.3f} (all pairs)",
        f"first half: {tuned['eer']:.1%} at {tuned['threshold']:.3f}; on the held-out half that "
        f"threshold rejects {held['false_reject']:.1%} of same-voice pairs and accepts "
        f"{held['false_accept']:.1%} of different-voice pairs (its own EER {held['own_eer']:.1%})",
        f"cost: {result['cpu_s_per_audio_s']:.4f} CPU s and {result['wall_s_per_audio_s']:.4f} "
        f"wall s per audio second ({result['threads']} thread(s)); the model loaded (and "
        f"judged a first clip) in {result['load_s']:.2f} s",
    ]
    return "\n".join(lines)


# -- the split measure: calibrate on some voices, measure on others -------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a CAM++ ONNX file")
    parser.add_argument("--voices", default=",".join(VOICES), help="espeak-ng voice names")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    voices = [v.strip() for v in args.voices.split(",") if v.strip()]
    if len(voices) < 2:
        parser.error("name at least two voices")
    result = measure(args.model, voices, args.threads)
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()
