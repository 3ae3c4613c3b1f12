"""The voice check's two rules measured on held-out voices: the fixed threshold and the spread
rule calibrated on half of espeak-ng's variants and measured on the other half, per language.
See docs/voice-check.md.

    python -m chattts_studio.core.devtools.voicesplit --model FILE.onnx [--cache F.npz] [--json]
"""

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from chattts_studio.core.devtools.voiceeer import CHINESE, ENGLISH, language, speak
from chattts_studio.core.speaker.encoder import THRESHOLD, SpeakerEncoder
from chattts_studio.core.speaker.spread import SpreadRule, medoid, spread_of

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
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="espeak-ng variants")
    parser.add_argument("--cache", type=Path, help="the embeddings' .npz (made when missing)")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if len(variants) < 8:
        parser.error("name at least eight variants")
    split = measure_split(args.model, variants, args.threads, args.cache)
    print(json.dumps(split, indent=2) if args.json else split_table(split))


if __name__ == "__main__":
    main()
