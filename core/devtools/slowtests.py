"""Writes tests/slow.txt, the tests `make check` leaves to `make test`: those that took longer
than a threshold in a full run's JUnit report (`make pytest PYTEST_ARGS=--junitxml=...`).

Usage: python -m chattts_studio.core.devtools.slowtests REPORT.xml... [--over SECONDS]
"""

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SLOW_LIST = ROOT / "tests" / "slow.txt"
HEADER = (
    "# Tests that took {over:g} s or more in the last full run (make slow-list): `make check`\n"
    "# leaves them to `make test`. One pytest node id per line.\n"
)


def node_id(case: ET.Element) -> str:
    """pytest's node id from a JUnit testcase: classname 'tests.core.test_x' (plus a class
    name when the test is a method) and name 'test_y[param]'."""
    parts = (case.get("classname") or "").split(".")
    path_parts, classes = parts, []
    # The module is the last part that is a file; the rest are classes.
    for cut in range(len(parts), 0, -1):
        if (ROOT / Path(*parts[:cut])).with_suffix(".py").is_file():
            path_parts, classes = parts[:cut], parts[cut:]
            break
    path = "/".join(path_parts) + ".py"
    return "::".join([path, *classes, case.get("name") or ""])


def slow_tests(reports: list[Path], over: float) -> list[str]:
    cases = [c for report in reports for c in ET.parse(report).getroot().iter("testcase")]
    return sorted({node_id(c) for c in cases if float(c.get("time") or 0) >= over})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+")
    parser.add_argument("--over", type=float, default=1.0)
    args = parser.parse_args(argv)
    slow = slow_tests(args.reports, args.over)
    SLOW_LIST.write_text(HEADER.format(over=args.over) + "".join(f"{t}\n" for t in slow))
    print(f"{len(slow)} tests of {args.over:g} s or more in {SLOW_LIST}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
