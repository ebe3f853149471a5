"""Attention panel: every head of the chosen kind and layer as small multiples, one focused head drawn large."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from model.trace import ATTENTION_KINDS, KIND_TITLES

from ..heatmap_figure import COLORMAP, HeatmapPlot
from ..theme import COLORMAPS

KINDS = list(ATTENTION_KINDS)


class AttentionPanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.kind = QtWidgets.QComboBox()
        for k in KINDS:
            self.kind.addItem(KIND_TITLES[k], k)
        self.layer = QtWidgets.QSpinBox(prefix="Layer ", minimum=1, maximum=1)
        self.head = QtWidgets.QSpinBox(prefix="Head ", minimum=1, maximum=1)
        self.mean = QtWidgets.QCheckBox("Mean over heads")
        self.shared = QtWidgets.QCheckBox("One colour scale for all heads")
        self.shared.setChecked(True)
        self.shared.setToolTip("On: 0 … the largest weight of the layer for every head. Off: each head 0 … its own max.")
        self.cmap = QtWidgets.QComboBox()
        self.cmap.addItems(COLORMAPS)
        self.cmap.setToolTip("Colour-blind-safe, perceptually uniform colour maps")
        bar = QtWidgets.QHBoxLayout()
        for w in (self.kind, self.layer, self.head, self.mean, self.shared, QtWidgets.QLabel("Colours:"), self.cmap):
            bar.addWidget(w)
        bar.addStretch(1)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.focus = HeatmapPlot(self.canvas.addPlot(row=0, col=0, rowspan=2), font_size=12)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLORMAP), interactive=False,
                                        label="attention weight", width=16)
        self.colorbar.setImageItem(self.focus.image, insert_in=self.focus.plot)
        self.colorbar.axis.setTextPen("k")
        self.grid = self.canvas.addLayout(row=0, col=1)
        self.canvas.ci.layout.setColumnStretchFactor(0, 3)
        self.canvas.ci.layout.setColumnStretchFactor(1, 2)
        self.small: list[HeatmapPlot] = []
        self.hover = QtWidgets.QLabel("Hover over a cell to read its exact weight.")
        self.hover.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.hover)
        self.trace = None
        self.shown_kind, self.shown_layer, self.shown_head = "enc_self", 0, 0
        self.kind.activated.connect(lambda i: self.state.update(kind=self.kind.itemData(i)))
        self.layer.valueChanged.connect(self._layer_changed)
        self.head.valueChanged.connect(lambda v: self.state.update(head=v - 1))
        for box in (self.mean, self.shared):
            box.toggled.connect(lambda _: self.trace is not None and self.render(self.trace, self.state))
        self.cmap.currentTextChanged.connect(self.set_colormap)
        self.canvas.scene().sigMouseMoved.connect(self._hovered)
        self.canvas.scene().sigMouseClicked.connect(self._clicked)

    # --- reading back (tests, export) ---------------------------------------------------------
    @property
    def focused_array(self) -> np.ndarray | None:
        """The matrix in the focused heatmap, NaN at masked cells."""
        return self.focus.shown

    @property
    def focused_labels(self) -> tuple[list[str], list[str]]:
        return self.focus.rows, self.focus.cols

    def set_colormap(self, name: str) -> None:
        for hp in [self.focus, *self.small]:
            hp.set_colormap(name)
        self.colorbar.setColorMap(pg.colormap.get(name))

    def _layer_changed(self, v: int) -> None:
        if self.trace is not None:
            self.state.update(kind=self.shown_kind, layer=v - 1)

    def _ensure_small(self, H: int) -> None:
        if len(self.small) == H:
            return
        self.grid.clear()
        self.small = []
        cols = max(1, math.ceil(math.sqrt(H)))
        for h in range(H):
            plot = self.grid.addPlot(row=h // cols, col=h % cols)
            hp = HeatmapPlot(plot, font_size=8, labels=False)
            hp.set_colormap(self.cmap.currentText())
            plot.hideAxis("left")
            plot.hideAxis("bottom")
            self.small.append(hp)

    def view_key(self, state):
        return (state.kind, state.layer, state.head, state.step, self.mean.isChecked(), self.shared.isChecked())

    # --- rendering ----------------------------------------------------------------------------
    def render(self, trace, state) -> None:
        self.trace = trace
        kind = state.kind
        stack = ATTENTION_KINDS[kind][0]
        n_layers = trace.n_layers(stack)
        layer = min(state.layer, n_layers - 1)
        weights = trace.attention(kind, layer)                      # (H, Tq, Tk)
        mask = trace.mask(kind, layer)
        rows, cols = trace.axis_tokens(kind)
        H = weights.shape[0]
        head = min(state.head, H - 1)
        self.shown_kind, self.shown_layer, self.shown_head = kind, layer, head
        for w, v in ((self.kind, KINDS.index(kind)),):
            w.blockSignals(True); w.setCurrentIndex(v); w.blockSignals(False)
        for spin, n, v in ((self.layer, n_layers, layer + 1), (self.head, H, head + 1)):
            spin.blockSignals(True); spin.setMaximum(n); spin.setValue(v); spin.blockSignals(False)
        self.head.setEnabled(not self.mean.isChecked())
        top = float(weights.max()) if self.shared.isChecked() else None
        self._ensure_small(H)
        for h, hp in enumerate(self.small):
            hi = top if top is not None else float(weights[h].max())
            hp.show_matrix(weights[h], mask, rows, cols, f"H{h + 1}", levels=(0.0, max(hi, 1e-6)), max_labels=0,
                           title_size="10pt")
            hp.plot.getViewBox().setBorder(pg.mkPen("#ff3b30", width=3) if h == head and not self.mean.isChecked()
                                           else pg.mkPen("#cccccc"))
        focused = weights.mean(0) if self.mean.isChecked() else weights[head]
        which = "mean of heads" if self.mean.isChecked() else f"head {head + 1}"
        hi = top if top is not None else float(focused.max())
        levels = (0.0, max(hi, 1e-6))
        self.focus.show_matrix(focused, mask, rows, cols, f"{KIND_TITLES[kind]} — layer {layer + 1}, {which}",
                               levels=levels)
        self.colorbar.setLevels(levels)
        step_row = state.step if kind in ("dec_self", "cross") else None
        self.focus.highlight_row(step_row)

    def _hovered(self, pos) -> None:
        cell = self.focus.cell_at(pos)
        if cell is None or self.trace is None:
            return
        r, c = cell
        value = self.focus.shown[r, c]
        text = (f"query “{self.focus.rows[r]}” (row {r}) → key “{self.focus.cols[c]}” (column {c}): "
                + ("masked — this cell gets no attention" if np.isnan(value) else f"weight {float(value):.6f}"))
        self.hover.setText(text)

    def _clicked(self, event) -> None:
        for h, hp in enumerate(self.small):
            if hp.plot.sceneBoundingRect().contains(event.scenePos()):
                self.mean.setChecked(False)
                self.state.update(head=h)
                return
