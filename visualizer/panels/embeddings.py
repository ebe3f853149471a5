"""Embeddings panel: scaled token embeddings, positional encodings and their sum; sinusoids; cosine similarity."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from ..heatmap_figure import HeatmapPlot

PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7"]     # Okabe-Ito: colour-blind safe


def cosine_similarity(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    u = x / np.where(n == 0, 1, n)
    return u @ u.T


class EmbeddingsPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.dim = QtWidgets.QSpinBox(prefix="sinusoids of dimensions ", minimum=0, maximum=0, singleStep=2)
        self.dim.setToolTip("Shows dimensions d, d+1, d+2, d+3 of the positional encoding across positions")
        self.notice = QtWidgets.QLabel()
        self.notice.setStyleSheet("color: #b35900; font-weight: bold")
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.dim)
        bar.addWidget(self.notice, 1)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.maps = {}
        cells = {"embedding": (0, 0), "pe": (0, 1), "x": (1, 0)}
        for key, title in (("embedding", "√d_model · embedding e"), ("pe", "positional encoding p"),
                           ("x", "sum x = e + p")):
            row, col = cells[key]
            self.maps[key] = HeatmapPlot(self.canvas.addPlot(row=row, col=col), font_size=10,
                                         row_label="token", col_label="dimension")
            self.maps[key].set_colormap("CET-D1")
            self.maps[key].plot.setTitle(title, size="12pt")
        self.similarity = HeatmapPlot(self.canvas.addPlot(row=1, col=1), font_size=10, row_label="token",
                                      col_label="token")
        self.similarity.set_colormap("CET-D1")
        self.similarity.plot.setTitle("cosine similarity of x (−1 … 1)", size="12pt")
        self.waves = self.canvas.addPlot(row=2, col=0, colspan=2, title="Positional encoding across positions")
        self.waves.setLabel("bottom", "position")
        self.waves.setLabel("left", "PE value")
        self.waves.addLegend(offset=(5, 5))
        self.curves = [self.waves.plot(pen=pg.mkPen(c, width=2), symbol="o", symbolSize=5, symbolBrush=c)
                       for c in PALETTE]
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.canvas, 1)
        self.side = "src"
        self.arrays: dict[str, np.ndarray] = {}
        self.trace = None
        self.dim.valueChanged.connect(lambda _: self.trace is not None and self._waves())

    def view_key(self, state):
        return state.stack in ("src_embed", "enc")

    def render(self, trace, state) -> None:
        self.trace = trace
        self.side = "src" if state.stack in ("src_embed", "enc") else "tgt"
        tokens = trace.src_tokens if self.side == "src" else trace.tgt_tokens
        who = "source" if self.side == "src" else "target (decoder input)"
        for key, hp in self.maps.items():
            a = trace[f"{self.side}.{key}"]
            self.arrays[key] = a
            m = float(np.abs(a).max()) or 1.0
            hp.show_matrix(a, None, tokens, [str(i) for i in range(a.shape[1])], levels=(-m, m), max_labels=6,
                           max_row_labels=40)
        self.maps["embedding"].plot.setTitle(f"{who}: √d_model · embedding e", size="12pt")
        self.arrays["similarity"] = cosine_similarity(self.arrays["x"])
        self.similarity.show_matrix(self.arrays["similarity"], None, tokens, tokens, levels=(-1.0, 1.0))
        d = trace[f"{self.side}.pe"].shape[1]
        self.dim.setMaximum(max(0, d - 1))
        self.notice.setText("" if trace.meta.get("positional", True) else
                            "Positional encoding is OFF: p = 0, so the model cannot tell word order.")
        self._waves()

    def _waves(self) -> None:
        pe = self.trace[f"{self.side}.pe"]
        d0 = self.dim.value()
        for i, curve in enumerate(self.curves):
            d = d0 + i
            if d < pe.shape[1]:
                curve.setData(np.arange(pe.shape[0]), pe[:, d])
                curve.opts["name"] = f"dimension {d}"
            else:
                curve.setData([], [])
        if getattr(self, "_legend_for", None) != (d0, pe.shape[1]):
            self._legend_for = (d0, pe.shape[1])
            legend = self.waves.legend
            legend.clear()
            for i, curve in enumerate(self.curves):
                if d0 + i < pe.shape[1]:
                    legend.addItem(curve, f"dimension {d0 + i}")
