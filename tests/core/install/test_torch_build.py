"""The torch build chooser on recorded nvidia-smi outputs (nvidia_smi/), through the command
users run (`doctor --torch-build`), and the Engine tab's sentence for a CPU-only PyTorch."""

import codecs
import itertools
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from chattts_studio.core.cli.main import main as cli
from chattts_studio.core.install import torch_build
from chattts_studio.core.install.torch_build import Gpu, choose, parse_smi

RECORDED = Path(__file__).parent / "nvidia_smi"
ROOT = Path(__file__).resolve().parents[3]

# (recorded output, platform, build, words the reason must hold)
CASES = [
    ("rtx4090_r581.txt", "win32", "cu130", ["CUDA 13.0", "581.57", "RTX 4090"]),
    ("rtx4090_r581.txt", "linux", "cu130", ["CUDA 13.0"]),
    ("rtx5090_r596.txt", "win32", "cu132", ["CUDA 13.2"]),
    ("rtx5080_r572.txt", "win32", "cpu", ["572.16 is too old", "580.88"]),
    ("rtx5080_r572.txt", "linux", "cpu", ["580.65.06"]),
    ("rtx3060_r551.txt", "win32", "cu126", ["CUDA 12.6", "551.86"]),
    ("gtx1080ti_r581.txt", "win32", "cu126", ["dropped compute 6.1", "CUDA 12.6"]),
    ("v100_r580.txt", "linux", "cu126", ["dropped compute 7.0"]),
    ("gtx750ti_r528.txt", "win32", "cu126", ["GTX 750 Ti"]),
    ("k80_r470.txt", "linux", "cpu", ["no CUDA build for the Tesla K80", "3.7"]),
    ("rtx2080ti_r516.txt", "win32", "cpu", ["update the driver to 528.33"]),
    ("rtx2080ti_r516.txt", "linux", "cpu", ["update the driver to 525.60.13"]),
    ("2xh100_r580.txt", "linux", "cu130", ["H100"]),
    (
        "rtx4090_gtx1080_r581.txt",
        "win32",
        "cu130",
        ["RTX 4090 (compute 8.9)", "leaves out the NVIDIA GeForce GTX 1080 (compute 6.1)"],
    ),
    ("old_smi_no_compute_cap.txt", "win32", "cpu", ["could not be read"]),
    ("cap_not_available.txt", "linux", "cpu", ["could not be read", "compute capability"]),
    ("nvml_mismatch.txt", "win32", "cpu", ["could not be read", "NVML"]),
    ("rtx4090_r581.txt", "darwin", "default", ["MPS"]),
    # Several cards: the newest build for the most capable card, the others named if left out.
    (
        "rtx5090_gtx1080_r581.txt",
        "win32",
        "cu130",
        [
            "CUDA 13.0",
            "RTX 5090 (compute 12.0)",
            "the most capable card, the NVIDIA GeForce RTX 5090, decides",
            "leaves out the NVIDIA GeForce GTX 1080 (compute 6.1), which only CUDA 12.6 has",
        ],
    ),
    ("gtx1080_rtx5090_r581.txt", "linux", "cu130", ["leaves out the NVIDIA GeForce GTX 1080"]),
    (
        "gtx1080_rtx5080_r572.txt",
        "win32",
        "cu126",
        [
            "GTX 1080 (compute 6.1)",
            "leaves out the NVIDIA GeForce RTX 5080 (compute 12.0), whose "
            "builds need driver 580.88 or newer (this is 572.16)",
        ],
    ),
    (
        "rtx5080_gtx1080_r516.txt",
        "linux",
        "cpu",
        [
            "516.94 is too old",
            "RTX 5080 (compute 12.0) and NVIDIA GeForce GTX 1080",
            "update the driver to 580.65.06",
        ],
    ),
    (
        "k80_rtx4090_r581.txt",
        "win32",
        "cu130",
        ["RTX 4090", "leaves out the Tesla K80 (compute 3.7), which no PyTorch 2.14.1 CUDA build"],
    ),
    ("rtx3060_r575.txt", "linux", "cu126", ["driver 575.64.03 supports"]),
    ("rtx4090_r581_powershell.txt", "win32", "cu130", ["for the NVIDIA GeForce RTX 4090 (c"]),
    ("rtx4090_r581_utf8_bom.txt", "win32", "cu130", ["for the NVIDIA GeForce RTX 4090 (c"]),
    ("no_devices.txt", "linux", "cpu", ["No NVIDIA GPU was found"]),
]


