"""chattts-studio-cli synth: text (given, from a file, or a dialogue script) to one audio file,
and subtitles when asked; through the synthesize service."""

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.cli.common import (
    add_engine_option,
    add_lexicon_option,
    add_voice_options,
    check_engine_choice,
    check_speaker_arg,
    err,
    load_engine,
    read_text,
    request_from_args,
    set_threads,
    speaker_arg,
)
from chattts_studio.core.cli.progress import CommandProgress, cancel_on_interrupt, facts
from chattts_studio.core.engine.request import SegmentResult, SynthesisRequest
from chattts_studio.core.errors import StudioError


def add_parser(sub: Any) -> None:
    """The `synth` command's options (its help line is the registry's, in main.py)."""
    d = SynthesisRequest(text="")
    synth = sub.add_parser("synth")
    synth.add_argument("text", nargs="?", help="the text to speak")
    synth.add_argument("--file", help="read the text from a UTF-8 file")
    synth.add_argument(
        "--script", help="a dialogue script: 'Name: text' lines voiced by library speakers"
    )
    synth.add_argument(
        "-o", "--output", required=True, help="output file; .wav, .flac, .ogg or .mp3"
    )
    synth.add_argument(
        "--model", default="demo", help="demo, demo-full, official, or a folder (default: demo)"
    )
    synth.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:N or mps (default: the first CUDA device, else cpu)",
    )
    synth.add_argument(
        "--precision",
        default="fp32",
        choices=["fp32", "fp16", "bf16", "int8"],
        help="int8: the GPT quantized, CPU only, fastest there",
    )
    add_engine_option(synth)
    synth.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    synth.add_argument("--segment-size", type=int, default=d.segment_size)
    synth.add_argument(
        "--batch-size",
        type=int,
        default=0,
        help="segments decoded together; 0 (default): automatic, up to 16",
    )
    add_voice_options(synth)
    synth.add_argument(
        "--turn-pause",
        type=float,
        default=d.turn_pause_seconds,
        help="seconds of silence between the lines of a --script",
    )
    synth.add_argument("--no-refine", action="store_true", help="skip ChatTTS's refine-text pass")
    add_lexicon_option(synth)
    synth.add_argument(
        "--decoder",
        default="fast",
        choices=["fast", "stock"],
        help="fast: Studio's decode loop (default); stock: ChatTTS's generate()",
    )
    synth.add_argument("--float", action="store_true", help="write 32-bit float WAV")
    synth.add_argument("--subtitles", help="also write subtitles, one cue a sentence: .srt or .vtt")
    synth.add_argument(
        "--word-timing",
        action="store_true",
        help="word-level --subtitles: each segment aligned as it is made (.vtt with a timestamp "
        "a word, .srt a group of words a cue, .ass karaoke, .json); docs/alignment.md",
    )


class _Made:
    """What the bar says of a synthesis so far: audio made, RTF, time left."""

    def __init__(self) -> None:
        self.audio = 0.0
        self.compute = 0.0

    def __call__(self, result: SegmentResult) -> str:
        self.audio += result.audio_seconds
        self.compute += result.compute_seconds
        rtf = self.compute / self.audio if self.audio else None
        done = result.index + 1
        left = self.compute / done * (result.segments - done)
        return facts(self.audio, rtf, left)


def say_segment(
    result: SegmentResult, view: CommandProgress | None = None, made: _Made | None = None
) -> None:
    """A finished segment: a line of its own off a terminal, the bar moved on a terminal."""
    if view is not None and made is not None and view.tty:
        view.show(result.index + 1, result.segments, made(result))
        if result.hit_cap:
            view.line(f"  warning: segment {result.index + 1} reached the step cap without ending")
        return
    who = f" ({result.speaker})" if result.speaker else ""
    err(
        f"  segment {result.index + 1}/{result.segments}{who}: {result.steps} steps, "
        f"{result.audio_seconds:.2f} s audio, RTF {result.rtf:.2f}"
    )
    if result.hit_cap:
        err(
            f"  warning: segment {result.index + 1} reached the step cap without "
            "ending: its speech may be cut short; lower --segment-size"
        )


