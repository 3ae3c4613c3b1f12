"""`soak --output-rss` measures each command's peak memory in a child process: with wait4 on
POSIX, and on Windows (no os.wait4, simulated here by removing it) by reading the child's peak
while it runs, the child's own children included (a venv's python.exe there is a launcher).
Both ways give the same figure for the same child, and the child's Chinese output survives a
code page that cannot hold it."""

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from chattts_studio.core.benchmarks import soak

MIB = 2**20
HELD_MIB = 150
# The launcher's shape: a Python child that runs the real work in its own child, which holds
# HELD_MIB of touched memory for a moment and writes Chinese to stdout and stderr.
WORK = (
    f"import sys, time; block = b'x' * ({HELD_MIB} * 2**20); time.sleep(0.6); "
    "print('四川美食'); print('完成：四川', file=sys.stderr)"
)
LAUNCHER = [
    sys.executable,
    "-c",
    f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', {WORK!r}]))",
]


# The measuring process as `soak --output-rss` is: a small Python of its own. (Linux's wait4
# counts the measuring process's own size at the spawn into the child's peak: from the
# test process, which holds Qt and torch, the figure would be the test process's.)
DRIVER = """
import json, os, sys
from chattts_studio.core.benchmarks import soak
if sys.argv[1] == "sampled":
    del os.wait4  # as on Windows
print(json.dumps(soak.peak_rss_of(json.loads(sys.argv[2]))))
"""


@pytest.mark.parametrize("way", ["wait4", "sampled"])
def test_peak_rss_of_a_child_and_its_child(monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    # The streams in a code page without Chinese, as a Windows child's pipes are (the
    # driver's own JSON is ASCII).
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, way, json.dumps(LAUNCHER)],
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert driver.returncode == 0, driver.stderr
    peak, wall, code, last = json.loads(driver.stdout)
    assert (code, last) == (0, "完成：四川")
    # The grandchild's block plus an interpreter: the same on both ways of measuring it.
    assert HELD_MIB * MIB < peak < (HELD_MIB + 80) * MIB, peak / MIB
    assert wall >= 0.6


def test_without_wait4_the_child_is_read_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "wait4")  # as on Windows
    peak, _wall, code, _last = soak.peak_rss_of(LAUNCHER)
    assert code == 0 and HELD_MIB * MIB < peak < (HELD_MIB + 80) * MIB, peak / MIB


class FakeProcess:
    """psutil.Process as on Windows: memory_info has peak_wset, the OS's own high-water mark,
    next to the current rss; the child has a child of its own (the real interpreter)."""

    def __init__(self, pid: int, peak: int, rss: int, kids: list["FakeProcess"]) -> None:
        self.pid, self.peak, self.rss, self.kids = pid, peak, rss, kids

    def memory_info(self) -> SimpleNamespace:
        return SimpleNamespace(rss=self.rss, peak_wset=self.peak)

    def children(self, recursive: bool = False) -> list["FakeProcess"]:
        return self.kids


class FakePopen:
    """A child that runs for three readings, then exits."""

    pid = 4242

    def __init__(self) -> None:
        self.waits = 0
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        self.waits += 1
        if self.waits < 3:
            raise subprocess.TimeoutExpired("child", timeout or 0)
        self.returncode = 0
        return 0


def test_windows_reads_the_peak_working_set_not_the_current_rss(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    interpreter = FakeProcess(4243, peak=700 * MIB, rss=20 * MIB, kids=[])
    launcher = FakeProcess(4242, peak=5 * MIB, rss=5 * MIB, kids=[interpreter])
    monkeypatch.setattr(soak.psutil, "Process", lambda pid: launcher if pid == 4242 else None)
    proc = FakePopen()
    assert soak._sampled_peak(proc) == 700 * MIB  # type: ignore[arg-type]
    assert proc.waits == 3
