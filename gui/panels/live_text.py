"""What the live panel says in words: a job's stage, the engine's progress and the memory
figures, from the engine's snapshot (live.py shows them)."""

from PySide6.QtCore import QT_TRANSLATE_NOOP

from chattts_studio.core.engine.metrics import LiveSnapshot, MemorySnapshot
from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.i18n import translate

MIB = 2**20


def describe_memory(memory: MemorySnapshot | None) -> str:
    if memory is None:
        return "-"
    if memory.device.startswith("mps"):
        return memory.describe()  # Metal's figures and the process's, labelled as such
    if memory.allocated is not None:
        return translate(
            "Live",
            "VRAM allocated {allocated:.0f} MiB · reserved {reserved:.0f} MiB · peak {peak:.0f} "
            "MiB · total {total:.0f} MiB",
        ).format(
            allocated=memory.allocated / MIB,
            reserved=(memory.reserved or 0) / MIB,
            peak=(memory.peak or 0) / MIB,
            total=(memory.total or 0) / MIB,
        )
    return translate("Live", "process memory (CPU) {rss:.0f} MiB").format(
        rss=(memory.rss or 0) / MIB
    )


def seconds_text(value: float | None) -> str:
    return figure(value, ".2f", " s")


def rate_text(value: float) -> str:
    """Steps per second; "-" while nothing runs (0.0 would read as a stalled job)."""
    return figure(value, ".1f") if value > 0 else "-"


# The stage names the engine (core) and the window report, for the translators.
STAGES = (
    QT_TRANSLATE_NOOP("Stage", "idle"),
    QT_TRANSLATE_NOOP("Stage", "starting"),
    QT_TRANSLATE_NOOP("Stage", "loading"),
    QT_TRANSLATE_NOOP("Stage", "refine"),
    QT_TRANSLATE_NOOP("Stage", "decode"),
    QT_TRANSLATE_NOOP("Stage", "vocoder"),
    QT_TRANSLATE_NOOP("Stage", "done"),
    QT_TRANSLATE_NOOP("Stage", "cancelled"),
    QT_TRANSLATE_NOOP("Stage", "error"),
    QT_TRANSLATE_NOOP("Stage", "model ready"),
    QT_TRANSLATE_NOOP("Stage", "download"),
    QT_TRANSLATE_NOOP("Stage", "building"),
    QT_TRANSLATE_NOOP("Stage", "verifying"),
    QT_TRANSLATE_NOOP("Stage", "audition"),
    QT_TRANSLATE_NOOP("Stage", "load"),
    QT_TRANSLATE_NOOP("Stage", "synthesize"),
    QT_TRANSLATE_NOOP("Stage", "speaker"),
    QT_TRANSLATE_NOOP("Stage", "build"),
    QT_TRANSLATE_NOOP("Stage", "switching precision"),
    QT_TRANSLATE_NOOP("Stage", "making the ONNX fp32 decode step (once per model)"),
    QT_TRANSLATE_NOOP("Stage", "making the ONNX int8 decode step (once per model)"),
    QT_TRANSLATE_NOOP("Stage", "starting ONNX Runtime"),
    QT_TRANSLATE_NOOP("Stage", "ready"),
    QT_TRANSLATE_NOOP("Stage", "takes"),
    QT_TRANSLATE_NOOP("Stage", "checking takes"),
    QT_TRANSLATE_NOOP("Stage", "render"),
    QT_TRANSLATE_NOOP("Stage", "project"),
)
ENDED = ("idle", "done", "cancelled", "error")


def stage_text(stage: str) -> str:
    """A stage as the panel shows it (the engine's and the window's names, translated)."""
    return translate("Stage", stage)


def engine_progress(snap: LiveSnapshot) -> str:
    """The progress line of an engine job: the refine pass moving step by step, then the
    segments decoding together (in flight) and those done, and the GPT steps."""
    steps = translate("Live", "steps {done} of ~{total}").format(
        done=snap.steps_done, total=snap.steps_planned
    )
    if snap.stage == "refine" and snap.refine_rows:
        text = translate("Live", "refining {texts} · step {step} of at most {limit}").format(
            texts=plural(snap.refine_rows, "segment"),
            step=snap.refine_steps,
            limit=snap.refine_limit,
        )
        if snap.refined:
            text += " · " + translate("Live", "{done} of {total} refined").format(
                done=snap.refined, total=snap.segments
            )
        return text
    if snap.stage == "refine" and snap.segments:
        return translate("Live", "refine {done} of {total}").format(
            done=snap.refined, total=snap.segments
        )
    if snap.in_flight and snap.stage not in ENDED:
        flying = translate("Live", "{segments} in flight, {done} of {total} done").format(
            segments=plural(snap.in_flight, "segment"),
            done=snap.segments_done,
            total=snap.segments,
        )
        return f"{flying} · {steps}"
    if snap.segments:
        segment = translate("Live", "segment {segment} of {total}").format(
            segment=max(1, snap.segment), total=snap.segments
        )
        return f"{segment} · {steps}"
    return "-"
