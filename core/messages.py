"""Sentences core shows a person, translatable without Qt: templates marked with
QT_TRANSLATE_NOOP("core", ...), each Sentence carrying its template and parameters, so the window
translates it (chattts_studio.gui.i18n) and the CLI prints it.
"""

import os
from typing import Any

CONTEXT = "core"  # the .ts context of every marked core sentence


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # Qt's name: lupdate looks for it
    """Marks `text` for the translators; returns it unchanged (Qt's own needs Qt)."""
    return text


class Sentence(str):
    """The English sentence `template.format(**params)`; `template` and `params` stay with it.

    A parameter may be a Sentence itself (a reason inside a sentence): translated in turn."""

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, **params: Any) -> "Sentence":
        made = super().__new__(cls, template.format(**params) if params else template)
        made.template = template
        made.params = params
        return made

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, Any]]:  # copy and pickle
        return (self.template,), self.params

    def replaced(self, old: str, new: str) -> "Sentence":
        """The same sentence with `old` replaced by `new` in its text parameters (a temp file's
        path said as the file the person chose)."""
        params = {
            key: value.replaced(old, new)
            if isinstance(value, Sentence)
            else str(value).replace(old, new)
            if isinstance(value, str | os.PathLike)
            else value
            for key, value in self.params.items()
        }
        return Sentence(self.template, **params)


def replaced(message: str, old: str, new: str) -> str:
    """`message` with `old` said as `new`, keeping a Sentence's template."""
    if isinstance(message, Sentence):
        return message.replaced(old, new)
    return message.replace(old, new)


def said(exc: BaseException) -> str:
    """What an error says: its Sentence (template kept, so the window can translate it) when
    it was raised with one, else its text; for a reason inside another sentence."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, Sentence) else str(exc)


# Sentences several modules say about a file a person gave them (one template each, so one
# translation serves every place).
def cannot_read(path: str | os.PathLike[str], exc: OSError | UnicodeDecodeError) -> Sentence:
    reason = getattr(exc, "strerror", None) or str(exc)
    return Sentence(
        QT_TRANSLATE_NOOP("core", "Cannot read {path}: {reason}."), path=str(path), reason=reason
    )


def not_text(path: str | os.PathLike[str]) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP("core", "{path} is not {encoding} text."),
        path=str(path),
        encoding="UTF-8",
    )


def not_json(path: str | os.PathLike[str]) -> Sentence:
    return Sentence(
        QT_TRANSLATE_NOOP("core", "{source} is not valid {format}."),
        source=str(path),
        format="JSON",
    )


def clock(seconds: float | None) -> str:
    """A duration as the CLI and the window show it: m:ss, or h:mm:ss from an hour on."""
    if seconds is None:
        return "--:--"
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
