"""transformers and ChatTTS are imported once, under one lock, before any thread uses them
(core/model_imports.py): the window's threads that first import them at the same moment (the
demo weights' build, the model's load, the text preview) all succeed."""

import ast
import subprocess
import sys

from conftest import REPO

HEAVY = ("transformers", "ChatTTS")

# Five threads, released at one moment in a fresh interpreter, each entering the product where
# a window thread does; each prints what it raised.
RACE = """
import threading
entries = [
    "from chattts_studio.core.engine.text_preview import preview; preview('Hello 1.', None)",
    "import chattts_studio.core.engine.decode.rowwise",
    "import chattts_studio.core.engine.decode.gpt_rows",
    "import chattts_studio.core.weights.demo_weights",
    "import chattts_studio.core.engine.onnxrt.graph",
]
barrier = threading.Barrier(len(entries))
def enter(code):
    barrier.wait()
    try:
        exec(code, {})
    except Exception as exc:
        print("FAILED", code, type(exc).__name__, str(exc)[:160])
threads = [threading.Thread(target=enter, args=(code,)) for code in entries]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("DONE")
"""


def _race() -> str:
    done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "DONE" in done.stdout, done.stderr[-2000:]
    return done.stdout


def test_threads_that_first_import_at_once_all_succeed() -> None:
    out = _race()
    assert "FAILED" not in out, out


def _imports_heavy(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] in HEAVY for a in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in HEAVY


def _is_ensure(node: ast.AST) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "ensure"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "model_imports"
    )


def _unguarded(tree: ast.Module) -> list[int]:
    """Lines of imports of transformers or ChatTTS with no model_imports.ensure() before them
    in the same body (the module's, a function's or a block's) or in the module's own body
    (which runs before any of its functions can)."""
    if any(_is_ensure(statement) for statement in tree.body):
        return sorted(s.lineno for s in tree.body[: _first_ensure(tree)] if _imports_heavy(s))
    found = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            guarded = False
            for statement in body:
                guarded = guarded or _is_ensure(statement)
                if _imports_heavy(statement) and not guarded:
                    found.append(statement.lineno)
    return sorted(found)


def _first_ensure(tree: ast.Module) -> int:
    return next(i for i, statement in enumerate(tree.body) if _is_ensure(statement))


def test_every_import_of_transformers_or_chattts_is_guarded() -> None:
    unguarded = {}
    for folder in ("core", "gui"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.name == "model_imports.py":
                continue
            lines = _unguarded(ast.parse(path.read_text(encoding="utf-8")))
            if lines:
                unguarded[str(path.relative_to(REPO))] = lines
    assert not unguarded, f"call model_imports.ensure() before these imports: {unguarded}"


def test_the_check_finds_an_unguarded_import() -> None:
    source = (
        "import torch\n"
        "def load():\n"
        "    from ChatTTS import Chat\n"
        "def fine():\n"
        "    model_imports.ensure()\n"
        "    from transformers import LlamaModel\n"
        "import transformers\n"
    )
    assert _unguarded(ast.parse(source)) == [3, 7]
    guarded_module = (
        "import torch\nmodel_imports.ensure()\nimport ChatTTS\ndef f():\n    import ChatTTS\n"
    )
    assert _unguarded(ast.parse(guarded_module)) == []
    assert _unguarded(ast.parse("import ChatTTS\nmodel_imports.ensure()\n")) == [1]
