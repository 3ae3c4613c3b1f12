"""Manifest renders: one file per item, the same bits alone, in a run, resumed, or on a Ray
cluster (2 actors on a local cluster the test starts), even when an actor is killed mid-run;
bad manifests are one sentence and exit 2."""

import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

import pytest
import soundfile as sf
from audio_fakes import speech_like

from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.engine.engine import Engine
from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.render.journal import JOURNAL
from chattts_studio.core.render.manifest.cluster import ClusterRender
from chattts_studio.core.render.manifest.item_store import OUTPUT, STORE, file_sha256
from chattts_studio.core.render.manifest.items import (
    ManifestError,
    WorkItem,
    check_speakers,
    read_manifest,
    resolve_items,
)
from chattts_studio.core.render.manifest.run import (
    ItemRenderer,
    ItemResult,
    ManifestJob,
    ManifestOptions,
    render_local,
)
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice

OPTIONS = ManifestOptions(format="flac")


def _rows(count: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i in range(count):
        text = f"第{i}句话，你好。" if i % 2 else f"hello number {i}."
        row: dict[str, object] = {"id": f"item-{i:02d}", "text": text, "speaker": str(i % 3)}
        if i % 4 == 0:
            row["seed"] = 100 + i
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _job(engine: Engine, manifest: Path, folder: Path) -> ManifestJob:
    work = resolve_items(read_manifest(manifest), engine, manifest)
    return ManifestJob(work, folder, OPTIONS, engine.loaded)


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: file_sha256(p) for p in sorted(folder.glob("*.flac"))}


