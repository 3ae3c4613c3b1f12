"""Rendering a manifest: every item to one audio file in a folder, here in one continuous batch
or on a Ray cluster's workers, resumable (core/render/manifest/): every speaker resolved once,
what the folder lacks made and the output manifest written. A Ray worker's side is
core/render/manifest/run.py's ItemWorker."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.render.manifest.item_store import ItemEntry
from chattts_studio.core.render.manifest.items import ManifestItem, resolve_items
from chattts_studio.core.render.manifest.run import ManifestJob, ManifestOptions, render_local

if TYPE_CHECKING:
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.engine_choice import EngineKind

ItemSink = Callable[[ItemEntry], None]


class ItemCluster(Protocol):
    """Where a manifest's items are made when not here (ClusterRender, on Ray workers)."""

    # The engine its workers load (resolved: torch or onnx), part of the items' identity.
    engine: "EngineKind"

    def run(
        self, job: ManifestJob, cancel: CancelToken | None = None, on_item: ItemSink | None = None
    ) -> int: ...


class ManifestCancelled(Cancelled):
    """Cancelled once what was finished is written: `done` of `total` items are in the
    folder."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"{done} of {total} items written")
        self.done, self.total = done, total


@dataclass(frozen=True)
class ManifestPlan:
    items: int
    kept: int  # already in the folder
    pending: int  # to make now


@dataclass(frozen=True)
class ManifestRendered:
    folder: Path
    output: Path  # the output manifest (manifest.out.jsonl)
    items: int
    made: int
    kept: int
    random_weights: bool


def render_manifest(
    engine: "Engine",
    items: list[ManifestItem],
    source: Path,
    folder: Path,
    options: ManifestOptions,
    *,
    cluster: ItemCluster | None = None,
    cancel: CancelToken | None = None,
    on_plan: Callable[[ManifestPlan], None] | None = None,
    on_item: ItemSink | None = None,
) -> ManifestRendered:
    """Make the items `folder` does not hold yet, here with `engine` or on `cluster`, then the
    output manifest. `engine` resolves every speaker once (a seed's speaker drawn, a cloned
    voice's transcript normalised, never on a worker); with a cluster it is unloaded after
    that. ManifestCancelled once what was finished is written."""
    work = resolve_items(items, engine, source)
    assert engine.loaded is not None
    random_weights = engine.loaded.info.random_weights
    workers = cluster.engine if cluster is not None else None
    job = ManifestJob(work, Path(folder), options, engine.loaded, workers)
    with job.store:
        pending = job.pending()
        if on_plan is not None:
            on_plan(ManifestPlan(len(work), len(job.kept), len(pending)))
        try:
            if cluster is not None:
                engine.unload()  # the workers hold the model now
                made = cluster.run(job, cancel, on_item)
            else:
                made = render_local(job, engine, cancel, on_item)
        except Cancelled:
            raise ManifestCancelled(len(job.kept) + len(job.store.made), len(work)) from None
        output = job.finish()
    return ManifestRendered(Path(folder), output, len(work), made, len(job.kept), random_weights)
