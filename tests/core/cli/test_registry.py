"""The command line as a registry: --help lists every command from it, a command imports
only its own module, and a command that does not exist is one sentence and exit 2."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from chattts_studio.core.cli.main import COMMANDS, main

EXE = Path(sys.executable).with_name("chattts-studio-cli")
COMMAND_MODULES = {command.module for command in COMMANDS}


def test_help_lists_every_registered_command_and_its_line() -> None:
    proc = subprocess.run([str(EXE), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    names = [command.name for command in COMMANDS]
    assert {"synth", "render", "serve", "devices", "doctor", "model"} <= set(names)
    assert {"bench", "soak", "speakers", "lexicon"} <= set(names)
    assert "{" + ",".join(names) + "}" in proc.stdout
    flat = " ".join(proc.stdout.split())
    for command in COMMANDS:
        assert " ".join(command.help.split()) in flat, command.name


def test_a_command_imports_no_other_command_s_module() -> None:
    code = (
        "import sys\n"
        "from chattts_studio.core.cli.main import main\n"
        "assert main(['devices']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('chattts_studio.core.cli.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    imported = set(ast.literal_eval(proc.stdout.strip().splitlines()[-1]))
    assert "chattts_studio.core.cli.devices" in imported
    assert imported & COMMAND_MODULES == {"chattts_studio.core.cli.devices"}
    assert "chattts_studio.core.cli.render" not in imported  # the old import cycle's half


def test_every_registered_module_has_its_parser_and_run() -> None:
    import importlib

    for command in COMMANDS:
        module = importlib.import_module(command.module)
        assert callable(module.add_parser) and callable(module.run), command.name


def test_an_unknown_command_is_one_sentence_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["synthesise", "hello"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "synthesise" in lines[0] and "--help" in lines[0]


def test_a_command_s_own_mistakes_still_come_from_its_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["synth", "hi"])  # -o is required
    assert exited.value.code == 2
    assert "-o/--output" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main([])  # no command at all
    assert exited.value.code == 2
