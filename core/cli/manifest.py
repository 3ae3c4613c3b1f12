"""chattts-studio-cli render MANIFEST -o FOLDER: a .jsonl or .csv manifest of items to one
audio file each plus FOLDER/manifest.out.jsonl; resumable; locally or with --ray on a Ray
cluster."""

import argparse
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from chattts_studio.core.cli.common import err
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import Cancelled, StudioError
from chattts_studio.core.render.manifest.store import ItemEntry

if TYPE_CHECKING:
    from chattts_studio.core.render.manifest.cluster import ClusterRender
    from chattts_studio.core.render.manifest.items import ManifestItem
    from chattts_studio.core.render.manifest.run import ManifestOptions

EXIT_CANCELLED = 130


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
    if args.ray is None and (args.ray_cpus_per_actor != 1 or args.ray_actors is not None):
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


def cmd_render_manifest(args: argparse.Namespace) -> int:
    from chattts_studio.core.render.manifest.items import check_speakers, read_manifest

    options = _options(args)
    source = Path(args.book)
    folder = Path(args.output)
    if folder.exists() and not folder.is_dir():
        raise StudioError(f"{folder} is not a folder; give a folder for the render.")
    if not folder.exists() and not folder.parent.is_dir():
        raise StudioError(f"The folder {folder.parent} does not exist.")
    if args.ray_cpus_per_actor < 1:
        raise StudioError("--ray-cpus-per-actor must be 1 or more.")
    if args.ray_actors is not None and args.ray_actors < 1:
        raise StudioError("--ray-actors must be 1 or more.")
    items = read_manifest(source)  # a bad manifest fails before the model loads
    check_speakers(items, source)
    if args.threads is not None:
        if not 1 <= args.threads <= 256:
            raise StudioError("The thread count must be between 1 and 256.")
        import torch

        torch.set_num_threads(args.threads)
    cluster = None
    if args.ray is not None:
        from chattts_studio.core.render.manifest.cluster import ClusterRender

        cluster = ClusterRender(
            args.model, args.precision, args.ray, args.ray_cpus_per_actor, args.ray_actors
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
    from chattts_studio.core.cli.common import load_engine
    from chattts_studio.core.render.manifest.items import resolve_items
    from chattts_studio.core.render.manifest.run import ManifestJob, render_local

    source, folder = Path(args.book), Path(args.output)
    # The driver resolves every speaker once (a seed's speaker is drawn here, a cloned
    # voice's transcript normalised here, never on a worker); on a cluster it needs the
    # model only for that.
    engine = load_engine(args.model, "cpu" if cluster else args.device, args.precision)
    work = resolve_items(items, engine, source)
    assert engine.loaded is not None
    random_weights = engine.loaded.info.random_weights
    job = ManifestJob(work, folder, options, engine.loaded)
    token = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: token.cancel())
    try:
        with job.store:
            pending = job.pending()
            where = f"on Ray, {cluster.stats.actors} worker(s)" if cluster else "here"
            err(
                f"{source.name}: {len(work)} item(s), {len(job.kept)} already in {folder}; "
                f"making {len(pending)} {where}"
            )
            progress = _Progress(len(work), len(job.kept))
            try:
                if cluster is not None:
                    engine.unload()
                    made = cluster.run(job, token, progress)
                else:
                    made = render_local(job, engine, token, progress)
            except Cancelled:
                done = len(job.kept) + len(job.store.made)
                err(
                    f"cancelled: {done} of {len(work)} items are in {folder}; "
                    "run the same command to go on"
                )
                return EXIT_CANCELLED
            output = job.finish()
    finally:
        signal.signal(signal.SIGINT, previous)
    note = " (random demo weights: noise, not speech)" if random_weights else ""
    extra = ""
    if cluster is not None and cluster.stats.requeued:
        extra = f"; {cluster.stats.requeued} chunk(s) re-queued after a worker failed"
    print(
        f"rendered {folder}: {len(work)} item(s), {made} made, {len(job.kept)} kept from "
        f"before, RTF {progress.rtf}{extra}{note}"
    )
    print(f"  {output}")
    return 0
