"""chattts-studio-cli voice compare REF.wav OTHER.wav... [--json]: how alike each file's voice is to
the reference's, with the verdict at the voice check's threshold; also the voice check's shared
options.
"""

import argparse
import json
from pathlib import Path
from typing import Any

from chattts_studio.core.cli.common import EXIT_USER_ERROR, err


def add_parser(sub: Any) -> None:
    from chattts_studio.core.speaker.encoder import MIN_RATE, MIN_SECONDS, THRESHOLD

    voice = sub.add_parser("voice")
    vsub = voice.add_subparsers(dest="action", required=True)
    compare = vsub.add_parser(
        "compare",
        help=f"each file's voice against the reference's (clips of at least {MIN_SECONDS:g} s "
        f"at {MIN_RATE:,} Hz or more)",
    )
    compare.add_argument("reference", type=Path)
    compare.add_argument("others", type=Path, nargs="+", metavar="other")
    compare.add_argument("--json", action="store_true", help="one JSON object on stdout")
    compare.add_argument(
        "--model",
        default="official",
        help="the speaker model: official (default; 'model download-speaker' fetches it), "
        "demo (random weights: judges noise) or a path to a sherpa-onnx speaker .onnx file",
    )
    compare.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        help=f"the similarity at or above which a voice is the same (default {THRESHOLD}, "
        "measured on real speech: docs/voice-check.md)",
    )
    compare.add_argument("--threads", type=int, default=1, help="CPU threads for the model")


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.speaker import models
    from chattts_studio.core.speaker.compare import compare

    if not -1.0 <= args.threshold <= 1.0:
        err("error: --threshold is a cosine similarity, from -1 to 1.")
        return EXIT_USER_ERROR
    encoder = models.encoder(args.model, args.threads)
    got = compare(encoder, args.reference, args.others, args.threshold)
    if got.demo:
        err("note: the demo speaker model has random weights: these scores judge noise, not voices")
    if args.json:
        body = {
            "threshold": got.threshold,
            "reference": str(args.reference),
            "files": [str(p) for p in args.others],
            "scores": [round(s, 4) for s in got.scores],
            "same": got.same,
            "model": str(encoder.model_file),
            "demo": got.demo,
        }
        print(json.dumps(body, ensure_ascii=False))
        return 0
    print(f"reference: {args.reference}")
    for path, score, same in zip(args.others, got.scores, got.same, strict=True):
        print(f"{score:6.3f}  {'same' if same else 'different':9}  {path}")
    print(f"threshold {got.threshold:g} (cosine similarity; same at or above it)")
    return 0


def add_voice_check_options(
    parser: argparse.ArgumentParser, switch: str | None, flag: str = "--voice"
) -> None:
    """The voice check's switch (`flag`, what it does `switch`; None: always on), speaker
    model and threshold."""
    from chattts_studio.core.speaker.encoder import THRESHOLD

    if switch is None:
        parser.set_defaults(voice=True)
    else:
        parser.add_argument(flag, dest="voice", action="store_true", help=switch)
    parser.add_argument(
        "--speaker-model",
        default="auto",
        help="the voice check's model: auto (default: official when downloaded, else demo for "
        "the demo TTS weights), official ('model download-speaker'), demo (random weights: "
        "judges noise) or a sherpa-onnx speaker .onnx file",
    )
    parser.add_argument(
        "--voice-threshold",
        type=float,
        default=THRESHOLD,
        help=f"similarity below which a voice is said to differ (default {THRESHOLD}: "
        "docs/voice-check.md says how it was measured and how to tune it)",
    )


def settle_voice_check(args: argparse.Namespace, random_weights: bool) -> None:
    """The voice check's options checked before any audio is made or model loaded: the
    threshold's range, auto resolved (the demo speaker model only for random TTS weights
    when the official one is absent), a missing official model said."""
    from chattts_studio.core.errors import StudioError
    from chattts_studio.core.speaker import models

    if not -1.0 <= args.voice_threshold <= 1.0:
        raise StudioError("--voice-threshold is a cosine similarity, from -1 to 1.")
    if args.speaker_model == "auto":
        official = models.official_present()
        args.speaker_model = models.DEMO if random_weights and not official else models.OFFICIAL
    models.model_file(args.speaker_model)


def settle_for_model(args: argparse.Namespace) -> None:
    """`project new --voice`, `render --voice-check`, `speakers stability`: settled for the
    TTS model the command names (its kind known before it loads)."""
    from chattts_studio.core.weights.models import resolve

    if args.voice:
        settle_voice_check(args, resolve(args.model).random_weights)
