"""The pronunciation dictionary: its matching rules, its file, its preview, and that it changes
the text the model receives and nothing else."""

import json
from pathlib import Path

import pytest

from chattts_studio.core.cli.main import main
from chattts_studio.core.text.lexicon import Lexicon, LexiconError, LexiconStore

ENTRIES = (("SQL", "sequel"), ("行长", "航长"), ("New York", "纽约"), ("York", "约克"))


def test_latin_words_match_whole_cjk_as_substrings_longest_first() -> None:
    lexicon = Lexicon(ENTRIES)
    text = "MySQL, SQL (SQL) SQLite sql 银行行长 New York York"
    assert lexicon.apply(text) == "MySQL, sequel (sequel) SQLite sql 银行航长 纽约 约克"
    # A replaced part is never matched again, and the scan goes left to right.
    assert Lexicon([("a b", "b"), ("b", "X")]).apply("a b b") == "b X"


def test_the_store_adds_changes_removes_and_refuses_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.json"
    store = LexiconStore(path)
    assert store.add(" SQL ", "sequel") == ("SQL", True)
    assert store.add("SQL", "S Q L") == ("SQL", False)
    assert LexiconStore(path).entries == {"SQL": "S Q L"}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == 1 and data["entries"] == [{"word": "SQL", "replacement": "S Q L"}]
    with pytest.raises(LexiconError, match="no entry 'XML'"):
        store.remove("XML")
    store.remove("SQL")
    assert LexiconStore(path).entries == {}
    assert not list(tmp_path.glob(".*part*"))  # atomic writes leave no temp file
    for bad in ("", "a\nb", "[uv_break]"):
        with pytest.raises(LexiconError):
            store.add(bad, "x")
    with pytest.raises(LexiconError, match="Unknown control token"):
        store.add("ok", "[boom]")
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(LexiconError, match="not valid JSON"):
        LexiconStore(path)
    path.write_text('{"format": 9, "entries": []}', encoding="utf-8")
    with pytest.raises(LexiconError, match="newer ChatTTS Studio"):
        LexiconStore(path)
    assert path.read_text(encoding="utf-8") == '{"format": 9, "entries": []}'


def test_the_lexicon_changes_what_the_model_reads_and_nothing_else(
    engine, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.core.audio.subtitles import cues_for
    from chattts_studio.core.engine.request import SynthesisRequest

    model_cls = type(engine.model)
    real = model_cls.prompt_ids
    calls: list[tuple[str, object]] = []

    def spy(self, text, speed, speaker):  # type: ignore[no-untyped-def]
        calls.append((text, speaker))
        return real(self, text, speed, speaker)

    monkeypatch.setattr(model_cls, "prompt_ids", spy)
    text = "银行行长来了。SQL很快。Hello New York."
    runs = {}
    for name, entries in (("plain", ()), ("lexicon", ENTRIES)):
        calls.clear()
        request = SynthesisRequest(
            text=text, refine_text=False, segment_size=10, batch_size=1, lexicon=entries
        )
        plan = engine.plan(request)
        results = list(engine.synthesize(plan))
        runs[name] = (plan, results, list(calls))
    plain, lexed = runs["plain"], runs["lexicon"]
    # (Segments are cut on what the model reads, the dictionary applied first; at this size the
    # cuts fall at the same sentence ends either way, so the two runs line up segment by segment.)
    assert len(plain[1]) == len(lexed[1]) == 2
    # The model reads the replacements, normalised like any text ...
    lexicon = Lexicon(ENTRIES)
    assert [c[0] for c in lexed[2]] == [
        engine.model.normalize(lexicon.apply(r.text)) for r in plain[1]
    ]
    assert [c[0] for c in plain[2]] == [engine.model.normalize(r.text) for r in plain[1]]
    assert "航长" in lexed[2][0][0] and "行长" in plain[2][0][0] and "纽约" in lexed[2][1][0]
    # ... and nothing else changes: the same segments as written, the same voice, the same
    # settings, the same subtitles.
    assert [r.text for r in lexed[1]] == [r.text for r in plain[1]]
    assert [c[1] for c in lexed[2]] == [c[1] for c in plain[2]]
    assert lexed[0].voice == plain[0].voice and lexed[0].batch_size == plain[0].batch_size
    # (Times aside: the audio of a replaced word has its own length.)
    assert cues_for([(r.text, 0, 24000) for r in plain[1]]) == cues_for(
        [(r.text, 0, 24000) for r in lexed[1]]
    )


def test_lexicon_commands_preview_and_synth_without_it(
    private_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    assert run("lexicon", "add", "SQL", "sequel")[1] == "added 'SQL' -> 'sequel'\n"
    assert run("lexicon", "add", "行长", "航长")[0] == 0
    assert run("lexicon", "list")[1] == "SQL\tsequel\n行长\t航长\n"
    code, out, _ = run("lexicon", "preview", "SQL rose 3.5% at 10:30.")
    assert code == 0 and out.strip() == "sequel rose three point five percent at ten thirty ."
    assert run("lexicon", "preview", "银行行长", "--no-lexicon")[1].strip() == "银行行长"
    code, _, err = run("lexicon", "remove", "XML")
    assert code == 2 and err.strip() == "error: The pronunciation dictionary has no entry 'XML'."

    from chattts_studio.core.engine.chattts.chat import ChatModel

    seen: list[str] = []
    real = ChatModel.prompt_ids
    monkeypatch.setattr(
        ChatModel, "prompt_ids", lambda self, t, s, v: (seen.append(t), real(self, t, s, v))[1]
    )
    out = tmp_path / "a.wav"
    for extra in ([], ["--no-lexicon"]):
        assert run("synth", "SQL.", "-o", str(out), "--no-refine", *extra)[0] == 0
    assert seen == ["sequel.", "SQL."]
    assert run("lexicon", "remove", "SQL")[0] == 0
    assert run("lexicon", "list")[1] == "行长\t航长\n"
    (private_home / "lexicon.json").write_text("[]", encoding="utf-8")
    code, _, err = run("synth", "hi", "-o", str(out))
    assert code == 2 and "not a dictionary file" in err and "--no-lexicon" in err
