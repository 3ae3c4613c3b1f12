"""The voice check in a project, on real speech: takes made by espeak-ng voices (resampled to
the project's 24 kHz) are compared with their voice's reference (a typical take, then a take
marked by hand), a take in another voice is flagged "voice", best of N weighs voice with text,
hand-picked and locked segments keep their takes, and bad input is one sentence with nothing
lost. Also the demo project a user makes first: `project new` on the demo weights, then
`project check --voice` judges it with the demo speaker model and says so."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from project_fakes import file_hashes, saved_project
from scipy.signal import resample_poly

from chattts_studio.core.devtools.voiceeer import speak
from chattts_studio.core.project import edits, reading, store, writer
from chattts_studio.core.services.heard_takes import best_by_check
from chattts_studio.core.services.project_check import check_voices
from chattts_studio.core.speaker.encoder import THRESHOLD, SpeakerEncoder

TEXTS = [
    "The library closes early on Sundays, so we went to the museum instead.",
    "My brother fixed the old bicycle with a bag of spare parts.",
    "Three green apples were left in the basket on the kitchen table.",
    "The last bus leaves the station at a quarter past eleven.",
]
SAID, OTHER = "en+m1", "en+f3"


def _take(voice: str, text: str) -> np.ndarray:
    audio, rate = speak(voice, text)
    assert rate == 22_050
    return resample_poly(audio, 160, 147).astype(np.float32)  # to 24 kHz


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """Segments 1-3 in SAID; segment 4 has a take in SAID and then one in OTHER (chosen)."""
    clips = [[_take(SAID, t)] for t in TEXTS[:3]]
    clips.append([_take(SAID, TEXTS[3]), _take(OTHER, TEXTS[3])])
    return saved_project(tmp_path / "book.chattts", TEXTS, clips)


def test_a_take_in_another_voice_is_flagged_against_the_typical_take(
    book: Path, real_speaker_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("project", "check", str(book), "--voice", "--speaker-model", str(real_speaker_model))
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    body = json.loads(out)
    checks = {row["index"]: row["voice"] for row in body["checked"]}
    assert sorted(checks) == [1, 2, 3, 4] and body["skipped"] == [] and not body["demo"]
    assert {c["reference"] for c in checks.values()} == {"typical"}
    assert all(checks[n]["similarity"] >= THRESHOLD for n in (1, 2, 3)), checks
    assert checks[4]["similarity"] < THRESHOLD, checks
    project = store.load(book)
    assert reading.flagged_numbers(project) == [4]
    listed = reading.listing(project)
    chosen = listed[3]["takes"][1]
    assert [f["kind"] for f in chosen["flags"]] == ["voice"]
    assert chosen["flags"][0]["why"].startswith("The voice drifts from its reference")
    assert listed[3]["takes"][0]["voice"] is None  # not chosen: not checked without --all-takes
    code, out, _ = run_cli(capsys, "project", "list", str(book))
    assert code == 0 and out.splitlines()[3].endswith("[voice]")
    code, out, _ = run_cli(capsys, *argv)  # said as a table too
    assert code == 0 and "DRIFTS" in out.splitlines()[3] and "threshold 0.73" in out


def test_a_marked_reference_replaces_the_typical_take_and_best_of_n_weighs_the_voice(
    book: Path, speaker_encoder: SpeakerEncoder, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "project", "reference", str(book), "2")
    assert code == 0 and "take 1 is its voice's reference" in out
    project = store.load(book)
    assert [s.reference for s in project.segments] == [None, 1, None, None]
    run = check_voices(book, speaker_encoder, all_takes=True)
    got = {(n, t): c for n, t, c in run.checked}
    assert len(got) == 5 and run.skipped == []
    second = project.segments[1].id
    assert {c.reference for c in got.values()} == {"take"}
    assert {c.reference_id for c in got.values()} == {f"{second}/1"}
    assert got[(2, 1)].similarity == pytest.approx(1.0, abs=1e-5)  # the reference itself
    assert got[(4, 1)].same and not got[(4, 2)].same
    again = check_voices(book, speaker_encoder, all_takes=True, unchecked_only=True)
    assert again.checked == []  # checked against this reference already
    with writer.opened(book) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    assert store.load(book).segments[3].chosen == 1  # the take in the segment's voice
    edits.pick(book, 4, 2)  # by hand: never replaced automatically
    with writer.opened(book) as handle:
        best_by_check(handle.project, handle.project.segments)
        handle.save()
    assert store.load(book).segments[3].chosen == 2


def test_takes_it_cannot_judge_are_said_and_the_rest_checked(
    tmp_path: Path, speaker_encoder: SpeakerEncoder
) -> None:
    clips = [[_take(SAID, TEXTS[0])], [_take(SAID, "Yes.")[:12_000]], [_take(SAID, TEXTS[2])]]
    book = saved_project(tmp_path / "short.chattts", [TEXTS[0], "Yes.", TEXTS[2]], clips)
    run = check_voices(book, speaker_encoder)
    assert [n for n, _, _ in run.checked] == [1, 3]
    assert run.skipped == [
        (2, 1, "Take 1 of segment 2 is 0.50 s long; the voice check needs at least 1 s.")
    ]
    assert store.load(book).segments[1].takes[0].voice_check is None


def test_one_take_alone_has_no_reference_until_one_is_marked(
    tmp_path: Path, speaker_encoder: SpeakerEncoder
) -> None:
    book = saved_project(tmp_path / "one.chattts", TEXTS[:1], [[_take(SAID, TEXTS[0])]])
    run = check_voices(book, speaker_encoder)
    assert run.checked == [] and len(run.skipped) == 1
    assert run.skipped[0][2].startswith("Its voice has no reference: mark a take")
    edits.mark_reference(book, 1)
    assert [c.reference for _, _, c in check_voices(book, speaker_encoder).checked] == ["take"]


def test_a_missing_model_or_a_bad_threshold_is_one_sentence_and_changes_nothing(
    book: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_hashes(book)
    for argv, said in [
        ((), "error: The voice check's speaker model is not downloaded yet"),
        (("--voice-threshold", "3"), "error: --voice-threshold is a cosine similarity"),
        (("--speaker-model", str(book / "none.onnx")), "error: There is no speaker model at"),
    ]:
        code, out, err = run_cli(capsys, "project", "check", str(book), "--voice", *argv)
        assert code == 2 and out == "" and err.startswith(said), err
        assert len(err.strip().splitlines()) == 1
    assert file_hashes(book) == before


def test_a_demo_project_is_checked_by_the_demo_model_which_says_it_judges_noise(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "demo.chattts"
    code, _, err = run_cli(
        capsys, "project", "new", "今天天气很好，我们一起去公园散步吧。然后我们回家吃饭。",
        "-o", str(project), "--takes", "2", "--segment-size", "10", "--seed", "4",
        "--device", "cpu", "--engine", "torch",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(capsys, "project", "check", str(project), "--voice", "--all-takes")
    assert code == 0, err
    assert "demo speaker model, random weights: its similarities judge noise" in out
    checked = [line for line in out.splitlines() if " take " in line]
    skipped = [line for line in err.splitlines() if "not checked" in line]
    takes = sum(len(s.takes) for s in store.load(project).segments)
    assert len(checked) + len(skipped) == takes and checked, (out, err)
    demo = [t.voice_check for s in store.load(project).segments for t in s.takes]
    assert all(c is None or c.demo for c in demo) and any(c is not None for c in demo)


RECORD = """
import sys
import numpy as np
from chattts_studio.core.voices.recorder import Recorder

