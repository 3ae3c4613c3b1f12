"""The project format fuzzed: a real small project (tests/project_fakes.py, no model) damaged
at random, in project.json and in its take records (wrong types; NaN, inf, 1e999, huge and
negative numbers; nesting thousands deep; odd text; keys removed and added), its files cut
short, replaced by garbage, removed or made links out of the folder, then read, listed,
exported and written through the CLI (in-process) and the store.

Each damage gives a working project (list and export work, the export as long as its chosen
takes and pauses) or one sentence (exit 2, one `error:` line; ProjectError in-process); never
another exception, never a write outside the folder, never a change to a take's files.
Derandomized and bounded, so a run is repeatable and takes about half a minute.
"""

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import soundfile as sf
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st
from project_fakes import file_hashes, small_project, speech, take_of, unsaved_take

from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.cli.main import main
from chattts_studio.core.project import flags, reading, store, writer
from chattts_studio.core.project.store import ProjectError

RAW = "@@raw@@"
EXAMPLES = 200  # files and values damaged together


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three segments with takes, two of them (ids 2 and 1000) known only by their records,
    as a writer killed before it saved project.json leaves them: load recovers them, so a
    damaged record is read too."""
    book = small_project(tmp_path_factory.mktemp("template") / "book")
    unsaved_take(book, 1, 1000, 0.15)
    unsaved_take(book, 3, 2, 0.1)
    assert [len(s.takes) for s in store.load(book).segments] == [2, 2, 2]
    return book


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value: keys and list indices, outermost first."""
    if at:
        yield at
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*at, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*at, index))


def _read(template: Path, name: str) -> Any:
    return json.loads((template / name).read_text(encoding="utf-8"))


# -- what may be done to the files ----------------------------------------------------------------
NASTY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 999, 1000, 2**31 - 1, 2**31, 10**30, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e7, 1e-300, -0.0, 60.0, 60.000001, 0.005, 2.5]),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "hot",
            "../../x.wav",
            "takes/../../x.wav",
            "/etc/passwd",
            "takes/.x.part.wav",
            "takes/s00001-t001.json",
            "takes/s00002-t002.wav",
            "名字\u202e\n\t",
            "\x00",
            "x" * 5000,
        ]
    ),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
)
DEEP = "[" * 5000 + "]" * 5000  # deeper than the parser's recursion allows
RAW_TEXT = st.sampled_from(
    [
        *("1e999", "-1e999", "NaN", "Infinity", "9" * 5000, "1" + "0" * 400, '"\\ud800"'),
        *(DEEP, DEEP, "[" * 40 + "1" + "]" * 40, "{}", "[]", '"\\u0000"'),
    ]
)


# Files in takes/ that are no take's: odd names, names near a record's, a dead writer's temp.
ODD_NAMES = [
    "名字.json",
    "s00001-t002.json\n",
    "s00001-t002.json.",
    "S00001-T002.JSON",
    "s00001-t-02.json",
    "s00001-t0002.json",
    "s0001-t002.json",
    ".s00001-t009.abc.part.wav",
    "-rf",
    " ",
    "\u202e.wav",
]


# A number where one goes: the values that broke exports, playback and re-rolls.
NUMBERS = st.one_of(
    st.sampled_from([float("nan"), float("inf"), -float("inf"), -1, -0.5, 0, 1e7, 1e300]),
    st.sampled_from([10**400, 2**31, 2**63, 0.3, 60, 61, True]),
    st.floats(),
    st.integers(),
)


@st.composite
def json_damage(draw: st.DrawFn, places: list[tuple[Any, ...]], numbers: list[Any]) -> Any:
    """A place in a JSON document and what is done there: a number of the nasty kind put
    where a number is, any value put anywhere, raw JSON text (1e999, NaN, nesting 5,000
    deep), the key removed, or a key added beside it."""
    action = draw(st.sampled_from(["number", "number", "set", "raw", "raw", "delete", "add"]))
    path = draw(st.sampled_from(numbers if action == "number" else places))
    value = draw({"number": NUMBERS, "raw": RAW_TEXT}.get(action, NASTY))
    key = draw(st.sampled_from(["extra", "future", "takes", "id", "\u4e2d"]))
    return ("set" if action == "number" else action, path, value, key)


