"""Projects: segments with takes made through the real engine (demo weights: noise with the
real shapes, judged by what can be judged exactly: which segments are decoded, bit equality of
a take made again, export against the concatenation, what survives a kill and a second
writer)."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.engine import takes
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.project import codec, edits, reading, store, take_files, writer
from chattts_studio.core.project.model import TakeSettings
from chattts_studio.core.project.store import ProjectError
from chattts_studio.core.services import project as service
from chattts_studio.core.voices.voice import Voice

TEXT = "今天天气很好。我们去公园散步吧！然后回家。"


def _spec(engine: Engine, takes_each: int = 1, seed: int = 5) -> service.NewProject:
    return service.NewProject(
        text=TEXT,
        voice=Voice(embedding=engine.sample_speaker(3)),
        settings=TakeSettings(),
        model="demo",
        segment_size=10,
        pause=0.3,
        takes=takes_each,
        seed=seed,
        engine="torch",
    )


@pytest.fixture
def made(engine: Engine, tmp_path: Path) -> Path:
    """A three-segment project, two takes each."""
    return service.new_project(engine, tmp_path / "book", _spec(engine, 2))


def _decoded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Each make_takes call's model texts (what was decoded)."""
    calls: list[list[str]] = []
    real = takes.make_takes

    def counting(engine, orders, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append([o.model_text for o in orders])
        return real(engine, orders, *args, **kwargs)

    monkeypatch.setattr(takes, "make_takes", counting)
    return calls


def test_a_new_project_has_its_segments_takes_and_files(made: Path) -> None:
    assert made.name == "book.chattts"
    project = store.load(made)
    assert [s.text for s in project.segments] == [
        "今天天气很好。",
        "我们去公园散步吧！",
        "然后回家。",
    ]
    assert [len(s.takes) for s in project.segments] == [2, 2, 2]
    assert all(s.chosen in (1, 2) and not s.picked for s in project.segments)
    assert [s.pause_before for s in project.segments] == [0.0, 0.3, 0.3]
    for segment in project.segments:
        seeds = {t.seed for t in segment.takes}
        assert len(seeds) == 2  # every take its own seed
        for take in segment.takes:
            audio = take_files.take_audio(made, take)
            # The vocoder's centred STFT may end half a step (one hop) short.
            assert take.steps * 512 - 256 <= len(audio) <= take.steps * 512
            assert take.steps == take.cap  # demo weights: held to their cap
            assert take.maker.rows == takes.TAKE_CHUNK_ROWS and take.maker.engine == "torch"
            assert take.maker.random_weights  # the demo model: no cap flag for its takes
            assert take.model_text and take.measures.seconds == pytest.approx(len(audio) / 24000)
    # Saved as it was made: reading it again gives the same project.
    assert codec.to_json(store.load(made)) == codec.to_json(project)


def test_a_reroll_decodes_only_its_segment_and_keeps_the_others(
    engine: Engine, made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = codec.to_json(store.load(made))
    calls = _decoded(monkeypatch)
    numbers = service.reroll(engine, made, "2", takes=1, seed=9)
    assert numbers == [2]
    assert len(calls) == 1 and len(calls[0]) == 1  # one take of one segment, nothing else
    after = codec.to_json(store.load(made))
    assert after["segments"][0] == before["segments"][0]
    assert after["segments"][2] == before["segments"][2]
    second = after["segments"][1]
    assert [t["id"] for t in second["takes"]] == [1, 2, 3]
    assert second["takes"][:2] == before["segments"][1]["takes"]  # earlier takes stay
    assert second["chosen"] == 3  # the new take is the chosen one


def test_a_take_made_again_from_its_record_is_bit_identical(engine: Engine, made: Path) -> None:
    """From a batch of six (products of four rows) and alone (one row): the same samples."""
    service.reroll(engine, made, "3", takes=1, seed=21)
    project = store.load(made)
    batched = project.segments[0].takes[1]
    alone = project.segments[2].takes[-1]
    assert batched.maker.rows == takes.TAKE_CHUNK_ROWS and alone.maker.rows == 1
    for segment, take in ((project.segments[0], batched), (project.segments[2], alone)):
        again = service.remake(engine, project, segment, take)
        assert np.array_equal(again, take_files.take_audio(made, take))


def test_export_is_the_chosen_takes_and_pauses_exactly(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "book.wav"
    srt = tmp_path / "book.srt"
    edits.pick(made, 2, 1)
    reading.export(made, out, srt, float_wav=True)
    project = store.load(made)
    pieces = []
    for n, segment in enumerate(project.segments):
        if n:
            pieces.append(np.zeros(round(segment.pause_before * 24000), np.float32))
        assert segment.chosen_take is not None
        pieces.append(take_files.take_audio(made, segment.chosen_take))
    expected = np.clip(np.concatenate(pieces), -1.0, 1.0)
    written, rate = sf.read(str(out), dtype="float32")
    assert rate == 24000 and np.array_equal(written, expected)
    # What the window plays: from the start it is the export; from segment 2, its tail.
    assert np.array_equal(np.clip(reading.joined(made, project), -1.0, 1.0), expected)
    tail = np.concatenate(pieces[2:])
    assert np.array_equal(reading.joined(made, project, 2), tail)
    assert srt.read_text(encoding="utf-8").count("-->") >= 3
    folder = tmp_path / "parts"
    files = reading.export(made, folder, per_segment=True, float_wav=True)
    assert [f.name for f in files] == ["0001.wav", "0002.wav", "0003.wav"]
    first, _ = sf.read(str(files[1]), dtype="float32")
    assert np.array_equal(first, np.clip(pieces[2], -1.0, 1.0))


def test_picks_locks_and_edits(engine: Engine, made: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    edits.pick(made, 1, 2)
    project = store.load(made)
    assert project.segments[0].chosen == 2 and project.segments[0].picked
    # A re-roll of a hand-picked segment adds a take but keeps the pick.
    service.reroll(engine, made, "1", seed=3)
    project = store.load(made)
    assert len(project.segments[0].takes) == 3 and project.segments[0].chosen == 2
    edits.set_locked(made, "1-2", True)
    before = codec.to_json(store.load(made))
    calls = _decoded(monkeypatch)
    with pytest.raises(ProjectError, match="Segment 2 is locked"):
        service.reroll(engine, made, "2-3")
    with pytest.raises(ProjectError, match="locked"):
        edits.pick(made, 1, 1)
    assert calls == [] and codec.to_json(store.load(made)) == before  # nothing changed
    edits.set_locked(made, "2", False)
    service.edit(engine, made, 2, "我们去河边散步吧！", seed=1)
    project = store.load(made)
    second = project.segments[1]
    assert second.text == "我们去河边散步吧！" and second.chosen == 3
    assert [second.current(t) for t in second.takes] == [False, False, True]  # old ones stale
    rows = reading.listing(project)
    assert [t["stale"] for t in rows[1]["takes"]] == [True, True, False]


def test_unknown_segments_and_bad_lists_are_one_sentence(made: Path) -> None:
    for spec, words in (
        ("4", "no segment 4"),
        ("0", "no segment 0"),
        ("x", "3,7-9"),
        ("3-1", "3-1"),
    ):
        with pytest.raises(Exception, match=words) as caught:
            edits.parse_numbers(spec, 3)
        assert "\n" not in str(caught.value)
    assert edits.parse_numbers("3,1-2,2", 3) == [3, 1, 2]


def test_a_newer_or_damaged_project_is_refused_and_left_as_it_was(made: Path) -> None:
    path = made / store.PROJECT_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    data["format"] = 99
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProjectError, match="newer ChatTTS Studio"):
        store.load(made)
    data["format"] = 1
    data["future_key"] = {"kept": True}
    path.write_text(json.dumps(data), encoding="utf-8")
    edits.set_locked(made, "1", True)  # a change by this version keeps what it does not know
    assert json.loads(path.read_text(encoding="utf-8"))["future_key"] == {"kept": True}
    path.write_text('{"format": 1, "segments": [', encoding="utf-8")
    with pytest.raises(ProjectError, match="is damaged"):
        store.load(made)
    with pytest.raises(ProjectError, match="no project"):
        store.load(made.parent / "elsewhere")
    assert path.read_text(encoding="utf-8") == '{"format": 1, "segments": ['


_SECOND_WRITER = """
import sys
from pathlib import Path
from chattts_studio.core.project import edits
from chattts_studio.core.project.store import ProjectError
try:
    edits.set_locked(Path(sys.argv[1]), "1", True)
except ProjectError as exc:
    print(exc)
    sys.exit(2)
"""


def test_a_second_writer_is_told_in_one_sentence(made: Path) -> None:
    with writer.opened(made):
        done = subprocess.run(
            [sys.executable, "-c", _SECOND_WRITER, str(made)], capture_output=True, text=True
        )
    assert done.returncode == 2, done.stderr
    assert "open in another ChatTTS Studio" in done.stdout
    assert not store.load(made).segments[0].locked
    # Once the first lets go, the second may write.
    done = subprocess.run([sys.executable, "-c", _SECOND_WRITER, str(made)], capture_output=True)
    assert done.returncode == 0 and store.load(made).segments[0].locked


_KILLED_REROLL = """
import sys
from pathlib import Path
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.services import project as service
engine = Engine()
engine.load("demo", "cpu", "fp32", engine="torch")
print("loaded", flush=True)
service.reroll(engine, Path(sys.argv[1]), "1-3", takes=4, seed=2)
"""


def test_a_kill_during_a_reroll_loses_no_take_and_leaves_a_project_that_opens(made: Path) -> None:
    before = store.load(made)
    earlier = {
        (s.id, t.id): take_files.take_audio(made, t) for s in before.segments for t in s.takes
    }
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_REROLL, str(made)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:
        assert child.stdout is not None and child.stdout.readline().startswith(b"loaded")
        # Killed once a first new take is on disk, while the others are being made.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if sum(len(s.takes) for s in store.load(made).segments) > len(earlier):
                break
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    after = store.load(made)  # whole: it opens
    for segment in after.segments:
        for take in segment.takes:
            audio = take_files.take_audio(made, take)  # every take it names is whole
            if (segment.id, take.id) in earlier:
                assert np.array_equal(audio, earlier[(segment.id, take.id)])
    assert {(s.id, t.id) for s in after.segments for t in s.takes} >= set(earlier)
    # What a writer killed mid-write leaves (atomic.py's temp names) goes with the next writer.
    (made / "takes" / ".s00001-t009.abc.part.wav").write_bytes(b"RIFF")
    (made / ".project.xyz.part.json").write_text("{", encoding="utf-8")
    with writer.opened(made):  # the dead writer's lock went with it
        assert not list(made.glob(".*.part*")) and not list(made.glob("takes/.*.part*"))


def test_an_onnx_runtime_take_made_again_is_bit_identical(
    private_home: Path, tmp_path: Path
) -> None:
    """The ONNX Runtime engine (fp32, the CPU's default) makes takes again bit for bit too:
    from a batch of six (chunks of four rows) and alone (one row)."""
    engine = Engine()
    engine.load("demo", "cpu", "fp32", engine="onnx")
    try:
        path = service.new_project(engine, tmp_path / "onnx", _spec(engine, 2))
        service.reroll(engine, path, "3", seed=4)
        project = store.load(path)
        batched, alone = project.segments[1].takes[0], project.segments[2].takes[-1]
        assert batched.maker.engine == alone.maker.engine == "onnx"
        assert (batched.maker.rows, alone.maker.rows) == (takes.TAKE_CHUNK_ROWS, 1)
        for segment, take in ((project.segments[1], batched), (project.segments[2], alone)):
            again = service.remake(engine, project, segment, take)
            assert np.array_equal(again, take_files.take_audio(path, take))
    finally:
        engine.unload()


def test_split_merge_and_another_voice_keep_every_take(engine: Engine, made: Path) -> None:
    before = store.load(made)
    files = {t.audio for s in before.segments for t in s.takes}
    edits.split(made, 2, 5)  # "我们去公园" | "散步吧！"
    project = store.load(made)
    assert [s.text for s in project.segments] == [
        "今天天气很好。", "我们去公园", "散步吧！", "然后回家。"
    ]  # fmt: skip
    second, third = project.segments[1], project.segments[2]
    assert second.id == before.segments[1].id and len(second.takes) == 2
    assert not any(second.current(t) for t in second.takes)  # stale: the text changed
    assert third.takes == [] and third.chosen is None and third.pause_before == 0.3
    with pytest.raises(Exception, match="has 4 characters: keep from 1 to 3"):
        edits.split(made, 3, 4)
    edits.merge(made, 2)
    project = store.load(made)
    assert [s.text for s in project.segments][1] == "我们去公园散步吧！"
    assert [t.id for t in project.segments[1].takes] == [1, 2]
    assert {t.audio for s in project.segments for t in s.takes} == files  # nothing lost
    # Made again, the merged segment has a take that is current; export works again.
    service.reroll(engine, made, "2", seed=1)
    project = store.load(made)
    assert project.segments[1].current(project.segments[1].chosen_take)  # type: ignore[arg-type]
    other = Voice(embedding=engine.sample_speaker(8))
    assert edits.set_voice(made, "1,3", other, "Bob") == [1, 3]
    project = store.load(made)
    assert [s.speaker for s in project.segments] == ["Bob", "", "Bob"]
    assert not any(project.segments[0].current(t) for t in project.segments[0].takes)
    edits.set_locked(made, "3", True)
    with pytest.raises(ProjectError, match="locked"):
        edits.merge(made, 2)
    with pytest.raises(ProjectError, match="locked"):
        edits.set_voice(made, "3", other)


def test_reroll_unlocked_and_the_take_limit(
    engine: Engine, made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edits.set_locked(made, "2", True)
    calls = _decoded(monkeypatch)
    assert service.reroll(engine, made, None, unlocked=True, seed=3) == [1, 3]
    assert len(calls) == 1 and len(calls[0]) == 2  # both in one batch
    for wrong in (0, edits.MAX_TAKES + 1):
        with pytest.raises(Exception, match="from 1 to 16 takes"):
            service.reroll(engine, made, "1", takes=wrong)
    assert len(calls) == 1


def test_out_of_memory_while_making_takes_is_one_sentence_and_keeps_what_was_made(
    engine: Engine, made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No retry at fewer rows (the row count is in every take's record): one sentence, the
    takes already made kept, the project whole."""
    import torch

    from chattts_studio.core.engine.decode.loop import FastDecoder
    from chattts_studio.core.errors import DeviceError

    real = FastDecoder.sample_step
    calls = [0]

    def failing(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 30:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FastDecoder, "sample_step", failing)
    before = codec.to_json(store.load(made))
    with pytest.raises(DeviceError, match="Out of memory making 3 takes at once"):
        service.reroll(engine, made, "1-3", seed=6)
    after = codec.to_json(store.load(made))  # it opens, every earlier take as it was
    for old, new in zip(before["segments"], after["segments"], strict=True):
        assert new["takes"][: len(old["takes"])] == old["takes"]


def test_a_take_whose_project_file_was_not_written_yet_is_read_from_its_record(
    engine: Engine, made: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """project.json is written at most every SAVE_EVERY_S while takes come in: each take's
    record (written whole after its audio) is what keeps it, read back by every load."""
    saves: list[int] = []
    real_save = writer.OpenProject.save

    def counting(self: writer.OpenProject) -> None:
        saves.append(sum(len(s.takes) for s in self.project.segments))
        real_save(self)

    monkeypatch.setattr(writer.OpenProject, "save", counting)
    monkeypatch.setattr(store, "SAVE_EVERY_S", 3600.0)
    service.reroll(engine, made, "1-3", takes=2, seed=8)
    # No save while the six takes came in (too soon): named when the command ends.
    assert saves and all(n == 12 for n in saves)
    project = store.load(made)
    assert [len(s.takes) for s in project.segments] == [4, 4, 4]
    # A take recorded by a writer killed before it wrote project.json again.
    segment = project.segments[1]
    take = segment.takes[0]
    with writer.opened(made) as handle:
        copy = replace(take, id=segment.next_take_id())
        handle.add_take(segment, copy, chosen=True)
    recovered = store.load(made).segments[1]
    assert recovered.takes[-1] == copy and recovered.chosen == copy.id
    with writer.opened(made) as handle:  # the next writer names it in project.json
        handle.save()
    assert (
        json.loads((made / "project.json").read_text(encoding="utf-8"))["segments"][1]["chosen"]
        == copy.id
    )
