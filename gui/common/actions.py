"""A menu item that is also a window-wide shortcut: what every part of the window adds to its
menus."""

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

# What a menu item runs when chosen.
Slot = Callable[[], object]


def add_action(
    window: QWidget,
    menu: QMenu,
    text: str,
    shortcut: QKeySequence | QKeySequence.StandardKey | None,
    slot: Slot,
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    action.triggered.connect(lambda _=False: slot())
    menu.addAction(action)
    window.addAction(action)  # shortcuts work wherever the focus is
    return action
