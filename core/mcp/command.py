"""`chattts-studio-cli mcp`: the MCP server on stdio for AI assistants (docs/mcp.md). Here, not
in core/cli, whose folder holds its fifteen modules; registered in core/cli/main.py like every
command, and reusing the CLI's own options and checks."""

import argparse
from pathlib import Path
from typing import Any

from chattts_studio.core.cli.common import add_engine_option, check_engine_choice, err, set_threads

EPILOG = """\
An assistant starts it itself; in Claude Desktop's claude_desktop_config.json:
  {"mcpServers": {"chattts-studio": {"command": "/path/to/.venv/bin/chattts-studio-cli",
                                     "args": ["mcp", "--model", "official"]}}}
It writes only in the output folder, reads books only from --books folders, and says in every
result that carries audio when the demo weights (noise, not speech) are in use. docs/mcp.md.
"""


def add_parser(sub: Any) -> None:
    """The `mcp` command's options (its help line is the registry's, in main.py)."""
    mcp = sub.add_parser(
        "mcp",
        description="An MCP (Model Context Protocol) server on stdin and stdout for AI\n"
        "assistants: synthesize, render_book, list_speakers, model_status.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mcp.add_argument(
        "--model", default="demo", help="demo, demo-full, official, or a folder (default: demo)"
    )
    mcp.add_argument(
        "--device",
        default=None,
        help="cpu, cuda, cuda:N or mps (default: the first CUDA device, else cpu)",
    )
    mcp.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16", "int8"])
    add_engine_option(mcp)
    mcp.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    mcp.add_argument(
        "--output-dir",
        default=None,
        metavar="DIR",
        help="the one folder it writes in (default: mcp in the app's data folder)",
    )
    mcp.add_argument(
        "--books",
        action="append",
        default=[],
        metavar="FOLDER",
        help="let render_book read the books (.txt, .md, .epub) in FOLDER; repeatable "
        "(default: it reads no files)",
    )


def run(args: argparse.Namespace) -> int:
    import anyio

    from chattts_studio.core.mcp.folders import BookFolders, OutputFolder
    from chattts_studio.core.mcp.server import serve
    from chattts_studio.core.services.model_jobs import LoadSpec

    # Checked before serving: a wrong option is one line in the client's log and exit 2.
    set_threads(args.threads)
    check_engine_choice(args.device, args.precision, args.engine)
    output = OutputFolder.open(Path(args.output_dir) if args.output_dir else None)
    books = BookFolders.open([Path(f) for f in args.books])
    spec = LoadSpec(args.model, args.device, args.precision, engine=args.engine)
    reads = ", ".join(str(r) for r in books.roots) or "no book files"
    err(
        f"MCP server on stdio: model {args.model} (loading); writes in {output.root}; reads {reads}"
    )
    anyio.run(serve, spec, output, books)
    err("MCP server stopped")
    return 0
