"""Device, precision, engine, segment size, batch size and the advanced generation settings. Until
the worker's device probe arrives, the pickers say "loading…" and keep the saved choice.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.engine.request import AUTO_BATCH_MAX, BATCH_SIZE_RANGE, SynthesisRequest
from chattts_studio.core.services.model_jobs import DeviceProbe
from chattts_studio.core.text.prepare import MAX_CJK_SEGMENT, MAX_SEGMENT_SECONDS
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.engine_choice import AUTO, EngineChoice

if (
    TYPE_CHECKING
):  # the worker imports chattts_studio.core.engine.devices (and torch); the window only names them
    from chattts_studio.core.engine.devices import Device
    from chattts_studio.core.engine.request import Precision

# Translated where they are shown (module constants are made before any translator).
LOADING: str = QT_TRANSLATE_NOOP("Controls", "loading…")  # type: ignore[assignment]  # stub says object; it returns the text
SEGMENT_RANGE = (10, MAX_CJK_SEGMENT)
LOCKED_NOTE: str = QT_TRANSLATE_NOOP(  # type: ignore[assignment]  # stub says object; it returns the text
    "Controls",
    "Locked: the running synthesis uses this value. Change it when the job ends (or after "
    "Esc); the change applies to the next job.",
)


@dataclass(frozen=True)
class Generation:
    """The advanced settings, as SynthesisRequest fields."""

    seed: int  # the generation seed (the voice seed is the Speaker tab's)
    temperature: float
    top_p: float
    top_k: int
    refine_text: bool
    pause_seconds: float


class ControlsPanel(QWidget):
    engine_changed = Signal()  # device, precision or engine: the model must be reloaded
    segment_size_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.probe: DeviceProbe | None = None  # the worker's, once it has looked
        self.devices: list[Device] = []
        # The device, precision and engine wanted before the probe (the saved choice; "" is
        # the default device), and whether a job runs: applied once the probe arrives.
        self._wanted: tuple[str, str, str] = ("", "fp32", AUTO)
        self._busy = (False, False)
        self._build()
        self._connect()

    # -- widgets ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.device_box = QComboBox()
        self.device_box.addItem(translate("Controls", LOADING), None)
        self.device_box.setEnabled(False)
        self.device_note = QLabel()
        self.device_note.setWordWrap(True)
        self.device_note.setObjectName("deviceNote")
        # It may hold the command that installs PyTorch's CUDA build: selectable, to copy it.
        self.device_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.precision_group = QButtonGroup(self)
        self.precision_buttons: dict[Precision, QRadioButton] = {}  # made by show_probe
        self.precision_row = QHBoxLayout()
        self.effective_precision = QLabel(
            translate("Controls", "effective: {precision}").format(precision="-")
        )
        self.precision_row.addWidget(self.effective_precision)
        self.precision_row.addStretch(1)
        self.precision_note = QLabel(translate("Controls", LOADING))
        self.precision_note.setWordWrap(True)
        self.engine_choice = EngineChoice()

        self.segment_slider = QSlider(Qt.Orientation.Horizontal)
        self.segment_slider.setRange(*SEGMENT_RANGE)
        self.segment_slider.setValue(50)
        self.segment_slider.setToolTip(
            translate(
                "Controls",
                "How much speech a segment grows toward, in Chinese characters (an English "
                "letter counts about a third of one). Segments end at sentence ends: a longer "
                "sentence stays whole up to {most} characters, about {seconds:.0f} s, ChatTTS's "
                "limit for one segment, and only a longer one is split, at clauses first.",
            ).format(most=MAX_CJK_SEGMENT, seconds=MAX_SEGMENT_SECONDS)
        )
        self.segment_tip = self.segment_slider.toolTip()
        self.segment_value = QLabel(translate("Controls", "{count} characters").format(count=50))
        segment_row = QHBoxLayout()
        segment_row.addWidget(self.segment_slider, 1)
        segment_row.addWidget(self.segment_value)

        self.batch_box = QSpinBox()
        self.batch_box.setRange(*BATCH_SIZE_RANGE)  # the engine's range; 0 is automatic
        self.batch_box.setSpecialValueText(translate("Controls", "auto"))
        self.batch_tip = translate(
            "Controls",
            "Segments decoded together, up to {most}. auto: up to {auto}, never more than the "
            "text has segments. Larger batches are faster per segment but use more memory.",
        ).format(most=BATCH_SIZE_RANGE[1], auto=AUTO_BATCH_MAX)
        self.batch_box.setToolTip(self.batch_tip)

        defaults = SynthesisRequest(text="")
        self.seed_box = QSpinBox()
        self.seed_box.setRange(0, 2**31 - 1)
        self.seed_box.setValue(defaults.seed)
        self.seed_box.setToolTip(
            translate(
                "Controls",
                "The generation seed: the same text, voice and settings with the same "
                "generation seed give the same audio; another one reads it differently. It "
                "does not choose the voice: that is the voice seed (or library speaker) on the "
                "Speaker tab.",
            )
        )
        self.temperature_box = self._float_box(0.01, 2.0, defaults.temperature)
        self.top_p_box = self._float_box(0.01, 1.0, defaults.top_p)
        self.top_k_box = QSpinBox()
        self.top_k_box.setRange(1, 100)
        self.top_k_box.setValue(defaults.top_k)
        self.refine_box = QCheckBox(translate("Controls", "Refine text (adds pauses and fillers)"))
        self.refine_box.setChecked(defaults.refine_text)
        self.pause_box = self._float_box(0.0, 5.0, defaults.pause_seconds)
        self.pause_box.setSuffix(" s")

        # Shown by the main window as its own "Advanced" tab, out of the way.
        self.advanced = QWidget()
        advanced_form = QFormLayout(self.advanced)
        advanced_form.addRow(translate("Controls", "Generation seed"), self.seed_box)
        advanced_form.addRow(translate("Controls", "Temperature"), self.temperature_box)
        advanced_form.addRow("Top-P", self.top_p_box)
        advanced_form.addRow("Top-K", self.top_k_box)
        advanced_form.addRow("", self.refine_box)
        advanced_form.addRow(translate("Controls", "Pause between segments"), self.pause_box)
        self.temperature_box.setToolTip(
            translate(
                "Controls", "Higher: a livelier, less predictable reading; lower: a steadier one."
            )
        )
        self.top_p_box.setToolTip(
            translate("Controls", "Sample only from the most likely tokens that add up to P.")
        )
        self.top_k_box.setToolTip(
            translate("Controls", "Sample only from the K most likely tokens.")
        )
        self.pause_box.setToolTip(translate("Controls", "Silence put between two segments."))

        group = QGroupBox(translate("Controls", "Engine"))
        form = QFormLayout(group)
        form.addRow(translate("Controls", "Device"), self.device_box)
        form.addRow("", self.device_note)
        form.addRow(translate("Controls", "Precision"), self.precision_row)
        form.addRow("", self.precision_note)
        form.addRow(translate("Controls", "Runtime"), self.engine_choice)
        form.addRow(translate("Controls", "Segment size"), segment_row)
        form.addRow(translate("Controls", "Batch size"), self.batch_box)
        self._name_controls()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group)
        layout.addStretch(1)

    def _name_controls(self) -> None:
        """Names a screen reader says (the form's labels are also the fields' buddies)."""
        for widget, name in (
            (self.device_box, translate("Controls", "Device")),
            (self.segment_slider, translate("Controls", "Segment size")),
            (self.batch_box, translate("Controls", "Batch size")),
            (self.seed_box, translate("Controls", "Generation seed")),
            (self.temperature_box, translate("Controls", "Temperature")),
            (self.top_p_box, "Top-P"),
            (self.top_k_box, "Top-K"),
            (self.refine_box, translate("Controls", "Refine text")),
            (self.pause_box, translate("Controls", "Pause between segments")),
        ):
            widget.setAccessibleName(name)
        self.segment_slider.setAccessibleDescription(
            translate("Controls", "Speech per segment, in Chinese characters")
        )
        self.batch_box.setAccessibleDescription(
            translate("Controls", "Segments decoded together; 0 is automatic")
        )

    @staticmethod
    def _float_box(low: float, high: float, value: float) -> QDoubleSpinBox:
        box = QDoubleSpinBox()
        box.setRange(low, high)
        box.setSingleStep(0.05)
        box.setDecimals(2)
        box.setValue(value)
        return box

    def _connect(self) -> None:
        self.device_box.currentIndexChanged.connect(self._device_changed)
        self.precision_group.buttonToggled.connect(self._precision_toggled)
        self.engine_choice.changed.connect(self.engine_changed)
        self.segment_slider.valueChanged.connect(self._segment_changed)

    # -- behaviour -------------------------------------------------------------------------
    def _segment_changed(self, value: int) -> None:
        self.segment_value.setText(translate("Controls", "{count} characters").format(count=value))
        self.segment_size_changed.emit(value)

    def _device_changed(self, _index: int) -> None:
        self._refresh_precisions()
        self.engine_changed.emit()

    def _precision_toggled(self, _button: QRadioButton, checked: bool) -> None:
        if checked:
            self._refresh_engines()
            self.engine_changed.emit()

    # -- the devices, once the worker has looked -------------------------------------------
    def show_probe(self, probe: DeviceProbe) -> None:
        """Fill the device picker and the precision buttons, and select the wanted choice
        (as the worker settles a load asked for before: DeviceProbe.settle)."""
        self.blockSignals(True)  # showing what exists changes no choice: no reload
        self.device_box.blockSignals(True)
        self.probe, self.devices = probe, list(probe.devices)
        self.device_box.clear()
        model = self.device_box.model()

        def add_disabled(label: str, data: str, reason: str) -> None:
            self.device_box.addItem(label, data)
            index = self.device_box.count() - 1
            if isinstance(model, QStandardItemModel):
                model.item(index).setEnabled(False)
            self.device_box.setItemData(index, reason, Qt.ItemDataRole.ToolTipRole)

        for device in self.devices:
            if device.problem:  # a GPU this PyTorch has no kernels for: greyed out, with why
                add_disabled(
                    translate("Controls", "{device} (unsupported)").format(device=device.label),
                    device.id,
                    core_text(device.problem),
                )
            else:
                self.device_box.addItem(device.label, device.id)
        if not any(d.kind == "cuda" for d in self.devices):
            # Say why the GPU is missing instead of silently offering only the CPU.
            add_disabled(translate("Controls", "CUDA (unavailable)"), "cuda", core_text(probe.cuda))
        unusable = [
            translate("Controls", "{device} cannot be used: {reason}.").format(
                device=d.id, reason=core_text(d.problem)
            )
            for d in self.devices
            if d.problem
        ]
        self.device_note.setText(" ".join([core_text(probe.cuda), *unusable]))
        for index, precision in enumerate(probe.precisions):
            button = QRadioButton(precision.value)
            button.setAccessibleName(
                translate("Controls", "Precision {precision}").format(precision=precision.value)
            )
            self.precision_group.addButton(button)
            self.precision_buttons[precision] = button
            self.precision_row.insertWidget(index, button)
        self.device_box.blockSignals(False)
        self.blockSignals(False)
        self.select(*self._wanted)
        self.set_busy(*self._busy)

    def show_probe_failed(self, reason: str) -> None:
        self.device_box.setItemText(0, translate("Controls", "unavailable"))
        self.device_note.setText(reason)
        self.precision_note.setText("")

    @property
    def ready(self) -> bool:
        """The probe has arrived: the devices and precisions are real."""
        return self.probe is not None

    def device(self) -> "Device | None":
        """The selected device (None until the probe has arrived)."""
        device_id = self.device_box.currentData()
        return next((d for d in self.devices if d.id == device_id), None)

    def device_id(self) -> str:
        """The selected device's id; before the probe the wanted one ("" is the default)."""
        device = self.device()
        return device.id if device is not None else self._wanted[0]

    def _support(self) -> "dict[Precision, str | None]":
        if self.probe is None:
            return {}
        return self.probe.support.get(self.device_id(), {})

    def _refresh_precisions(self) -> None:
        """Disable what the device cannot do, with the reason; fall back to fp32 if needed."""
        if self.probe is None:
            return
        support = self._support()
        reasons = []
        for precision, button in self.precision_buttons.items():
            reason = core_text(support.get(precision)) or None
            button.setEnabled(reason is None)
            button.setToolTip(
                reason
                or translate("Controls", "{precision} works on {device}").format(
                    precision=precision.value, device=self.device_id()
                )
            )
            if reason:
                reasons.append(f"{precision.value}: {reason}")
        checked = self.precision()
        if checked is None or not self.precision_buttons[checked].isEnabled():
            self.precision_group.blockSignals(True)
            self.precision_buttons[self.probe.precisions[0]].setChecked(True)  # fp32
            self.precision_group.blockSignals(False)
        self.precision_note.setText("; ".join(reasons))
        self._refresh_engines()

    def _refresh_engines(self) -> None:
        """Grey the engines the chosen device and precision cannot use (with the reason)."""
        precision = self.precision()
        if self.probe is None or precision is None:
            return
        self.engine_choice.refresh(self.probe.engine_reasons(self.device_id(), precision))

    def engine_value(self) -> str:
        """The chosen engine (auto, torch or onnx); before the probe the wanted one."""
        return self.engine_choice.value() if self.probe is not None else self._wanted[2]

    def precision(self) -> "Precision | None":
        """The checked precision (None until the probe has arrived)."""
        for precision, button in self.precision_buttons.items():
            if button.isChecked():
                return precision
        return None

    def precision_value(self) -> str:
        """The checked precision's name; before the probe the wanted one."""
        precision = self.precision()
        return precision.value if precision is not None else self._wanted[1]

    def select(self, device_id: str, precision: str, engine: str | None = None) -> None:
        """Preselect without reloading (used at start-up from the saved settings). Before the
        probe it is remembered and applied when the probe arrives. `engine` None: as it is."""
        engine = engine if engine is not None else self.engine_value()
        if self.probe is None:
            self._wanted = (device_id, precision, engine)
            return
        device_id, chosen = self.probe.settle(device_id, precision)
        self.blockSignals(True)
        self.device_box.setCurrentIndex(self.device_box.findData(device_id))
        self._refresh_precisions()
        self.precision_buttons[chosen].setChecked(True)
        self.engine_choice.select(self.probe.settle_engine(device_id, chosen, engine))
        self._refresh_engines()
        self.blockSignals(False)

    def show_effective(self, precision: "Precision | None", engine: str | None = None) -> None:
        """What the loaded model really runs (auto resolved); None: no model."""
        self.effective_precision.setText(
            translate("Controls", "effective: {precision}").format(
                precision=precision.value if precision else "-"
            )
        )
        self.engine_choice.show_effective(engine)

    def set_busy(self, busy: bool, synthesizing: bool = False) -> None:
        """Device and precision are fixed while any job runs: a reload would wait behind it.
        Segment and batch size are fixed while a synthesis runs: it uses the values it began
        with, and the count line must not show another."""
        self._busy = (busy, synthesizing)
        self.device_box.setEnabled(not busy and self.ready)
        support = self._support()
        for precision, button in self.precision_buttons.items():
            button.setEnabled(not busy and support.get(precision) is None)
        self.engine_choice.box.setEnabled(not busy and self.ready)
        for widget, tip in (
            (self.segment_slider, self.segment_tip),
            (self.batch_box, self.batch_tip),
        ):
            widget.setEnabled(not synthesizing)
            widget.setToolTip(
                f"{translate('Controls', LOCKED_NOTE)}\n{tip}" if synthesizing else tip
            )

    def generation(self) -> Generation:
        return Generation(
            self.seed_box.value(),
            self.temperature_box.value(),
            self.top_p_box.value(),
            self.top_k_box.value(),
            self.refine_box.isChecked(),
            self.pause_box.value(),
        )
