"""Our own Python child processes, their text in UTF-8 on every system (PYTHONIOENCODING), since a
pipe's text otherwise follows the locale's code page and garbles Chinese text and paths.
"""

import os
import subprocess
from collections.abc import Mapping, Sequence


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with a Python child's standard streams in
    UTF-8. Only the streams: the child's open() keeps the user's default encoding, so a missing
    encoding= fails in a test as it would for the user."""
    return {**(os.environ if base is None else base), "PYTHONIOENCODING": "utf-8"}


def run_python(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> "subprocess.CompletedProcess[str]":
    """Run our own Python child to its end (stdin closed), its stdout and stderr captured as
    UTF-8 text (a byte that is not UTF-8 becomes U+FFFD, never an error). Raises
    subprocess.TimeoutExpired as subprocess.run does: read its output with text()."""
    return subprocess.run(
        list(argv),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        env=child_env(env),
        timeout=timeout,
        check=False,
    )


def text(output: str | bytes | None) -> str:
    """A child's captured output as text: TimeoutExpired holds bytes on POSIX and str on
    Windows, or None when nothing came."""
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output or ""
