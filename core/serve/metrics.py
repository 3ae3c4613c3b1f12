"""The speech API's figures in Prometheus's text format (requests, queue, rows, audio, real-time
factor, memory), read at scrape time as plain data, so replicas can share theirs through Ray,
labelled replica="ID".
"""

import threading
from dataclasses import dataclass

import psutil

from chattts_studio.core.engine.batch.batcher import Batcher
from chattts_studio.core.serve.page import PAGE_FILES


@dataclass(frozen=True)
class Family:
    name: str  # without the chattts_ prefix
    kind: str  # counter or gauge
    help: str
    samples: tuple[tuple[str, float], ...]  # (labels inside the braces, or "", value)


def render(by_replica: dict[str, list[Family]]) -> str:
    """Prometheus text for families from one or more sources; with one source named "" the
    samples are written unlabelled (a single server)."""
    lines: list[str] = []
    order: dict[str, Family] = {}
    for families in by_replica.values():
        for family in families:
            order.setdefault(family.name, family)
    for name, first in order.items():
        lines.append(f"# HELP chattts_{name} {first.help}")
        lines.append(f"# TYPE chattts_{name} {first.kind}")
        for replica, families in by_replica.items():
            for family in (f for f in families if f.name == name):
                for labels, value in family.samples:
                    if replica:
                        tag = f'replica="{_escaped(replica)}"'
                        labels = f"{tag},{labels}" if labels else tag
                    lines.append(
                        f"chattts_{name}{{{labels}}} {value:g}"
                        if labels
                        else f"chattts_{name} {value:g}"
                    )
    return "\n".join(lines) + "\n"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class ServerMetrics:
    def __init__(self, batcher: Batcher) -> None:
        self.batcher = batcher
        self.answers: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def answered(self, path: str, status: int) -> None:
        # Known routes only, so a scanner's random paths cannot grow the label set.
        known = (
            "/v1/audio/speech",
            "/v1/audio/captioned_speech",
            "/v1/models",
            "/v1/audio/voices",
            "/health",
            "/metrics",
            *PAGE_FILES,
        )
        key = (path if path in known else "other", status)
        with self._lock:
            self.answers[key] = self.answers.get(key, 0) + 1

    def text(self) -> str:
        return render({"": self.families()})

    def families(self) -> list[Family]:
        s = self.batcher.stats
        out: list[Family] = []

        def metric(name: str, kind: str, help: str, samples: list[tuple[str, float]]) -> None:
            out.append(Family(name, kind, help, tuple((tag.strip("{}"), v) for tag, v in samples)))

        with self._lock:
            answers = sorted(self.answers.items())
        metric(
            "http_requests_total",
            "counter",
            "HTTP requests answered, by path and status.",
            [(f'{{path="{p}",status="{c}"}}', n) for (p, c), n in answers],
        )
        metric("speech_requests_total", "counter", "Speech requests queued.", [("", s.requests)])
        metric(
            "speech_requests_finished_total",
            "counter",
            "Speech requests by outcome.",
            [
                ('{outcome="completed"}', s.completed),
                ('{outcome="cancelled"}', s.cancelled),
                ('{outcome="failed"}', s.failed),
            ],
        )
        metric(
            "speech_responses_ended_total",
            "counter",
            "Speech responses that ended early: the client left, stopped reading (cut off), "
            "or the audio failed after the headers (aborted).",
            [
                ('{reason="disconnected"}', s.disconnected),
                ('{reason="stalled"}', s.stalled),
                ('{reason="aborted"}', s.aborted),
            ],
        )
        metric(
            "queue_length",
            "gauge",
            "Requests not decoding yet.",
            [("", self.batcher.queue_length())],
        )
        metric(
            "queued_segments", "gauge", "Segments waiting for a row.", [("", s.waiting_segments)]
        )
        metric("rows_busy", "gauge", "Decoder rows in use at the last step.", [("", s.rows_busy)])
        metric("rows", "gauge", "Decoder rows.", [("", self.batcher.slots)])
        metric("decode_steps_total", "counter", "Row-steps decoded.", [("", s.steps)])
        metric("audio_seconds_total", "counter", "Seconds of audio made.", [("", s.audio_seconds)])
        metric("busy_seconds_total", "counter", "Seconds the decoder ran.", [("", s.busy_seconds)])
        rtf = s.busy_seconds / s.audio_seconds if s.audio_seconds else 0.0
        metric(
            "rtf", "gauge", "Busy seconds per audio second so far (lower is faster).", [("", rtf)]
        )
        metric(
            "memory_bytes",
            "gauge",
            "Resident memory of the server process.",
            [("", psutil.Process().memory_info().rss)],
        )
        device = self.batcher.engine.loaded.device.id if self.batcher.engine.loaded else "cpu"
        if device.startswith("cuda"):
            import torch

            used = torch.cuda.memory_allocated(device)
            metric("gpu_memory_bytes", "gauge", "GPU memory allocated by torch.", [("", used)])
        return out