@pytest.mark.parametrize(("recorded", "platform", "build", "words"), CASES)
def test_the_table_of_cases(recorded: str, platform: str, build: str, words: list[str]) -> None:
    choice = torch_build.choose_here(platform, "python", True, RECORDED / recorded)
    assert choice.build == build, choice.reason
    for word in words:
        assert word in choice.reason
    assert choice.reason.endswith(".") and "\n" not in choice.reason
    assert "\ufeff" not in choice.reason and all("\ufeff" not in g.name for g in choice.gpus)
    # "too old" only when no build serves any card, or for a card left out.
    assert "too old" not in choice.reason or build == "cpu" or choice.left_out
    if build in ("cu132", "cu130", "cu126", "cpu"):
        assert f"torch==2.14.1+{build}" in choice.command
        assert f"https://download.pytorch.org/whl/{build}" in choice.command
    else:
        assert "download.pytorch.org" not in choice.command and "torch==2.14.1" in choice.command


def test_kernels_run_on_later_minors_of_their_major_and_newer_majors_through_ptx() -> None:
    cu130, cu126 = torch_build.BUILDS[1], torch_build.BUILDS[2]
    assert torch_build.runs_on(cu130, (8, 9), "win32")  # Ada on Ampere's 8.6 kernels
    assert torch_build.runs_on(cu130, (12, 1), "win32")  # 12.0 kernels
    assert not torch_build.runs_on(cu130, (6, 1), "linux")  # Pascal: dropped
    assert torch_build.runs_on(cu126, (6, 1), "win32") and torch_build.runs_on(
        cu126, (5, 2), "linux"
    )
    assert not torch_build.runs_on(cu126, (12, 0), "linux")  # Blackwell: not in 12.6
    # A card newer than every kernel: Linux compiles the PTX; Windows builds carry none.
    future = [Gpu("Future GPU", (13, 0), (600, 1))]
    assert choose(future, "linux").build == "cu132"
    assert choose(future, "win32").build == "cpu"


def test_no_gpu_and_the_commands_for_pip_and_uv_environments() -> None:
    assert choose([], "win32").build == "cpu"
    assert "No NVIDIA GPU" in choose([], "linux").reason
    spaced = r"C:\Users\Ann Lee\ChatTTS Studio\.venv\Scripts\python.exe"
    gpu = parse_smi("NVIDIA GeForce RTX 4090, 8.9, 581.57")
    with_pip = choose(gpu, "win32", spaced, has_pip=True).command
    assert with_pip.startswith(f'"{spaced}" -m pip install torch==2.14.1+cu130')
    with_uv = choose(gpu, "linux", "/home/a b/.venv/bin/python", has_pip=False).command
    assert with_uv.startswith("uv pip install --python '/home/a b/.venv/bin/python' ")


def test_the_smi_parser_keeps_commas_in_names_and_refuses_garbage() -> None:
    (gpu,) = parse_smi("name, compute_cap, driver_version\nNVIDIA A100-SXM4-80GB, 8.0, 580.95.05\n")
    assert gpu == Gpu("NVIDIA A100-SXM4-80GB", (8, 0), (580, 95, 5))
    (odd,) = parse_smi("Quadro RTX 6000, passive, 7.5, 581.15")
    assert odd.name == "Quadro RTX 6000, passive" and odd.compute_cap == (7, 5)
    assert parse_smi("No devices were found\n") == []  # a driver without a card
    for bad in ("No devices found", "RTX, 8.9, [N/A]", "RTX, eight, 581.1"):
        with pytest.raises(torch_build.SmiError):
            parse_smi(bad)


