"""The render services as every front end calls them: a book resumed after a cancel keeps what
the first call made and makes only the rest, to the same audio as one uninterrupted call; a
manifest the same, here or on a cluster (which gets the items once the driver's model is
unloaded)."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.engine_choice import EngineKind
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.render.book import RenderOptions, RenderProgress
from chattts_studio.core.render.manifest.item_store import ItemEntry
from chattts_studio.core.render.manifest.items import read_manifest
from chattts_studio.core.render.manifest.run import ManifestJob, ManifestOptions, render_local
from chattts_studio.core.services.render_book import (
    BookPlan,
    BookRendered,
    NothingToSpeak,
    RenderCancelled,
    render_book,
)
from chattts_studio.core.services.render_manifest import (
    ManifestCancelled,
    ManifestPlan,
    render_manifest,
)
from chattts_studio.core.text.chapters import text_chapters

BOOK = "第一章\n你好。今天天气很好。我们走吧。\n\n第二章\n再见。明天见。谢谢你。\n"
REQUEST = SynthesisRequest("", seed=3, refine_text=False, segment_size=8)
OPTIONS = RenderOptions(format="wav", subtitles="srt", group_size=2)


def _render(
    engine: Engine, folder: Path, cancel_after: int | None = None
) -> tuple[BookRendered | RenderCancelled, list[BookPlan], list[str]]:
    token = CancelToken()
    plans: list[BookPlan] = []
    lines: list[str] = []
    made = [0]

    def progress(_p: RenderProgress) -> None:
        made[0] += 1
        if cancel_after is not None and made[0] >= cancel_after:
            token.cancel()

    try:
        done = render_book(
            engine,
            text_chapters(BOOK, "book"),
            REQUEST,
            folder,
            OPTIONS,
            cancel=token,
            on_plan=plans.append,
            on_progress=progress,
            on_line=lines.append,
        )
    except RenderCancelled as stop:
        return stop, plans, lines
    return done, plans, lines


def test_a_book_resumed_after_a_cancel_makes_only_the_rest(engine: Engine, tmp_path: Path) -> None:
    whole, plans, lines = _render(engine, tmp_path / "whole")
    assert isinstance(whole, BookRendered)
    total = plans[0].total
    assert plans == [BookPlan("book", 2, total, 0, 2, [])] and total >= 4
    assert whole.made == total and whole.kept == 0 and whole.rtf is not None
    chapter_names = [p.name for p in whole.chapter_files]
    assert [n.split(" ", 1)[0] for n in chapter_names] == ["01", "02"]
    assert [p.name for p in whole.book_files] == ["chapters.json", "chapters.txt"]
    assert whole.files == whole.chapter_files + whole.book_files
    assert all(p.is_file() for p in whole.files)
    assert [line for line in lines if line.startswith("wrote")] == [
        f"wrote {p}" for p in whole.chapter_files
    ]
    listing = json.loads((tmp_path / "whole" / "chapters.json").read_text())
    assert whole.audio_seconds == pytest.approx(listing["duration"] - 1.0)  # one chapter pause

    stopped, plans, _ = _render(engine, tmp_path / "resumed", cancel_after=3)
    assert isinstance(stopped, RenderCancelled)
    assert stopped.done == 3 and stopped.total == total
    resumed, plans, _ = _render(engine, tmp_path / "resumed")
    assert isinstance(resumed, BookRendered)
    assert plans[0].kept == 3  # what the cancelled call made is kept
    assert resumed.kept == 3 and resumed.made == total - 3
    assert [p.name for p in resumed.files] == [p.name for p in whole.files]
    for a, b in zip(whole.chapter_files, resumed.chapter_files, strict=True):
        assert np.array_equal(sf.read(str(a))[0], sf.read(str(b))[0])
    again, _, _ = _render(engine, tmp_path / "resumed")  # nothing left to make
    assert isinstance(again, BookRendered) and again.made == 0 and again.kept == total


def test_a_book_with_nothing_to_speak_is_refused_before_any_work(
    engine: Engine, tmp_path: Path
) -> None:
    with pytest.raises(NothingToSpeak) as refused:
        render_book(engine, text_chapters("🙂🙂🙂", "Smiles"), REQUEST, tmp_path, OPTIONS)
    assert refused.value.title == "Smiles" and "nothing ChatTTS can speak" in str(refused.value)
    assert list(tmp_path.iterdir()) == []


ITEMS = [{"id": f"i{n}", "text": f"你好{n}。", "speaker": str(n % 2)} for n in range(5)]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS), "utf-8")
    return path


def test_a_manifest_resumed_after_a_cancel_makes_only_the_rest(
    engine: Engine, manifest: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "out"
    items = read_manifest(manifest)
    options = ManifestOptions(format="flac", slots=2)
    token = CancelToken()
    plans: list[ManifestPlan] = []

    def stop_after_two(entry: ItemEntry) -> None:
        if len(list(folder.glob("*.flac"))) >= 2:
            token.cancel()

    with pytest.raises(ManifestCancelled) as stopped:
        render_manifest(
            engine, items, manifest, folder, options, cancel=token, on_item=stop_after_two
        )
    done = stopped.value.done
    assert 2 <= done < 5 and stopped.value.total == 5
    made: list[str] = []
    result = render_manifest(
        engine,
        items,
        manifest,
        folder,
        options,
        on_plan=plans.append,
        on_item=lambda e: made.append(e.id),
    )
    assert plans == [ManifestPlan(5, done, 5 - done)]
    assert result.made == 5 - done == len(made) and result.kept == done and result.items == 5
    assert result.output.is_file() and result.random_weights
    lines = result.output.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [i["id"] for i in ITEMS]


def test_a_manifest_on_a_cluster_gets_the_items_once_the_driver_unloaded(
    demo_model: str, manifest: Path, tmp_path: Path
) -> None:
    driver = Engine()
    driver.load(demo_model, "cpu", "fp32")
    worker = Engine()
    worker.load(demo_model, "cpu", "fp32")
    seen: list[bool] = []

    class Cluster:
        engine = EngineKind.TORCH  # what its workers run

        def run(self, job: ManifestJob, cancel: CancelToken | None = None, on_item=None) -> int:  # type: ignore[no-untyped-def]
            seen.append(driver.loaded is None)
            return render_local(job, worker, cancel, on_item)

    try:
        result = render_manifest(
            driver,
            read_manifest(manifest),
            manifest,
            tmp_path / "out",
            ManifestOptions(slots=2),
            cluster=Cluster(),
        )
    finally:
        worker.unload()
    assert seen == [True]  # the workers hold the model while they run
    assert result.made == 5 and result.kept == 0 and result.output.is_file()
