"""The lock (constraints.txt) against every platform and Python the project claims: the check's
comparison on small recorded resolutions, and one real resolution of the lock for Linux,
Windows and macOS with uv against the package registry (the suite's only registry test)."""

import dataclasses
import re
from pathlib import Path

import pytest

from chattts_studio.core.devtools import lockcheck
from chattts_studio.core.devtools.lockcheck import PLATFORMS, environment, gaps, pins_for

ROOT = Path(__file__).resolve().parent.parent
LINUX, WINDOWS, MACOS = PLATFORMS

LOCK = """\
# a header
loguru==0.7.3
numpy==2.3.0 ; python_full_version < '3.13'
numpy==2.4.6 ; python_full_version >= '3.13'
torch==2.14.1
win32-setctime==1.2.1 ; sys_platform == 'win32'
"""

# uv pip compile's output (--no-header --no-annotate) for Windows and Linux, cut short.
WINDOWS_RESOLUTION = "loguru==0.7.3\nnumpy==2.3.0\ntorch==2.14.1\nwin32-setctime==1.2.1\n"
LINUX_RESOLUTION = "loguru==0.7.3\nnumpy==2.4.6\ntorch==2.14.1\n"

# What uv 0.13 says when a pin has no wheel for the platform (macOS aimed at 13.0).
NO_WHEEL = (
    "error: No solution found when resolving dependencies\n"
    "  cause: Because torch==2.14.1 has no wheels with a matching platform tag (e.g., "
    "`macosx_13_0_arm64`) and chattts-studio depends on torch==2.14.1, we can conclude that your "
    "requirements are unsatisfiable.\n\n"
    "hint: Wheels are available for `torch` (v2.14.1) on the following platforms: "
    "`manylinux_2_28_aarch64`, `manylinux_2_28_x86_64`, `macosx_14_0_arm64`, `win_amd64`\n"
)


def _gaps(lock: str, resolution: str, platform: lockcheck.Platform, python: str) -> list[str]:
    pins = pins_for(lock, environment(platform, python))
    return gaps(lockcheck.resolved_versions(resolution), pins, f"{platform.name} {python}")


def test_a_package_the_lock_does_not_pin_is_named() -> None:
    lock = LOCK.replace("win32-setctime==1.2.1 ; sys_platform == 'win32'\n", "")
    assert _gaps(lock, WINDOWS_RESOLUTION, WINDOWS, "3.12") == [
        "windows 3.12: needs win32-setctime==1.2.1, which the lock does not pin there"
    ]


def test_a_version_the_lock_does_not_pin_is_named() -> None:
    lock = LOCK.replace("torch==2.14.1", "torch==2.14.0")
    assert _gaps(lock, WINDOWS_RESOLUTION, WINDOWS, "3.12") == [
        "windows 3.12: needs torch==2.14.1, the lock pins torch==2.14.0"
    ]


def test_the_lock_s_markers_choose_the_pins_of_each_platform_and_python() -> None:
    assert pins_for(LOCK, environment(WINDOWS, "3.12")) == {
        "loguru": ["0.7.3"],
        "numpy": ["2.3.0"],
        "torch": ["2.14.1"],
        "win32-setctime": ["1.2.1"],
    }
    assert pins_for(LOCK, environment(LINUX, "3.13"))["numpy"] == ["2.4.6"]
    assert "win32-setctime" not in pins_for(LOCK, environment(MACOS, "3.13"))
    assert _gaps(LOCK, WINDOWS_RESOLUTION, WINDOWS, "3.12") == []
    assert _gaps(LOCK, LINUX_RESOLUTION, LINUX, "3.13") == []
    # Windows' numpy pin is not Linux's on 3.13, and its extra package is pinned for Windows only.
    assert _gaps(LOCK, WINDOWS_RESOLUTION, LINUX, "3.13") == [
        "linux 3.13: needs numpy==2.3.0, the lock pins numpy==2.4.6",
        "linux 3.13: needs win32-setctime==1.2.1, which the lock does not pin there",
    ]
    twice = LOCK + "torch==2.13.0 ; sys_platform == 'linux'\n"
    assert _gaps(twice, LINUX_RESOLUTION, LINUX, "3.13") == [
        "linux 3.13: the lock pins torch more than once there: ['2.14.1', '2.13.0']"
    ]
    with pytest.raises(ValueError, match="not an exact pin"):
        pins_for("torch>=2.14\n", environment(LINUX, "3.13"))


