"""The fast tier (`make check`): tests/slow.txt names tests that exist, its maker reads a JUnit
report as pytest names tests, and --fast leaves exactly the listed ones out."""

import ast
import subprocess
import sys
from pathlib import Path

from conftest import REPO, slow_tests

from chattts_studio.core.devtools import slowtests


def test_every_listed_slow_test_exists() -> None:
    listed = slow_tests()
    assert len(listed) > 20  # the list is there and is used
    for node in listed:
        path, _, rest = node.partition("::")
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        for part in rest.split("[")[0].split("::"):
            assert part in names, f"{node}: no {part} in {path}"


def test_the_list_is_made_from_a_junit_report(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_fast_tier" name="test_a[x-1]" time="3.2"/>'
        '<testcase classname="tests.test_fast_tier" name="test_b" time="0.4"/>'
        '<testcase classname="tests.core.test_platforms.TestSome" name="test_c" time="9"/>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    assert slowtests.slow_tests([report], 2.0) == [
        "tests/core/test_platforms.py::TestSome::test_c",
        "tests/test_fast_tier.py::test_a[x-1]",
    ]


def test_fast_leaves_out_the_listed_tests_only() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--collect-only",
            "--fast",
            "tests/core/test_platforms.py",
        ],
        capture_output=True,
        encoding="utf-8",
        cwd=REPO,
        timeout=300,
    )
    kept = [line for line in done.stdout.splitlines() if "::" in line]
    slow = slow_tests()
    assert kept and not [k for k in kept if k in slow]
    every = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "tests/core/test_platforms.py"],
        capture_output=True,
        encoding="utf-8",
        cwd=REPO,
        timeout=300,
    )
    everything = [line for line in every.stdout.splitlines() if "::" in line]
    assert sorted(kept) == sorted(k for k in everything if k not in slow)
