"""LayerNorm panel: per-token mean and σ of the LayerNorm input, value histograms before and after, γ and β."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from ..heatmap_figure import token_ticks

BLUE, ORANGE = "#0072b2", "#e69f00"


def ln_stage(state, n_enc: int, n_dec: int) -> tuple[str, int, str, str]:
    """(stack, layer, sublayer, note): the Add & Norm of the current stage, or the nearest one."""
    if state.stack in ("enc", "dec"):
        return state.stack, state.layer, state.sublayer, ""
    if state.stack == "src_embed":
        return "enc", 0, "self", "Embeddings have no LayerNorm: showing the first one of the encoder."
    if state.stack == "tgt_embed":
        return "dec", 0, "self", "Embeddings have no LayerNorm: showing the first one of the decoder."
    return "dec", n_dec - 1, "ffn", "The output layer has no LayerNorm: showing the decoder's last one."


class LayerNormPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.title = QtWidgets.QLabel()
        self.title.setWordWrap(True)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground("w")
        self.stats = self.canvas.addPlot(row=0, col=0, colspan=2, title="μ and σ of the LayerNorm input v, per token")
        self.stats.addLegend(offset=(5, 5))
        self.mu_bars = pg.BarGraphItem(x=[], height=[], width=0.38, brush=BLUE, name="mean μ")
        self.sigma_bars = pg.BarGraphItem(x=[], height=[], width=0.38, brush=ORANGE, name="std σ")
        self.stats.addItem(self.mu_bars)
        self.stats.addItem(self.sigma_bars)
        self.hist = self.canvas.addPlot(row=1, col=0, title="values before (v) and after LayerNorm")
        self.hist.addLegend(offset=(5, 5))
        self.hist.setLabel("bottom", "value")
        self.hist.setLabel("left", "count")
        self.before = self.hist.plot(stepMode="center", pen=pg.mkPen(BLUE, width=2), name="before: v = x + Sublayer(x)")
        self.after = self.hist.plot(stepMode="center", pen=pg.mkPen(ORANGE, width=2), name="after: LayerNorm(v)")
        self.params = self.canvas.addPlot(row=1, col=1, title="γ (scale) and β (shift) per dimension")
        self.params.addLegend(offset=(5, 5))
        self.params.setLabel("bottom", "dimension")
        self.gamma = self.params.plot(pen=pg.mkPen(BLUE, width=2), name="γ")
        self.beta = self.params.plot(pen=pg.mkPen(ORANGE, width=2), name="β")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.canvas, 1)
        self.shown: dict[str, np.ndarray] = {}

    def view_key(self, state):
        return (state.stack, state.layer, state.sublayer)

    def render(self, trace, state) -> None:
        stack, layer, sub, note = ln_stage(state, trace.n_layers("enc"), trace.n_layers("dec"))
        layer = min(layer, trace.n_layers(stack) - 1)
        get = lambda name: trace.get(stack, layer, sub, name)
        mu, sigma, v, out = get("ln_mean"), get("ln_sigma"), get("residual"), get("ln_out")
        self.shown = {"mu": mu, "sigma": sigma, "gamma": get("gamma"), "beta": get("beta")}
        tokens = trace.src_tokens if stack == "enc" else trace.tgt_tokens
        x = np.arange(len(mu))
        self.mu_bars.setOpts(x=x - 0.2, height=mu, width=0.38)
        self.sigma_bars.setOpts(x=x + 0.2, height=sigma, width=0.38)
        self.stats.getAxis("bottom").setTicks([[(i, t) for i, t in enumerate(tokens)][:: max(1, len(tokens) // 30)], []])
        lo, hi = float(min(v.min(), out.min())), float(max(v.max(), out.max()))
        edges = np.linspace(lo, hi if hi > lo else lo + 1, 61)
        self.before.setData(edges, np.histogram(v, edges)[0])
        self.after.setData(edges, np.histogram(out, edges)[0])
        d = np.arange(len(self.shown["gamma"]))
        self.gamma.setData(d, self.shown["gamma"])
        self.beta.setData(d, self.shown["beta"])
        name = {"self": "self-attention" if stack == "enc" else "masked self-attention", "cross": "cross-attention",
                "ffn": "feed-forward"}[sub]
        self.title.setText(f"<b>{'Encoder' if stack == 'enc' else 'Decoder'} layer {layer + 1}, Add &amp; Norm after "
                           f"{name}</b>: LayerNorm(v) = γ ⊙ (v − μ)/σ + β"
                           + (f"<br><i>{note}</i>" if note else ""))