def test_every_failed_resolution_and_every_gap_is_reported(tmp_path: Path) -> None:
    """Each platform's first Python resolves online, the others from uv's cache and online
    again only where that fails; wheels only (macOS aimed at 14.0, source builds only where
    allowed); every failure and every gap is named."""
    lock = tmp_path / "constraints.txt"
    lock.write_text(LOCK.replace("win32-setctime==1.2.1 ; sys_platform == 'win32'\n", ""))
    calls: list[tuple[str, str, bool, list[str], dict[str, str]]] = []

    def recorded(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
        target = args[args.index("--python-platform") + 1]
        python = args[args.index("--python-version") + 1]
        offline = "--offline" in args
        calls.append((target, python, offline, args, env))
        if target == MACOS.target and python == "3.14":
            return 1, "", NO_WHEEL
        if target == LINUX.target and python == "3.13" and offline:
            return 1, "", "error: Network connectivity is disabled, but the index is not cached"
        resolution = WINDOWS_RESOLUTION if target == WINDOWS.target else LINUX_RESOLUTION
        numpy = "numpy==2.4.6" if python >= "3.13" else "numpy==2.3.0"
        return 0, re.sub(r"numpy==\S+", numpy, resolution), ""

    outcomes = lockcheck.check(lock, ["3.12", "3.13", "3.14"], runner=recorded, uv="uv")
    problems = [problem for outcome in outcomes for problem in outcome.problems]
    assert sorted((target, python, offline) for target, python, offline, *_ in calls) == sorted(
        [(platform.target, "3.12", False) for platform in PLATFORMS]
        + [(p.target, v, True) for p in PLATFORMS for v in ("3.13", "3.14")]
        + [(LINUX.target, "3.13", False), (MACOS.target, "3.14", False)]
    )
    assert [(o.platform, o.python) for o in outcomes] == [
        (platform.name, python) for platform in PLATFORMS for python in ("3.12", "3.13", "3.14")
    ]
    assert problems[:3] == [
        f"windows (x86_64-pc-windows-msvc), Python {python}: needs win32-setctime==1.2.1, "
        "which the lock does not pin there"
        for python in ("3.12", "3.13", "3.14")
    ]
    assert len(problems) == 4, problems
    failure = problems[3]
    assert failure.startswith("macos (aarch64-apple-darwin), Python 3.14: does not resolve")
    assert "torch==2.14.1 has no wheels with a matching platform tag" in failure
    assert [o.resolved for o in outcomes if o.platform == "macos" and o.python == "3.14"] == [None]
    for target, _, _, args, env in calls:
        assert args[args.index("--only-binary") + 1] == "loguru,numpy,torch"
        assert args[args.index("--constraints") + 1] == str(lock.resolve())
        assert (env.get("MACOSX_DEPLOYMENT_TARGET") == "14.0") == (target == MACOS.target)


def test_wheels_are_required_of_every_locked_package_but_the_allowed_source_builds(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "constraints.txt"
    lock.write_text(
        "chattts==0.2.5\nEbookLib==0.20\npocketsphinx==5.1.1\ntorch==2.14.1\nzhconv==1.4.3\n"
    )
    for python, wheels in (("3.12", "ebooklib,torch"), ("3.13", "ebooklib,pocketsphinx,torch")):
        args, env = lockcheck.command("uv", WINDOWS, python, lock)
        assert args[args.index("--only-binary") + 1] == wheels
        assert "--no-binary" not in args and "--offline" not in args
    args, env = lockcheck.command("uv", MACOS, "3.13", lock, offline=True)
    assert env["MACOSX_DEPLOYMENT_TARGET"] == "14.0" and "--offline" in args


def test_the_command_fails_on_any_problem(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome = lockcheck.Outcome("windows", "3.12", {}, ["windows 3.12: needs a==1"])
    monkeypatch.setattr(lockcheck, "check", lambda lock: [outcome])
    assert lockcheck.main([]) == 1
    assert "windows 3.12: needs a==1" in capsys.readouterr().err
    monkeypatch.setattr(
        lockcheck, "check", lambda lock: [dataclasses.replace(outcome, problems=[])]
    )
    assert lockcheck.main([]) == 0
    assert "resolves, wheels included, on: windows 3.12" in capsys.readouterr().out


def test_the_makefile_supports_the_pythons_that_requires_python_admits() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    supported = re.search(r"^SUPPORTED := (.+)$", makefile, re.MULTILINE)
    assert supported, "Makefile: no SUPPORTED line"
    assert sorted(supported.group(1).split()) == lockcheck.supported_pythons(
        ROOT / "pyproject.toml"
    )


def test_the_lock_is_plain_pip_constraints() -> None:
    """Exact pins with markers, under our header: no options, hashes or editable lines that pip
    would refuse in a constraints file (make install, make smoke and CI read it with pip -c)."""
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert text.startswith("# ")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert lines and not [line for line in lines if line.startswith("-") or "--hash" in line]
    for platform in PLATFORMS:
        pins = pins_for(text, environment(platform, "3.11"))
        assert pins["torch"] == ["2.14.1"], platform.name
        assert all(len(versions) == 1 for versions in pins.values()), platform.name


@pytest.mark.registry
def test_the_lock_resolves_on_every_platform_and_python_with_wheels() -> None:
    """uv resolves the project, every extra, under the real lock for Linux x86-64, Windows
    x86-64 and macOS 14 on Apple Silicon with each supported Python, from PyPI's metadata; any
    failure or gap fails here. Aimed at macOS 13, torch's wheels (14.0 only) must fail it."""
    lock = ROOT / "constraints.txt"
    pythons = lockcheck.supported_pythons(ROOT / "pyproject.toml")
    outcomes = lockcheck.check(lock, pythons)
    problems = [problem for outcome in outcomes for problem in outcome.problems]
    assert not problems, "\n".join(problems)
    assert sorted((o.platform, o.python) for o in outcomes) == sorted(
        (platform.name, python) for platform in PLATFORMS for python in pythons
    )
    for outcome in outcomes:
        assert outcome.resolved, (outcome.platform, outcome.python)
        assert outcome.resolved["torch"] == "2.14.1"
        assert ("win32-setctime" in outcome.resolved) == (outcome.platform == "windows")
        assert ("nvidia-cublas" in outcome.resolved) == (outcome.platform == "linux")
    macos_13 = dataclasses.replace(MACOS, env={"MACOSX_DEPLOYMENT_TARGET": "13.0"})
    (old_mac,) = lockcheck.check(lock, pythons[:1], platforms=(macos_13,))
    assert old_mac.resolved is None
    assert "torch==2.14.1 has no wheels with a matching platform tag" in old_mac.problems[0]