def _numbers(document: Any) -> list[tuple[Any, ...]]:
    """The places in `document` that hold a number (not true or false)."""
    found = []
    for path in _paths(document):
        value = document
        for step in path:
            value = value[step]
        if isinstance(value, int | float) and not isinstance(value, bool):
            found.append(path)
    return found


def damages(template: Path) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    files = sorted(
        str(p.relative_to(template)) for p in template.rglob("*") if p.is_file()
    )  # project.json, .lock, takes/*.wav and *.json
    records = [f for f in files if f.endswith(".json") and f.startswith("takes/")]
    unsaved = [store.record_name(1, 1000), store.record_name(3, 2)]  # read at every load
    assert set(unsaved) <= set(records)
    project, record = _read(template, "project.json"), _read(template, unsaved[0])
    project_damage = json_damage(list(_paths(project)), _numbers(project))
    record_damage = json_damage(list(_paths(record)), _numbers(record))
    kinds = {
        "project": st.tuples(st.just("project"), project_damage),
        "record": st.tuples(
            st.just("record"), st.sampled_from(records + unsaved * 2), record_damage
        ),
        "truncate": st.tuples(st.just("truncate"), st.sampled_from(files), st.floats(0.0, 0.99)),
        "garbage": st.tuples(st.just("garbage"), st.sampled_from(files), st.binary(max_size=64)),
        "remove": st.tuples(st.just("remove"), st.sampled_from(files)),
        "link out": st.tuples(st.just("link out"), st.sampled_from(files)),
        "takes link out": st.tuples(st.just("takes link out")),
        "dangling lock": st.tuples(st.just("dangling lock")),
        "odd file": st.tuples(
            st.just("odd file"), st.sampled_from(records), st.sampled_from(ODD_NAMES)
        ),
        "stray": st.tuples(
            st.just("stray"),
            st.sampled_from(records),
            st.sampled_from([1, 2, 3, 99999, 100000]),
            st.sampled_from([1, 2, 5, 999, 1000, 123456789]),
        ),
    }
    # The JSON is drawn most often (it has the most places to damage), then a file cut short.
    weighted = ["project"] * 4 + ["record"] * 3 + ["truncate"] + list(kinds)
    one = st.sampled_from(weighted).flatmap(lambda kind: kinds[kind])
    return st.lists(one, min_size=1, max_size=2)


def _edit(target: Path, damage: tuple[Any, ...]) -> None:
    """One change to the JSON in `target` (left alone when it no longer reads as JSON or the
    place is gone: an earlier damage came first)."""
    action, path, value, key = damage
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]]  # still there
    except (ValueError, KeyError, IndexError, TypeError, OSError, RecursionError):
        return
    raw = None
    if action == "set":
        parent[path[-1]] = value
    elif action == "raw":
        parent[path[-1]], raw = RAW, value
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[key] = value
    text = json.dumps(data, ensure_ascii=False)
    if raw is not None:
        text = text.replace(json.dumps(RAW), raw)
    target.write_text(text, encoding="utf-8", errors="surrogatepass")


