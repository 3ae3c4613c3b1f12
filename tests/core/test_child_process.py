"""Our Python children's text in UTF-8 whatever the locale (core/child_process.py), on a
simulated Windows locale: the parent's pipes decoded in cp1252 (subprocess asks
locale.getencoding()) and the child's streams in cp1252 (PYTHONIOENCODING, as a Windows child
writes to a pipe). Chinese text and paths come back whole; and no call in core/ or gui/ reads a
child's text in the locale's code page."""

import ast
import sys
from pathlib import Path

import pytest
from conftest import REPO

from chattts_studio.core import child_process
from chattts_studio.core.asr import demo_model
from chattts_studio.core.errors import ModelError

SPEAKS = "import sys; print('四川美食 café'); print('出错：路径', file=sys.stderr)"


def test_a_child_speaks_utf8_to_its_parent(windows_locale: None) -> None:
    done = child_process.run_python([sys.executable, "-c", SPEAKS])
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("四川美食 café\n", "出错：路径\n")
    # A byte that is not UTF-8 (a child writing raw bytes) is replaced, never an error.
    raw = "import sys; sys.stdout.buffer.write(b'ok \\xff')"
    assert child_process.run_python([sys.executable, "-c", raw]).stdout == "ok \ufffd"


def test_a_timed_out_childs_output_is_text() -> None:
    # subprocess.TimeoutExpired holds bytes on POSIX and str on Windows.
    assert child_process.text("四川".encode()) == "四川"
    assert child_process.text("四川") == "四川"
    assert child_process.text(None) == ""
    assert child_process.text(b"\xff") == "\ufffd"


def test_the_demo_recogniser_names_a_chinese_path_in_its_error(
    tmp_path: Path, windows_locale: None
) -> None:
    folder = tmp_path / "模型"
    folder.write_text("a file where the model's folder should be", encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        demo_model.build(folder)
    assert "模型" in str(caught.value), str(caught.value)


SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}


def _text_without_encoding(tree: ast.AST) -> list[int]:
    """Lines of subprocess calls that ask for text (text=, universal_newlines=, errors=)
    without naming its encoding: the locale's code page then decodes it."""
    lines = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "subprocess"
            and node.func.attr in SUBPROCESS_CALLS
        ):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        asks_text = any(
            name in keywords and not (isinstance(v, ast.Constant) and not v.value)
            for name in ("text", "universal_newlines", "errors")
            for v in [keywords.get(name)]
        )
        if asks_text and "encoding" not in keywords:
            lines.append(node.lineno)
    return lines


def test_no_child_output_is_decoded_in_the_locales_code_page() -> None:
    found = []
    for folder in ("core", "gui"):
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [f"{path.relative_to(REPO)}:{n}" for n in _text_without_encoding(tree)]
    assert found == [], "text=True without encoding= decodes in the locale's code page"
    # The check itself finds the old form.
    old = "subprocess.run(['x'], capture_output=True, text=True, check=False)"
    assert _text_without_encoding(ast.parse(old)) == [1]
    assert _text_without_encoding(ast.parse(old.replace("text=True", "text=False"))) == []
