"""The torch build chooser on recorded nvidia-smi outputs (nvidia_smi/), through the command
users run (`doctor --torch-build`), and the Engine tab's sentence for a CPU-only PyTorch."""

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from chattts_studio.core.cli.main import main as cli
from chattts_studio.core.install import torch_build
from chattts_studio.core.install.torch_build import Gpu, choose, parse_smi

RECORDED = Path(__file__).parent / "nvidia_smi"

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
    ("rtx4090_gtx1080_r581.txt", "win32", "cu126", ["GTX 1080", "RTX 4090"]),
    ("old_smi_no_compute_cap.txt", "win32", "cpu", ["could not be read"]),
    ("cap_not_available.txt", "linux", "cpu", ["could not be read", "compute capability"]),
    ("garbage.txt", "win32", "cpu", ["could not be read"]),
    ("rtx4090_r581.txt", "darwin", "default", ["MPS"]),
]


@pytest.mark.parametrize(("recorded", "platform", "build", "words"), CASES)
def test_the_table_of_cases(recorded: str, platform: str, build: str, words: list[str]) -> None:
    choice = torch_build.choose_here(platform, "python", True, RECORDED / recorded)
    assert choice.build == build, choice.reason
    for word in words:
        assert word in choice.reason
    assert choice.reason.endswith(".") and "\n" not in choice.reason
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
    for bad in ("No devices were found", "RTX, 8.9, [N/A]", "RTX, eight, 581.1"):
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
