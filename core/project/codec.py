"""A project as JSON and back. Reading checks every value (checked.py): its type, that it is
finite, its range; a file that breaks one is a ValueError with a short reason, which store.py
says in one sentence. Unknown keys are kept; a damaged speech recognition check is dropped, the
take kept. See docs/projects.md ("Damaged files").
"""

import re
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.align.words import Alignment, Word
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.project import flags
from chattts_studio.core.project.checked import (
    MAX_COMPUTE_SECONDS,
    MAX_ID,
    MAX_LOUDNESS_DB,
    MAX_NAME,
    MAX_PAUSE_S,
    MAX_ROWS,
    MAX_SEGMENT_TAKES,
    MAX_SEGMENTS,
    MAX_STEPS,
    MAX_TAKE_SECONDS,
    MAX_TEXT,
    MAX_VOICE,
    MAX_WORDS,
    SETTING_RANGES,
    checked_text,
    flag,
    kept,
    listed,
    mapping,
    number,
    shown,
    text,
    whole,
)
from chattts_studio.core.project.model import FORMAT, Maker, Project, Segment, Take, TakeSettings
from chattts_studio.core.seeds import MAX_SEED
from chattts_studio.core.speaker.check import VoiceCheck, judged
from chattts_studio.core.voices.voice import Voice

# A take's audio: a plain file in takes/ (not a temp file: those start with a dot and are
# swept), named by no path that leaves the folder.
_AUDIO = re.compile(r"takes/[^/\\:\0.][^/\\:\0]*")
_KNOWN = (
    "format", "app", "title", "model", "device", "precision", "engine", "pause", "seed",
    "settings", "next_segment_id", "voices", "segments",
)  # fmt: skip


# -- writing ----------------------------------------------------------------------------------
def take_to_json(take: Take) -> dict[str, Any]:
    data = asdict(take)
    data["measures"] = flags.to_json(take.measures)
    data["asr"] = None if take.asr is None else take.asr.to_json()
    data["voice_check"] = None if take.voice_check is None else take.voice_check.to_json()
    data["words"] = None if take.words is None else take.words.to_json()
    return data


def voices_judged(segments: Sequence[Segment]) -> dict[tuple[int, int], VoiceCheck]:
    """Every take's voice check, (segment id, take id) -> check, judged by the rule that fits
    its voice's takes now (core/speaker/check.py's `judged`)."""
    checks = {
        (s.id, t.id): t.voice_check for s in segments for t in s.takes if t.voice_check is not None
    }
    return judged(checks, {key: f"{key[0]}/{key[1]}" for key in checks})


def judge_voices(segments: Sequence[Segment]) -> None:
    """Each take's voice check replaced by its judgement as one of its voice's takes."""
    found = voices_judged(segments)
    for s in segments:
        s.takes = [
            replace(t, voice_check=found[(s.id, t.id)]) if (s.id, t.id) in found else t
            for t in s.takes
        ]


def to_json(project: Project) -> dict[str, Any]:
    voices = {s.voice.key(): asdict(s.voice) for s in project.segments}
    voice_checks = voices_judged(project.segments)
    segments = [
        {
            "id": s.id,
            "text": s.text,
            "voice": s.voice.key(),
            "speaker": s.speaker,
            "pause_before": s.pause_before,
            "chosen": s.chosen,
            "picked": s.picked,
            "locked": s.locked,
            "reference": s.reference,
            "takes": [
                take_to_json(
                    replace(t, voice_check=voice_checks[(s.id, t.id)])
                    if (s.id, t.id) in voice_checks
                    else t
                )
                for t in s.takes
            ],
        }
        for s in project.segments
    ]
    known = {
        "format": FORMAT,
        "app": "ChatTTS Studio",
        "title": project.title,
        "model": project.model,
        "device": project.device,
        "precision": project.precision,
        "engine": project.engine,
        "pause": project.pause,
        "seed": project.seed,
        "settings": asdict(project.settings),
        "next_segment_id": project.next_segment_id,
        "voices": voices,
        "segments": segments,
    }
    return {**project.extra, **known}


# -- reading ----------------------------------------------------------------------------------
def settings_from(value: Any, what: str = "settings") -> TakeSettings:
    """Generation settings in the window's ranges (SETTING_RANGES); a key left out is the
    default, an unknown one is refused."""
    data = mapping(value, what, tuple(SETTING_RANGES))
    where = f"{what}: "
    defaults = TakeSettings()
    low, high = SETTING_RANGES["temperature"]
    temperature = number(data, "temperature", low, high, where, defaults.temperature)
    low, high = SETTING_RANGES["top_p"]
    top_p = number(data, "top_p", low, high, where, defaults.top_p)
    low, high = SETTING_RANGES["top_k"]
    top_k = whole(data, "top_k", int(low), int(high), where, defaults.top_k)
    low, high = SETTING_RANGES["speed"]
    speed = whole(data, "speed", int(low), int(high), where, defaults.speed)
    return TakeSettings(temperature, top_p, top_k, speed)


