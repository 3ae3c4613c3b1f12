"""Whether the lock (constraints.txt) installs on every platform and Python the project claims:
uv resolves each from metadata, and every gap is named. `make lock` runs it first.

    python -m chattts_studio.core.devtools.lockcheck [--lock constraints.txt]

See docs/lock.md.
"""

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Platform:
    """A platform the product claims: uv's name for it, the environment uv needs to aim at it,
    and the PEP 508 marker values that the lock's markers are evaluated against there."""

    name: str
    target: str
    markers: Mapping[str, str]
    env: Mapping[str, str] = field(default_factory=dict)


PLATFORMS = (
    # PySide6-Essentials 6.11 has manylinux_2_34 wheels only (glibc 2.34 or newer).
    Platform(
        "linux",
        "x86_64-manylinux_2_34",
        {
            "sys_platform": "linux",
            "platform_system": "Linux",
            "platform_machine": "x86_64",
            "os_name": "posix",
        },
    ),
    Platform(
        "windows",
        "x86_64-pc-windows-msvc",
        {
            "sys_platform": "win32",
            "platform_system": "Windows",
            "platform_machine": "AMD64",
            "os_name": "nt",
        },
    ),
    # uv aims aarch64-apple-darwin at macOS 13 unless told; torch, torchaudio, av and
    # onnxruntime have macosx_14_0_arm64 wheels only.
    Platform(
        "macos",
        "aarch64-apple-darwin",
        {
            "sys_platform": "darwin",
            "platform_system": "Darwin",
            "platform_machine": "arm64",
            "os_name": "posix",
        },
        {"MACOSX_DEPLOYMENT_TARGET": "14.0"},
    ),
)

# Packages allowed as a source distribution where the marker holds (everywhere when None);
# every other package must have a wheel for the platform and Python.
SOURCE_BUILDS: Mapping[str, str | None] = {
    # Pure Python, published as source distributions only.
    "chattts": None,
    "docopt": None,
    "encodec": None,
    "zhconv": None,
    # A C extension (the dev extra's recogniser): 5.1.1 has cp311 and cp313 wheels only, so
    # Python 3.12 and 3.14 compile it (a C compiler on every platform).
    "pocketsphinx": "python_version == '3.12' or python_version == '3.14'",
}


