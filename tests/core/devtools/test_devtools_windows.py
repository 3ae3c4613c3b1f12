"""The developer tools on a simulated Windows: the GPU run's children (a part's process,
pytest) report in Chinese intact when the parent decodes pipes in cp1252 and the children
write theirs in cp1252 unless told otherwise (see tests/core/test_child_process.py); the load
run finds Ray's logs where Ray keeps them (no /tmp on Windows)."""

import argparse
import tempfile
from pathlib import Path

import pytest

from chattts_studio.core.devtools import gpucheck, gpuparts, loadrun


def test_a_failed_parts_log_keeps_its_chinese(tmp_path: Path, windows_locale: None) -> None:
    part = gpucheck._part_process("部分", argparse.Namespace(cpu=True), 60, tmp_path)
    assert part["status"] == "failed (exit 2)"
    assert "unknown part 部分" in part["log_tail"], part["log_tail"]


def test_pytests_failure_keeps_its_chinese(tmp_path: Path, windows_locale: None) -> None:
    test_file = tmp_path / "test_说.py"
    test_file.write_text("def test_说():\n    assert '四川' == '成都'\n", encoding="utf-8")
    result = gpuparts._pytest([], [str(test_file)], gpuparts.Mode(cpu=True, limit=120))
    assert result["exit"] == 1 and not result["ok"]
    assert "1 failed" in result["summary"]
    assert "'四川' == '成都'" in result["error"], result["error"]


def test_ray_logs_are_looked_for_where_ray_keeps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    monkeypatch.delenv("TMPDIR", raising=False)
    assert loadrun.ray_temp_folder("linux") == Path("/tmp/ray")
    assert loadrun.ray_temp_folder("darwin") == Path("/tmp/ray")
    assert loadrun.ray_temp_folder("win32") == Path(tempfile.gettempdir()) / "ray"
    monkeypatch.setenv("TMPDIR", "/scratch")
    assert loadrun.ray_temp_folder("linux") == Path("/scratch/ray")
    assert loadrun.ray_temp_folder("darwin") == Path("/tmp/ray")
    monkeypatch.setenv("RAY_TMPDIR", "/fast")
    assert loadrun.ray_temp_folder("win32") == Path("/fast/ray")
