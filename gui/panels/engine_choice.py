"""The engine choice beside the precision: Auto, PyTorch or ONNX Runtime
(core/engine/engine_choice.py), an engine that cannot run greyed with its reason. It never imports
core's engine modules, which import torch.
"""

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from chattts_studio.gui.i18n import core_text, translate

AUTO = "auto"
# Translated where they are shown (module constants are made before any translator).
AUTO_LABEL: str = QT_TRANSLATE_NOOP("Controls", "Auto")  # type: ignore[assignment]  # stub says object; it returns the text
ONNX_LABEL: str = QT_TRANSLATE_NOOP("Controls", "ONNX Runtime")  # type: ignore[assignment]  # stub says object; it returns the text
ENGINES: tuple[tuple[str, str], ...] = (
    (AUTO, AUTO_LABEL),
    ("torch", "PyTorch"),
    ("onnx", ONNX_LABEL),
)
TIPS: dict[str, str] = {
    AUTO: QT_TRANSLATE_NOOP(  # type: ignore[dict-item]  # stub says object; it returns the text
        "Controls",
        "ONNX Runtime on the CPU when it is installed and the precision is fp32 or int8, "
        "else PyTorch.",
    ),
    "torch": QT_TRANSLATE_NOOP(  # type: ignore[dict-item]
        "Controls", "PyTorch runs the whole model: every device and precision."
    ),
    "onnx": QT_TRANSLATE_NOOP(  # type: ignore[dict-item]
        "Controls",
        "ONNX Runtime runs the GPT's decode step on the CPU, fp32 or int8. The first load "
        "of a model exports it once (about a minute for the full model).",
    ),
}


def engine_label(engine: str | None) -> str:
    """An engine's name as the window shows it (a resolved one: PyTorch or ONNX Runtime)."""
    return translate("Controls", dict(ENGINES).get(engine or "", "-"))


class EngineChoice(QWidget):
    """The engine box and, beside it, the engine the loaded model really uses (auto
    resolved). `changed` is the user's choice only, never a refresh's fallback."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QComboBox()
        for value, label in ENGINES:
            self.box.addItem(translate("Controls", label), value)
            self.box.setItemData(
                self.box.count() - 1,
                translate("Controls", TIPS[value]),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.box.setAccessibleName(translate("Controls", "Engine"))
        self.effective = QLabel()
        self.show_effective(None)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.box)
        row.addWidget(self.effective)
        row.addStretch(1)
        self.box.currentIndexChanged.connect(lambda _index: self.changed.emit())

    def value(self) -> str:
        return str(self.box.currentData())

    def reason(self, value: str) -> str | None:
        """Why the engine `value` is greyed now, or None when it can be chosen."""
        index = self.box.findData(value)
        if self._item_enabled(index):
            return None
        return str(self.box.itemData(index, Qt.ItemDataRole.ToolTipRole))

    def select(self, value: str) -> None:
        """Preselect without a `changed` (start-up, a failed load); unknown: auto."""
        index = self.box.findData(value)
        self.box.blockSignals(True)
        self.box.setCurrentIndex(index if index >= 0 else 0)
        self.box.blockSignals(False)

    def refresh(self, reasons: dict[str, str | None]) -> None:
        """Grey what cannot run (reasons: engine -> None or why not, from the worker's probe
        for the chosen device and precision); a chosen engine greyed falls back to auto,
        without a `changed` (the device or precision change that caused it reloads)."""
        for index in range(self.box.count()):
            value = str(self.box.itemData(index))
            why = core_text(reasons.get(value)) or None
            self._set_item_enabled(index, why is None)
            tip = why if why is not None else translate("Controls", TIPS[value])
            self.box.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        if not self._item_enabled(self.box.currentIndex()):
            self.select(AUTO)

    def show_effective(self, engine: str | None) -> None:
        self.effective.setText(
            translate("Controls", "in use: {engine}").format(engine=engine_label(engine))
        )

    def _set_item_enabled(self, index: int, enabled: bool) -> None:
        model = self.box.model()
        if isinstance(model, QStandardItemModel):
            model.item(index).setEnabled(enabled)

    def _item_enabled(self, index: int) -> bool:
        model = self.box.model()
        if isinstance(model, QStandardItemModel) and index >= 0:
            return bool(model.item(index).isEnabled())
        return True