def normal(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def supported_pythons(pyproject: Path) -> list[str]:
    """Every Python 3 minor version that pyproject.toml's requires-python admits."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    allowed = SpecifierSet(project["requires-python"])
    return [f"3.{minor}" for minor in range(0, 40) if allowed.contains(f"3.{minor}")]


def environment(platform: Platform, python: str) -> dict[str, str]:
    """The marker values of `platform` under CPython `python` ('3.12')."""
    return {
        **platform.markers,
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
    }


def _requirements(text: str) -> list[Requirement]:
    """The requirement lines of a requirements or constraints text (comments, options and
    blank lines left out)."""
    found = []
    for line in text.splitlines():
        line = re.split(r"\s+#|^#", line, maxsplit=1)[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            found.append(Requirement(line))
        except InvalidRequirement as exc:
            raise ValueError(f"not a requirement: {line!r} ({exc})") from exc
    return found


def pins_for(lock_text: str, env: Mapping[str, str]) -> dict[str, list[str]]:
    """The lock's exact pins whose markers hold in `env`: normalised name -> versions (one,
    unless the lock is wrong). A line that is no exact pin is an error."""
    pins: dict[str, list[str]] = {}
    for requirement in _requirements(lock_text):
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==":
            raise ValueError(f"the lock's line for {requirement.name} is not an exact pin")
        if requirement.marker is None or requirement.marker.evaluate(dict(env)):
            pins.setdefault(normal(requirement.name), []).append(specifiers[0].version)
    return pins


def resolved_versions(output: str) -> dict[str, str]:
    """uv's resolution for one platform (requirements format): normalised name -> version."""
    versions = {}
    for requirement in _requirements(output):
        versions[normal(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return versions


def gaps(resolved: Mapping[str, str], pins: Mapping[str, list[str]], where: str) -> list[str]:
    """What the resolution needs that the lock does not pin there, one line each."""
    found = []
    for name, version in sorted(resolved.items()):
        pinned = pins.get(name, [])
        if not pinned:
            found.append(f"{where}: needs {name}=={version}, which the lock does not pin there")
        elif len(pinned) > 1:
            found.append(f"{where}: the lock pins {name} more than once there: {pinned}")
        elif pinned[0] != version:
            found.append(f"{where}: needs {name}=={version}, the lock pins {name}=={pinned[0]}")
    return found


def source_builds(env: Mapping[str, str]) -> list[str]:
    """The SOURCE_BUILDS packages allowed to come from source in `env`."""
    return [
        name
        for name, marker in SOURCE_BUILDS.items()
        if marker is None or Marker(marker).evaluate(dict(env))
    ]


def command(
    uv: str, platform: Platform, python: str, lock: Path, offline: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The uv command (and its environment) that resolves the project for one platform and
    Python under the lock; `offline` from what uv's cache holds. Every package the lock names
    must come as a wheel, but for the allowed source builds, which may come either way (a
    package the lock does not name is a gap in any case)."""
    allowed = set(source_builds(environment(platform, python)))
    names = {normal(r.name) for r in _requirements(lock.read_text(encoding="utf-8"))}
    args = [
        uv, "--no-config", "pip", "compile", "--quiet", "pyproject.toml", "--all-extras",
        # This interpreter only runs uv's metadata builds: without it uv looks for (or fetches)
        # a Python of each version, though it resolves for the version named.
        "--python", sys.executable, "--no-python-downloads",
        "--python-platform", platform.target, "--python-version", python,
        "--constraints", str(lock), "--no-header", "--no-annotate",
        "--only-binary", ",".join(sorted(names - allowed)) or ":none:",
    ]  # fmt: skip
    if offline:
        args.append("--offline")
    return args, {**os.environ, **platform.env}


@dataclass
class Outcome:
    """One platform and Python: uv's resolution (None when it failed) and what is wrong."""

    platform: str
    python: str
    resolved: dict[str, str] | None
    problems: list[str]


# (args, environment) -> (exit status, stdout, stderr); tests give recorded outputs.
Runner = Callable[[list[str], dict[str, str]], tuple[int, str, str]]


def run_uv(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(
            args,
            cwd=ROOT,
            env=env,
            capture_output=True,
            encoding="utf-8",  # uv writes UTF-8 whatever the locale's code page
            errors="replace",
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return 124, "", "uv took more than 300 s (is the package registry reachable?)"
    return proc.returncode, proc.stdout, proc.stderr


def check_one(
    platform: Platform,
    python: str,
    lock: Path,
    uv: str,
    runner: Runner = run_uv,
    offline: bool = False,
) -> Outcome:
    where = f"{platform.name} ({platform.target}), Python {python}"
    args, env = command(uv, platform, python, lock, offline)
    status, out, err = runner(args, env)
    if status != 0:
        reason = "\n    ".join(line for line in err.strip().splitlines() if line.strip())
        return Outcome(platform.name, python, None, [f"{where}: does not resolve:\n    {reason}"])
    resolved = resolved_versions(out)
    pins = pins_for(lock.read_text(encoding="utf-8"), environment(platform, python))
    return Outcome(platform.name, python, resolved, gaps(resolved, pins, where))


def _uv() -> str:
    try:
        from uv import find_uv_bin  # the dev extra's uv
    except ImportError:
        sys.exit("no uv in this environment: pip install uv (the dev extra has it)")
    return find_uv_bin()


def check(
    lock: Path,
    pythons: list[str] | None = None,
    platforms: tuple[Platform, ...] = PLATFORMS,
    runner: Runner = run_uv,
    uv: str | None = None,
) -> list[Outcome]:
    """Every platform with every supported Python. Each platform's first Python reads the
    registry (side by side); the other Pythons then resolve from what that just put in uv's
    cache, offline, and only one that fails there is tried again online. A resolution online
    takes seconds (the registry's answers carry no caching headers, so uv fetches every index
    page and metadata file again), one offline a tenth of a second."""
    pythons = pythons or supported_pythons(ROOT / "pyproject.toml")
    binary = uv or _uv()
    path = lock.resolve()

    def online(job: tuple[Platform, str]) -> Outcome:
        return check_one(*job, path, binary, runner)

    def cached_first(job: tuple[Platform, str]) -> Outcome:
        outcome = check_one(*job, path, binary, runner, offline=True)
        return outcome if outcome.resolved is not None else online(job)

    first = [(platform, pythons[0]) for platform in platforms]
    rest = [(platform, python) for platform in platforms for python in pythons[1:]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = [*pool.map(online, first), *pool.map(cached_first, rest)]  # first ones first
    rank = {platform.name: i for i, platform in enumerate(platforms)}
    return sorted(done, key=lambda o: (rank[o.platform], pythons.index(o.python)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=ROOT / "constraints.txt")
    args = parser.parse_args(argv)
    outcomes = check(args.lock)
    problems = [problem for outcome in outcomes for problem in outcome.problems]
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{args.lock} does not cover every platform: see docs/lock.md", file=sys.stderr)
        return 1
    names = sorted({f"{o.platform} {o.python}" for o in outcomes})
    print(f"{args.lock} resolves, wheels included, on: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
