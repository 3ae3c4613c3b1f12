"""Which machines the installers support, and one sentence for any other: PyTorch's locked
release has wheels for Windows x86-64, macOS 14 or later on Apple Silicon and Linux x86-64 only.
"""

import re

SUPPORTED = "Windows x86-64, macOS 14 or later on Apple Silicon, or Linux x86-64"
_X86_64 = {"amd64", "x86_64", "x64"}
_ARM64 = {"arm64", "aarch64"}


def python_range(requires_python: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """(lowest, first unsupported) minor versions from a requires-python like '>=3.11,<3.15'."""
    low = re.search(r">=\s*3\.(\d+)", requires_python)
    high = re.search(r"<\s*3\.(\d+)", requires_python)
    if not (low and high):
        raise ValueError(f"cannot read requires-python {requires_python!r}")
    return (3, int(low.group(1))), (3, int(high.group(1)))


def unsupported(
    platform: str,
    machine: str,
    mac_version: str,
    python: tuple[int, int],
    requires_python: str,
) -> str | None:
    """Why this machine cannot run the app, in one sentence, or None when it can."""
    arch = machine.lower()
    if platform == "darwin":
        if arch not in _ARM64:
            return (
                f"This Mac has an Intel processor ({machine}); PyTorch's locked release has no "
                f"build for it. ChatTTS Studio runs on {SUPPORTED}."
            )
        major = int(mac_version.split(".")[0]) if mac_version.split(".")[0].isdigit() else 0
        if major < 14:
            return (
                f"This Mac runs macOS {mac_version or 'of unknown version'}; PyTorch's locked "
                f"release needs macOS 14 or later. Update macOS, then install again."
            )
    elif platform == "win32":
        if arch not in _X86_64:
            return (
                f"This is Windows on {machine}; PyTorch has no build for it. ChatTTS Studio runs "
                f"on {SUPPORTED}."
            )
    elif platform.startswith("linux"):
        if arch not in _X86_64:
            return (
                f"This is Linux on {machine}; the locked versions are checked for x86-64 only. "
                f"ChatTTS Studio runs on {SUPPORTED}."
            )
    else:
        return f"{platform} is not supported; ChatTTS Studio runs on {SUPPORTED}."
    low, high = python_range(requires_python)
    if not low <= python < high:
        return (
            f"Python {python[0]}.{python[1]} is outside the supported range "
            f"{low[0]}.{low[1]} to {high[0]}.{high[1] - 1}; the installer picks a supported "
            f"one itself when run through uv."
        )
    return None
