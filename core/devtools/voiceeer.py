"""The voice check's error rates on real speech (espeak-ng's voices): equal error rate, its
threshold and the cost per audio second. See docs/voice-check.md.

    python -m chattts_studio.core.devtools.voiceeer --model FILE.onnx [--split] [--json]
"""

import argparse
import io
import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from chattts_studio.core.speaker.encoder import THRESHOLD, SpeakerEncoder, similarity
from chattts_studio.core.speaker.spread import SpreadRule, medoid, spread_of

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
# The split measure's variants, each a timbre in both languages: the even ones calibrate, the
# odd ones are held out (never seen while choosing a threshold or a rule's settings).
VARIANTS = (
    "adam,Alex,Alicia,Andrea,Andy,Annie,antonio,aunty,belinda,benjamin,boris,caleb,david,"
    "Denis,Diogo,ed,edward,Gene,gustave,Henrique,Hugo,iven,Jacky,john,Lee,linda,Marco,max,"
    "Michael,michel,Mike,paul,pedro,quincy,rob,robert,steph,Storm,zac,anika,grandpa,grandma,"
    "klatt,klatt3,m1,m2,m3,m4,m5,m6,m7,m8,f1,f2,f3,f4,f5,norbert,travis,victor"
).split(",")
TAKE_COUNTS = range(3, 12)  # own takes of a voice in a spread trial (one more: an impostor)
THRESHOLDS = np.round(np.arange(0.50, 0.951, 0.005), 3)
SPREAD_GRID = [
    SpreadRule(min_takes=3, mads=m, min_mad=f, lowest=lo, highest=hi)
    for m in (2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0)
    for f in (0.01, 0.02, 0.03, 0.05)
    for lo in (0.45, 0.55, 0.65)
    for hi in (0.80, 0.85, 0.90)
]


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
def split_voices(variants: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """Per set ("calibrate", "held_out") and language, its espeak-ng voices: English variants
    alternate between the British and American voice, Chinese ones are Mandarin."""
    sets: dict[str, dict[str, list[str]]] = {}
    for name, part in (("calibrate", variants[::2]), ("held_out", variants[1::2])):
        english = [f"{'en' if i % 2 else 'en-us'}+{v}" for i, v in enumerate(part)]
        sets[name] = {"en": english, "zh": [f"cmn+{v}" for v in part]}
    return sets


def embed_all(encoder: SpeakerEncoder, voices: Sequence[str]) -> dict[str, np.ndarray]:
    """Each voice's clips of its language's sentences, embedded (one row a sentence)."""
    found = {}
    for voice in voices:
        texts = CHINESE if language(voice) == "zh" else ENGLISH
        found[voice] = np.stack([encoder.embed(*speak(voice, text)) for text in texts])
    return found


def language_pairs(
    embeddings: dict[str, np.ndarray], voices: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Same-voice pairs (two sentences of one voice) and different-voice pairs (any sentences
    of two voices) among `voices`, as similarities."""
    same, different = [], []
    for a, first in enumerate(voices):
        ea = embeddings[first]
        grid = ea @ ea.T
        same += list(grid[np.triu_indices(len(ea), 1)])
        for second in voices[a + 1 :]:
            different += list((ea @ embeddings[second].T).ravel())
    return np.asarray(same), np.asarray(different)


def errors(same: np.ndarray, different: np.ndarray, threshold: float) -> dict[str, float]:
    return {
        "false_reject": float(np.mean(same < threshold)),
        "false_accept": float(np.mean(different >= threshold)),
    }


def fixed_threshold(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """The threshold whose worst error over the languages (false accepts or rejects) is least."""
    worst = [max(max(errors(*p, float(t)).values()) for p in pairs.values()) for t in THRESHOLDS]
    return float(THRESHOLDS[int(np.argmin(worst))])


@dataclass(frozen=True)
class Trials:
    """Many voices' takes judged together, flat: per trial its own-take count, the median and
    MAD of its pool's distances from the medoid (every take but the medoid, an impostor
    included), its impostor's similarity to the medoid (NaN: a clean trial); and every own
    take's similarity (the medoid's left out) with its trial's index."""

    takes: np.ndarray
    median: np.ndarray
    mad: np.ndarray
    impostor: np.ndarray
    own: np.ndarray
    own_trial: np.ndarray

    def only(self, takes: int) -> "Trials":
        keep = self.takes == takes
        own = keep[self.own_trial]
        index = np.cumsum(keep) - 1
        return Trials(
            self.takes[keep],
            self.median[keep],
            self.mad[keep],
            self.impostor[keep],
            self.own[own],
            index[self.own_trial[own]],
        )


