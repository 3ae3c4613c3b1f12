"""Every command of chattts-studio-cli, and the user mistakes it must turn into one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import run_cli


def test_synth_writes_audio_and_reports_figures(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hello.flac"
    code, stdout, stderr = run_cli(
        capsys,
        "synth",
        "你好，世界。Hello world.",
        "-o",
        str(out),
        "--no-refine",
        "--segment-size",
        "5",
        "--batch-size",
        "2",
        "--seed",
        "3",
        "--temperature",
        "0.5",
        "--top-p",
        "0.8",
        "--top-k",
        "10",
        "--speaker",
        "42",
        "--precision",
        "fp32",
        "--device",
        "cpu",
    )
    assert code == 0, stderr
    audio, rate = sf.read(str(out))
    assert rate == 24000 and len(audio) > 24000 * 0.5
    assert "RTF" in stdout and "noise, not speech" in stdout
    # One segment a sentence: the English one is not cut between its words.
    assert "segment 2/2" in stderr and "random weights" in stderr


def test_synth_from_file_with_a_library_speaker(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "in.txt"
    text.write_text("第一句。第二句。", encoding="utf-8")
    assert run_cli(capsys, "speakers", "add", "Ann", "--seed", "5")[0] == 0
    out = tmp_path / "o.wav"
    code, _, stderr = run_cli(
        capsys, "synth", "--file", str(text), "-o", str(out), "--speaker", "Ann", "--no-refine"
    )
    assert code == 0, stderr
    assert sf.info(str(out)).subtype == "PCM_16"


def synth_audio(
    capsys: pytest.CaptureFixture[str], out: Path, speaker: str, seed: bool = True
) -> "np.ndarray":
    """What `synth --speaker SPEAKER` writes (the generation seed fixed unless `seed` is
    false: a library speaker, or a blend's first part, then brings its own)."""
    argv = ["synth", "你好。", "-o", str(out), "--speaker", speaker]
    argv += ["--seed", "5"] if seed else []
    code, _, stderr = run_cli(capsys, *argv, "--no-refine", "--device", "cpu", "--float")
    assert code == 0, stderr
    return sf.read(str(out), dtype="float32")[0]


def test_synth_speaks_a_voice_blend(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.voices.speakers import SpeakerLibrary

    assert run_cli(capsys, "speakers", "add", "Ann", "--seed", "5")[0] == 0
    assert run_cli(capsys, "speakers", "add", "Bob", "--seed", "6")[0] == 0
    ann = synth_audio(capsys, tmp_path / "ann.wav", "Ann")
    bob = synth_audio(capsys, tmp_path / "bob.wav", "Bob")
    mixed = synth_audio(capsys, tmp_path / "mix.wav", "Ann*0.5+Bob*0.5")
    assert len(mixed) > 2400
    for alone in (ann, bob):
        assert len(alone) != len(mixed) or not np.array_equal(alone, mixed)
    # A voice blended with itself (and a seed's voice named as a seed) is that voice.
    assert np.array_equal(synth_audio(capsys, tmp_path / "self.wav", "Ann*0.3+Ann(7)"), ann)
    assert np.array_equal(synth_audio(capsys, tmp_path / "s5.wav", "seed:5*1+5*1"), ann)
    # Without --seed a blend samples with its first part's seed, as the API does: Ann's kept
    # seed, so Ann blended with herself is Ann to the bit here too.
    ann_own = synth_audio(capsys, tmp_path / "own.wav", "Ann", seed=False)
    assert np.array_equal(synth_audio(capsys, tmp_path / "o2.wav", "Ann*1+Ann*1", False), ann_own)
    # OpenAI's voice names are blend parts in every front end, as in the API.
    alloy = synth_audio(capsys, tmp_path / "alloy.wav", "1000")
    assert np.array_equal(synth_audio(capsys, tmp_path / "a2.wav", "alloy*0.5+alloy*0.5"), alloy)
    # Kokoro's notation is the same blend.
    assert np.array_equal(synth_audio(capsys, tmp_path / "k.wav", "Ann(1)+Bob(1)"), mixed)
    # A library name holding '+' is that speaker, not a blend.
    ann_embedding = SpeakerLibrary().get("Ann").embedding  # type: ignore[union-attr]
    assert run_cli(capsys, "speakers", "add", "Ann+Bob", "--embedding", ann_embedding)[0] == 0
    assert np.array_equal(synth_audio(capsys, tmp_path / "named.wav", "Ann+Bob"), ann)


@pytest.mark.parametrize(
    ("speaker", "message"),
    [
        ("Ann*0.5+Nobody*0.5", "'Nobody' in the voice blend is not a library speaker"),
        ("Ann*x+seed:3", "The weight of 'Ann*x' in the voice blend is not a number"),
        ("Ann*0+seed:3", "The weight of 'Ann' in the voice blend must be above 0."),
        ("Ann++seed:3", "A voice blend has an empty part"),
    ],
)
def test_a_bad_blend_is_one_sentence(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    speaker: str,
    message: str,
) -> None:
    assert run_cli(capsys, "speakers", "add", "Ann", "--seed", "5")[0] == 0
    code, _, stderr = run_cli(
        capsys, "synth", "hi", "-o", str(tmp_path / "a.wav"), "--speaker", speaker
    )
    assert code == 2
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and message in last
    assert "Traceback" not in stderr
    assert not (tmp_path / "a.wav").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["synth", "", "-o", "{tmp}/a.wav"], "empty"),
        (["synth", "   ", "-o", "{tmp}/a.wav"], "empty"),
        (["synth", "🙂🙂", "-o", "{tmp}/a.wav"], "nothing ChatTTS can speak"),
        (["synth", "hi [boom]", "-o", "{tmp}/a.wav"], "Unknown control token"),
        (["synth", "hi", "-o", "{tmp}"], "is a folder"),
        (["synth", "hi", "-o", "/proc/nope/a.wav"], "does not exist"),
        (["synth", "hi", "-o", "{tmp}/a.xyz"], "use .wav"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--device", "cuda:7"], "cuda:7"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--device", "cpu", "--precision", "fp16"], "fp16"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--segment-size", "0"], "segment size"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--threads", "0"], "thread count"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--speaker", "garbage!"], "not a valid"),
        (["synth", "--file", "{tmp}/missing.txt", "-o", "{tmp}/a.wav"], "Cannot read"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--model", "{tmp}/nomodel"], "does not exist"),
        (["synth", "hi", "-o", "{tmp}/a.wav", "--model", "nomodel"], "Unknown model"),
        (["model", "verify", "official"], "is incomplete"),
        (["model", "download"], "Could not download"),
        (["speakers", "remove", "nobody"], "no speaker named"),
        (["speakers", "import", "{tmp}/missing.json"], "Cannot read"),
    ],
)
def test_user_mistakes_give_one_line_and_exit_2(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, _, stderr = run_cli(capsys, *argv)
    assert code == 2
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and message in last
    assert "Traceback" not in stderr
    assert not (tmp_path / "a.wav").exists()


def test_devices_and_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    from chattts_studio.core.engine.devices import default_device

    code, out, _ = run_cli(capsys, "devices")
    assert code == 0 and f"* {default_device().id}" in out and "CUDA" in out
    assert "cpu - " in out  # the CPU is always listed
    assert "precisions: fp32, bf16, int8" in out  # the CPU's, on any machine
    code, out, _ = run_cli(capsys, "doctor")
    assert code == 0
    for needle in (
        "torch 2.14.1",
        "chattts 0.2.5",
        "fp16: fp16 is not supported on the CPU",
        "data folder",
        "audio output: ok",
    ):
        assert needle in out


def test_model_status_verify_and_build(
    private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "model", "status")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line[0].isspace()}
    assert "verified" in lines["demo"] and "absent" in lines["official"]
    assert "absent" in lines["sensevoice"]  # the speech recognition check's model
    assert "noise, not speech" in out
    code, _, err = run_cli(capsys, "model", "verify-asr")
    assert code == 2 and "not downloaded yet" in err and err.count("\n") == 1
    code, out, _ = run_cli(capsys, "model", "verify", "demo")
    assert code == 0 and "matches" in out
    folder = private_home / "models" / "demo"
    (folder / "asset" / "DVAE.safetensors").write_bytes(b"broken")
    code, _, err = run_cli(capsys, "model", "verify", "demo")
    assert code == 2 and "DVAE.safetensors does not match" in err
    code, out, _ = run_cli(capsys, "model", "build-demo", "demo")
    assert code == 0 and "built demo" in out
    assert run_cli(capsys, "model", "verify", "demo")[0] == 0


