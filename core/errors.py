"""Errors a user can cause or fix, each carrying one clear sentence for the window or stderr."""


class StudioError(Exception):
    """A problem the user can act on; str(error) is the sentence to show."""


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


class AudioError(StudioError):
    """Audio cannot be saved or played."""


class DownloadError(StudioError):
    """The official weights could not be fetched."""


class Cancelled(Exception):  # a state, not a failure
    """The user cancelled the operation; what was finished is kept."""