def _journal_ids(folder: Path) -> list[str]:
    lines = (folder / STORE / JOURNAL).read_text("utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    """Renders here run on one torch thread, as each Ray actor with one CPU does: at the real
    model dimensions the thread count changes the last bits (the tiny demo weights agree)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def local_render(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 items rendered here in one continuous batch."""
    root = tmp_path_factory.mktemp("manifest")
    manifest = _write(root / "items.jsonl", _rows(40))
    job = _job(engine, manifest, root / "local")
    with job.store:
        assert render_local(job, engine) == 40
        job.finish()
    return root


def test_a_local_render_writes_one_file_per_item_and_the_output_manifest(
    local_render: Path,
) -> None:
    folder = local_render / "local"
    hashes = _hashes(folder)
    assert sorted(hashes) == [f"item-{i:02d}.flac" for i in range(40)]
    rows = [json.loads(x) for x in (folder / OUTPUT).read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == [f"item-{i:02d}" for i in range(40)]
    for row in rows:
        assert row["sha256"] == hashes[row["file"]]
        assert row["duration"] > 0.3 and row["rtf"] > 0
    assert len({r["sha256"] for r in rows}) == 40  # speakers and seeds make every item differ
    assert not list(folder.glob(".*.part*"))


def test_an_item_alone_is_the_same_file_as_in_the_run(
    engine: Engine, local_render: Path, tmp_path: Path
) -> None:
    """Per-item seeds: what else shares the batch does not change an item's audio."""
    rows = _rows(40)
    manifest = _write(tmp_path / "two.jsonl", [rows[7], rows[20]])
    job = _job(engine, manifest, tmp_path / "alone")
    with job.store:
        assert render_local(job, engine) == 2
    full = _hashes(local_render / "local")
    assert _hashes(tmp_path / "alone") == {k: full[k] for k in ("item-07.flac", "item-20.flac")}


def test_a_resumed_render_makes_only_the_missing_items(
    engine: Engine, local_render: Path, tmp_path: Path
) -> None:
    manifest = _write(tmp_path / "items.jsonl", _rows(12))
    folder = tmp_path / "out"
    job = _job(engine, manifest, folder)
    token = CancelToken()

    def stop_after_four(_entry: object) -> None:
        if len(job.store.made) >= 4:
            token.cancel()

    with job.store, pytest.raises(Cancelled):
        render_local(job, engine, token, stop_after_four)
    first = set(_journal_ids(folder))
    assert 4 <= len(first) < 12
    with open(folder / STORE / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write('{"v": 1, "id": "item-1')  # a line cut short by a kill
    job = _job(engine, manifest, folder)
    with job.store:
        made = render_local(job, engine)
        job.finish()
    assert made == 12 - len(first)
    assert set(job.store.made) == {f"item-{i:02d}" for i in range(12)} - first
    full = _hashes(local_render / "local")
    assert _hashes(folder) == {k: full[k] for k in _hashes(folder)}
    assert len(_hashes(folder)) == 12
    job = _job(engine, manifest, folder)  # everything there: nothing to make
    with job.store:
        assert job.pending() == []


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([{"id": "a", "text": "hello", "speaker": "1"}] * 2, ["Line 2", "'a'", "line 1"]),
        ([{"id": "a", "speaker": "1"}], ["Line 1", "no text"]),
        ([{"id": "a", "text": "hello", "speaker": "nobody"}], ["Line 1", "'nobody'"]),
        ([{"id": "../x", "text": "hello", "speaker": "1"}], ["Line 1", "not a safe file name"]),
        ([{"id": "a", "text": "hello", "speaker": "1", "seed": -1}], ["Line 1", "seed"]),
    ],
    ids=["duplicate", "no-text", "bad-speaker", "unsafe-id", "bad-seed"],
)
def test_a_bad_manifest_is_one_sentence_and_exit_2(
    rows: list[dict[str, object]],
    words: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from chattts_studio.core.cli.main import main

    manifest = _write(tmp_path / "bad.jsonl", rows)
    assert main(["render", str(manifest), "-o", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "Traceback" not in said
    assert said.startswith("error: ") and all(w in said for w in words), said
    assert not (tmp_path / "out").exists()


def test_a_bad_csv_row_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    manifest = tmp_path / "bad.csv"
    manifest.write_text("id,text,speaker\nok,hello,1\nbad id,hello,1\n", "utf-8")
    assert main(["render", str(manifest), "-o", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("error: Line 3 of bad.csv") and "\n" not in said
    assert main(["render", str(manifest), "-o", str(tmp_path / "o"), "--ray-actors", "2"]) == 2


@pytest.mark.parametrize(
    "option", [["--temperature", "0.5"], ["--top-p", "0.9"], ["--top-k", "5"], ["--no-refine"]]
)
def test_sampling_options_a_manifest_does_not_apply_are_refused(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    manifest = _write(tmp_path / "items.jsonl", _rows(2))
    folder = tmp_path / "out"
    assert main(["render", str(manifest), "-o", str(folder), *option]) == 2
    said = capsys.readouterr().err.strip()
    assert said == f"error: A manifest render does not take {option[0]}" + (
        " (it never refines)." if option[0] == "--no-refine" else "."
    )
    assert not folder.exists()  # refused before anything was made


def test_a_csv_manifest_renders_through_the_cli(
    local_render: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chattts_studio.core.cli.main import main

    rows = _rows(40)[:3]
    manifest = tmp_path / "items.csv"
    body = "".join(f"{r['id']},{r['text']},{r['speaker']},{r.get('seed', '')}\n" for r in rows)
    manifest.write_text("id,text,speaker,seed\n" + body, "utf-8")
    folder = tmp_path / "out"
    torch_engine = ["--engine", "torch"]  # the reference was made by the torch engine
    assert main(["render", str(manifest), "-o", str(folder), "--threads", "1", *torch_engine]) == 0
    assert "3 made" in capsys.readouterr().out
    full = _hashes(local_render / "local")
    assert _hashes(folder) == {k: full[k] for k in ("item-00.flac", "item-01.flac", "item-02.flac")}
    assert main(["render", str(manifest), "-o", str(folder), *torch_engine]) == 0
    assert "0 made, 3 kept" in capsys.readouterr().out


def _embedding_rows(engine: Engine) -> list[dict[str, object]]:
    """Two items read by library speakers held as embeddings (in the private data folder):
    drawing a seed's speaker depends on the weights, these keys change only with the render's
    settings."""
    library = SpeakerLibrary()
    library.add("Ann", engine.sample_speaker(3))
    library.add("Bob", engine.sample_speaker(4))
    return [
        {"id": "a", "text": "hello number one.", "speaker": "Ann", "seed": 5},
        {"id": "b", "text": "你好，第二句。", "speaker": "Bob", "seed": 6},
    ]


def _render_cli(manifest: Path, folder: Path, *more: str) -> None:
    from chattts_studio.core.cli.main import main

    assert main(["render", str(manifest), "-o", str(folder), "--threads", "1", *more]) == 0


def test_a_manifest_resumed_at_another_precision_makes_its_items_again(
    engine: Engine, private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _write(tmp_path / "items.jsonl", _embedding_rows(engine))
    folder = tmp_path / "out"
    _render_cli(manifest, folder)
    assert "2 made, 0 kept" in capsys.readouterr().out
    _render_cli(manifest, folder, "--precision", "bf16")
    assert "2 made, 0 kept" in capsys.readouterr().out
    _render_cli(manifest, folder, "--precision", "bf16")  # the same settings: nothing to make
    assert "0 made, 2 kept" in capsys.readouterr().out


def test_a_manifest_resumed_with_other_weights_makes_its_items_again(
    engine: Engine, private_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same folder (so the same model name) holding other weights: nothing is kept; the
    same weights copied elsewhere: everything is."""
    from chattts_studio.core.weights import demo_weights, models

    source = models.resolve("demo").folder
    weights = shutil.copytree(source, tmp_path / "weights")
    manifest = _write(tmp_path / "items.jsonl", _embedding_rows(engine))
    folder = tmp_path / "out"
    _render_cli(manifest, folder, "--model", str(weights))
    assert "2 made, 0 kept" in capsys.readouterr().out
    moved = weights.rename(tmp_path / "moved")
    _render_cli(manifest, folder, "--model", str(moved))
    assert "0 made, 2 kept" in capsys.readouterr().out

    # Rebuilt from another seed, its hash map written as a demo build writes it.
    demo_weights.build(moved, models.TINY_DIMS, seed=4321)
    card = json.loads((moved / models.MANIFEST).read_text("utf-8"))
    card["sha256"] = {models.hash_key(f): models.sha256_file(moved / f) for f in models.ASSET_FILES}
    assert card["sha256"] != json.loads((source / models.MANIFEST).read_text("utf-8"))["sha256"]
    (moved / models.MANIFEST).write_text(json.dumps(card), "utf-8")
    _render_cli(manifest, folder, "--model", str(moved))
    assert "2 made, 0 kept" in capsys.readouterr().out


# -- cloned voices ------------------------------------------------------------------------
# A number in the transcript: synthesis reads it out, so a render that put the transcript into
# the prompt as stored would make other audio than synth's.
CLONE_TRANSCRIPT = "今天是2024年，这是我的声音。"


@dataclass
class Cloned:
    root: Path
    home: Path  # the data folder whose library holds the voice "Clone"
    voice: Voice  # as the library holds it
    work: list[WorkItem]


def _clone(engine: Engine, seed: int, transcript: str = CLONE_TRANSCRIPT) -> Voice:
    """A voice cloned from a clip through the real DVAE encoder (as test_voices)."""
    from chattts_studio.core.voices.clone import check_clip

    clip = check_clip(speech_like(3.5, 24000, seed=seed)[:, 0], 24000)
    return engine.clone_voice(clip, transcript)


def _resolve(engine: Engine, manifest: Path) -> list[WorkItem]:
    """As the CLI does it: checked without the model, then resolved with it."""
    items = read_manifest(manifest)
    check_speakers(items, manifest)
    return resolve_items(items, engine, manifest)


CLONED_ROWS: list[dict[str, object]] = [
    {"id": "clone-a", "text": "你好。今天天气很好。", "speaker": "Clone", "seed": 31},
    {"id": "seed-a", "text": "你好。今天天气很好。", "speaker": "5", "seed": 31},
    {"id": "clone-b", "text": "hello number 3.", "speaker": "Clone"},
]


@pytest.fixture(scope="module")
def cloned(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Cloned:
    """Two items read by a cloned library voice beside one read by a seed's speaker, rendered
    here in one batch; the library is in a data folder of its own."""
    root = tmp_path_factory.mktemp("cloned")
    home = root / "home"
    voice = _clone(engine, 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHATTTS_STUDIO_HOME", str(home))
        SpeakerLibrary().add("Clone", "", sample=voice.sample, transcript=voice.transcript)
        work = _resolve(engine, _write(root / "items.jsonl", CLONED_ROWS))
    job = ManifestJob(work, root / "local", OPTIONS, engine.loaded)
    with job.store:
        assert render_local(job, engine) == 3
        job.finish()
    return Cloned(root, home, voice, work)


def test_a_cloned_voice_item_is_what_that_voice_alone_makes_as_synth_reads_it(
    engine: Engine, cloned: Cloned
) -> None:
    folder = cloned.root / "local"
    hashes = _hashes(folder)
    rows = [json.loads(x) for x in (folder / OUTPUT).read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["clone-a", "seed-a", "clone-b"]
    for row in rows:
        info = sf.info(str(folder / row["file"]))  # the duration is rounded to 0.1 ms
        assert row["sha256"] == hashes[row["file"]] and row["rtf"] > 0
        assert abs(row["duration"] - info.frames / 24000) < 1e-4 and row["duration"] > 0.3
    # The voice synth's plan reads for this library voice (checked, transcript normalised),
    # each item alone in a batch of its own: the same files.
    plan = engine.plan(SynthesisRequest(text="你好。", voice=cloned.voice, refine_text=False))
    assert plan.voice is not None and plan.voice.transcript != cloned.voice.transcript
    by_id = {w.id: w for w in cloned.work}
    assert by_id["clone-b"].seed == 0  # the library voice has no seed: the default
    for item_id in ("clone-a", "clone-b"):
        item = by_id[item_id]
        assert item.speaker == plan.voice
        alone = WorkItem(item.id, item.text, plan.voice, item.seed, item.est_seconds)
        made: list[ItemResult] = []
        renderer = ItemRenderer(engine, OPTIONS)
        try:
            renderer.render([alone], made.append)
        finally:
            renderer.close()
        assert file_sha256(folder / f"{item_id}.flac") == sha256(made[0].data).hexdigest()
    # The voice is heard: the same text and seed read by a seed's speaker is another file.
    assert hashes["clone-a.flac"] != hashes["seed-a.flac"]


def test_a_cloned_item_is_kept_on_resume_and_made_again_for_another_voice(
    engine: Engine, cloned: Cloned, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = shutil.copytree(cloned.home, tmp_path / "home")  # the fixture's stays as it was
    monkeypatch.setenv("CHATTTS_STUDIO_HOME", str(home))
    manifest = cloned.root / "items.jsonl"
    folder = tmp_path / "copy"
    shutil.copytree(cloned.root / "local", folder)
    job = ManifestJob(_resolve(engine, manifest), folder, OPTIONS, engine.loaded)
    with job.store:
        assert job.pending() == []
    # Another recording under the same name: its items are made again, the others kept.
    other = _clone(engine, 2)
    library = SpeakerLibrary()
    library.add("Clone", "", sample=other.sample, transcript=other.transcript, replace=True)
    job = ManifestJob(_resolve(engine, manifest), folder, OPTIONS, engine.loaded)
    with job.store:
        assert sorted(i.id for i in job.pending()) == ["clone-a", "clone-b"]
    # A cloned voice this model cannot read is one sentence naming its line.
    SpeakerLibrary().add("Broken", "", sample="x" * 40, transcript="你好。")
    bad = _write(tmp_path / "bad.jsonl", [{"id": "a", "text": "你好。", "speaker": "Broken"}])
    with pytest.raises(ManifestError, match=r"^Line 1 of bad\.jsonl: .*sample"):
        _resolve(engine, bad)


def test_a_blend_speaker_renders_here_as_its_embedding(
    engine: Engine, private_home: Path, tmp_path: Path
) -> None:
    from chattts_studio.core.voices.blend import blend_speakers, library_resolver

    library = SpeakerLibrary()
    library.add("Ann", engine.sample_speaker(3))
    library.add("Bob", engine.sample_speaker(4))
    voices = {e.name: e.voice for e in library.entries}
    resolve = library_resolver(voices, engine)
    mixed = blend_speakers("Ann*0.5+Bob*0.5", resolve, engine.speaker_dim())
    text = "hello number one."
    rows: list[dict[str, object]] = [
        {"id": "mix", "text": text, "speaker": "Ann*0.5+Bob*0.5", "seed": 5},
        {"id": "kokoro", "text": text, "speaker": "Ann(1)+Bob(1)", "seed": 5},
        {"id": "self", "text": text, "speaker": "Ann*0.4+Ann*0.6", "seed": 5},
        {"id": "ann", "text": text, "speaker": "Ann", "seed": 5},
        {"id": "bob", "text": text, "speaker": "Bob", "seed": 5},
    ]
    work = _resolve(engine, _write(tmp_path / "items.jsonl", rows))
    assert [w.speaker for w in work][:2] == [mixed] * 2  # as synth and the window mix it
    job = ManifestJob(work, tmp_path / "out", OPTIONS, engine.loaded)
    with job.store:
        assert render_local(job, engine) == 5
    hashes = {name.removesuffix(".flac"): h for name, h in _hashes(tmp_path / "out").items()}
    assert hashes["mix"] == hashes["kokoro"]
    assert hashes["self"] == hashes["ann"]  # a voice blended with itself is that voice
    assert len({hashes["mix"], hashes["ann"], hashes["bob"]}) == 3


@pytest.mark.parametrize(
    ("speaker", "words"),
    [
        ("Ann*0.5+Nobody*0.5", ["'Nobody' in the voice blend is not a library speaker"]),
        ("Ann*0.5+Clone*0.5", ["'Clone' is a cloned voice"]),
        ("Ann*oops+3", ["The weight of 'Ann*oops' in the voice blend is not a number"]),
        ("Ann+", ["A voice blend has an empty part"]),
    ],
)
def test_a_bad_blend_is_refused_before_the_model_loads(
    engine: Engine,
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    speaker: str,
    words: list[str],
) -> None:
    from chattts_studio.core.cli.main import main

    library = SpeakerLibrary()
    library.add("Ann", engine.sample_speaker(3))
    library.add("Clone", "", sample="x" * 40, transcript="你好。")
    rows = [{"id": "ok", "text": "hello", "speaker": "Ann"}]
    rows.append({"id": "odd", "text": "hello", "speaker": speaker})
    manifest = _write(tmp_path / "bad.jsonl", rows)
    assert main(["render", str(manifest), "-o", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "Traceback" not in said  # the model was never loaded
    assert said.startswith("error: Line 2 of bad.jsonl: ") and said.endswith("(item 'odd').")
    assert all(w in said for w in words), said
    assert not (tmp_path / "out").exists()


def test_a_blend_of_a_broken_embedding_names_its_item(
    engine: Engine, private_home: Path, tmp_path: Path
) -> None:
    SpeakerLibrary().add("Ann", engine.sample_speaker(3))
    rows = [{"id": "odd", "text": "hello", "speaker": "Ann*0.5+" + "豆" * 120}]
    with pytest.raises(ManifestError, match=r"^Line 1 of bad\.jsonl: .*\(item 'odd'\)\.$"):
        _resolve(engine, _write(tmp_path / "bad.jsonl", rows))


# -- on a Ray cluster ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(demo_model: str) -> Iterator[ClusterRender]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    render = ClusterRender(demo_model, actors=2, engine="torch")  # as the local render here
    render.connect()
    yield render
    render.close()
    ray.shutdown()


@pytest.mark.ray
def test_a_ray_render_gives_the_same_files_as_the_local_one(
    engine: Engine, local_render: Path, cluster: ClusterRender, tmp_path: Path
) -> None:
    assert cluster.stats.actors == 2
    job = _job(engine, local_render / "items.jsonl", tmp_path / "ray")
    with job.store:
        assert cluster.run(job) == 40
        job.finish()
    assert _hashes(tmp_path / "ray") == _hashes(local_render / "local")
    assert sorted(_journal_ids(tmp_path / "ray")) == [f"item-{i:02d}" for i in range(40)]
    assert cluster.stats.requeued == 0
    local_out = (local_render / "local" / OUTPUT).read_text("utf-8").splitlines()
    ray_out = (tmp_path / "ray" / OUTPUT).read_text("utf-8").splitlines()
    assert [json.loads(x)["sha256"] for x in ray_out] == [
        json.loads(x)["sha256"] for x in local_out
    ]


@pytest.mark.ray
def test_a_cloned_voice_renders_on_ray_as_here(
    engine: Engine, cloned: Cloned, cluster: ClusterRender, tmp_path: Path
) -> None:
    """The cloned voice travels in the chunks as data (the workers' data folder has no such
    speaker, and they normalise nothing): the same files as here."""
    job = ManifestJob(cloned.work, tmp_path / "ray", OPTIONS, engine.loaded)
    with job.store:
        assert cluster.run(job) == 3
        job.finish()
    assert _hashes(tmp_path / "ray") == _hashes(cloned.root / "local")


@pytest.mark.ray
def test_a_killed_actor_s_chunk_is_made_again_and_every_item_once(
    engine: Engine, local_render: Path, cluster: ClusterRender, tmp_path: Path
) -> None:
    import ray

    job = _job(engine, local_render / "items.jsonl", tmp_path / "killed")
    killed: list[int] = []

    def kill_once(_entry: object) -> None:
        if not killed:  # at the first result: the busiest actor, its chunks in flight
            busy = cluster.in_flight()
            killed.append(busy.index(max(busy)))
            assert max(busy) >= 1
            ray.kill(cluster.actors[killed[0]], no_restart=False)

    with job.store:
        assert cluster.run(job, on_item=kill_once) == 40
        job.finish()
    assert killed and cluster.stats.requeued >= 1 and cluster.stats.actor_failures >= 1
    ids = _journal_ids(tmp_path / "killed")
    assert sorted(ids) == [f"item-{i:02d}" for i in range(40)]  # each exactly once
    assert job.duplicates == 0
    assert _hashes(tmp_path / "killed") == _hashes(local_render / "local")


def test_a_manifest_folder_copy_resumes_with_nothing_to_make(
    engine: Engine, local_render: Path, tmp_path: Path
) -> None:
    """The journal names files, not paths: a moved folder keeps its items."""
    moved = tmp_path / "moved"
    shutil.copytree(local_render / "local", moved)
    (moved / "item-03.flac").write_bytes(b"damaged")
    job = _job(engine, local_render / "items.jsonl", moved)
    with job.store:
        assert [i.id for i in job.pending()] == ["item-03"]


def test_without_ray_the_cli_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """core imports without Ray; --ray then is one sentence (before any model loads)."""
    from chattts_studio.core.cli.main import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    manifest = _write(tmp_path / "items.jsonl", _rows(2))
    assert main(["render", str(manifest), "-o", str(tmp_path / "out"), "--ray"]) == 2
    said = capsys.readouterr().err.strip()
    assert "pip install 'chattts-studio[cluster]'" in said and "\n" not in said
    book = tmp_path / "book.txt"
    book.write_text("hello world.", "utf-8")
    assert main(["render", str(book), "-o", str(tmp_path / "b"), "--ray", "x:6379"]) == 2
    assert "--ray renders a manifest" in capsys.readouterr().err


@pytest.mark.ray
def test_an_address_nobody_answers_is_one_sentence_at_once() -> None:
    """Ray itself retries a dead address for minutes; the render says so in a second."""
    from chattts_studio.core.cluster import reachable
    from chattts_studio.core.errors import StudioError

    with pytest.raises(StudioError, match=r"Cannot reach the Ray cluster at 127\.0\.0\.1:1 "):
        reachable("127.0.0.1:1")
    reachable("auto")  # Ray's own rules: not checked here


def test_the_items_identity_names_the_engine_and_keeps_torchs(engine: Engine) -> None:
    """Items made by the ONNX engine are not taken for torch's (their bits differ), while
    torch's identity is the one older renders were written with, so they still resume."""
    import dataclasses

    from chattts_studio.core.engine.engine_choice import EngineKind
    from chattts_studio.core.render.manifest.run import model_identity
    from chattts_studio.core.render.segment_store import digest
    from chattts_studio.core.weights.models import weights_identity

    loaded = engine.loaded
    assert loaded is not None and loaded.engine is EngineKind.TORCH
    before = digest("model", weights_identity(loaded.info), loaded.precision.value)
    assert model_identity(loaded) == before
    onnx = dataclasses.replace(loaded, engine=EngineKind.ONNX)
    assert model_identity(onnx) != before
    assert model_identity(loaded, EngineKind.ONNX) == model_identity(onnx)  # the workers'
