"""Names made from titles are names Windows accepts, on every system (core/render/names.py): a
book titled CON renders into CON_, not into a folder Windows cannot open; and the manifest's
ids refuse the same names through the same function."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from chattts_studio.core.render.manifest.items import ManifestError, read_manifest
from chattts_studio.core.render.names import RESERVED_STEMS, is_reserved_name, safe_name

RESERVED = [
    "CON", "con", "Prn", "AUX", "NUL", "CONIN$", "conout$",
    *(f"COM{d}" for d in "0123456789¹²³"), *(f"lpt{d}" for d in "0123456789¹²³"),
]  # fmt: skip


@pytest.mark.parametrize("name", RESERVED)
def test_every_device_name_is_kept_apart(name: str) -> None:
    for title in (name, f"{name}.txt", f"{name} .m4b", f"{name}.", f"{name}  ", f" {name}"):
        assert is_reserved_name(title.strip(" .")), title
        safe = safe_name(title, "book")
        assert not is_reserved_name(safe), (title, safe)
        assert safe.lower().startswith(name.lower()) and "_" in safe, (title, safe)


def test_names_windows_accepts_are_left_as_they_are() -> None:
    assert safe_name("CON_", "book") == "CON_"  # the kept-apart name is stable
    assert safe_name("Console", "book") == "Console"
    assert safe_name("COM10", "book") == "COM10"
    assert safe_name("my con", "book") == "my con"
    assert safe_name("四川美食", "book") == "四川美食"
    assert safe_name("aux.txt", "book") == "aux_.txt"
    assert safe_name("CON", "book") == "CON_"
    assert not any(is_reserved_name(n) for n in ("Console", "COM10", "LPT", "icon", "nul_"))


def test_reserved_characters_and_ends_are_removed() -> None:
    assert safe_name('a<b>c:d"e/f\\g|h?i*j', "book") == "a b c d e f g h i j"
    assert safe_name("Book. ", "book") == "Book"  # Windows drops trailing dots and spaces
    assert safe_name("...", "book") == "book"
    assert safe_name("\x00\x1f", "chapter") == "chapter"
    assert safe_name("x" * 100, "book") == "x" * 60
    # Cut to the limit, then kept apart.
    assert safe_name("CON." + "x" * 70, "book") == "CON_." + "x" * 56


def test_the_manifest_refuses_the_same_names(tmp_path: Path) -> None:
    for reserved in ("nul", "COM1.take", "lpt9", "CON", "Aux.x"):
        source = tmp_path / "items.jsonl"
        row = {"id": reserved, "text": "hello", "speaker": "1"}
        source.write_text(json.dumps(row) + "\n", encoding="utf-8")
        with pytest.raises(ManifestError, match="a name some systems reserve"):
            read_manifest(source)
    assert "conin$" in RESERVED_STEMS


def test_a_book_titled_con_renders_into_a_folder_windows_opens(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.gui.render.queue import RenderQueue, folder_name

    queue = RenderQueue()
    qtbot.addWidget(queue)
    queue.folder = tmp_path
    queue.spec_for = lambda source, text, title, folder: SimpleNamespace(  # type: ignore[assignment]
        source=source, text=text, title=title, folder=folder
    )
    item = queue.add(None, "你好。", "CON")
    assert item is not None and item.spec.folder == tmp_path / "CON_"
    assert item.spec.title == "CON"  # the title itself is the person's
    assert folder_name("lpt1.txt") == "lpt1_.txt" and folder_name("?") == "book"
