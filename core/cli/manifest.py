"""chattts-studio-cli render MANIFEST -o FOLDER (the render command's other half): a .jsonl
or .csv manifest of items to one audio file each plus FOLDER/manifest.out.jsonl; resumable;
locally or with --ray on a Ray cluster; through the render-a-manifest service."""

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.cli.common import (
    EXIT_CANCELLED,
    check_engine_choice,
    check_folder,
    err,
    load_engine,
    set_threads,
)
from chattts_studio.core.cli.progress import interrupt_cancels
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.manifest.item_store import ItemEntry

if TYPE_CHECKING:
    from chattts_studio.core.render.manifest.cluster import ClusterRender
    from chattts_studio.core.render.manifest.items import ManifestItem
    from chattts_studio.core.render.manifest.run import ManifestOptions
    from chattts_studio.core.services.render_manifest import ManifestPlan


def _options(args: argparse.Namespace) -> "ManifestOptions":
    from chattts_studio.core.engine.request import AUTO_BATCH_MAX, SynthesisRequest
    from chattts_studio.core.render.manifest.run import ITEM_FORMATS, ManifestOptions

    stock = SynthesisRequest(text="")
    unused = [
        # The manifest's exact decoder samples with the speech API's fixed settings and no
        # refine pass: refused when asked for, rather than silently not applied.
        (args.temperature != stock.temperature, "--temperature"),
        (args.top_p != stock.top_p, "--top-p"),
        (args.top_k != stock.top_k, "--top-k"),
        (args.no_refine, "--no-refine (it never refines)"),
        (args.subtitles, "--subtitles"),
        (args.loudness is not None, "--loudness"),
        (args.speaker, "--speaker (each item names its speaker)"),
        (args.decoder == "stock", "--decoder stock"),
    ]
    for given, name in unused:
        if given:
            raise StudioError(f"A manifest render does not take {name}.")
    if args.format not in ITEM_FORMATS:
        raise StudioError(f"A manifest render writes {', '.join(ITEM_FORMATS)}, not {args.format}.")
    if args.ray is None and (args.ray_cpus_per_actor is not None or args.ray_actors is not None):
        raise StudioError("--ray-cpus-per-actor and --ray-actors go with --ray.")
    if not 0 <= args.speed <= 9:
        raise StudioError("The speed must be between 0 and 9.")
    if not 0.0 <= args.pause <= 10.0:
        raise StudioError("The pause must be between 0 and 10 seconds.")
    if not 8 <= args.segment_size <= 400:
        raise StudioError("The segment size must be between 8 and 400 characters.")
    if not 0 <= args.batch_size <= 256:
        raise StudioError("The batch size must be between 0 and 256.")
    return ManifestOptions(
        format=args.format,
        pause=args.pause,
        segment_size=args.segment_size,
        speed=args.speed,
        slots=args.batch_size or AUTO_BATCH_MAX,
    )


class _Progress:
    """A line on stderr every few seconds (and at the end): items done, audio, RTF."""

    def __init__(self, total: int, kept: int) -> None:
        self.total, self.done, self.audio = total, kept, 0.0
        self.started = self.last = time.perf_counter()

    def __call__(self, entry: ItemEntry) -> None:
        self.done += 1
        self.audio += entry.seconds
        now = time.perf_counter()
        if now - self.last >= 2.0 or self.done == self.total:
            self.last = now
            err(f"  {self.done}/{self.total} items, {self.audio:.1f} s of audio, RTF {self.rtf}")

    @property
    def rtf(self) -> str:
        wall = time.perf_counter() - self.started
        return f"{wall / self.audio:.3f}" if self.audio else "-"


def render_manifest_command(args: argparse.Namespace) -> int:
    from chattts_studio.core.render.manifest.items import check_speakers, read_manifest

    options = _options(args)
    source = Path(args.book)
    check_folder(Path(args.output))
    if args.ray_cpus_per_actor is not None and args.ray_cpus_per_actor < 1:
        raise StudioError("--ray-cpus-per-actor must be 1 or more.")
    if args.ray_actors is not None and args.ray_actors < 1:
        raise StudioError("--ray-actors must be 1 or more.")
    items = read_manifest(source)  # a bad manifest fails before the model loads
    check_speakers(items, source)
    set_threads(args.threads)
    cluster = None
    if args.ray is None:
        check_engine_choice(args.device, args.precision, args.engine)
    else:
        from chattts_studio.core.render.manifest.cluster import ClusterRender

        # The workers' engine and threads are settled as a render here would settle them,
        # so both write the same files bit for bit (docs/rendering.md).
        cluster = ClusterRender(
            args.model,
            args.precision,
            args.ray,
            args.ray_cpus_per_actor,
            args.ray_actors,
            engine=args.engine,
            threads=args.threads,
        )
        cluster.connect()  # no Ray, or no cluster: one sentence before the model loads
    try:
        return _run(args, items, options, cluster)
    finally:
        if cluster is not None:
            cluster.close()


def _run(
    args: argparse.Namespace,
    items: "list[ManifestItem]",
    options: "ManifestOptions",
    cluster: "ClusterRender | None",
) -> int:
    from chattts_studio.core.services.render_manifest import ManifestCancelled, render_manifest

    source, folder = Path(args.book), Path(args.output)
    # On a cluster the driver needs the model only to resolve the speakers: torch, no export.
    if cluster is not None:
        engine = load_engine(args.model, "cpu", args.precision, "torch")
    else:
        engine = load_engine(args.model, args.device, args.precision, args.engine)
    progress: _Progress | None = None

    def planned(plan: "ManifestPlan") -> None:
        nonlocal progress
        where = f"on Ray, {cluster.stats.actors} worker(s)" if cluster else "here"
        err(
            f"{source.name}: {plan.items} item(s), {plan.kept} already in {folder}; "
            f"making {plan.pending} {where}"
        )
        progress = _Progress(plan.items, plan.kept)

    def made_one(entry: ItemEntry) -> None:
        assert progress is not None
        progress(entry)

    with interrupt_cancels() as token:
        try:
            done = render_manifest(
                engine,
                items,
                source,
                folder,
                options,
                cluster=cluster,
                cancel=token,
                on_plan=planned,
                on_item=made_one,
            )
        except ManifestCancelled as stop:
            err(
                f"cancelled: {stop.done} of {stop.total} items are in {folder}; "
                "run the same command to go on"
            )
            return EXIT_CANCELLED
    note = " (random demo weights: noise, not speech)" if done.random_weights else ""
    extra = ""
    if cluster is not None and cluster.stats.requeued:
        extra = f"; {cluster.stats.requeued} chunk(s) re-queued after a worker failed"
    rtf = progress.rtf if progress is not None else "-"
    print(
        f"rendered {folder}: {done.items} item(s), {done.made} made, {done.kept} kept from "
        f"before, RTF {rtf}{extra}{note}"
    )
    print(f"  {done.output}")
    return 0
