"""Voices cloned from a recording: reading and resampling reference clips, the real DVAE
encoder, the prompt a cloned voice makes, the library entry, and the mistakes users make."""

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from audio_fakes import speech_like
from conftest import REPO

from chattts_studio.core.cli.main import main

TRANSCRIPT = "你好，这是我的声音。"


def reference_sample(engine, path: Path) -> str:  # type: ignore[no-untyped-def]
    """The clip encoded the way ChatTTS's README does it, independently of core/voices/clone.py:
    soundfile, the channels averaged, torchaudio's resample, `Chat.sample_audio_speaker`."""
    import torch
    import torchaudio.functional as AF

    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    mono = torch.from_numpy(np.ascontiguousarray(data.mean(axis=1)))
    wav = AF.resample(mono, rate, 24000) if rate != 24000 else mono
    return str(engine.model._chat.sample_audio_speaker(wav.numpy()))


@pytest.mark.parametrize(
    ("fmt", "subtype", "rate", "channels"),
    [
        ("WAV", "PCM_16", 16000, 1),
        ("WAV", "FLOAT", 24000, 1),
        ("FLAC", "PCM_24", 44100, 2),
        ("OGG", "VORBIS", 48000, 2),
        ("MP3", "MPEG_LAYER_III", 44100, 2),
    ],
)
def test_a_clip_in_each_format_and_rate_is_resampled_and_encoded_by_the_dvae(
    engine, tmp_path: Path, fmt: str, subtype: str, rate: int, channels: int
) -> None:  # type: ignore[no-untyped-def]
    from scipy.signal import resample_poly

    from chattts_studio.core.voices.clone import read_clip

    path = tmp_path / f"ref.{fmt.lower()}"
    sf.write(str(path), speech_like(4.0, rate, channels), rate, subtype=subtype, format=fmt)
    clip = read_clip(path)
    # Resampled to 24 kHz mono: against scipy's polyphase resampler (another algorithm), the
    # same length and the same waveform up to filter differences.
    data, file_rate = sf.read(str(path), dtype="float64", always_2d=True)
    g = np.gcd(file_rate, 24000)
    other = resample_poly(data.mean(axis=1), 24000 // g, file_rate // g)
    assert clip.dtype == np.float32 and clip.ndim == 1
    assert abs(len(clip) - len(other)) <= 1
    n = min(len(clip), len(other))
    assert np.corrcoef(clip[:n], other[:n])[0, 1] > 0.99
    # Encoded by the real DVAE encoder: exactly ChatTTS's own sample string for that audio.
    voice = engine.clone_voice(clip, TRANSCRIPT)
    assert voice.sample == reference_sample(engine, path)
    frames = engine.model.check_sample(voice.sample)
    assert abs(frames - 4.0 * 46.875) <= 3  # one code frame per GPT step of the clip


def test_the_prompt_of_a_cloned_voice_holds_its_sample_codes_and_transcript(engine) -> None:  # type: ignore[no-untyped-def]
    import torch

    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.voices.clone import check_clip

    model = engine.model
    voice = engine.clone_voice(check_clip(speech_like(3.5, 24000)[:, 0], 24000), TRANSCRIPT)
    checked = engine.check_voice(voice)
    assert checked.transcript == model.normalize(TRANSCRIPT)
    codes = model.sample_codes(voice.sample)  # [num_vq, frames]
    ids, mask = model.prompt_ids("今天天气很好。", 5, checked)
    frames = codes.shape[1]
    # The sample's codes close the prompt, one position per frame, all four codebooks, read
    # as audio (text mask off) ...
    assert torch.equal(ids[0, -frames:].cpu(), codes.t().to(ids.dtype))
    assert not mask[0, -frames:].any() and mask[0, :-frames].all()
    # ... after the text, which is ChatTTS's: no speaker embedding, the transcript, the text.
    text_ids = ids[0, :-frames, 0].tolist()
    expected = model.text_ids(f"[Stts][empty_spk]{checked.transcript}[speed_5]今天天气很好。[Ptts]")
    assert text_ids == expected
    transcript_ids = model.text_ids(checked.transcript)
    assert text_ids[2 : 2 + len(transcript_ids)] == transcript_ids
    # No embedding is written over any position (ChatTTS applies none without spk_emb).
    emb = model.embed((ids, mask), checked)
    assert torch.equal(emb, model._chat.embed(ids, mask))

    # The decode loop builds every row's prompt from the job's cloned voice.
    seen = []
    real = type(model).prompt_ids

    def spy(self, text, speed, speaker):  # type: ignore[no-untyped-def]
        seen.append(speaker)
        return real(self, text, speed, speaker)

    request = SynthesisRequest(
        text="第一句。第二句。", voice=voice, refine_text=False, segment_size=5
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(model), "prompt_ids", spy)
        results = list(engine.synthesize(request))
    assert len(results) == 2 and seen == [checked, checked]


def _add_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["speakers", "add", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_kept_clone_gives_the_same_audio_in_two_processes(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip = tmp_path / "me.flac"
    sf.write(str(clip), speech_like(5.0, 44100, 2, seed=3), 44100)
    code, out, err = _add_cli(
        capsys, "Ann", "--from-audio", str(clip), "--transcript", TRANSCRIPT, "--keep-recording"
    )
    assert code == 0, err
    assert "cloned from a recording" in out
    entry = json.loads((private_home / "speakers.json").read_text())["speakers"][0]
    assert entry["transcript"] == TRANSCRIPT and len(entry["sample"]) > 100
    assert entry["embedding"] == ""
    # The preview clip, beside the library, plays the voice; the recording kept on request.
    preview = private_home / entry["preview"]
    info = sf.info(str(preview))
    assert info.format == "FLAC" and info.samplerate == 24000 and info.duration > 0.5
    from chattts_studio.core.voices.clone import read_clip

    kept, rate = sf.read(str(private_home / entry["recording"]), dtype="float32")
    assert rate == 24000 and np.allclose(kept, read_clip(clip), atol=1 / 16000)

    # The same command in this process and in a fresh one (same thread count: float sums in
    # another order could differ in the last bit on their own).
    import torch

    argv = ["synth", "你好。Hello.", "--speaker", "Ann", "--no-refine", "--float"]
    argv += ["--device", "cpu", "--threads", str(torch.get_num_threads())]
    here, there = tmp_path / "here.wav", tmp_path / "there.wav"
    env = {**os.environ, "CHATTTS_STUDIO_HOME": str(private_home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "chattts_studio.core.cli.main", *argv, "-o", str(there)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert main([*argv, "-o", str(here)]) == 0
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    a, b = (sf.read(str(o), dtype="float32")[0] for o in (here, there))
    assert len(a) > 12000 and np.array_equal(a, b)


def _sparse_two_hour_wav(path: Path) -> None:
    """A WAV whose header (and size) say two hours at 16 kHz: a sparse file, nothing written."""
    with sf.SoundFile(str(path), "w", 16000, 1, "PCM_16", format="WAV") as f:
        f.write(np.zeros(16, dtype=np.int16))
    data_bytes = 2 * 3600 * 16000 * 2
    with open(path, "r+b") as f:
        f.seek(4)
        f.write((36 + data_bytes).to_bytes(4, "little"))
        f.seek(40)
        f.write(data_bytes.to_bytes(4, "little"))
        f.truncate(44 + data_bytes)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: sf.write(str(p), np.zeros(0, np.float32), 24000), "has no audio"),
        (lambda p: sf.write(str(p), speech_like(1.0, 16000), 16000), "only 1.0 s long"),
        (lambda p: sf.write(str(p), np.zeros(5 * 16000, np.float32), 16000), "is silent"),
        (lambda p: p.write_bytes(b"RIFF not really audio" * 50), "cannot be read as audio"),
        (lambda p: sf.write(str(p), speech_like(45.0, 8000), 8000), "45.0 s long"),
        (_sparse_two_hour_wav, "2 h 0 min long"),
        (lambda p: None, "There is no audio file"),
    ],
)
def test_bad_reference_clips_get_one_sentence_and_add_nothing(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], make, message: str
) -> None:  # type: ignore[no-untyped-def]
    clip = tmp_path / "clip.wav"
    make(clip)
    code, out, err = _add_cli(capsys, "Ann", "--from-audio", str(clip), "--transcript", "你好。")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert "Traceback" not in err and not out
    assert not (private_home / "speakers.json").exists()
    assert not (private_home / "speaker-previews").exists()


def test_a_missing_transcript_or_a_taken_name_adds_nothing(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip = tmp_path / "ok.wav"
    sf.write(str(clip), speech_like(4.0, 16000), 16000)
    code, _, err = _add_cli(capsys, "Ann", "--from-audio", str(clip))
    assert code == 2 and "needs --transcript" in err
    code, _, err = _add_cli(capsys, "Ann", "--from-audio", str(clip), "--transcript", "  ")
    assert code == 2 and "transcript cannot be used" in err
    assert not (private_home / "speakers.json").exists()
    assert _add_cli(capsys, "Bo", "--seed", "4", "--no-preview")[0] == 0
    before = (private_home / "speakers.json").read_bytes()
    code, _, err = _add_cli(capsys, "Bo", "--from-audio", str(clip), "--transcript", "你好。")
    assert code == 2 and "already exists" in err
    assert (private_home / "speakers.json").read_bytes() == before


def test_a_two_hour_file_is_refused_from_its_header_without_being_read(tmp_path: Path) -> None:
    from chattts_studio.core.voices.clone import ClipError, read_clip

    path = tmp_path / "long.wav"
    _sparse_two_hour_wav(path)
    tracemalloc.start()
    try:
        with pytest.raises(ClipError, match="2 h 0 min long"):
            read_clip(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # two hours of samples would be 230 MB as float32
