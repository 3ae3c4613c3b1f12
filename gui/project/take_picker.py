"""The take cell's editor: a list of the segment's takes ("2 (seed 123, 2.1 s)") to choose
from. Choosing one asks for the pick (a signal); the project is changed by the window."""

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Signal
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QComboBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from chattts_studio.gui.i18n import translate
from chattts_studio.gui.project.segment_model import SegmentModel

Index = QModelIndex | QPersistentModelIndex


class TakePicker(QStyledItemDelegate):
    picked = Signal(int, int)  # segment number, take id

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        model = index.model()
        assert isinstance(model, SegmentModel)
        row = model.row_at(index.row())
        label = translate("Segments", "{n} (seed {seed}, {seconds} s)")
        box = QComboBox(parent)
        box.setAccessibleName(translate("Segments", "Take"))
        for n, take in enumerate(row.takes, 1):
            text = label.format(n=n, seed=take.seed, seconds=f"{take.seconds:.1f}")
            box.addItem(text, take.id)
        box.activated.connect(lambda place: self._choose(box, row.number, place))
        return box

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        model = index.model()
        if isinstance(editor, QComboBox) and isinstance(model, SegmentModel):
            chosen = model.row_at(index.row()).chosen
            editor.setCurrentIndex(max(0, editor.findData(chosen)))

    def setModelData(self, editor: QWidget, model: object, index: Index) -> None:
        """Nothing: a pick is asked for when a take is chosen (`picked`), never by closing."""

    def _choose(self, box: QComboBox, number: int, place: int) -> None:
        take_id = box.itemData(place)
        self.closeEditor.emit(box, QAbstractItemDelegate.EndEditHint.NoHint)
        self.picked.emit(number, int(take_id))