def test_doctor_prints_the_choice_as_json_and_as_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    recorded = str(RECORDED / "gtx1080ti_r581.txt")
    args = ["doctor", "--torch-build", "--platform", "win32", "--nvidia-smi-output", recorded]
    assert cli([*args, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert set(said) == {"build", "reason", "command"} and said["build"] == "cu126"
    assert cli(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "build: cu126" and lines[1].startswith("reason: Newer builds dropped")
    assert lines[2].startswith("command: ") and "+cu126" in lines[2]


def test_doctor_refuses_a_missing_file_and_options_without_torch_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nothing.txt"
    assert cli(["doctor", "--torch-build", "--nvidia-smi-output", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a file" in err and "Traceback" not in err
    assert cli(["doctor", "--json"]) == 2
    assert "go with --torch-build" in capsys.readouterr().err


def _fake_smi(folder: Path, body: str) -> None:
    """An nvidia-smi on PATH: a script that prints what a real one would, or fails."""
    script = folder / "nvidia-smi"
    script.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "print('NVIDIA GeForce RTX 3060, 8.6, 566.36')",
            ["CPU-only build, but this computer has an NVIDIA GPU", "+cu126", "pip install"],
        ),
        ("print('Tesla K80, 3.7, 470.256.02')", ["no CUDA build for the Tesla K80"]),
        (
            "print(\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
            'driver."); sys.exit(9)',
            ["could not be read", "couldn't communicate"],
        ),
        ("", ["no NVIDIA GPU was found"]),
    ],
)
def test_a_cpu_only_torch_says_what_to_install_from_the_real_nvidia_smi(
    body: str, expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chattts_studio.core.engine import devices

    _fake_smi(tmp_path, body)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(devices.torch.version, "cuda", None)
    devices.cpu_build_status.cache_clear()
    try:
        said = devices.cuda_status()
        for words in expected:
            assert words in said
        assert "\n" not in said
        # A Mac gets no CUDA advice at all.
        assert "Install" not in devices.cpu_build_status("darwin")
    finally:
        devices.cpu_build_status.cache_clear()


def test_the_cli_prints_utf8_where_the_locale_would_refuse_chinese(tmp_path: Path) -> None:
    import subprocess

    recorded = tmp_path / "smi.txt"
    recorded.write_text("英伟达 GeForce RTX 4090, 8.9, 581.57\n", encoding="utf-8")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "chattts_studio.core.cli.main", "doctor", "--torch-build"),
            *("--nvidia-smi-output", str(recorded)),
        ],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},  # Windows' redirected output
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert "英伟达 GeForce RTX 4090" in done.stdout.decode("utf-8")


def _several_cards() -> list[str]:
    """The recorded outputs with two cards or more."""
    found = []
    for path in sorted(RECORDED.glob("*.txt")):
        try:
            if len(parse_smi(torch_build.read_smi_file(path))) > 1:
                found.append(path.name)
        except (torch_build.SmiError, torch_build.SmiFileError):
            continue
    return found


@pytest.mark.parametrize("recorded", _several_cards())
def test_the_order_nvidia_smi_lists_the_cards_in_makes_no_difference(recorded: str) -> None:
    text = torch_build.read_smi_file(RECORDED / recorded)
    gpus = parse_smi(text)
    for platform in ("win32", "linux"):
        first = choose(gpus, platform)
        for order in itertools.permutations(gpus):
            assert choose(list(order), platform) == first


def test_several_cards_never_give_a_false_driver_too_old() -> None:
    """With driver 581.57 some build serves each of these cards: whatever the pair, the choice
    is a CUDA build, and a card it leaves out is named with the build that would serve it."""
    cards = {
        "RTX 5090": "12.0",
        "RTX 4090": "8.9",
        "RTX 3060": "8.6",
        "GTX 1080": "6.1",
        "Titan V": "7.0",
        "H100": "9.0",
        "B200": "10.0",
    }
    for (a, cap_a), (b, cap_b) in itertools.permutations(cards.items(), 2):
        gpus = parse_smi(f"{a}, {cap_a}, 581.57\n{b}, {cap_b}, 581.57\n")
        for platform in ("win32", "linux"):
            choice = choose(gpus, platform)
            assert choice.build in ("cu130", "cu126"), (a, b, choice.reason)
            assert "too old" not in choice.reason
            for left in choice.left_out:
                assert f"leaves out the {left.name} " in choice.reason
            most = max(gpus, key=lambda g: g.compute_cap)
            assert most not in choice.left_out  # the most capable card is always served