def damage(book: Path, outside: Path, change: tuple[Any, ...]) -> None:
    kind, *args = change
    if kind == "project":
        _edit(book / "project.json", args[0])
    elif kind == "record":
        _edit(book / args[0], args[1])
    elif kind in ("truncate", "garbage", "remove", "link out"):
        target = book / args[0]
        if not target.is_file() or target.is_symlink():
            return
        if kind == "truncate":
            whole = target.read_bytes()
            target.write_bytes(whole[: int(len(whole) * args[1])])
        elif kind == "garbage":
            target.write_bytes(args[1])
        elif kind == "remove":
            target.unlink()
        else:
            moved = outside / f"moved-{target.name}"
            shutil.move(target, moved)
            target.symlink_to(moved)
    elif kind == "takes link out":
        takes = book / "takes"
        if takes.is_dir() and not takes.is_symlink():
            shutil.move(takes, outside / "takes")
            takes.symlink_to(outside / "takes")
            (takes / ".s00001-t009.abc.part.wav").write_bytes(b"not the project's either")
    elif kind == "dangling lock":
        lock = book / store.LOCK
        lock.unlink(missing_ok=True)
        lock.symlink_to(outside / "gone" / "lock")
    elif kind == "odd file":
        source, name = args
        if (book / source).is_file() and (book / "takes").is_dir():
            shutil.copy(book / source, book / "takes" / name)
    elif kind == "grid":
        document, paths, value = args
        if (book / document).is_file():
            _set_everywhere(book / document, paths, value)
    else:  # a stray record: another take's record under a name of its own
        source, segment_id, take_id = args
        target = book / store.record_name(segment_id, take_id)
        if (book / source).is_file() and not target.exists():
            shutil.copy(book / source, target)


# -- what must hold ------------------------------------------------------------------------------
def run(capsys: pytest.CaptureFixture[str], *argv: str) -> int:
    """A CLI command in-process: exit 0 with no error line, or exit 2 with exactly one; any
    number of `warning:` lines; never a traceback (main lets anything but StudioError out)."""
    code = main(["project", *argv])
    _out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    errors = [line for line in lines if not line.startswith("warning: ")]
    assert "Traceback" not in err
    assert code in (0, 2), (argv, code, err)
    assert errors == [] if code == 0 else len(errors) == 1 and errors[0].startswith("error: ")
    return code


def snapshot(root: Path) -> dict[str, str]:
    """Every plain file under `root`, links not followed (the project, the outside folder)."""
    return file_hashes(root)


def expected_frames(book: Path) -> int:
    project = store.load(book)
    takes = [s.chosen_take for s in project.segments]
    assert all(t is not None for t in takes)
    pauses = sum(pause_samples(s.pause_before) for s in project.segments[1:])
    # Each take as long as its record says (its measured seconds: samples over the rate).
    return sum(round(t.measures.seconds * 24000) for t in takes if t is not None) + pauses


def one_new_take(book: Path) -> set[str]:
    """A take written into segment 1 as a take job writes it; the files it may add."""
    try:
        with writer.opened(book) as handle:
            if not handle.project.segments:
                return set()
            segment = handle.project.segments[0]
            take_id = segment.next_take_id()
            record = store.record_name(segment.id, take_id)
            audio = speech(0.05, take_id)
            name = handle.write_take_audio(segment, take_id, audio)
            take = take_of(segment, take_id, 1, flags.measure(audio, segment.text))
            handle.add_take(segment, take, chosen=True)
            assert name == take.audio
            return {record, name}
    except ProjectError:
        return set()


