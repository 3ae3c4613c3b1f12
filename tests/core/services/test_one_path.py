"""One path per job: the front ends (the CLI, the window, the speech API, the Ray driver) call
the services in chattts_studio.core.services; none builds the job machinery itself again. Found
from the AST: a call of a machinery class or function, or of the engine's synthesis methods,
in a front end's module fails here."""

import ast
from pathlib import Path

from conftest import REPO

# What the services own: building one of these in a front end writes a job a second time.
MACHINERY = {
    "RenderJob",  # core/render/book.py: a book's segments
    "Assembler",  # core/render/output.py: a book's outputs
    "Batcher",  # core/engine/batch/batcher.py: the continuous batch
    "SpeechServer",  # core/serve/app.py: the ASGI app factory
    "ApiThread",
    "uvicorn_server",
    "serve_app",
    "ItemRenderer",  # core/render/manifest/run.py: a manifest's items
    "ManifestJob",
    "render_local",
    "resolve_items",
    "plan_dialogue",  # core/engine/script_plan.py: a script's plan
    "keep_voice",  # core/services/keep_voice.py: a voice into the library
}
# The engine's job methods: called on an engine, in a front end, they bypass the services.
ENGINE_JOBS = {"synthesize", "audition", "clone_voice"}


def front_ends() -> list[Path]:
    found = [*(REPO / "core" / "cli").rglob("*.py"), *(REPO / "gui").rglob("*.py")]
    found += (REPO / "core" / "serve").rglob("*.py")
    found.append(REPO / "core" / "render" / "manifest" / "cluster.py")
    # The API's own service (SpeechService: its batcher and app, built once for every caller)
    # lives beside uvicorn, below core.services: the one place that builds them.
    service = REPO / "core" / "serve" / "running.py"
    return sorted(p for p in found if "__pycache__" not in p.parts and p != service)


def built_here(source: str) -> list[str]:
    """The machinery a module's code calls (beyond what the module defines itself), each as
    'line: what'."""
    tree = ast.parse(source)
    defined = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    wrong: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in MACHINERY and name not in defined:
            wrong.append((node.lineno, name))
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in ENGINE_JOBS
            and "engine" in ast.unparse(func.value).lower()
        ):
            wrong.append((node.lineno, ast.unparse(func)))
    return [f"{line}: {what}" for line, what in sorted(wrong)]


def test_the_finder_sees_machinery_built_again() -> None:
    source = (
        "from chattts_studio.core.render.book import RenderJob\n"
        "import chattts_studio.core.engine.batch.batcher as b\n"
        "def f(engine, self):\n"
        "    RenderJob(engine).plan()\n"
        "    b.Batcher(engine)\n"
        "    list(engine.synthesize(plan))\n"
        "    self._engine().audition(request, [])\n"
        "    self.host.synthesize(job)  # the window's host, not an engine\n"
        "    render_book(engine, book)\n"
    )
    assert built_here(source) == [
        "4: RenderJob",
        "5: Batcher",
        "6: engine.synthesize",
        "7: self._engine().audition",
    ]
    assert built_here("class Batcher:\n    pass\nBatcher()\n") == []  # its own module


def test_no_front_end_builds_the_job_machinery_itself() -> None:
    modules = front_ends()
    assert REPO / "core" / "cli" / "render.py" in modules
    assert REPO / "gui" / "worker" / "worker.py" in modules
    wrong = [
        f"{path.relative_to(REPO)}:{where}"
        for path in modules
        for where in built_here(path.read_text(encoding="utf-8"))
    ]
    assert not wrong, f"call the service in chattts_studio.core.services instead: {wrong}"
