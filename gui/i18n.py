"""The interface's language: Qt translators from resources/i18n/*.ts, chosen by the system locale or
Settings > Language. Every user-visible string in gui/ goes through `translate(context, text)`;
core's sentences through `core_text`.
"""

from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLibraryInfo, QLocale, QTranslator

from chattts_studio.core.messages import CONTEXT, Sentence
from chattts_studio.gui.resources import resource_path

if TYPE_CHECKING:
    from chattts_studio.core.weights.models import ModelInfo

SYSTEM = "system"  # the saved choice that follows the system locale
# The languages with a translation, by code, each named in its own language: a person looks
# for their own language's name, whatever the interface speaks now.
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
QM_PREFIX = "chattts_studio_"

_installed: list[QTranslator] = []  # kept alive: Qt does not own an installed translator
_active = "en"


def translate(context: str, text: str) -> str:
    """`text` in the interface's language (itself where there is no translation)."""
    return QCoreApplication.translate(context, text)


# Fixed sentences of core modules that do not mark them yet (another change owns those files
# now): marked here with the same text, so core_text finds them by their English words;
# tests/gui/test_i18n.py checks that each is still word for word in core's source.
CORE_SENTENCES = (
    QT_TRANSLATE_NOOP("core", "random weights: they produce noise, not speech"),  # RANDOM_LABEL
    QT_TRANSLATE_NOOP("core", "No audio output device is available; the audio can still be saved."),
    QT_TRANSLATE_NOOP(
        "core",
        "Audio playback needs the PortAudio library (libportaudio2); the audio can still be saved.",
    ),
    QT_TRANSLATE_NOOP("core", "There is no audio to save."),
)


def core_text(said: BaseException | str | None) -> str:
    """A sentence from core (an error, or a sentence a core function returned) in the
    interface's language: a Sentence's template translated and its parameters (translated in
    turn) filled in; a fixed sentence looked up whole; anything else as core said it."""
    if said is None:
        return ""
    if isinstance(said, BaseException):
        first = said.args[0] if len(said.args) == 1 else None
        said = first if isinstance(first, str) else str(said)
    if not isinstance(said, Sentence):
        return translate(CONTEXT, said) if said else said
    template = translate(CONTEXT, said.template)
    if not said.params:
        return template
    params = {k: core_text(v) if isinstance(v, Sentence) else v for k, v in said.params.items()}
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):  # a translation that broke its placeholders
        return str(said)


def model_label(info: "ModelInfo") -> str:
    """chattts_studio.core.weights.models.ModelInfo.label in the interface's language."""
    from chattts_studio.core.weights.models import RANDOM_LABEL

    if info.random_weights:
        return translate("Models", "{name} ({note})").format(
            name=info.name, note=core_text(RANDOM_LABEL)
        )
    if info.kind == "official":
        return translate("Models", "official ChatTTS weights (2Noise/ChatTTS)")
    return translate("Models", "ChatTTS weights in {folder}").format(folder=info.folder)


def qm_path(language: str) -> str:
    return str(resource_path(f"i18n/{QM_PREFIX}{language}.qm"))


def system_language(locale: QLocale | None = None) -> str:
    """The translation the system locale asks for: zh_CN for any Chinese written in simplified
    characters (zh_CN, zh_SG, zh_Hans_*), else English."""
    locale = locale or QLocale.system()
    if locale.language() == QLocale.Language.Chinese and locale.script() in (
        QLocale.Script.SimplifiedHanScript,
        QLocale.Script.AnyScript,
    ):
        return "zh_CN"
    return "en"


def resolve(choice: str, locale: QLocale | None = None) -> str:
    """The language a saved choice means here ("system", "en", "zh_CN"; unknown: system)."""
    return choice if choice in LANGUAGES else system_language(locale)


def install(language: str) -> bool:
    """Make `language` the one `translate` answers in, replacing any installed before. Call it
    before the window is built: widgets take their texts when they are made. False (English
    stays) when the translation file is missing or unreadable."""
    global _active
    app = QCoreApplication.instance()
    for old in _installed:
        if app is not None:
            QCoreApplication.removeTranslator(old)
    _installed.clear()
    _active = "en"
    if language == "en" or app is None:
        return language == "en"
    translator = QTranslator(app)
    if not translator.load(qm_path(language)):
        return False
    # Qt's own texts too (the file dialogs' buttons, an editor's context menu), from the
    # translations PySide6 ships; the app's own file is installed last, so it is asked first.
    qt_own = QTranslator(app)
    if qt_own.load(
        f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    ):
        QCoreApplication.installTranslator(qt_own)
        _installed.append(qt_own)
    QCoreApplication.installTranslator(translator)
    _installed.append(translator)
    _active = language
    return True


def active() -> str:
    """The language the interface speaks now."""
    return _active
