"""The command line, chattts-studio-cli: the entry point and the registry of its commands. Each
command is a module with add_parser(subparsers) and run(args) -> int, imported only when chosen.
"""

import argparse
import importlib
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from chattts_studio.core.cli.common import EXIT_CANCELLED, EXIT_USER_ERROR, err
from chattts_studio.core.errors import Cancelled, StudioError

PROG = "chattts-studio-cli"


@dataclass(frozen=True)
class Command:
    name: str
    help: str  # the line `--help` shows for it
    module: str  # its add_parser and run; imported only when the command is chosen
    # It reads its own options, --help included (soak): run() gets them as args.argv.
    own_options: bool = False


COMMANDS = (
    Command("synth", "synthesize text to an audio file", "chattts_studio.core.cli.synth"),
    Command(
        "render",
        "a book (.txt, .md, .epub) to chapter files, an audiobook and subtitles, or a "
        "manifest (.jsonl, .csv) to one file per item; resumable",
        "chattts_studio.core.cli.render",
    ),
    Command(
        "serve", "an OpenAI-compatible speech API on this machine", "chattts_studio.core.cli.serve"
    ),
    Command(
        "mcp",
        "an MCP server on stdio for AI assistants (Claude Desktop, VS Code, Cursor)",
        "chattts_studio.core.mcp.command",
    ),
    Command(
        "align",
        "each word's start and end in an audio file: a table, JSON or word-level subtitles",
        "chattts_studio.core.cli.align.command",
    ),
    Command("devices", "list devices and precisions", "chattts_studio.core.cli.devices"),
    Command("doctor", "versions, CUDA status, devices", "chattts_studio.core.cli.doctor"),
    Command("model", "model status, download, verify, build-demo", "chattts_studio.core.cli.model"),
    Command(
        "bench",
        "stock ChatTTS vs the studio engine, side by side",
        "chattts_studio.core.cli.bench",
    ),
    Command(
        "soak",
        "many syntheses in a row and one long text, with memory",
        "chattts_studio.core.cli.soak",
        own_options=True,
    ),
    Command(
        "project",
        "a text as segments with takes: re-roll, pick, edit, lock one segment; export",
        "chattts_studio.core.cli.project.command",
    ),
    Command("speakers", "the speaker library", "chattts_studio.core.cli.speakers"),
    Command("lexicon", "the pronunciation dictionary", "chattts_studio.core.cli.lexicon"),
    Command(
        "voice",
        "compare voices: each file's similarity to a reference, same or different",
        "chattts_studio.core.cli.voice",
    ),
)
BY_NAME = {command.name: command for command in COMMANDS}


def build_parser(
    chosen: Command | None = None, module: ModuleType | None = None
) -> argparse.ArgumentParser:
    """The parser: the chosen command's own (from its module), every other command a name
    and its help line only."""
    parser = argparse.ArgumentParser(prog=PROG, description="ChatTTS Studio from the command line.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        if command is chosen and module is not None:
            module.add_parser(sub)
        else:
            sub.add_parser(command.name, help=command.help)
    return parser


def utf8_output() -> None:
    """Print UTF-8 whatever the locale: Windows writes a redirected stdout in its ANSI code
    page, where Chinese text (titles, JSON) cannot be written at all."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")


def main(argv: Sequence[str] | None = None) -> int:
    utf8_output()
    warnings.filterwarnings("ignore")
    from chattts_studio.core.engine.quiet import quiet_libraries

    quiet_libraries()
    argv = list(sys.argv[1:] if argv is None else argv)
    name = argv[0] if argv and not argv[0].startswith("-") else None
    chosen = BY_NAME.get(name) if name is not None else None
    if name is not None and chosen is None:
        err(f"error: there is no command '{name}'; {PROG} --help lists them.")
        return EXIT_USER_ERROR
    if chosen is None:
        build_parser().parse_args(argv)  # --help, or no command: argparse says so and exits
        return EXIT_USER_ERROR
    module = importlib.import_module(chosen.module)
    if chosen.own_options:  # its own options and messages, --help included
        return int(module.run(argparse.Namespace(command=chosen.name, argv=argv[1:])))
    args = build_parser(chosen, module).parse_args(argv)
    try:
        return int(module.run(args))
    except StudioError as exc:
        err(f"error: {exc}")
        return EXIT_USER_ERROR
    except Cancelled:
        err("cancelled; nothing was written")
        return EXIT_CANCELLED
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_CANCELLED


if __name__ == "__main__":
    sys.exit(main())
