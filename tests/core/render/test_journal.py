"""The journal store both renders keep (render/journal.py): the folder made, a second render
kept out until the first closes, the temp files a killed render left removed, lines appended
and read back by the next open, a line cut short by a kill skipped, and a folder that cannot
be used said in one translatable sentence."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.journal import JOURNAL, RenderFolder, journal_entries
from chattts_studio.core.render.manifest.item_store import ManifestStore
from chattts_studio.core.render.segment_store import SegmentStore


@dataclass(frozen=True)
class Piece:
    name: str
    size: int


class PieceStore(RenderFolder):
    version = 3

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, ".pieces")
        self.pieces: list[Piece] = []

    def _read_journal(self, path: Path) -> None:
        self.pieces = journal_entries(path, Piece)


def test_lines_appended_are_read_by_the_next_open_and_a_cut_line_is_skipped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "out"
    with PieceStore(folder) as store:
        assert store.pieces == []
        store.append(Piece("a", 1))
        store.append(Piece("b", 2))
    journal = folder / ".pieces" / JOURNAL
    first = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    assert first == {"v": 3, "name": "a", "size": 1}
    with journal.open("a", encoding="utf-8") as fh:
        fh.write('{"name": "c", "si')  # a kill in the middle of a line
    with PieceStore(folder) as store:
        assert store.pieces == [Piece("a", 1), Piece("b", 2)]
        store.append(Piece("d", 4))
    with PieceStore(folder) as store:
        assert store.pieces == [Piece("a", 1), Piece("b", 2), Piece("d", 4)]


def test_a_second_open_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = PieceStore(tmp_path / "out").open()
    with pytest.raises(StudioError, match="Another render is working in"):
        PieceStore(tmp_path / "out").open()
    first.close()
    PieceStore(tmp_path / "out").open().close()


def test_temp_files_a_killed_render_left_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    (folder / ".pieces").mkdir(parents=True)
    left = [folder / ".a.1234.part.flac", folder / ".pieces" / ".b.5678.part"]
    for path in left:
        path.write_bytes(b"half")
    (folder / "kept.flac").write_bytes(b"whole")
    with PieceStore(folder):
        assert not any(path.exists() for path in left)
        assert (folder / "kept.flac").exists()


@pytest.mark.parametrize("store", [SegmentStore, ManifestStore, PieceStore])
def test_a_folder_that_cannot_be_used_is_one_translatable_sentence(
    tmp_path: Path, store: Callable[[Path], RenderFolder]
) -> None:
    with pytest.raises(StudioError) as missing:
        store(tmp_path / "no" / "out").open()
    assert str(missing.value) == f"The folder {tmp_path / 'no'} does not exist."
    assert missing.value.template == "The folder {folder} does not exist."
    (tmp_path / "file").write_text("x")
    with pytest.raises(StudioError) as not_folder:
        store(tmp_path / "file").open()
    assert not_folder.value.template == "{folder} is not a folder; give a folder for the render."
