"""Output panel: the top-k next-token probabilities at the current generation step, the chosen token, entropy."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

BAR, CHOSEN = "#8da9c4", "#d55e00"
TOP_K = 10


def entropy_bits(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


class OutputPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.plot = self.canvas.addPlot()
        self.plot.invertY(True)
        self.plot.setLabel("bottom", "probability")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brushes=[])
        self.plot.addItem(self.bars)
        self.values: list[pg.TextItem] = []
        for _ in range(TOP_K):
            t = pg.TextItem("", color="k", anchor=(0, 0.5))
            self.plot.addItem(t)
            self.values.append(t)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.canvas)
        self.vocab: list[str] | None = None
        self.top_ids = np.zeros(0, dtype=int)
        self.top_probs = np.zeros(0)
        self.top_labels: list[str] = []
        self.chosen_index: int | None = None
        self.entropy = 0.0

    def set_vocab(self, pieces: list[str]) -> None:
        self.vocab = pieces

    def label(self, i: int) -> str:
        return self.vocab[i] if self.vocab and 0 <= i < len(self.vocab) else f"#{i}"

    def view_key(self, state):
        return (state.step, state.decoding.temperature)

    def render(self, trace, state) -> None:
        step = min(state.step, trace.n_steps - 1)
        probs = trace.probs(step, state.decoding.temperature)
        order = np.argsort(-probs)[:TOP_K]
        self.top_ids, self.top_probs = order, probs[order]
        self.top_labels = [self.label(int(i)) for i in order]
        chosen = trace.out_tokens[step]
        self.chosen_index = self.top_labels.index(chosen) if chosen in self.top_labels else None
        self.entropy = entropy_bits(probs)
        brushes = [pg.mkBrush(CHOSEN if i == self.chosen_index else BAR) for i in range(len(order))]
        y = np.arange(len(order))
        self.bars.setOpts(x0=np.zeros(len(order)), y=y, height=0.7, width=self.top_probs, brushes=brushes)
        self.plot.getAxis("left").setTicks([[(int(i), t) for i, t in enumerate(self.top_labels)], []])
        self.plot.setXRange(0, 1.0, padding=0.02)
        self.plot.setYRange(-0.5, len(order) - 0.5, padding=0.02)
        for i, t in enumerate(self.values):
            if i < len(self.top_probs):
                t.setText(f"{self.top_probs[i]:.3f}")
                t.setPos(float(self.top_probs[i]) + 0.01, i)
            t.setVisible(i < len(self.top_probs))
        prefix = html.escape(" ".join(trace.tgt_tokens[: step + 1])[-40:])
        self.plot.setTitle(
            f"Step {step}: predicting token {step + 1} after “{prefix}”<br>chosen “{html.escape(chosen)}” (orange) · "
            f"entropy {self.entropy:.2f} bits · T = {state.decoding.temperature:.2f}", color="k", size="11pt")
