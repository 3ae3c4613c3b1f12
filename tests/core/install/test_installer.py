"""The installers' logic (core/install): which machines they refuse, the uv commands, the lock
each torch build installs under, the launcher files; and install.sh handing over to it through
the real uv (the PowerShell script cannot run here: it is the same three steps)."""

import errno
import os
import plistlib
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from chattts_studio.core.install import plan, support

ROOT = Path(__file__).resolve().parents[3]
REQUIRES = ">=3.11,<3.15"


@pytest.mark.parametrize(
    ("platform", "machine", "mac", "python", "words"),
    [
        ("darwin", "x86_64", "14.5", (3, 13), "Intel processor"),
        ("darwin", "arm64", "13.6.1", (3, 13), "needs macOS 14 or later"),
        ("win32", "ARM64", "", (3, 13), "Windows on ARM64"),
        ("linux", "aarch64", "", (3, 13), "x86-64 only"),
        ("freebsd14", "amd64", "", (3, 13), "not supported"),
        ("win32", "AMD64", "", (3, 10), "outside the supported range 3.11 to 3.14"),
        ("linux", "x86_64", "", (3, 15), "outside the supported range"),
    ],
)
def test_an_unsupported_machine_gets_one_sentence_naming_what_is_supported(
    platform: str, machine: str, mac: str, python: tuple[int, int], words: str
) -> None:
    said = support.unsupported(platform, machine, mac, python, REQUIRES)
    assert said is not None and words in said and "\n" not in said


@pytest.mark.parametrize(
    ("platform", "machine", "mac"),
    [
        ("win32", "AMD64", ""),
        ("darwin", "arm64", "14.0"),
        ("darwin", "arm64", "26.1"),
        ("linux", "x86_64", ""),
    ],
)
def test_the_supported_machines_pass(platform: str, machine: str, mac: str) -> None:
    assert support.unsupported(platform, machine, mac, (3, 11), REQUIRES) is None
    assert support.unsupported(platform, machine, mac, (3, 14), REQUIRES) is None


def test_the_range_is_read_from_pyproject() -> None:
    import tomllib

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    low, high = support.python_range(requires)
    assert low == (3, 11) and high > (3, 13)


def test_a_cuda_build_other_than_the_locks_goes_first_and_drops_the_runtime_pins() -> None:
    layout = plan.Layout(Path("/src/studio"), "win32")
    steps = plan.commands(layout, "cu130", "/py/python3.13")
    assert steps[0][:2] == ["uv", "venv"] and steps[0][-1] == str(layout.venv)
    assert "torch==2.14.1+cu130" in steps[1]
    assert steps[1][-2:] == ["--default-index", "https://download.pytorch.org/whl/cu130"]
    assert steps[2][-3:] == ["-c", str(layout.build_lock), "/src/studio[onnx]"]
    assert str(layout.python).endswith(os.path.join("Scripts", "python.exe"))
    # Windows' CPU build is PyPI's own: no second index, nothing installed twice.
    assert len(plan.commands(layout, "cpu", "py")) == 2
    linux = plan.Layout(Path("/src"), "linux")
    assert [s[1] for s in plan.commands(linux, "cu130", "py")][:2] == ["venv", "pip"]
    assert plan.commands(linux, "cu130", "py")[-1][-1] == "--install-desktop-entry"
    assert "torch==2.14.1+cu126" in plan.commands(linux, "cu126", "py")[1]

    lock = (
        "# header\nnumpy==2.3.1\nnvidia-cublas==13.1.1.3 ; sys_platform == 'linux'\n"
        "cuda-toolkit==13.0.3.0\ntorch==2.14.1\n"
    )
    assert plan.lock_for(lock, "cu130", "linux") == lock
    other = plan.lock_for(lock, "cu126", "linux")
    assert "nvidia" not in other and "cuda-toolkit" not in other
    assert "torch==2.14.1" in other and "numpy==2.3.1" in other


def test_the_real_lock_keeps_torch_pinned_for_every_build() -> None:
    lock = (ROOT / "constraints.txt").read_text()
    for platform, build in (("linux", "cu126"), ("linux", "cpu"), ("win32", "cu132")):
        kept = plan.lock_for(lock, build, platform)
        assert any(line.startswith("torch==2.14.1") for line in kept.splitlines())
        assert not any(line.startswith(("nvidia-", "cuda-")) for line in kept.splitlines())


