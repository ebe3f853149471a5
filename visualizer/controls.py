"""The input bar: source sentence, optional target, decoding settings, positional-encoding switch, model picker."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from model.decoding import DecodingSettings

OPEN_FOLDER = "Open model folder…"


class InputBar(QtWidgets.QWidget):
    """Widgets only; the window connects them to the ViewState."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sentence = QtWidgets.QLineEdit()
        self.sentence.setPlaceholderText("Type an English sentence…")
        self.sentence.setClearButtonEnabled(True)
        self.target = QtWidgets.QLineEdit()
        self.target.setPlaceholderText("Optional: a translation to force through the decoder (teacher forcing)")
        self.target.setClearButtonEnabled(True)
        self.model = QtWidgets.QComboBox()
        self.model.setToolTip("The bundled models, or a model folder of your own")
        self.method = QtWidgets.QComboBox()
        for label, key in (("Greedy", "greedy"), ("Beam search", "beam"), ("Sampling", "sample")):
            self.method.addItem(label, key)
        self.beam = QtWidgets.QSpinBox(prefix="width ", minimum=1, maximum=16, value=4)
        self.temperature = QtWidgets.QDoubleSpinBox(prefix="T = ", minimum=0.05, maximum=5.0, singleStep=0.1,
                                                    value=1.0, decimals=2)
        self.temperature.setToolTip("Temperature: divides the logits before the softmax (output panel and sampling)")
        self.top_k = QtWidgets.QSpinBox(prefix="top-k ", minimum=0, maximum=1000, value=0, specialValueText="top-k off")
        self.seed = QtWidgets.QSpinBox(prefix="seed ", minimum=0, maximum=2**31 - 1, value=0)
        self.positional = QtWidgets.QCheckBox("Positional encoding")
        self.positional.setChecked(True)
        self.positional.setToolTip("Switch the positional encoding off to see what attention does without word order")
        self.translation = QtWidgets.QLabel()
        self.translation.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.translation.setWordWrap(True)
        self.translation.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice = QtWidgets.QLabel()
        self.notice.setStyleSheet("color: #b35900; font-weight: bold")
        self.notice.setVisible(False)

        grid = QtWidgets.QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.addWidget(QtWidgets.QLabel("English:"), 0, 0)
        grid.addWidget(self.sentence, 0, 1)
        grid.addWidget(QtWidgets.QLabel("Model:"), 0, 2)
        grid.addWidget(self.model, 0, 3)
        grid.addWidget(QtWidgets.QLabel("Target:"), 1, 0)
        grid.addWidget(self.target, 1, 1, 1, 3)
        decoding = QtWidgets.QHBoxLayout()
        decoding.addWidget(QtWidgets.QLabel("Decoding:"))
        for w in (self.method, self.beam, self.temperature, self.top_k, self.seed, self.positional):
            decoding.addWidget(w)
        decoding.addStretch(1)
        grid.addLayout(decoding, 2, 0, 1, 4)
        grid.addWidget(QtWidgets.QLabel("Translation:"), 3, 0)
        grid.addWidget(self.translation, 3, 1, 1, 3)
        grid.addWidget(self.notice, 4, 1, 1, 3)
        grid.setColumnStretch(1, 1)
        self.model.setMinimumContentsLength(14)
        self.model.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.method.currentIndexChanged.connect(self._enable)
        self._enable()

    def _enable(self) -> None:
        m = self.method.currentData()
        self.beam.setEnabled(m == "beam")
        self.top_k.setEnabled(m == "sample")
        self.seed.setEnabled(m == "sample")

    def settings(self) -> DecodingSettings:
        return DecodingSettings(method=self.method.currentData(), beam=self.beam.value(),
                                temperature=self.temperature.value(), top_k=self.top_k.value(), seed=self.seed.value())

    def show_settings(self, s: DecodingSettings) -> None:
        widgets = (self.method, self.beam, self.temperature, self.top_k, self.seed)
        for w in widgets:
            w.blockSignals(True)
        self.method.setCurrentIndex(max(0, self.method.findData(s.method)))
        self.beam.setValue(s.beam)
        self.temperature.setValue(s.temperature)
        self.top_k.setValue(s.top_k)
        self.seed.setValue(s.seed)
        for w in widgets:
            w.blockSignals(False)
        self._enable()
