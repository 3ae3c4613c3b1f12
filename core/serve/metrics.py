"""The speech API's figures in Prometheus's text format: requests by answer, the queue, rows
in use, audio made, the real-time factor and memory. Read at scrape time from plain counters."""

import threading

import psutil

from chattts_studio.core.engine.batcher import Batcher
from chattts_studio.core.serve.page import PAGE_FILES


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
        s = self.batcher.stats
        lines: list[str] = []

        def metric(name: str, kind: str, help: str, samples: list[tuple[str, float]]) -> None:
            lines.append(f"# HELP chattts_{name} {help}")
            lines.append(f"# TYPE chattts_{name} {kind}")
            lines.extend(f"chattts_{name}{labels} {value:g}" for labels, value in samples)

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
        return "\n".join(lines) + "\n"
