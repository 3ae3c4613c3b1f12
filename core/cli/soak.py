"""chattts-studio-cli soak: many syntheses in a row and one long text, with memory
(chattts_studio.core.benchmarks.soak). It reads its own options, --help included: main.py
hands it the command line after `soak` as args.argv."""

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    soak = sub.add_parser("soak", add_help=False)
    soak.add_argument("argv", nargs=argparse.REMAINDER)


def run(args: argparse.Namespace) -> int:
    from chattts_studio.core.benchmarks.soak import main as soak_main

    return soak_main(args.argv)
