"""What a project shows and gives without a model: every take's flags against the project's
norms, the listing (`project list`), the chosen takes' audio and their export, and a segment's
text as the pronunciation dictionary reads it (what marks a take stale)."""

from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core.asr.score import asr_flag
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import flags, store, take_files
from chattts_studio.core.project.model import Project, Segment, Take
from chattts_studio.core.project.store import ProjectError
from chattts_studio.core.speaker.check import voice_flag

Lexicon = tuple[tuple[str, str], ...]  # pronunciation dictionary entries (word, replacement)


def spoken(text: str, lexicon: Lexicon) -> str:
    """A segment's text with the pronunciation dictionary applied (what synthesis reads)."""
    if not lexicon:
        return text
    from chattts_studio.core.text.lexicon import Lexicon as Entries

    return Entries(lexicon).apply(text)


def take_flags(project: Project) -> dict[tuple[int, int], list[flags.Flag]]:
    """Every take's flags, (segment id, take id) -> flags, against the project's norms (made
    from its current takes)."""
    current = [t for s in project.segments for t in s.takes if s.current(t)]
    norms = flags.norms([t.measures for t in current])
    return {
        (s.id, t.id): flags.flags_for(
            t.measures,
            norms,
            steps=t.steps,
            cap=t.cap,
            ended_by_eos=t.eos,
            random_weights=t.maker.random_weights,
        )
        + _asr_flags(t)
        + _voice_flags(t)
        for s in project.segments
        for t in s.takes
    }


def heard_by_demo(take: Take) -> bool:
    """Whether the take's check came from the demo recogniser (random weights: its transcript
    and rate are noise). A check from before the recogniser was recorded, of a take of the
    demo TTS weights, was the demo's: the window hears those with it."""
    got = take.asr
    if got is None:
        return False
    return got.demo or (not got.recognizer and take.maker.random_weights)


def _asr_flags(take: Take) -> list[flags.Flag]:
    said = None if take.asr is None else asr_flag(take.asr)
    if said is not None and heard_by_demo(take):
        said = Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "{reason} The demo recogniser (random weights) heard it: not a real hearing.",
            ),
            reason=said,
        )
    return [] if said is None else [flags.Flag("asr", said)]


def _voice_flags(take: Take) -> list[flags.Flag]:
    said = None if take.voice_check is None else voice_flag(take.voice_check)
    return [] if said is None else [flags.Flag("voice", said)]


def printable(text: str, limit: int = 200) -> str:
    """`text` safe to show in one tooltip or line: control and other unprintable characters as
    U+FFFD, runs of white space as one space, cut to `limit` characters with an ellipsis."""
    shown = "".join(ch if ch.isprintable() else "\ufffd" for ch in " ".join(text.split()))
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def flagged_numbers(project: Project) -> list[int]:
    """The segments whose chosen take has a flag (locked ones left out)."""
    found = take_flags(project)
    return [
        n
        for n, s in enumerate(project.segments, 1)
        if not s.locked and s.chosen is not None and found[(s.id, s.chosen)]
    ]


def listing(project: Project, lexicon: Lexicon | None = None) -> list[dict[str, Any]]:
    """Per segment what `project list --json` gives: index (1-based), text, chosen, takes
    (each with seed, seconds, flags, stale, its speech recognition check `asr`: score, cer,
    wer, missing, extra, changed, transcript, its voice check `voice`: similarity, threshold,
    reference; each null until checked, and whether it is its voice's marked `reference`),
    locked, picked, speaker. A take is stale when its segment's text or voice changed since,
    or (given today's `lexicon`) when the pronunciation dictionary now reads the text
    otherwise."""
    found = take_flags(project)
    rows = []
    for number, s in enumerate(project.segments, 1):
        now = None if lexicon is None else spoken(s.text, lexicon)
        rows.append(
            {
                "index": number,
                "text": s.text,
                "speaker": s.speaker,
                "chosen": s.chosen,
                "picked": s.picked,
                "locked": s.locked,
                "takes": [
                    {
                        "take": t.id,
                        "seed": t.seed,
                        "seconds": round(t.measures.seconds, 3),
                        "flags": [
                            {"kind": f.kind, "why": str(f.sentence)} for f in found[(s.id, t.id)]
                        ],
                        "stale": not s.current(t, now),
                        "asr": None if t.asr is None else t.asr.to_json(),
                        "voice": None if t.voice_check is None else t.voice_check.to_json(),
                        "reference": s.reference == t.id,
                    }
                    for t in s.takes
                ],
            }
        )
    return rows


def _chosen(segment: Segment, number: int) -> Take:
    take = segment.chosen_take
    if take is None:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Segment {number} has no take yet; re-roll it before exporting."
                ),
                number=str(number),
            )
        )
    return take


def chosen_audio(folder: Path, project: Project) -> list[tuple[Segment, np.ndarray]]:
    """Each segment's chosen take's samples, in order; ProjectError for a segment with none."""
    out = []
    for number, segment in enumerate(project.segments, 1):
        out.append((segment, take_files.take_audio(folder, _chosen(segment, number))))
    return out


def joined(folder: Path, project: Project, first: int = 1) -> np.ndarray:
    """The chosen takes from segment `first` (1-based) to the end, each after its pause (none
    before the first one heard): what "play from here" plays, and from 1 the samples an
    export writes. ProjectError for a segment with no take."""
    from chattts_studio.core.audio.stream_writer import pause_samples

    pieces: list[np.ndarray] = []
    for n, segment in enumerate(project.segments[first - 1 :]):
        take = _chosen(segment, first + n)
        if n:
            pieces.append(np.zeros(pause_samples(segment.pause_before), dtype=np.float32))
        pieces.append(take_files.take_audio(folder, take))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)


def export(
    path: Path,
    out: Path,
    subtitles: Path | None = None,
    per_segment: bool = False,
    float_wav: bool = False,
    suffix: str = ".wav",
) -> list[Path]:
    """The chosen takes in order with each segment's pause before it, in one file (with
    subtitles when asked), or one file per segment (`out` a folder then, each file's format
    after `suffix`); the files written. A target inside the project folder is refused (it
    could be a take's own audio)."""
    from chattts_studio.core.audio.stream_writer import AudioStreamWriter, pause_samples
    from chattts_studio.core.audio.subtitles import cues_for, write_subtitles

    folder = store.project_folder(path)
    project = store.load(folder)
    for target in (out, subtitles):
        if target is not None:
            store.refuse_inside(folder, target)
    pieces = chosen_audio(folder, project)
    if per_segment:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for number, (_segment, audio) in enumerate(pieces, 1):
            target = out / f"{number:04d}{suffix}"
            with AudioStreamWriter(target, float_wav=float_wav, pause_seconds=0.0) as writer:
                writer.add_segment(audio)
            written.append(target)
        return written
    timeline = []
    with AudioStreamWriter(out, float_wav=float_wav, pause_seconds=0.0) as writer:
        for n, (segment, audio) in enumerate(pieces):
            if n:
                writer.write_silence(pause_samples(segment.pause_before))
            first, end = writer.add_segment(audio)
            timeline.append((segment.text, first, end))
    written = [out]
    if subtitles is not None:
        speakers = [s.speaker for s, _a in pieces]
        write_subtitles(subtitles, cues_for(timeline, speakers=speakers if any(speakers) else None))
        written.append(subtitles)
    return written
