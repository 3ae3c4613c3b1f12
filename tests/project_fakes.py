"""Projects with takes and no model: each take's record made from synthetic audio (noise,
clipped noise, noise with a long silence inside) the way the engine's takes are recorded, so
the segment editor's tests see real measures and real flags."""

from pathlib import Path

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.project import flags, store, writer
from chattts_studio.core.project.model import Maker, Project, Segment, Take, TakeSettings
from chattts_studio.core.voices.voice import Voice

VOICE = Voice(embedding="speaker-for-tests")
MAKER = Maker(model="demo", engine="torch", precision="fp32", device="cpu", rows=1)


def speech(seconds: float, seed: int = 0, rms: float = 0.05) -> np.ndarray:
    """Noise at a speech-like level: no flag of its own."""
    audio = np.random.default_rng(seed).standard_normal(round(seconds * SAMPLE_RATE))
    return (audio * rms).astype(np.float32)


def clipped(seconds: float, seed: int = 0) -> np.ndarray:
    """Speech with a run of samples at full scale: flagged "clipping"."""
    audio = speech(seconds, seed)
    audio[1000:1010] = 1.0
    return audio


def stalled(seconds: float, seed: int = 0) -> np.ndarray:
    """Speech, two seconds of silence, speech: flagged "silence" (flags.SILENCE_LIMIT)."""
    half = speech(seconds / 2, seed)
    return np.concatenate([half, np.zeros(2 * SAMPLE_RATE, np.float32), half])


def take_of(segment: Segment, take_id: int, seed: int, measures: flags.Measures) -> Take:
    """A take record as the engine writes one, for `segment`'s text as it is now."""
    return Take(
        id=take_id,
        seed=seed,
        settings=TakeSettings(),
        maker=MAKER,
        text=segment.text,
        spoken_text=segment.text,
        model_text=segment.text,
        voice=segment.voice.key(),
        audio=store.record_name(segment.id, take_id).replace(".json", ".wav"),
        steps=50,
        cap=400,
        eos=True,
        compute_seconds=0.1,
        measures=measures,
        made_at="2025-01-01T00:00:00Z",
    )


def project_with(texts: list[str]) -> Project:
    """A project of `texts`' segments, no takes yet."""
    project = Project(title="Book", settings=TakeSettings(), model="demo")
    for n, text in enumerate(texts):
        project.segments.append(project.new_segment(text, VOICE, pause_before=0.3 * (n > 0)))
    return project


def saved_project(folder: Path, texts: list[str], audio: list[list[np.ndarray]]) -> Path:
    """A project on disk: segment i gets a take of each of audio[i] (the last one chosen),
    written through the store as a take job writes them; the folder."""
    project = project_with(texts)
    with writer.created(folder, project) as handle:
        for segment, clips in zip(project.segments, audio, strict=True):
            for take_id, clip in enumerate(clips, 1):
                measures = flags.measure(clip, segment.text)
                take = take_of(segment, take_id, 100 * segment.id + take_id, measures)
                name = handle.write_take_audio(segment, take_id, clip)
                assert name == take.audio
                segment.takes.append(take)
                segment.chosen = take_id
                handle.add_take(segment, take, chosen=True)
        handle.save()
        return handle.folder


def big_project(count: int, takes: int = 3) -> Project:
    """`count` segments of `takes` takes each, in memory: one measured clip's numbers reused
    (measuring thousands of clips would make the test slow, and the view is what is tested)."""
    project = project_with([f"Sentence number {n}, read aloud." for n in range(1, count + 1)])
    measures = flags.measure(speech(2.0), project.segments[0].text)
    for segment in project.segments:
        for take_id in range(1, takes + 1):
            segment.takes.append(take_of(segment, take_id, take_id, measures))
        segment.chosen = 1
    return project


def small_project(folder: Path) -> Path:
    """Three short segments with 1, 2 and 1 takes of noise (a quarter second each): a whole
    project on disk in milliseconds, for tests of its files."""
    texts = ["Hello there.", "A second one.", "And the last."]
    clips = [[speech(0.25, 1)], [speech(0.25, 2), speech(0.3, 3)], [speech(0.2, 4)]]
    return saved_project(folder, texts, clips)


def file_hashes(root: Path) -> dict[str, str]:
    """Every plain file under `root` (links not followed), by its relative path: its sha256."""
    import hashlib

    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def unsaved_take(folder: Path, number: int, take_id: int, seconds: float = 0.1) -> Take:
    """A take of segment `number` written as a take job writes one (its audio, then its
    record, chosen) by a writer killed before it wrote project.json again: only its record
    names it, and load recovers it from there."""
    with writer.opened(folder) as handle:
        segment = handle.project.at(number)
        audio = speech(seconds, take_id)
        take = take_of(segment, take_id, take_id, flags.measure(audio, segment.text))
        assert handle.write_take_audio(segment, take_id, audio) == take.audio
        handle.add_take(segment, take, chosen=True)
    return take
