"""Light or dark, as the system says (QStyleHints.colorScheme), and the colours the window draws
itself, readable in both. A known dark scheme always gets our dark palette, since Qt's platform
themes give one on some desktops and not on others."""

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

Role = QPalette.ColorRole
Group = QPalette.ColorGroup

# Dark palette in the spirit of Fusion's; every text role is at least 7:1 on its background.
_DARK = {
    Role.Window: "#2b2b2e",
    Role.WindowText: "#ececec",
    Role.Base: "#1f1f22",
    Role.AlternateBase: "#2f2f33",
    Role.ToolTipBase: "#3a3a3e",
    Role.ToolTipText: "#f2f2f2",
    Role.PlaceholderText: "#a0a0a6",
    Role.Text: "#ececec",
    Role.Button: "#37373b",
    Role.ButtonText: "#ececec",
    Role.BrightText: "#ff6b6b",
    Role.Light: "#4a4a4f",
    Role.Midlight: "#3f3f44",
    Role.Mid: "#2a2a2d",
    Role.Dark: "#1a1a1c",
    Role.Shadow: "#0d0d0e",
    Role.Highlight: "#3d7ccf",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#7fb2ff",
    Role.LinkVisited: "#c79bff",
}
_DARK_DISABLED = {Role.WindowText: "#8a8a90", Role.Text: "#8a8a90", Role.ButtonText: "#8a8a90"}


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role, colour in _DARK_DISABLED.items():
        palette.setColor(Group.Disabled, role, QColor(colour))
    return palette


def is_dark(palette: QPalette | None = None) -> bool:
    """The palette draws light text on a dark window."""
    palette = palette or QGuiApplication.palette()
    return palette.color(Role.Window).lightness() < palette.color(Role.WindowText).lightness()


class SchemeNotifier(QObject):
    """Says when apply_scheme changed the palette. Widgets with a style sheet (the strips) get
    no palette event from QApplication.setPalette, so they listen here."""

    changed = Signal()


_notifier: SchemeNotifier | None = None


def notifier() -> SchemeNotifier:
    global _notifier
    if _notifier is None:
        _notifier = SchemeNotifier()
    return _notifier


def apply_scheme(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """Dark: our dark palette; light: the style's own; unknown: whatever the platform gives."""
    if scheme == Qt.ColorScheme.Dark:
        app.setPalette(dark_palette())
    elif scheme == Qt.ColorScheme.Light or is_dark(app.palette()):
        app.setPalette(app.style().standardPalette())
    notifier().changed.emit()


def follow_system(app: QApplication) -> None:
    """Apply the system's scheme now and whenever it changes (the desktop's dark mode)."""
    if app.property("chattts_follows_scheme"):
        return  # once per application: a later call must not undo a scheme applied since
    app.setProperty("chattts_follows_scheme", True)
    hints = app.styleHints()
    apply_scheme(app, hints.colorScheme())
    hints.colorSchemeChanged.connect(lambda scheme: apply_scheme(app, scheme))


def luminance(colour: QColor) -> float:
    """WCAG 2 relative luminance."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.redF())
        + 0.7152 * channel(colour.greenF())
        + 0.0722 * channel(colour.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio, 1 to 21 (4.5 is the minimum for body text)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@dataclass(frozen=True)
class PlotColours:
    background: QColor
    text: QColor  # axes, ticks, titles
    rtf: QColor  # the RTF curve
    memory: QColor  # the memory curve


def plot_colours(palette: QPalette | None = None) -> PlotColours:
    """Plots on the palette's base colour; curves of at least 3:1 against it in both schemes."""
    palette = palette or QGuiApplication.palette()
    dark = is_dark(palette)
    return PlotColours(
        background=palette.color(Role.Base),
        text=palette.color(Role.Text),
        rtf=QColor("#f5a65b" if dark else "#b35900"),
        memory=QColor("#6cb8f0" if dark else "#1f6aa5"),
    )


# The banner (first run) and the alert (problems at start): a tinted strip with its own text
# colour, never the palette's (light text on a light strip is what a dark scheme gave before).
_STRIPS = {
    "banner": {False: ("#fdebd0", "#e59866", "#1d1d1d"), True: ("#4a3718", "#b9843c", "#f5e6cf")},
    "alert": {False: ("#fadbd8", "#c0392b", "#1d1d1d"), True: ("#4d2320", "#d0655a", "#f8dcd9")},
}


def strip_colours(kind: str, dark: bool) -> tuple[QColor, QColor]:
    """A strip's background and text colours."""
    background, _border, text = _STRIPS[kind][dark]
    return QColor(background), QColor(text)


def strip_style(kind: str, dark: bool) -> str:
    background, border, text = _STRIPS[kind][dark]
    return (
        f"#{kind} {{ background: {background}; border: 1px solid {border}; }} "
        f"#{kind} QLabel {{ color: {text}; }}"
    )


def warning_colour(palette: QPalette | None = None) -> QColor:
    """Text that warns (demo weights loaded, no sound device): red, readable on the window."""
    return QColor("#ff8a80" if is_dark(palette) else "#b03a2e")
