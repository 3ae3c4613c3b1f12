"""Dialogue scripts: the format, unknown speakers, and one continuous batch in which rows of
different speakers decode side by side, each segment in its own line's voice."""

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.cli.main import main
from chattts_studio.core.text.dialogue import ScriptError, parse_script, voices_for
from chattts_studio.core.voices.voice import Voice

SCRIPT = """# a walk in the park
Alice: 今天天气很好。
Bob: Yes, it is a fine day.

Carol：我们去公园吧，
    好不好？
Alice: 好啊。
"""


def test_the_script_format() -> None:
    turns = parse_script(SCRIPT)
    assert [(t.line, t.name, t.text) for t in turns] == [
        (2, "Alice", "今天天气很好。"),
        (3, "Bob", "Yes, it is a fine day."),
        (5, "Carol", "我们去公园吧， 好不好？"),  # full-width colon; an indented continuation
        (7, "Alice", "好啊。"),
    ]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("Alice: hi\njust text\n", "Line 2 does not start with a speaker's name"),
        ("  hi there\nAlice: hi\n", "Line 1 is indented"),
        ("# only a comment\n\n", "no lines to speak"),
    ],
)
def test_malformed_scripts_name_the_line(script: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_script(script)


def test_an_unknown_speaker_is_an_error_with_its_line_number() -> None:
    turns = parse_script("Alice: hi\n# note\nBobb: hello\n")
    with pytest.raises(ScriptError, match=r"Line 3: there is no speaker named 'Bobb'.*Alice"):
        voices_for(turns, {"Alice": Voice(embedding="x" * 20)})


@pytest.fixture
def three_voices(engine) -> dict[str, Voice]:  # type: ignore[no-untyped-def]
    from chattts_studio.core.voices.clone import check_clip

    rng = np.random.default_rng(5)
    clip = (rng.standard_normal(4 * 24000) * 0.2).astype(np.float32)
    return {
        "Alice": Voice(embedding=engine.sample_speaker(1)),
        "Bob": Voice(embedding=engine.sample_speaker(2)),
        "Carol": engine.clone_voice(check_clip(clip, 24000), "我是卡罗尔。"),
    }


def test_three_speakers_share_one_continuous_batch_each_in_its_own_voice(
    engine, three_voices: dict[str, Voice], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.engine.script_plan import plan_dialogue

    turns = parse_script(SCRIPT)
    request = SynthesisRequest(
        text="", refine_text=False, segment_size=30, batch_size=3, turn_pause_seconds=0.4
    )
    plan = plan_dialogue(engine, turns, three_voices, request)
    names = [plan.name_at(i) for i in range(len(plan.segments))]
    assert names == ["Alice", "Bob", "Carol", "Alice"]

    # One continuous batch: one decode run (the engine may reuse a pooled decoder, so runs
    # are counted, not constructions).
    from chattts_studio.core.engine.decode.loop import FastDecoder

    decoders: list[object] = []
    real_run = FastDecoder.run

    def counting_run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        decoders.append(self)
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(FastDecoder, "run", counting_run)
    steps: list[list[int]] = []  # the rows (segment keys) of every decode step
    real_add = engine.live.add_steps

    def add_steps(keys):  # type: ignore[no-untyped-def]
        steps.append(list(keys))
        return real_add(keys)

    monkeypatch.setattr(engine.live, "add_steps", add_steps)
    used: dict[str, Voice] = {}  # the model text of each row -> the voice its prompt was made with
    model_cls = type(engine.model)
    real_embed = model_cls.embed
    texts_of: dict[int, str] = {}

    def prompt_spy(self, text, speed, speaker):  # type: ignore[no-untyped-def]
        ids = real_prompt(self, text, speed, speaker)
        texts_of[id(ids[0])] = text
        return ids

    def embed_spy(self, ids, speaker):  # type: ignore[no-untyped-def]
        used[texts_of[id(ids[0])]] = speaker
        return real_embed(self, ids, speaker)

    real_prompt = model_cls.prompt_ids
    monkeypatch.setattr(model_cls, "prompt_ids", prompt_spy)
    monkeypatch.setattr(model_cls, "embed", embed_spy)
    results = list(engine.synthesize(plan))

    assert len(decoders) == 1  # every line of every speaker in one continuous batch
    voice_of = {i: plan.voice_at(i) for i in range(len(plan.segments))}
    mixed = [s for s in steps if len({voice_of[k] for k in s}) >= 2]
    assert any(len({voice_of[k] for k in s}) == 3 for s in steps), "3 speakers never shared a step"
    assert len(mixed) > len(steps) // 2
    # Each segment's prompt was made with its own line's voice (cloned Carol included).
    for i, segment in enumerate(plan.segments):
        assert used[engine.model.normalize(segment.text)] == plan.voice_at(i)
    assert plan.voice_at(2).cloned and plan.voice_at(2) == engine.check_voice(three_voices["Carol"])
    assert [r.speaker for r in results] == names
    # Joined in script order with the turn pause between turns.
    joined = plan.join(results)
    gaps = 3 * round(0.4 * 24000)
    assert len(joined) == sum(len(r.audio) for r in results) + gaps
    start = len(results[0].audio) + round(0.4 * 24000)
    assert np.array_equal(joined[start : start + len(results[1].audio)], results[1].audio)


def test_synth_script_writes_audio_and_subtitles_that_name_the_speakers(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], engine
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    library = SpeakerLibrary()
    library.add("Alice", engine.sample_speaker(1))
    library.add("Bob", engine.sample_speaker(2))
    script = tmp_path / "talk.txt"
    script.write_text("Alice: 你好。\nBob: Hello there.\n", encoding="utf-8")
    out, subs = tmp_path / "talk.wav", tmp_path / "talk.vtt"
    argv = ["synth", "--script", str(script), "-o", str(out), "--subtitles", str(subs)]
    code = main([*argv, "--no-refine", "--turn-pause", "0.5", "--device", "cpu"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "(Alice)" in err and "(Bob)" in err
    vtt = subs.read_text(encoding="utf-8")
    assert "<v Alice>你好。" in vtt and "<v Bob>Hello there." in vtt
    assert sf.info(str(out)).duration > 0.5

    script.write_text("Alice: 你好。\n\nEve: Who am I?\n", encoding="utf-8")
    out.unlink()
    code = main(["synth", "--script", str(script), "-o", str(out), "--no-refine"])
    _, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: Line 3: there is no speaker named 'Eve'")
    assert not out.exists()
