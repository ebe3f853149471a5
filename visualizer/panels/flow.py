"""Rollout and lines: where the information flows.

Rollout (model/analysis/rollout.py): for a self-attention kind, how much each position after layer l draws from
each input token, heads averaged, the residual counted (Abnar & Zuidema 2020). Lines: the focused head (or the
mean of the heads) drawn as BertViz's head view draws it: the query tokens in a column on the left, the key
tokens on the right (for cross-attention: target words on the left, source words on the right), one line per
pair, its opacity the attention weight. Both follow the attention panel's kind, layer and head; right-click
either to save it as PNG, SVG or CSV."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.ablation import ablated_heads, mean_of_heads_on
from model.analysis.rollout import self_attention_kinds, trace_rollout

from .. import accessible
from ..plotting.colormaps import BLUE, COLORMAP
from ..plotting.plot_box import HeatmapBox, PlotBox
from ..plotting.text import tick_font

ROLLOUT, LINES = 0, 1
LEVELS = 8                   # lines are drawn in this many opacities (one curve each: fast at 128 × 128)
MIN_WEIGHT = 0.01            # lighter pairs are not drawn


def line_levels(matrix: np.ndarray, mask: np.ndarray | None = None) -> list[tuple[int, int, float]]:
    """The (query, key, weight) pairs drawn as lines: weight at least MIN_WEIGHT and not masked."""
    m = np.where(mask, matrix, 0.0) if mask is not None else np.asarray(matrix)
    rows, cols = np.nonzero(m >= MIN_WEIGHT)
    return [(int(i), int(j), float(m[i, j])) for i, j in zip(rows, cols)]


class LinesBox(PlotBox):
    """Query tokens on the left, key tokens on the right, a line per pair with opacity ∝ weight. .shown, .rows and
    .cols are the matrix drawn (plot menus save it as CSV)."""

    def __init__(self):
        super().__init__("", min_height=280)
        for side in ("left", "bottom"):
            self.item.hideAxis(side)
        self.curves = []
        for level in range(LEVELS):
            colour = QtGui.QColor(BLUE)
            colour.setAlphaF((level + 1) / LEVELS)
            curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=1 + 2 * level / (LEVELS - 1)), connect="pairs")
            self.item.addItem(curve)
            self.curves.append(curve)
        self.labels: list[pg.TextItem] = []
        self.lines: list[tuple[int, int, float]] = []
        self.shown: np.ndarray | None = None
        self.rows: list[str] = []
        self.cols: list[str] = []

    def show_lines(self, matrix: np.ndarray, mask: np.ndarray | None, rows: list[str], cols: list[str],
                   title: str) -> None:
        self.shown = np.where(mask, matrix, np.nan) if mask is not None else np.array(matrix, dtype=float)
        self.rows, self.cols = list(rows), list(cols)
        self.lines = line_levels(matrix, mask)
        top = max((w for *_, w in self.lines), default=1.0)
        buckets: list[list[tuple[int, int]]] = [[] for _ in range(LEVELS)]
        for i, j, w in self.lines:
            buckets[min(LEVELS - 1, int(w / top * LEVELS))].append((i, j))
        for curve, pairs in zip(self.curves, buckets):
            x = np.tile([0.0, 1.0], len(pairs))
            y = np.array([-v for i, j in pairs for v in (i, j)], dtype=float)
            curve.setData(x, y)
        self._label(rows, cols)
        n = max(len(rows), len(cols), 1)
        self.item.vb.setRange(xRange=(-0.45, 1.45), yRange=(-(n - 0.5), 0.5), padding=0.02)
        self.set_title(title)

    def _label(self, rows: list[str], cols: list[str]) -> None:
        for item in self.labels:
            self.item.removeItem(item)
        self.labels = []
        font = tick_font()
        for x, anchor, tokens in ((-0.02, (1, 0.5), rows), (1.02, (0, 0.5), cols)):
            for i, token in enumerate(tokens):
                text = pg.TextItem(token, color=self.foreground, anchor=anchor)
                text.setFont(font)
                text.setPos(x, -i)
                self.item.addItem(text)
                self.labels.append(text)


class FlowPanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.mode = QtWidgets.QComboBox()
        self.mode.addItem("Rollout (self-attention, heads averaged)")
        self.mode.addItem("Lines (the focused head)")
        accessible.name(self.mode, "Show rollout or lines")
        self.mode.setToolTip("Rollout: how much each position draws from each input token up to this layer. "
                             "Lines: the focused head as lines from query tokens (left) to key tokens (right).")
        # narrower than its longest item where the dock is (its whole width made the panel 414 pixels wide in class
        # at 1024 × 768, scrolled sideways; QA): the open list shows the items whole
        self.mode.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode.setMinimumContentsLength(8)
        self.mean = QtWidgets.QCheckBox("Mean of heads")
        bar = QtWidgets.QHBoxLayout()
        bar.addWidget(self.mode, 1)
        bar.addWidget(self.mean)
        self.rollout_box = HeatmapBox("", "position (after the layer)", "input token", colormap=COLORMAP,
                                      bar_label="share of the input")
        self.lines_box = LinesBox()
        self.stack = QtWidgets.QStackedWidget()
        self.stack.addWidget(self.rollout_box)
        self.stack.addWidget(self.lines_box)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)
        self.trace = None
        self._rollouts: dict = {}            # kind -> (L, T, T) of the trace in view
        self.shown_kind = ""
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.mean.toggled.connect(lambda _: self.trace is not None and self.render(self.trace, self.state))
        self._mode_changed(ROLLOUT)

    def _mode_changed(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self.mean.setVisible(index == LINES)
        if self.trace is not None:
            self.render(self.trace, self.state)

    def view_key(self, state):
        return (state.kind, state.layer, state.stack, state.head, self.mode.currentIndex(), self.mean.isChecked())

    def rollout_kind(self, trace, state) -> str:
        """The self-attention kind whose rollout is shown: the attention panel's kind when it is one, else the
        first self-attention kind of the same stack, else the model's first."""
        kinds = self_attention_kinds(trace.schema)
        if not kinds:
            return ""
        stack = trace.schema.kind(state.kind).stack if state.kind in trace.schema.kind_names else ""
        for k in kinds:
            if k.name == state.kind:
                return k.name
        return next((k.name for k in kinds if k.stack == stack), kinds[0].name)

    def set_colormap(self, name: str) -> None:
        """The rollout's colour map, as Colours ▸ colour map sets the attention panel's."""
        self.rollout_box.heatmap.set_colormap(name)

    def render(self, trace, state) -> None:
        if trace is not self.trace:
            self.trace, self._rollouts = trace, {}
        if self.mode.currentIndex() == ROLLOUT:
            self._render_rollout(trace, state)
        else:
            self._render_lines(trace, state)

    def _render_rollout(self, trace, state) -> None:
        kind = self.rollout_kind(trace, state)
        self.shown_kind = kind
        if not kind:
            self.rollout_box.set_title("This model has no self-attention to roll out")
            return
        if kind not in self._rollouts:
            self._rollouts[kind] = trace_rollout(trace, kind)
        r = self._rollouts[kind]
        # at the output, the last layer, as the attention panel shows it (it had stayed at layer 1: QA)
        layer = state.attention_layer(len(r))
        rows, cols = trace.axis_tokens(kind)
        self.rollout_box.show_matrix(r[layer], rows, cols, levels=(0.0, max(float(r[layer].max()), 1e-6)))
        off = sum(1 for k, l, _ in ablated_heads(trace) if k == kind and l <= layer)
        self.rollout_box.set_title(f"Rollout of {trace.schema.kind(kind).title.lower()} to layer {layer + 1}"
                                   + (f" ({off} head{'s' if off != 1 else ''} off: adding nothing)" if off else ""))

    def _render_lines(self, trace, state) -> None:
        kind = state.kind if state.kind in trace.schema.kind_names else trace.schema.kinds[0].name
        info = trace.schema.kind(kind)
        self.shown_kind = kind
        layer = state.attention_layer(trace.n_layers(info.stack))
        weights = trace.attention(kind, layer)
        if self.mean.isChecked():              # the heads on, as the attention panel's mean (QA: all 8 with 3 off)
            matrix, which = mean_of_heads_on(weights, kind, layer, ablated_heads(trace))
        else:
            head = min(state.head, len(weights) - 1)
            matrix, which = weights[head], f"head {head + 1}"
        rows, cols = trace.axis_tokens(kind)
        self.lines_box.show_lines(matrix, trace.mask(kind, layer), rows, cols,
                                  f"{info.title}, layer {layer + 1}, {which}")

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(360, 420)