def _maker(value: Any, where: str) -> Maker:
    data = mapping(value, f"{where}maker", tuple(Maker.__dataclass_fields__))
    at = f"{where}maker: "
    return Maker(
        model=text(data, "model", MAX_NAME, at),
        engine=text(data, "engine", MAX_NAME, at),
        precision=text(data, "precision", MAX_NAME, at),
        device=text(data, "device", MAX_NAME, at),
        rows=whole(data, "rows", 1, MAX_ROWS, at),
        random_weights=flag(data, "random_weights", at, False),
    )


def _measures(value: Any, where: str) -> flags.Measures:
    try:
        measures = flags.from_json(value)
    except OverflowError:  # an integer too large for a float where a length goes
        raise ValueError(f"{where}measures: a number is too large") from None
    except ValueError as exc:
        raise ValueError(f"{where}{exc}") from None
    checked_text(measures.language, MAX_NAME, f"{where}measures: language")
    # Bounds the norms' arithmetic can take (a count of 400 digits overflows a division).
    limits = {
        "seconds": MAX_TAKE_SECONDS,
        "longest_silence": MAX_TAKE_SECONDS,
        "spoken": MAX_TEXT,
        "clipped": MAX_TAKE_SECONDS * SAMPLE_RATE,
        "loudness_db": MAX_LOUDNESS_DB,
    }
    for key, most in limits.items():
        value = getattr(measures, key)
        if value is not None and abs(value) > most:
            raise ValueError(f"{where}measures: {key} is over {most:g}")
    return measures


def audio_name(value: Any, what: str) -> str:
    """A take's file as its record names it: takes/NAME, never a path out of the folder."""
    name = checked_text(value, MAX_NAME, what)
    if _AUDIO.fullmatch(name) is None or name.endswith((".json", ".lock")):
        raise ValueError(f"{what} is not a file in takes/ ({shown(name)})")
    return name


def take_from(value: Any, where: str = "take: ") -> Take:
    """A take from its JSON (project.json's or its record's); ValueError when malformed."""
    data = mapping(value, where.rstrip(": ") or "take")
    return Take(
        id=whole(data, "id", 1, MAX_ID, where),
        seed=whole(data, "seed", 0, MAX_SEED, where),
        settings=settings_from(data.get("settings"), f"{where}settings"),
        maker=_maker(data.get("maker"), where),
        text=text(data, "text", MAX_TEXT, where),
        spoken_text=text(data, "spoken_text", MAX_TEXT, where),
        model_text=text(data, "model_text", MAX_TEXT, where),
        voice=text(data, "voice", MAX_NAME, where),
        audio=audio_name(data.get("audio"), f"{where}audio"),
        steps=whole(data, "steps", 0, MAX_STEPS, where),
        cap=whole(data, "cap", 0, MAX_STEPS, where),
        eos=flag(data, "eos", where),
        compute_seconds=number(data, "compute_seconds", 0.0, MAX_COMPUTE_SECONDS, where),
        measures=_measures(data.get("measures"), where),
        made_at=text(data, "made_at", MAX_NAME, where),
        asr=asr_from(data.get("asr")),
        voice_check=VoiceCheck.from_json(data.get("voice_check")),
        words=words_from(data.get("words")),
    )


def words_from(value: Any) -> Alignment | None:
    """A take's words in time, or None: none kept (a project saved before kept none) or a
    record that does not read (damaged: timing the take again makes it)."""
    if value is None:
        return None
    try:
        data = mapping(value, "words")
        found = []
        for item in listed(data.get("words"), MAX_WORDS, "words"):
            word = mapping(item, "a word")
            start = number(word, "start", 0.0, MAX_TAKE_SECONDS)
            end = number(word, "end", start, MAX_TAKE_SECONDS)
            said = text(word, "text", MAX_TEXT)
            found.append(Word(said, start, end, flag(word, "estimated", "", False)))
        language = text(data, "language", MAX_NAME)
        if language not in ("en", "zh"):
            raise ValueError("not a language the aligner times")
        return Alignment(
            found,
            language,
            text(data, "method", MAX_NAME),
            number(data, "duration", 0.0, MAX_TAKE_SECONDS),
        )
    except (ValueError, TypeError, OverflowError):
        return None


