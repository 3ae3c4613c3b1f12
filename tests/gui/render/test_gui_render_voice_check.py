"""The render queue's voice check, with the tiny demo weights (so the demo speaker model) and a
tiny text: checked, each judged segment is made again (held to a threshold noise cannot reach),
the journal says its tries and the finished line how many were made again, and the encoder is
let go after; unchecked, nothing is judged and no speaker model is chosen."""

from pathlib import Path

from chattts_studio.core.render.journal import JOURNAL, journal_records
from chattts_studio.core.render.segment_store import STORE
from chattts_studio.core.services import project_job, render_job
from chattts_studio.core.speaker.encoder import SpeakerEncoder
from chattts_studio.gui.render import queue as render_queue

RUN_MS = 240_000
TEXT = " ".join(f"We walk home {n} times." for n in range(1, 3))


def quick(window) -> None:  # type: ignore[no-untyped-def]
    """Short segments, one per run group, no refine pass."""
    window.controls.segment_slider.setValue(10)
    window.controls.batch_box.setValue(1)
    window.controls.refine_box.setChecked(False)
    window.result.stream_box.setChecked(False)


def spy_speaker_for(monkeypatch) -> list[SpeakerEncoder]:  # type: ignore[no-untyped-def]
    """The encoders the render job asks project_job.speaker_for for, in order."""
    chosen: list[SpeakerEncoder] = []
    real = project_job.speaker_for

    def recorded(engine):  # type: ignore[no-untyped-def]
        encoder = real(engine)
        chosen.append(encoder)
        return encoder

    monkeypatch.setattr(project_job, "speaker_for", recorded)
    return chosen


def render_text(qtbot, window):  # type: ignore[no-untyped-def]
    window.editor.set_text(TEXT)
    item = window.render_jobs.queue.add_text()
    qtbot.waitUntil(lambda: item.state in ("done", "failed", "cancelled"), timeout=RUN_MS)
    assert item.state == "done", item.detail
    return item


def lines(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    return journal_records(folder / STORE / JOURNAL)


def test_the_voice_check_remakes_drifting_segments_and_says_how_many(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    monkeypatch.setattr(render_job, "VOICE_THRESHOLD", 0.99999)  # every judged one drifts
    chosen = spy_speaker_for(monkeypatch)
    window = make_window()
    quick(window)
    queue = window.render_jobs.queue
    assert not queue.voice_box.isChecked()  # off by default
    queue.voice_box.setChecked(True)
    item = render_text(qtbot, window)
    assert item.spec.voice_check and item.spec.voice_tries == 3
    assert len(chosen) == 1 and chosen[0].demo  # random TTS weights: the demo speaker model
    assert chosen[0]._extractor is None  # let go after the render
    journal = lines(item.spec.folder)
    remade = [line for line in journal if line["tries"]]
    assert journal[0]["tries"] == 0  # the reference: the first segment long enough
    assert remade and all(1 <= line["tries"] <= 3 for line in remade)
    assert item.outcome is not None and item.outcome.voice_checked
    assert item.outcome.voice_rerolled == len(remade)
    assert any("its voice drifted" in warning for warning in item.outcome.warnings)
    text = queue.jobs.item(queue.items.index(item)).text()
    assert f"voice check: {len(remade)} segment" in text and "made again" in text


def test_without_the_voice_check_nothing_is_judged(
    qtbot, make_window, monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(render_queue, "choose_folder", lambda *_args: tmp_path)
    monkeypatch.setattr(render_job, "VOICE_THRESHOLD", 0.99999)  # would remake, were it on
    chosen = spy_speaker_for(monkeypatch)
    window = make_window()
    quick(window)
    queue = window.render_jobs.queue
    item = render_text(qtbot, window)
    assert not item.spec.voice_check and chosen == []
    journal = lines(item.spec.folder)
    assert journal and all(line["tries"] == 0 and line["voice"] is None for line in journal)
    assert item.outcome is not None and not item.outcome.voice_checked
    assert item.outcome.voice_rerolled == 0
    assert "voice check" not in queue.jobs.item(queue.items.index(item)).text()