def trials(embeddings: dict[str, np.ndarray], voices: Sequence[str], seed: int = 0) -> Trials:
    """For each voice, each count of own takes and each other voice of the language: a clean
    trial (its own takes alone) and one with that other voice's take slipped in."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, float, float, float]] = []
    own: list[float] = []
    own_trial: list[int] = []
    for voice in voices:
        own_all = embeddings[voice]
        for takes in TAKE_COUNTS:
            for other in voices:
                if other == voice:
                    continue
                picked = own_all[rng.choice(len(own_all), takes, replace=False)]
                intruder = embeddings[other][rng.integers(len(embeddings[other]))]
                for with_impostor in (False, True):
                    vectors = np.vstack([picked, intruder]) if with_impostor else picked
                    centre = medoid(vectors)
                    scores = vectors @ vectors[centre]
                    keep = np.arange(len(vectors)) != centre
                    median, mad = spread_of(scores[keep])
                    impostor = float("nan")
                    if with_impostor:  # an impostor that became the medoid passes
                        impostor = 1.0 if centre == takes else float(scores[-1])
                    else:
                        mine = scores[:takes][keep[:takes]]
                        own += list(mine)
                        own_trial += [len(rows)] * len(mine)
                    rows.append((takes, median, mad, impostor))
    columns = np.asarray(rows).T
    return Trials(
        columns[0].astype(int),
        columns[1],
        columns[2],
        columns[3],
        np.asarray(own),
        np.asarray(own_trial, dtype=int),
    )


def rule_errors(found: Trials, rule: SpreadRule | None, threshold: float) -> dict[str, float]:
    """False rejects (own takes flagged, in clean trials) and false accepts (impostors passed)
    of the spread rule (`rule`; the fixed threshold in a trial of fewer than its min_takes)
    or, with no rule, of the fixed threshold against the medoid take."""
    limit = np.full(len(found.takes), threshold)
    if rule is not None:
        total = found.takes + ~np.isnan(found.impostor)
        spread = total >= rule.min_takes
        limit = np.where(spread, rule.bound(found.median, found.mad), threshold)
    impostors = ~np.isnan(found.impostor)
    return {
        "false_reject": float(np.mean(found.own < limit[found.own_trial])),
        "false_accept": float(np.mean(found.impostor[impostors] >= limit[impostors])),
    }


def worst(rates: dict[str, dict[str, float]]) -> float:
    return max(max(r.values()) for r in rates.values())


def measure_split(
    model: Path, variants: Sequence[str], threads: int, cache: Path | None = None
) -> dict:
    """The fixed threshold and the spread rule's settings chosen on the calibration voices,
    then both measured once on the held-out ones, per language. `cache`: an .npz of the
    embeddings, made when missing (a second run only judges)."""
    encoder = SpeakerEncoder(model, threads=threads)
    sets = split_voices(variants)
    everyone = [v for langs in sets.values() for voices in langs.values() for v in voices]
    stored = dict(np.load(cache)) if cache is not None and cache.is_file() else {}
    missing = [v for v in everyone if v not in stored]
    stored |= embed_all(encoder, missing)
    if cache is not None and missing:
        np.savez(cache, **stored)
    embedded = {
        name: {v: stored[v] for voices in langs.values() for v in voices}
        for name, langs in sets.items()
    }
    pairs = {
        name: {lang: language_pairs(embedded[name], v) for lang, v in langs.items()}
        for name, langs in sets.items()
    }
    calibrated = fixed_threshold(pairs["calibrate"])
    threshold = THRESHOLD  # what the product ships (the calibrated one is said beside it)
    by_lang = {
        name: {lang: trials(embedded[name], v) for lang, v in langs.items()}
        for name, langs in sets.items()
    }
    calibrate = by_lang["calibrate"]
    # The spread settings: the least worst error over the languages and every take count.
    rule = min(
        SPREAD_GRID,
        key=lambda r: worst({k: rule_errors(t, r, threshold) for k, t in calibrate.items()}),
    )
    # The fewest takes at which the spread does no worse than the fixed threshold there.
    fewest = TAKE_COUNTS[-1]
    for takes in TAKE_COUNTS:
        at = {k: v.only(takes) for k, v in calibrate.items()}
        spread_worst = worst({k: rule_errors(t, rule, threshold) for k, t in at.items()})
        fixed_worst = worst({k: rule_errors(t, None, threshold) for k, t in at.items()})
        if spread_worst <= fixed_worst:
            fewest = takes
            break
    rule = replace(rule, min_takes=fewest)
    result: dict = {
        "model": str(model),
        "sets": sets,
        "sentences_per_voice": {"en": len(ENGLISH), "zh": len(CHINESE)},
        "fixed_threshold": threshold,
        "calibrated_threshold": calibrated,
        "calibrated_pairs": {
            lang: errors(*p, calibrated) for lang, p in pairs["calibrate"].items()
        },
        "spread_rule": asdict(rule),
    }
    for name in sets:
        # Cross-language pairs of two variants; one variant in both languages is one timbre
        # (its own figure: the check cannot tell a voice's languages apart, nor should it).
        cross: list[np.ndarray] = []
        kin: list[np.ndarray] = []
        for a in sets[name]["en"]:
            for b in sets[name]["zh"]:
                scores = (embedded[name][a] @ embedded[name][b].T).ravel()
                (kin if a.split("+")[1] == b.split("+")[1] else cross).append(scores)
        per_count = {}
        for takes in TAKE_COUNTS:
            per_count[takes] = {
                lang: {
                    "fixed": rule_errors(v.only(takes), None, threshold),
                    "spread": rule_errors(v.only(takes), rule, threshold),
                }
                for lang, v in by_lang[name].items()
            }
        result[name] = {
            "pairs_at_fixed": {
                lang: errors(*p, threshold) | {"same": len(p[0]), "different": len(p[1])}
                for lang, p in pairs[name].items()
            },
            "cross_language_false_accept": float(np.mean(np.concatenate(cross) >= threshold)),
            "cross_language_pairs": sum(len(c) for c in cross),
            "one_variant_two_languages_accepted": float(np.mean(np.concatenate(kin) >= threshold)),
            "takes": per_count,
        }
    return result


def split_table(result: dict) -> str:
    rule = result["spread_rule"]
    lines = [
        f"calibrated on {len(result['sets']['calibrate']['en'])} voices a language, held out "
        f"{len(result['sets']['held_out']['en'])}; sentences {result['sentences_per_voice']}",
        f"fixed threshold: calibrated {result['calibrated_threshold']:.3f} (the least worst "
        f"error over the languages' same-language pairs), measured at the product's "
        f"{result['fixed_threshold']:.3f}; spread rule: {rule['mads']} MADs "
        f"(at least {rule['min_mad']}), limit {rule['lowest']}-{rule['highest']}, from "
        f"{rule['min_takes']} takes (medoid included)",
    ]
    for name in ("calibrate", "held_out"):
        part = result[name]
        lines.append(f"-- {name}")
        for lang, p in part["pairs_at_fixed"].items():
            lines.append(
                f"pairs {lang}: fixed rejects {p['false_reject']:.1%} of {p['same']} same, "
                f"accepts {p['false_accept']:.1%} of {p['different']} different"
            )
        lines.append(
            f"cross-language: fixed accepts {part['cross_language_false_accept']:.2%} of "
            f"{part['cross_language_pairs']} pairs of two variants (one variant in both "
            f"languages: {part['one_variant_two_languages_accepted']:.1%} called the same)"
        )
        lines.append(
            f"{'takes':>5} {'lang':>4} {'fixed FR':>9} {'FA':>7} {'spread FR':>10} {'FA':>7}"
        )
        for takes, langs in part["takes"].items():
            for lang, r in langs.items():
                fixed, spread_ = r["fixed"], r["spread"]
                lines.append(
                    f"{takes:>5} {lang:>4} {fixed['false_reject']:>9.1%} "
                    f"{fixed['false_accept']:>7.1%} {spread_['false_reject']:>10.1%} "
                    f"{spread_['false_accept']:>7.1%}"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a CAM++ ONNX file")
    parser.add_argument("--voices", default=",".join(VOICES), help="espeak-ng voice names")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument(
        "--split",
        action="store_true",
        help="calibrate the threshold and the spread rule on half of --variants, measure on "
        "the other half, per language",
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help="with --split")
    parser.add_argument("--cache", type=Path, help="with --split: the embeddings' .npz")
    args = parser.parse_args(argv)
    if args.split:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        if len(variants) < 8:
            parser.error("name at least eight variants")
        split = measure_split(args.model, variants, args.threads, args.cache)
        print(json.dumps(split, indent=2) if args.json else split_table(split))
        return
    voices = [v.strip() for v in args.voices.split(",") if v.strip()]
    if len(voices) < 2:
        parser.error("name at least two voices")
    result = measure(args.model, voices, args.threads)
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()