recorder = Recorder(rate=24000, max_seconds=float(sys.argv[2]))
recorder.start()
assert recorder.wait(60), "the take never filled"
np.save(sys.argv[1], recorder.stop())
"""


def test_a_cloned_voice_s_recording_made_through_the_recorder_is_the_reference(
    book: Path, tmp_path: Path, speaker_encoder: SpeakerEncoder
) -> None:
    """The speaker library keeps a cloned voice's recording: here one the suite records through
    the app's Recorder from a capture device that plays espeak-ng's speech. It becomes the
    project voice's reference ("recording"), before the preview, which counts without it."""
    import subprocess
    import sys

    import soundfile as sf
    from conftest import REPO, microphone_env
    from project_fakes import VOICE

    from chattts_studio.core.services.project_check import library_clips
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    said = _take(SAID, "Good evening, this is the voice I would like you to keep.")
    taken = tmp_path / "take.npy"
    child = subprocess.run(
        [sys.executable, "-c", RECORD, str(taken), str(len(said) / 24_000)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
        env=microphone_env(tmp_path, said),
    )  # fmt: skip
    assert child.returncode == 0, child.stderr[-2000:]
    library = SpeakerLibrary(tmp_path / "library" / "speakers.json")
    (tmp_path / "library").mkdir()
    sf.write(tmp_path / "library" / "rec.flac", np.load(taken), 24_000)
    sf.write(tmp_path / "library" / "pre.wav", _take(OTHER, TEXTS[0]), 24_000)
    library.add("Kept", VOICE.embedding, recording="rec.flac", preview="pre.wav")
    clips = library_clips(library)
    assert clips == {VOICE.key(): ("recording", tmp_path / "library" / "rec.flac")}
    run = check_voices(book, speaker_encoder, all_takes=True, clips=clips)
    got = {(n, t): c for n, t, c in run.checked}
    assert {c.reference for c in got.values()} == {"recording"}
    assert {c.reference_id for c in got.values()} == {"rec.flac"}
    assert [got[(n, 1)].same for n in (1, 2, 3, 4)] == [True] * 4 and not got[(4, 2)].same
    library.add("Kept", VOICE.embedding, replace=True, preview="pre.wav")  # no recording
    clips = library_clips(library)
    assert clips[VOICE.key()][0] == "preview"
    run = check_voices(book, speaker_encoder, "4", all_takes=True, clips=clips)
    first, second = (c for _, _, c in run.checked)
    assert (first.reference, first.reference_id) == ("preview", "pre.wav")
    assert second.similarity > first.similarity + 0.2  # the preview is OTHER's voice
