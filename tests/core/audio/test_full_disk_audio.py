"""Audio written to a full or read-only disk: every writer (save, the streaming writer, the AAC
writer) says the same one sentence for the same failure (output.cannot_save), leaves no temp
file, and the file that was there before stays as it was."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from audio_fakes import noise
from disk_faults import fill, read_only, small_disk

from chattts_studio.core.audio import output
from chattts_studio.core.audio.m4b import AacWriter
from chattts_studio.core.audio.stream_writer import AudioStreamWriter
from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import said

AUDIO = noise(4.0, 11)  # 96,000 samples: more than the small disks below hold as audio


def _save(path: Path) -> None:
    output.save(path, AUDIO)


def _stream(path: Path) -> None:
    with AudioStreamWriter(path, pause_seconds=0.1) as out:
        for first in range(0, len(AUDIO), 24_000):
            out.add_segment(AUDIO[first : first + 24_000])


def _aac(path: Path) -> None:
    with AacWriter(path, pause_seconds=0.1) as out:
        out.mark("one")
        for first in range(0, len(AUDIO), 24_000):
            out.add_segment(AUDIO[first : first + 24_000])


WRITERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "save": (_save, "wav"),
    "stream": (_stream, "flac"),
    "aac": (_aac, "m4b"),
}


def _refused(write: Callable[[Path], None], target: Path) -> str:
    with pytest.raises(AudioError) as caught:
        write(target)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message, message
    # "Cannot write to": the check made before any work (atomic.target_problem).
    assert message.startswith((f"Cannot save {target}: ", f"Cannot write to {target}: ")), message
    return message


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_full_disk_is_one_sentence_and_the_old_file_stays(tmp_path: Path, name: str) -> None:
    write, ext = WRITERS[name]
    with small_disk(tmp_path / "disk", size="256k") as disk:
        target = disk / f"out.{ext}"
        target.write_bytes(b"the file saved before")
        fill(disk, leave=8192)
        message = _refused(write, target)
        assert "the disk is full" in message, message
        assert target.read_bytes() == b"the file saved before"
        assert sorted(p.name for p in disk.iterdir()) == [".filler", target.name]


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_read_only_disk_is_one_sentence_and_the_old_file_stays(tmp_path: Path, name: str) -> None:
    write, ext = WRITERS[name]
    with small_disk(tmp_path / "disk", size="256k") as disk:
        target = disk / f"out.{ext}"
        target.write_bytes(b"the file saved before")
        read_only(disk)
        message = _refused(write, target)
        # atomic.target_problem says "permission denied" for a read-only file system (os.access
        # cannot tell the two apart); the writers' own sentence says "read-only".
        assert "read-only" in message or "permission denied" in message, message
        assert target.read_bytes() == b"the file saved before"
        assert [p.name for p in disk.iterdir()] == [target.name]


def test_every_writer_says_an_encoder_failure_in_the_same_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One mapping for all (it was written three times): an encoder's error that is not the
    disk's is "Cannot save {path}: {reason}.", translatable, from each writer."""
    import av

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise sf.LibsndfileError(0, "Error : the encoder broke.")

    monkeypatch.setattr(output.sf, "write", broken)
    monkeypatch.setattr(sf.SoundFile, "write", broken)
    monkeypatch.setattr(av.AudioFrame, "from_ndarray", broken)
    monkeypatch.setattr(output, "disk_nearly_full", lambda _folder: False)
    seen = set()
    for name, (write, ext) in WRITERS.items():
        target = tmp_path / f"{name}.{ext}"
        with pytest.raises(AudioError) as caught:
            write(target)
        sentence = said(caught.value)
        assert getattr(sentence, "template", None) == "Cannot save {path}: {reason}.", name
        assert str(caught.value).startswith(f"Cannot save {target}: Error : the encoder broke")
        seen.add(sentence.template)
        assert not list(tmp_path.iterdir()), "a temp file was left"
    assert len(seen) == 1
    np.testing.assert_array_equal(AUDIO, noise(4.0, 11))