def test_driver_versions_are_printed_as_nvidia_smi_printed_them() -> None:
    (gpu,) = parse_smi("NVIDIA GeForce RTX 3060, 8.6, 575.64.03")
    assert gpu.driver == (575, 64, 3) and gpu.driver_shown == "575.64.03"
    old = choose(parse_smi("NVIDIA GeForce RTX 2080 Ti, 7.5, 516.01.05"), "linux")
    assert "driver 516.01.05 is too old" in old.reason


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"NVIDIA GeForce RTX 4090, 8.9, 581.57\n", "utf-8"),
        ("\ufeffNVIDIA GeForce RTX 4090, 8.9, 581.57\r\n".encode(), "utf-8 with a BOM"),
        ("NVIDIA GeForce RTX 4090, 8.9, 581.57\r\n".encode("utf-16"), "utf-16 with a BOM"),
        (codecs.BOM_UTF16_BE + "NVIDIA GeForce RTX 4090, 8.9, 581.57\n".encode("utf-16-be"), "BE"),
        ("NVIDIA GeForce RTX 4090, 8.9, 581.57\n".encode("utf-16-le"), "utf-16 without a BOM"),
        ("英伟达 GeForce RTX 4090, 8.9, 581.57\n".encode("utf-16"), "non-ASCII in utf-16"),
    ],
)
def test_saved_outputs_in_utf8_and_utf16_read_alike(tmp_path: Path, data: bytes, name: str) -> None:
    saved = tmp_path / "smi.txt"
    saved.write_bytes(data)
    choice = torch_build.choose_here("win32", "python", True, saved)
    assert choice.build == "cu130", name
    (gpu,) = choice.gpus
    assert gpu.name.endswith("GeForce RTX 4090") and not gpu.name.startswith("\ufeff")
    assert gpu.driver_shown == "581.57"


BAD_FILES = [
    ("missing", None, "does not exist"),
    ("empty", b"", "is empty"),
    ("blank", b"\r\n  \n", "is empty"),
    ("binary", bytes(range(256)) * 4, "is not text"),
    ("recorded binary", (RECORDED / "garbage.txt").read_bytes(), "is not text"),
    ("latin-1", "GeForce \xe9, 8.9, 581.57".encode("latin-1"), "is not text"),
    ("a folder", "folder", "is a folder"),
]


@pytest.mark.parametrize(("case", "data", "words"), BAD_FILES)
def test_a_bad_saved_output_is_one_sentence_and_exit_2_everywhere(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    data: bytes | str | None,
    words: str,
) -> None:
    saved = tmp_path / "smi.txt"
    if data == "folder":
        saved.mkdir()
    elif isinstance(data, bytes):
        saved.write_bytes(data)
    with pytest.raises(torch_build.SmiFileError) as raised:
        torch_build.choose_here("win32", "python", True, saved)
    assert words in str(raised.value) and "\n" not in str(raised.value)

    # doctor (through its own check or the error class), the installer through bootstrap.py
    # and the Makefile's step: one line on stderr, exit 2, no traceback.
    assert cli(["doctor", "--torch-build", "--nvidia-smi-output", str(saved)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    for argv in (
        [str(ROOT / "core" / "install" / "bootstrap.py"), "--dry-run"],
        ["-m", "chattts_studio.core.install.ensure_torch", "--python", sys.executable],
    ):
        done = subprocess.run(
            [sys.executable, *argv, "--nvidia-smi-output", str(saved)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "PyTorch build" not in done.stdout
