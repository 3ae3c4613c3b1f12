"""Errors a user can cause or fix, each carrying one clear sentence for the window or stderr. Raised
with a chattts_studio.core.messages.Sentence, the window can translate it; str(error) is always
English.
"""

from typing import Any


class StudioError(Exception):
    """A problem the user can act on; str(error) is the sentence to show."""

    @property
    def template(self) -> str | None:
        """The sentence's marked template, or None when it was raised with plain text."""
        said = self.args[0] if self.args else None
        return getattr(said, "template", None)

    @property
    def params(self) -> dict[str, Any]:
        said = self.args[0] if self.args else None
        return dict(getattr(said, "params", {}))


class BadTextError(StudioError):
    """The text cannot be spoken as given."""


class BadSettingError(StudioError):
    """A request or setting is out of range."""


class ModelError(StudioError):
    """A model is missing, damaged or cannot be loaded."""


class DeviceError(StudioError):
    """A device or precision cannot be used."""


class SpeakerError(StudioError):
    """A speaker or the speaker library is invalid."""


class NotAnEmbedding(SpeakerError):
    """A speaker string that decodes to no ChatTTS speaker embedding."""


class AudioError(StudioError):
    """Audio cannot be saved or played."""


class DownloadError(StudioError):
    """The official weights could not be fetched."""


class UnreachableError(DownloadError):
    """The server could not be reached or stopped answering (not: it sent the wrong bytes)."""


class Cancelled(Exception):  # a state, not a failure
    """The user cancelled the operation; what was finished is kept."""
