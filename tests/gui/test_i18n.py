"""The Simplified Chinese interface: the .ts covers every string of the code (the
window's and the sentences core marks), the .qm is compiled from it, the language follows the
system locale or the choice in Settings, and a window started in zh_CN shows no English left,
also once it has results, a render queue and notes to show."""

import ast
import copy
import errno
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import REPO
from ui_walk import english_words, plot_strings, window_strings

ROOT = REPO
TS = ROOT / "resources" / "i18n" / "chattts_studio_zh_CN.ts"
QM = TS.with_suffix(".qm")
TOOLS = Path(sys.executable).parent
FIELD = re.compile(r"\{[^{}]*\}")

# Where pyside6-lupdate looks (as `make translations` does): the window, and core, whose fixed
# sentences are marked with chattts_studio.core.messages.QT_TRANSLATE_NOOP("core", ...).
SOURCES = ("gui", "core")


def _messages(path: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(context, source) -> (translation, type) of a .ts file."""
    found = {}
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            assert translation is not None
            key = (name, message.findtext("source") or "")
            found[key] = (translation.text or "", translation.get("type"))
    return found


def _lupdate(target: Path, *options: str) -> None:
    files = sorted(str(p) for folder in SOURCES for p in (ROOT / folder).rglob("*.py"))
    done = subprocess.run(
        [str(TOOLS / "pyside6-lupdate"), *files, "-ts", str(target), *options],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_ts_has_every_string_of_the_code_and_nothing_else(tmp_path: Path) -> None:
    committed = _messages(TS)
    fresh = tmp_path / TS.name
    shutil.copy(TS, fresh)
    _lupdate(fresh, "-no-obsolete", "-locations", "none")
    updated = _messages(fresh)
    new = sorted(set(updated) - set(committed))
    gone = sorted(set(committed) - set(updated))
    assert not new, f"strings missing from the .ts (run make translations): {new}"
    assert not gone, f"obsolete strings in the .ts (run make translations): {gone}"
    located = tmp_path / "located.ts"
    shutil.copy(TS, located)
    _lupdate(located, "-no-obsolete", "-locations", "absolute")
    unfinished = []
    marked_in_core = set()
    for context in ET.parse(located).getroot().iter("context"):
        for message in context.iter("message"):
            translation = message.find("translation")
            if translation is not None and translation.get("type") == "unfinished":
                unfinished.append((context.findtext("name"), message.findtext("source")))
            for location in message.iter("location"):
                # lupdate writes each file's path relative to the .ts file's folder.
                where = (located.parent / location.get("filename", "")).resolve()
                if where.is_relative_to(ROOT / "core"):
                    marked_in_core.add(where.relative_to(ROOT / "core").as_posix())
    assert not unfinished, f"untranslated strings: {unfinished}"
    # lupdate finds core's marks by the function's name alone (core has no Qt to import).
    assert {"engine/devices.py", "atomic.py", "results/history.py"} <= marked_in_core, (
        marked_in_core
    )


def test_core_sentences_keep_their_template_and_are_said_in_chinese(qapp) -> None:  # type: ignore[no-untyped-def]
    """An error raised with a core Sentence: English for the CLI, its template and parameters
    for the window, which says it in Chinese with nested reasons translated too."""
    from chattts_studio.core.atomic import os_error_sentence, target_problem
    from chattts_studio.core.errors import AudioError
    from chattts_studio.core.messages import Sentence
    from chattts_studio.core.results.history import size_text
    from chattts_studio.gui import i18n

    full = OSError(errno.ENOSPC, "No space left on device")
    error = AudioError(os_error_sentence("save", Path("/music/a.wav"), full))
    assert str(error) == (
        "Cannot save /music/a.wav: the disk is full (No space left on device). Nothing was changed."
    )
    assert error.template == "Cannot {action} {target}: {reason}. Nothing was changed."
    assert error.params["target"] == "/music/a.wav"
    copied = copy.deepcopy(error.args[0])
    assert isinstance(copied, Sentence) and copied.params == error.args[0].params
    missing = target_problem(Path("/no/such/folder/a.wav"))
    assert missing == "The folder /no/such/folder does not exist."
    try:
        assert i18n.install("zh_CN")
        assert i18n.core_text(error) == (
            "无法保存 /music/a.wav：磁盘已满 (No space left on device)。未做任何更改。"
        )
        assert i18n.core_text(missing) == "文件夹 /no/such/folder 不存在。"
        assert i18n.core_text(size_text(0)) == "0 字节"
        from chattts_studio.core.weights import models

        assert i18n.core_text(models.RANDOM_LABEL) == "随机权重：只会产生噪声，不是语音"
        assert i18n.core_text("A sentence no catalogue has.") == "A sentence no catalogue has."
    finally:
        i18n.install("en")
    assert i18n.core_text(error) == str(error)


# The core modules whose sentences the window shows (errors, a damaged library's problem, a
# job's note): each sentence they make is a Sentence with a QT_TRANSLATE_NOOP template.
WINDOW_CORE = (
    *("voices/speakers", "voices/speaker_file", "voices/clone", "voices/blend", "voices/recorder"),
    *("text/dialogue", "text/lexicon", "text/chapters", "weights/download", "services/keep_voice"),
    *("engine/engine", "engine/chattts/chat", "engine/request", "engine/script_plan"),
    *("audio/stream_writer", "audio/subtitles", "audio/m4b", "render/segment_store"),
)
# Built with plain text on purpose: never shown (a temp file's cleanup is told why, nobody else).
NEVER_SHOWN = {("audio/m4b", "abandoned")}


def _is_text(node: ast.expr) -> bool:
    """A string literal, an f-string, or one built with + or % from them: an unmarked sentence."""
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def test_window_core_errors_are_marked_sentences() -> None:
    """No error of WINDOW_CORE is made from a literal or an f-string (English in a Chinese
    window), and no Sentence has an unmarked template."""
    from chattts_studio.core import errors

    studio = {
        n for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, Exception)
    }
    found = []
    for module in WINDOW_CORE:
        tree = ast.parse((ROOT / "core" / f"{module}.py").read_text(encoding="utf-8"))
        raised = set(studio)
        for node in ast.walk(tree):  # the module's own exceptions (ClipError, _Transient, ...)
            if isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & (raised | {"Exception"}):
                    raised.add(node.name)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            first = node.args[0]
            if name in raised and _is_text(first):
                if (module, getattr(first, "value", None)) not in NEVER_SHOWN:
                    found.append(f"core/{module}.py:{node.lineno}: {ast.unparse(node)[:80]}")
            elif name == "Sentence" and _is_text(first):
                found.append(f"core/{module}.py:{node.lineno}: unmarked template")
    assert not found, 'mark them: Sentence(QT_TRANSLATE_NOOP("core", ...), ...)\n' + "\n".join(
        found
    )


def test_window_core_errors_are_said_in_chinese(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Real errors of the speaker library, a dialogue script, a reference clip, the dictionary
    and the settings: English as before for the CLI, Chinese in a Chinese window (nested
    reasons too)."""
    from chattts_studio.core.engine.request import SynthesisRequest
    from chattts_studio.core.errors import BadSettingError, SpeakerError
    from chattts_studio.core.text.dialogue import ScriptError, parse_script, voices_for
    from chattts_studio.core.text.lexicon import LexiconError, LexiconStore
    from chattts_studio.core.voices.clone import check_clip
    from chattts_studio.core.voices.speakers import SpeakerLibrary
    from chattts_studio.gui import i18n

    def caught(kind: type[Exception], call) -> Exception:  # type: ignore[no-untyped-def]
        with pytest.raises(kind) as info:
            call()
        return info.value

    library_file = tmp_path / "speakers.json"
    nobody = caught(SpeakerError, lambda: SpeakerLibrary(library_file).remove("Nobody"))
    assert str(nobody) == "There is no speaker named 'Nobody'."
    library_file.write_text("{not json", encoding="utf-8")
    damaged = SpeakerLibrary(library_file).problem
    assert re.fullmatch(
        rf"The speaker library was damaged \({re.escape(str(library_file))} is not valid JSON\.\); "
        r"it was kept as \S+\.damaged-\d+ and a new one was started\.",
        damaged,
    ), damaged
    unknown = caught(ScriptError, lambda: voices_for(parse_script("Alice: 你好"), {}))
    assert str(unknown) == (
        "Line 1: there is no speaker named 'Alice' in the library (speakers: none yet)."
    )
    short = caught(SpeakerError, lambda: check_clip(np.full(24000, 0.1), 24000))
    assert str(short) == (
        "The recording is only 1.0 s long; a reference recording must be 3-30 seconds of one "
        "person speaking."
    )
    bracket = caught(LexiconError, lambda: LexiconStore(tmp_path / "lexicon.json").add("[a]", "b"))
    assert str(bracket) == "A dictionary word cannot contain '[' or ']' (control tokens)."
    hot = caught(BadSettingError, lambda: SynthesisRequest("你好", temperature=5).validate())
    assert str(hot) == "The temperature must be between 0.01 and 2 (got 5)."
    try:
        assert i18n.install("zh_CN")
        assert i18n.core_text(nobody) == "没有名为“Nobody”的说话人。"
        assert re.fullmatch(
            rf"说话人库已损坏（{re.escape(str(library_file))} 不是有效的 JSON 文件。）；"
            r"已将其保留为 \S+\.damaged-\d+，并新建了一个说话人库。",
            i18n.core_text(damaged),
        ), i18n.core_text(damaged)
        assert (
            i18n.core_text(unknown) == "第 1 行：库中没有名为“Alice”的说话人（现有说话人：暂无）。"
        )
        assert i18n.core_text(short) == "录音 只有 1.0 s；参考录音必须是 3-30 秒的单人说话录音。"
        assert i18n.core_text(bracket) == "词典中的词不能包含“[”或“]”（控制标记）。"
        assert i18n.core_text(hot) == "温度必须在 0.01 到 2 之间（收到的是 5）。"
    finally:
        i18n.install("en")
    assert i18n.core_text(unknown) == str(unknown)


def test_core_sentences_marked_in_gui_are_still_core_s_words() -> None:
    """i18n.CORE_SENTENCES stands in for marks core's own files do not have yet: each must be
    word for word in core's source, or its translation is never used."""
    from chattts_studio.gui.i18n import CORE_SENTENCES

    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "core").rglob("*.py"))
    source = re.sub(r'"\s*\n\s*"', "", source)  # implicitly joined literals read as one
    for sentence in CORE_SENTENCES:
        assert sentence in source, f"{sentence!r} is no longer in core: update CORE_SENTENCES"