def _chinese_recognizer(text: str) -> Any:
    """What times a Chinese text's words for --word-timing: the official recogniser when it is
    downloaded (its token times), else None (every Chinese word estimated)."""
    from chattts_studio.core.align.words import language_of, text_words

    try:
        chinese = language_of(text_words(text)) == "zh"
    except StudioError:
        return None
    from chattts_studio.core.asr import models

    if not chinese or not models.official_present():
        if chinese:
            err("note: no speech recognition model: every Chinese word's time is estimated")
        return None
    from chattts_studio.core.asr.sensevoice import SenseVoice

    return SenseVoice(models.official_folder())


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.audio.output import check_output_path
    from chattts_studio.core.audio.subtitles import check_subtitle_path
    from chattts_studio.core.services.synthesize import plan_synthesis, synthesize_to_file
    from chattts_studio.core.text.prepare import check_text

    text = read_text(args)
    output = Path(args.output)
    check_output_path(output)
    subtitles = Path(args.subtitles) if args.subtitles else None
    word_timing = None
    if args.word_timing:
        from chattts_studio.core.align.cues import check_words_path
        from chattts_studio.core.align.sphinx import EnglishAligner
        from chattts_studio.core.align.timeline import WordTimeline

        if subtitles is None:
            raise StudioError("--word-timing needs --subtitles FILE (.vtt, .srt, .ass or .json).")
        check_words_path(subtitles)
        EnglishAligner.check()  # before the model loads, not after the first segment
        word_timing = WordTimeline(SAMPLE_RATE, _chinese_recognizer(text))
    elif subtitles is not None:
        check_subtitle_path(subtitles)
    request = request_from_args(args, text, turn_pause_seconds=args.turn_pause)
    request.validate()
    set_threads(args.threads)
    check_engine_choice(args.device, args.precision, args.engine, args.decoder)
    script = None
    if args.script is not None:
        from chattts_studio.core.text.dialogue import read_script, voices_for
        from chattts_studio.core.voices.speakers import SpeakerLibrary

        # The script and its speakers are checked before the model loads.
        turns = read_script(Path(args.script))
        voices = voices_for(turns, {e.name: e.voice for e in SpeakerLibrary().entries})
        script = (turns, voices)
    else:
        check_text(text)  # bad text fails before the model loads
        check_speaker_arg(args.speaker)  # and a speaker the library lacks
    engine = load_engine(args.model, args.device, args.precision, args.engine)
    if script is not None:
        plan = plan_synthesis(engine, request, script[1], script[0])
    else:
        voice, seed = speaker_arg(args.speaker, engine)
        seed = seed if seed is not None else args.seed
        plan = plan_synthesis(engine, replace(request, voice=voice, seed=seed))
    err(f"{len(plan.segments)} segment(s), batch size {plan.batch_size}")
    token = cancel_on_interrupt()
    random_note = (
        " (random demo weights: noise, not speech)"
        if engine.loaded and engine.loaded.info.random_weights
        else ""
    )
    tags = {"software": "ChatTTS Studio", "comment": f"ChatTTS Studio{random_note}"}
    view, made = CommandProgress("segments"), _Made()
    try:
        written = synthesize_to_file(
            engine,
            plan,
            output,
            float32=args.float,
            tags=tags,
            subtitles=subtitles,
            cancel=token,
            on_segment=lambda result: say_segment(result, view, made),
            word_timing=word_timing,
        )
    finally:
        view.close()
    if word_timing is not None and word_timing.words:
        estimated = sum(w.estimated for w in word_timing.words)
        if estimated:
            err(
                f"note: {estimated} of {len(word_timing.words)} word times in {subtitles} are "
                "estimated (interpolated, not heard)"
            )
    summary = written.summary
    assert summary is not None
    print(
        f"wrote {output}: {written.seconds:.2f} s of audio in "
        f"{summary.wall_seconds:.2f} s, RTF {summary.rtf:.3f}{random_note}"
    )
    return 0