def test_speakers_commands(
    private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, sample, _ = run_cli(capsys, "speakers", "sample", "--seed", "9")
    assert code == 0 and len(sample.strip()) > 16
    assert run_cli(capsys, "speakers", "sample", "--seed", "9")[1] == sample
    assert (
        run_cli(capsys, "speakers", "add", "Bo", "--embedding", sample.strip(), "--note", "n")[0]
        == 0
    )
    assert run_cli(capsys, "speakers", "add", "Cy", "--seed", "8")[0] == 0  # another voice
    code, out, _ = run_cli(capsys, "speakers", "list")
    assert code == 0 and out.splitlines()[0].startswith("Bo\tno seed")
    assert out.splitlines()[1].startswith("Cy\tseed 8")
    assert run_cli(capsys, "speakers", "rename", "Bo", "Bea")[0] == 0
    export = tmp_path / "s.json"
    assert run_cli(capsys, "speakers", "export", str(export))[0] == 0
    assert [s["name"] for s in json.loads(export.read_text())["speakers"]] == ["Bea", "Cy"]
    assert run_cli(capsys, "speakers", "remove", "Cy")[0] == 0
    code, out, _ = run_cli(capsys, "speakers", "import", str(export))
    assert code == 0 and "1 added, 1 skipped (already in the library), 0 renamed" in out
    assert "added: Cy" in out and "skipped, voice already in the library: Bea" in out
    bea = json.loads((private_home / "speakers.json").read_text())["speakers"][0]
    assert bea["embedding"] == sample.strip()


def test_installed_entry_point_writes_a_wav(private_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli.wav"
    exe = Path(sys.executable).with_name("chattts-studio-cli")
    # int8 and the stock decoder, in a process of its own (the thread count is global).
    argv = ["synth", "你好。", "-o", str(out), "--no-refine", "--device", "cpu"]
    argv += ["--precision", "int8"]
    argv += ["--threads", "1", "--decoder", "stock"]
    proc = subprocess.run(
        [str(exe), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    assert sf.info(str(out)).duration > 0.3
    assert proc.stdout.startswith(f"wrote {out}")
    assert "int8" in proc.stderr
