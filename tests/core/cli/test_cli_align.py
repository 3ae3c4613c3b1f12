"""chattts-studio-cli align on real speech: a table, JSON, subtitle files written whole; every
mistake one sentence on stderr and exit 2, never a traceback."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import run_cli

from chattts_studio.core.devtools.alignacc import espeak

TEXT = "The weather is very nice today, so we will go to the park."


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Path:
    audio, _ = espeak().say("en-us+f2", TEXT)
    path = tmp_path_factory.mktemp("align") / "said.flac"
    sf.write(path, audio, espeak().rate)
    return path


def test_json_has_every_word_in_order_with_times(
    speech: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "align", str(speech), TEXT, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["language"] == "en" and got["method"] == "pocketsphinx forced alignment"
    words = got["words"]
    assert [w["text"] for w in words][:3] == ["The", "weather", "is"] and len(words) == 13
    starts = [w["start"] for w in words]
    assert starts == sorted(starts) and all(w["end"] > w["start"] for w in words)
    assert words[-1]["end"] <= got["duration"]


def test_subtitle_files_are_written_in_the_format_of_their_name(
    speech: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, head in (("a.vtt", "WEBVTT"), ("a.srt", "1\n00:00:00"), ("a.ass", "[Script Info]")):
        code, _out, err = run_cli(capsys, "align", str(speech), TEXT, "-o", str(tmp_path / name))
        assert code == 0, err
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(head)
    assert "<00:00:0" in (tmp_path / "a.vtt").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ass", "a.srt", "a.vtt"]  # no temps


def test_the_table_marks_estimated_words(
    speech: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "text.txt"
    text.write_text(TEXT.replace("nice", "nice Xyzzyq"), encoding="utf-8")
    code, out, err = run_cli(capsys, "align", str(speech), "--file", str(text))
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows[5][2:] == ["*", "Xyzzyq"]  # not in the dictionary: never measured
    assert "1 of 14 word times are estimated" in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["missing.wav", "hello"], "cannot be read as audio: there is no such file"),
        (["{speech}", "  ...  "], "The text has no words to align"),
        (["{speech}", "I like cats."], "does not say the text"),
        (["{silence}", "hello there"], "The audio is silent"),
        (["{noise}", "hello there my friend, how are you"], "does not say the text"),
        (["{speech}", TEXT, "-o", "{tmp}/out.txt"], "Cannot tell the format"),
        (["{speech}", TEXT, "--json", "--format", "vtt"], "--json or --format"),
        (["{speech}"], "Give the text the audio says"),
        (["{text}", "hello"], "cannot be read as audio"),
    ],
)
def test_mistakes_are_one_sentence_and_exit_2(
    speech: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    said: str,
) -> None:
    silence = tmp_path / "silence.wav"
    sf.write(silence, np.zeros(24_000, np.float32), 24_000)
    noise = tmp_path / "noise.wav"
    sf.write(noise, np.random.default_rng(0).normal(0, 0.1, 72_000).astype(np.float32), 24_000)
    text = tmp_path / "words.txt"
    text.write_text("hello", encoding="utf-8")
    places = {"speech": speech, "silence": silence, "noise": noise, "tmp": tmp_path, "text": text}
    given = [a.format(**places) for a in argv]
    code, out, err = run_cli(capsys, "align", *given)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.txt").exists()


def test_synth_word_timing_writes_every_word_estimated_for_noise(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo weights make noise: the aligner refuses every segment, so each word is there,
    in order, inside its segment, and marked estimated; the sentence-level writer is not used."""
    import webvtt

    out, subs = tmp_path / "a.wav", tmp_path / "a.vtt"
    text = "你好，世界。Hello there, world."
    argv = ["synth", text, "-o", str(out), "--no-refine", "--segment-size", "5", "--seed", "3"]
    code, _out, err = run_cli(capsys, *argv, "--subtitles", str(subs), "--word-timing")
    assert code == 0, err
    written = subs.read_text(encoding="utf-8")
    assert "NOTE 7 of 7 word times are estimated" in written and "7 of 7 word times" in err
    cues = webvtt.from_string(written)
    assert [c.text for c in cues] == ["你好，世界。", "Hello there, world."]
    assert cues[-1].end_in_seconds <= sf.info(str(out)).duration + 1e-3


def test_synth_word_timing_needs_a_word_subtitle_file(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra, said in (
        ([], "--word-timing needs --subtitles"),
        (["--subtitles", str(tmp_path / "a.txt")], "Cannot write word timings as '.txt'"),
    ):
        code, _out, err = run_cli(
            capsys, "synth", "hello", "-o", str(tmp_path / "a.wav"), "--word-timing", *extra
        )
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a.wav").exists()


def test_chinese_through_the_demo_recogniser_says_its_times_are_noise(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real path (SenseVoice through sherpa-onnx, its token times) with random weights:
    every character is there in order, the method names the demo, and the note says so."""
    audio, _ = espeak().say("cmn", "今天天气很好。")
    said = tmp_path / "zh.wav"
    sf.write(said, audio, espeak().rate)
    code, out, err = run_cli(capsys, "align", str(said), "今天天气很好。", "--asr-model", "demo")
    assert code == 0, err
    assert "random weights" in err
    rows = out.splitlines()
    assert rows[0] == "# zh, sensevoice-demo token times; * estimated"
    assert [r.split()[-1] for r in rows[1:]] == list("今天天气很好")


def test_without_pocketsphinx_english_is_one_sentence_before_any_work(
    speech: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pocketsphinx", None)  # a plain install: no asr extra
    subtitles = ["--subtitles", str(tmp_path / "a.vtt"), "--word-timing"]
    synth = ["synth", "hello", "-o", str(tmp_path / "a.wav"), *subtitles]
    for argv in (["align", str(speech), TEXT], synth):
        code, _out, err = run_cli(capsys, *argv)
        assert code == 2 and "needs PocketSphinx" in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())