def damaged_and_used(
    template: Path,
    changes: list[tuple[Any, ...]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    new_take: bool = True,
) -> bool:
    """A copy of the template damaged by `changes`, then loaded, listed, exported, locked and
    (`new_take`) given a new take; what must hold is checked after each and at the end.
    Whether it loaded with no warning."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(root / "home"))
        book, outside, out = root / "book.chattts", root / "outside", root / "out"
        shutil.copytree(template, book, symlinks=True)
        for folder in (outside, out, root / "home"):
            folder.mkdir()
        (outside / ".s00001-t009.abc.part.wav").write_bytes(b"not the project's")
        for change in changes:
            damage(book, outside, change)
        before_outside = snapshot(outside)
        before_book = snapshot(book)

        try:
            project = store.load(book)
        except ProjectError as exc:
            project = None
            assert "\n" not in str(exc)
        listed = run(capsys, "list", str(book), "--json")
        assert listed == (0 if project is not None else 2)
        exported = run(capsys, "export", str(book), str(out / "mix.wav"))
        if exported == 0:
            assert project is not None
            assert sf.info(str(out / "mix.wav")).frames == expected_frames(book)
            assert reading.joined(book, project).size == expected_frames(book)
        locked = run(capsys, "lock", str(book), "1")
        if locked == 0:
            assert store.load(book).segments[0].locked  # what was saved reads back
        added = one_new_take(book) if new_take else set()
        assert not added & set(before_book)  # a new take's files replace no file there
        if currently_in_test_context():  # a Hypothesis example: its statistics
            for what, code in (("list", listed), ("export", exported), ("lock", locked)):
                event(f"{what}: {'works' if code == 0 else 'one sentence'}")
            event(f"a new take: {'written' if added else 'one sentence'}")

        assert snapshot(outside) == before_outside  # nothing written outside the folder
        after = snapshot(book)
        written = {"project.json", ".lock"} | added  # a writer's own files, and nothing else
        for name in set(before_book) | set(after):
            if name in written or (name.startswith("takes/.") and ".part" in name):
                continue  # a writer's own files; a dead writer's temp file, swept
            assert after.get(name) == before_book.get(name), name
        assert sorted(p.name for p in root.iterdir()) == ["book.chattts", "home", "out", "outside"]
        assert [p.name for p in out.iterdir()] in ([], ["mix.wav"])
        return project is not None and not project.warnings


FUZZ = settings(
    deadline=None,
    derandomize=True,  # the same examples on every run and machine
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@settings(FUZZ, max_examples=EXAMPLES)
@given(data=st.data())
def test_a_damaged_project_works_or_says_why_in_one_sentence(
    template: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
) -> None:
    """Files damaged, cut short, removed, linked out of the folder; JSON values changed."""
    changes = data.draw(damages(template), label="damages")
    damaged_and_used(template, changes, capsys, monkeypatch)


def _fields(document: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The places in `document` that hold a number or a text, by the name of their field
    ("pause_before": one place per segment)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for path in _paths(document):
        value = document
        for step in path:
            value = value[step]
        if isinstance(path[-1], str) and isinstance(value, int | float | str):
            found.setdefault(path[-1], []).append(path)
    return found


# Every field is given each of these, in all its places at once (a grid, not a draw: the
# pause of one segment of three is 1 place in 150, which random draws miss). A record's
# fields are a take's, as in project.json: there the grid checks that a bad one is left out.
GRID = {
    "project.json": [float("nan"), float("inf"), -1, 1e7, 10**400, None, "\ud800"],
    store.record_name(1, 1000): [float("inf"), None, "\ud800"],
}


def _set_everywhere(target: Path, paths: list[tuple[Any, ...]], value: Any) -> None:
    data = json.loads(target.read_text(encoding="utf-8"))
    for path in paths:
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = value
    text = json.dumps(data, ensure_ascii=False)
    target.write_text(text, encoding="utf-8", errors="surrogatepass")


@pytest.mark.parametrize("document", sorted(GRID))
def test_every_field_given_every_kind_of_value_works_or_says_why_in_one_sentence(
    template: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    document: str,
) -> None:
    """project.json, and a record that load reads (a take known only by its record)."""
    fields = _fields(_read(template, document))
    assert {"id", "seed", "temperature", "audio", "seconds"} <= set(fields)
    outcomes = set()
    for name, paths in sorted(fields.items()):
        for value in GRID[document]:
            change = ("grid", document, paths, value)
            try:
                outcomes.add(damaged_and_used(template, [change], capsys, monkeypatch, False))
            except AssertionError as exc:
                raise AssertionError(f"{name} = {value!r}: {exc}") from None
    assert outcomes == {True, False}  # some values work, some are refused or left out