def test_the_launcher_icons_and_the_mac_app(tmp_path: Path) -> None:
    png = (ROOT / "resources" / "icon.png").read_bytes()
    ico = plan.png_to_ico(png)
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    size, offset = struct.unpack("<II", ico[14:22])
    assert (reserved, kind, count) == (0, 1, 1) and ico[offset : offset + size] == png
    icns = plan.png_to_icns(png)
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert icns[8:12] == b"ic08" and icns[16:] == png

    layout = plan.Layout(Path("/Users/ann/ChatTTS Studio"), "darwin")
    files = plan.mac_bundle(layout, tmp_path, icns)
    app = tmp_path / "ChatTTS Studio.app" / "Contents"
    launcher, mode = files[app / "MacOS" / "ChatTTS Studio"]
    assert mode == 0o755 and f"exec '{layout.app}' \"$@\"".encode() in launcher
    info = plistlib.loads(files[app / "Info.plist"][0])
    assert (
        info["CFBundleExecutable"] == "ChatTTS Studio" and info["LSMinimumSystemVersion"] == "14.0"
    )

    win = plan.Layout(Path(r"C:\Users\O'Neil\studio"), "win32")
    shortcut = plan.windows_shortcut(win, Path(r"C:\Start Menu"), Path(r"C:\icon.ico"))
    assert shortcut.link.name == "ChatTTS Studio.lnk"
    assert "IconLocation" in shortcut.script and shortcut.script.endswith("$s.Save()")
    assert shortcut.env["CHATTTS_STUDIO_TARGET"] == str(win.app)
    assert any("delete the folder" in s for s in plan.uninstall_steps(win, shortcut.link))


def test_the_windows_scripts_keep_crlf_and_hand_over_to_the_bootstrap() -> None:
    folder = ROOT / "resources" / "install"
    for name in ("install.ps1", "install.cmd", "chattts-studio.cmd"):
        data = (folder / name).read_bytes()
        assert data.count(b"\r\n") == data.count(b"\n") > 0, name
    assert b"core\\install\\bootstrap.py" in (folder / "install.ps1").read_bytes()
    assert b"install.ps1" in (folder / "install.cmd").read_bytes()