def asr_from(value: Any) -> AsrCheck | None:
    """A take's check, or None: none made yet (projects before it have no key), or one that
    does not read (damaged: checking again makes it; the take itself is whole)."""
    if value is None:
        return None
    try:
        data = mapping(value, "asr")
        rates = [None if data.get(k) is None else number(data, k, 0.0, 1e9) for k in ("cer", "wer")]
        runs = [
            [checked_text(w, MAX_TEXT, k) for w in listed(data.get(k, []), MAX_TEXT, k)]
            for k in ("missing", "extra")
        ]
        changed = []
        for pair in listed(data.get("changed", []), MAX_TEXT, "changed"):
            said, heard = listed(pair, 2, "changed")
            changed.append((checked_text(said, MAX_TEXT, "a"), checked_text(heard, MAX_TEXT, "b")))
        return AsrCheck(
            text(data, "transcript", MAX_TEXT),
            number(data, "score", 0.0, 1e9),
            rates[0],
            rates[1],
            runs[0],
            runs[1],
            changed,
            text(data, "recognizer", MAX_NAME, default=""),
        )
    except ValueError:
        return None


def _voice(value: Any, what: str) -> Voice:
    data = mapping(value, what, tuple(Voice.__dataclass_fields__))
    at = f"{what}: "
    return Voice(**{k: text(data, k, MAX_VOICE, at, "") for k in Voice.__dataclass_fields__})


def _segment(value: Any, voices: dict[str, Voice], n: int) -> Segment:
    data = mapping(value, f"segment {n}")
    where = f"segment {n}: "
    key = text(data, "voice", MAX_NAME, where)
    if key not in voices:
        raise ValueError(f"{where}its voice {shown(key)} is not among the voices")
    takes = [
        take_from(t, f"{where}take {i}: ")
        for i, t in enumerate(listed(data.get("takes"), MAX_SEGMENT_TAKES, f"{where}takes"), 1)
    ]
    ids = [t.id for t in takes]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{where}two takes share an id")
    chosen, reference = data.get("chosen"), data.get("reference")
    segment = Segment(
        id=whole(data, "id", 1, MAX_ID, where),
        text=text(data, "text", MAX_TEXT, where),
        voice=voices[key],
        speaker=text(data, "speaker", MAX_NAME, where, ""),
        pause_before=number(data, "pause_before", 0.0, MAX_PAUSE_S, where, 0.0),
        takes=takes,
        chosen=None if chosen is None else whole(data, "chosen", 1, MAX_ID, where),
        picked=flag(data, "picked", where, False),
        locked=flag(data, "locked", where, False),
        reference=None if reference is None else whole(data, "reference", 1, MAX_ID, where),
    )
    if segment.chosen is not None and segment.take(segment.chosen) is None:
        raise ValueError(f"{where}it chooses take {segment.chosen}, which is not there")
    if segment.reference is not None and segment.take(segment.reference) is None:
        segment.reference = None  # its take was deleted: no reference, nothing else lost
    return segment


def project_from(value: Any) -> Project:
    """The project in project.json's `value` (its format already checked by the caller);
    ValueError with a short reason when a value is missing, of the wrong type or out of
    range."""
    data = mapping(value, "project.json")
    voices = {
        checked_text(k, MAX_NAME, "a voice's key"): _voice(v, f"voice {shown(k, 20)}")
        for k, v in mapping(data.get("voices"), "voices").items()
    }
    segments = [
        _segment(s, voices, n)
        for n, s in enumerate(listed(data.get("segments"), MAX_SEGMENTS, "segments"), 1)
    ]
    ids = [s.id for s in segments]
    if len(set(ids)) != len(ids):
        raise ValueError("two segments share an id")
    judge_voices(segments)
    device = data.get("device")
    seed = data.get("seed")
    return Project(
        title=text(data, "title", MAX_NAME),
        settings=settings_from(data.get("settings")),
        model=text(data, "model", MAX_NAME),
        segments=segments,
        next_segment_id=max(whole(data, "next_segment_id", 1, MAX_ID + 1), max(ids, default=0) + 1),
        device=None if device is None else text(data, "device", MAX_NAME),
        precision=text(data, "precision", MAX_NAME, "", "fp32"),
        engine=text(data, "engine", MAX_NAME, "", "auto"),
        pause=number(data, "pause", 0.0, MAX_PAUSE_S, "", 0.25),
        seed=None if seed is None else whole(data, "seed", 0, MAX_SEED),
        extra={
            checked_text(k, MAX_NAME, "a key"): kept(v, f"{shown(k, 20)}")
            for k, v in data.items()
            if k not in _KNOWN
        },
    )