def test_every_translation_keeps_its_placeholders_and_mnemonic() -> None:
    for (context, source), (translation, kind) in _messages(TS).items():
        if kind == "unfinished":
            continue
        assert translation.strip(), (context, source)
        assert sorted(FIELD.findall(translation)) == sorted(FIELD.findall(source)), source
        # An & in the source marks the menu mnemonic: the translation keeps one, "文件(&F)".
        assert source.count("&") == translation.count("&"), source
        assert english_words(FIELD.sub("", translation)) == [], (context, source, translation)


def test_the_qm_is_compiled_from_the_committed_ts(tmp_path: Path) -> None:
    """The .qm in the tree (and the wheel) is what lrelease makes of the .ts today."""
    compiled = tmp_path / QM.name
    done = subprocess.run(
        [str(TOOLS / "pyside6-lrelease"), "-silent", str(TS), "-qm", str(compiled)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert compiled.read_bytes() == QM.read_bytes(), "run make translations (or make install)"


def test_the_language_follows_the_system_locale(qapp) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QLocale

    from chattts_studio.gui import i18n

    assert i18n.system_language(QLocale("zh_CN")) == "zh_CN"
    assert i18n.system_language(QLocale("zh_SG")) == "zh_CN"
    assert i18n.system_language(QLocale("zh_TW")) == "en"  # traditional: not translated yet
    assert i18n.system_language(QLocale("de_DE")) == "en"
    assert i18n.resolve("system", QLocale("zh_CN")) == "zh_CN"
    assert i18n.resolve("en", QLocale("zh_CN")) == "en"  # a choice beats the locale
    assert i18n.resolve("nonsense", QLocale("en_US")) == "en"
    try:
        assert i18n.install("zh_CN") and i18n.active() == "zh_CN"
        assert i18n.translate("Window", "&File") == "文件(&F)"
        assert i18n.translate("Plural", "segment") == "个片段"
    finally:
        i18n.install("en")
    assert i18n.translate("Window", "&File") == "&File"


@pytest.fixture
def chinese_window(qtbot, private_home):  # type: ignore[no-untyped-def]
    """A window built with Settings > Language saved as 简体中文 (as a person would set it),
    not shown: the worker never starts, so nothing but the window itself speaks."""
    from chattts_studio.gui import i18n
    from chattts_studio.gui.app import build_window
    from chattts_studio.gui.settings import Key, Settings

    settings = Settings()
    settings.set(Key.LANGUAGE, "zh_CN")
    settings.sync()
    window = build_window(None)
    qtbot.addWidget(window)
    yield window
    window.close()
    i18n.install("en")  # the next tests' windows speak English again


def _walk(window) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Every string of the window, its dialogs and its plots, as they are now."""
    strings = window_strings(window)
    for dialog in (window.model.dialog, window.auditions.dialog):
        strings += window_strings(dialog)
    for item, where in ((window.live.rtf_plot, "RTF plot"), (window.live.memory_plot, "memory")):
        strings += list(plot_strings(item, where))
    return strings


def _render_rows(window, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """The render queue dock with a row in each state: waiting (no model yet), running with
    its progress line, finished, and cancelled."""
    from chattts_studio.core.services.render_job import RenderDone, progress_line
    from chattts_studio.core.services.report import Progress
    from chattts_studio.gui.worker.jobs import Job, JobKind

    queue = window.render_jobs.queue
    queue.folder = folder
    waiting = queue.add(None, "第一章。", "第一章")  # no model: it waits, the window says so
    assert waiting is not None and window.render_jobs.dock.isVisibleTo(window)
    running, done, cancelled = (queue.add(None, "正文。", f"第{n}章") for n in "二三四")
    for number, item in enumerate((running, done, cancelled), 50):
        queue.started(item, Job(JobKind.RENDER, number))
    line = progress_line(
        SimpleNamespace(
            done=3, total=8, audio_seconds=95.0, rtf=0.4, seconds_left=130.0, chapter=1, chapters=2
        )
    )
    queue.show_progress(running.job, Progress("render", 0.4, line))
    queue.finished(done.job, RenderDone(folder, [folder / "a.wav"], 6, 2, 60.0))
    queue.stopped(cancelled.job, cancelled=True)
    assert [i.state for i in queue.items] == ["waiting", "running", "done", "cancelled"]


def _finished_synthesis(window) -> None:  # type: ignore[no-untyped-def]
    """Demo weights loaded, then a synthesis ends: the model line, the status line, the
    history entry and the result as the window shows them after a real run."""
    from chattts_studio.core.engine.request import JobSummary, SegmentResult, SynthesisRequest
    from chattts_studio.core.services.synthesize import SynthesisJob, SynthesisOutcome
    from chattts_studio.core.weights import models
    from chattts_studio.gui.worker.jobs import Job, JobKind

    loaded = SimpleNamespace(
        info=models.resolve("demo"),
        device=SimpleNamespace(id="cpu"),
        precision=SimpleNamespace(value="fp32"),
        engine=SimpleNamespace(value="onnx"),  # named in the model line: ONNX Runtime's name
        load_seconds=1.5,
    )
    window.model.set_loaded(loaded)
    text = "你好，欢迎使用。"
    audio = np.full(4800, 0.1, dtype=np.float32)
    result = SegmentResult(0, 1, text, audio, 120, 0.5, 1)
    summary = JobSummary(1, 0.2, 0.5, 120, 0.2, None)
    job = window.jobs.current = Job(JobKind.SYNTHESIZE, 99)
    # The record says "voice seed 2" in the language of its day; the entry says it in today's.
    spec = SynthesisJob(SynthesisRequest(text=text), 2, "voice seed 2")
    window.jobs.end(job)  # as the job slot does before the op's handler
    window.synthesis._synthesized(job, SynthesisOutcome(spec, [result], summary, "", loaded))  # type: ignore[arg-type]


def test_a_chinese_window_has_no_english_left(chinese_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from chattts_studio.gui import i18n

    window = chinese_window
    assert i18n.active() == "zh_CN"
    assert window.synthesis.button.text().startswith("合成")
    strings = _walk(window)
    assert len(strings) > 150  # the walk really saw the window
    # The result panel's notes: beside Play (nothing to play) and beside Save (core's reason).
    window.result.play()
    assert window.result.output_note.text() == "还没有可播放的音频。"
    assert window.result.save_to(tmp_path / "missing" / "a.wav") == []
    assert "不存在" in window.result.save_note.text()
    strings += _walk(window)
    _render_rows(window, tmp_path / "books")
    strings += _walk(window)
    _finished_synthesis(window)
    assert window.messages.notice.text().startswith("完成")  # the status line after a synthesis
    assert "随机权重" in window.model.label.text()
    assert window.result.history_list.count() == 1
    assert "音色种子 2" in window.result.history_list.item(0).text()
    strings += _walk(window)
    english = [
        (where, text)
        for where, text in strings
        if english_words(text) and text != window.editor.text()
    ]
    assert not english, "\n".join(f"{where}: {text!r}" for where, text in english)


def test_settings_language_menu_saves_the_choice_for_the_next_start(qtbot, private_home):  # type: ignore[no-untyped-def]
    from chattts_studio.gui import i18n
    from chattts_studio.gui.app import build_window
    from chattts_studio.gui.settings import Key, Settings

    window = build_window(None)
    qtbot.addWidget(window)
    try:
        assert i18n.active() == "en"  # this machine's locale (C) and no choice yet
        assert "next start" in window.menu_actions.language_menu.title()
        window.menu_actions.languages["zh_CN"].trigger()
        assert Settings().text(Key.LANGUAGE) == "zh_CN"
        assert "简体中文 when ChatTTS Studio starts again" in window.messages.notice.text()
        window.close()
        again = build_window(None)  # the next start
        qtbot.addWidget(again)
        assert i18n.active() == "zh_CN" and again.menu_actions.languages["zh_CN"].isChecked()
        assert again.synthesis.button.text().startswith("合成")
        again.menu_actions.languages["system"].trigger()
        assert "下次启动" in again.menu_actions.language_menu.title()
        assert Settings().text(Key.LANGUAGE) == "system"
        again.close()
    finally:
        i18n.install("en")