def test_install_sh_hands_over_to_the_python_logic_through_uv(tmp_path: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    assert uv, "uv is a dev dependency: make install puts it in .venv"
    smi = Path(__file__).parent / "nvidia_smi" / "gtx1080ti_r581.txt"
    env = {
        **os.environ,
        "PATH": f"{Path(uv).parent}{os.pathsep}{os.environ['PATH']}",
        "CHATTTS_STUDIO_PYTHON": sys.executable,  # no download: this Python
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
    }
    script = ROOT / "resources" / "install" / "install.sh"
    done = subprocess.run(
        ["sh", str(script), "--dry-run", "--nvidia-smi-output", str(smi)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith("The environment")]
    assert lines[0].startswith("PyTorch build: cu126. Newer builds dropped compute 6.1")
    assert "venv --allow-existing" in lines[1]
    assert "torch==2.14.1+cu126" in lines[2] and lines[3].endswith("[onnx]'")
    assert not (tmp_path / ".venv").exists()


def test_the_installer_refuses_an_unsupported_python_in_one_line(tmp_path: Path) -> None:
    fake_root = tmp_path / "src"
    fake_root.mkdir()
    (fake_root / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.5,<3.6"\n')
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "core" / "install" / "bootstrap.py"),
            "--root",
            str(fake_root),
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "outside the supported range 3.5 to 3.5" in done.stderr


def _standin_root(tmp_path: Path) -> Path:
    """A checkout's files the installer reads before it installs anything."""
    src = tmp_path / "checkout"
    src.mkdir()
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, src)
    return src


def _installer(src: Path, smi: str) -> list[str]:
    recorded = Path(__file__).parent / "nvidia_smi" / smi
    bootstrap = ROOT / "core" / "install" / "bootstrap.py"
    return [
        sys.executable,
        str(bootstrap),
        "--root",
        str(src),
        "--nvidia-smi-output",
        str(recorded),
    ]


def test_pytorchs_index_out_of_reach_is_one_sentence_before_anything_is_made(
    tmp_path: Path,
) -> None:
    """Only the package index reachable: the dry run plans as ever and says the index is out
    of reach; the install stops with one sentence and exit 2 before it makes the environment."""
    src = _standin_root(tmp_path)
    env = {**os.environ, "CHATTTS_STUDIO_TORCH_INDEX": "http://127.0.0.1:9/whl/{build}"}
    argv = _installer(src, "rtx3060_r551.txt")
    planned = subprocess.run(
        [*argv, "--dry-run"], capture_output=True, text=True, env=env, timeout=60
    )
    assert planned.returncode == 0, planned.stderr
    assert "torch==2.14.1+cu126" in planned.stdout
    assert planned.stderr.startswith("PyTorch's index http://127.0.0.1:9/whl/cu126 cannot be")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("PyTorch's index http://127.0.0.1:9/whl/cu126 cannot be reached")
    assert "nothing was installed" in done.stderr
    assert not (src / ".venv").exists() and "> " not in done.stdout


def test_linux_without_a_gpu_takes_pypis_build_when_pytorchs_index_is_out_of_reach(
    tmp_path: Path,
) -> None:
    """No NVIDIA GPU and only PyPI reachable: PyPI's Linux build (CUDA 13.0) runs on the CPU
    too, so the plan takes it instead of failing on PyTorch's CPU index."""
    src = _standin_root(tmp_path)
    env = {**os.environ, "CHATTTS_STUDIO_TORCH_INDEX": "http://127.0.0.1:9/whl/{build}"}
    argv = _installer(src, "no_devices.txt")
    planned = subprocess.run(
        [*argv, "--dry-run"], capture_output=True, text=True, env=env, timeout=60
    )
    assert planned.returncode == 0, planned.stderr
    assert "PyTorch build: cpu." in planned.stdout
    assert "so PyPI's build (cu130, which runs on the CPU too" in planned.stdout
    assert "127.0.0.1:9" not in planned.stdout and "+cpu" not in planned.stdout
    assert planned.stderr == ""


def test_a_read_only_install_folder_is_one_sentence_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _standin_root(tmp_path)
    argv = _installer(src, "rtx4090_r581.txt")
    if os.geteuid() != 0:
        src.chmod(0o555)
        command = argv
    else:  # root writes through modes: a read-only bind mount in a mount namespace of its own
        mount = f"mount --bind {shlex.quote(str(src))} {shlex.quote(str(src))}"
        remount = f"mount -o remount,ro,bind {shlex.quote(str(src))}"
        command = ["unshare", "-m", "sh", "-c", f'{mount} && {remount} && exec "$@"', "sh", *argv]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:  # no unshare: the same folder, read-only as the OS would say
        done = None
    finally:
        src.chmod(0o755)
    if done is None or (done.returncode != 2 and "Traceback" not in done.stderr):
        # Where no mount namespace can be made, the installer meets the OS's refusal in-process.
        from chattts_studio.core.install import main

        def refused(*args: object, **kwargs: object) -> None:
            raise OSError(errno.EROFS, "Read-only file system")

        monkeypatch.setattr(main.tempfile, "TemporaryFile", refused)
        code = main.main(argv[2:])
        said = capsys.readouterr()
        done = subprocess.CompletedProcess(argv, code, said.out, said.err)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"The installer cannot write to {src} (Read-only file system)")
    assert not (src / ".venv").exists() and "> " not in done.stdout


def test_the_makefile_step_starts_no_torch_and_refuses_a_missing_python(tmp_path: Path) -> None:
    """ensure_torch decides from files: torch is never imported in its own process."""
    code = (
        "import sys; from chattts_studio.core.install import ensure_torch; "
        f"code = ensure_torch.main(['--python', {sys.executable!r}, '--dry-run']); "
        "print(code, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr
    missing = subprocess.run(
        [
            *(sys.executable, "-m", "chattts_studio.core.install.ensure_torch"),
            *("--python", str(tmp_path / "nothing" / "python")),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr


def test_a_folder_without_pyproject_is_one_sentence(tmp_path: Path) -> None:
    bootstrap = ROOT / "core" / "install" / "bootstrap.py"
    done = subprocess.run(
        [sys.executable, str(bootstrap), "--root", str(tmp_path), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "is not ChatTTS Studio's folder" in done.stderr
