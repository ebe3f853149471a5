"""Model view: every layer × head of one attention kind at once, as BertViz's model view shows them: one row of
thumbnails per layer, one column per head, each head coloured from 0 to its own largest weight. A click focuses
that head in the attention panel; hovering shows the head's metrics (model/analysis/metrics.py); switched-off
heads are crossed out.

All thumbnails are one image (a mosaic with gaps), so that 12 layers × 12 heads of 128 tokens paint as fast as
one heatmap: see benchmarks/model_view.py."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.ablation import ablated_heads
from model.analysis.metrics import trace_metrics
from model.schema import OUTPUT

from .. import accessible
from ..plotting.colormaps import COLORMAP, lookup_table, packed_colours, rgba_image
from ..plotting.halo import HaloRect
from ..plotting.text import tick_font
from ..plotting.titles import set_title
from .widgets import KindPicker, WrappedLabel


SCALE = "colour: from 0 (left) to each head's own largest weight (right)"      # under the colour bar
MODEL_VIEW_HINT = "Click a head (or use the arrow keys) to focus it; hover for its metrics."   # (colours: the bar)
MOVES = {QtCore.Qt.Key.Key_Left: (0, -1), QtCore.Qt.Key.Key_Right: (0, 1), QtCore.Qt.Key.Key_Up: (-1, 0),
         QtCore.Qt.Key.Key_Down: (1, 0)}


def gap_of(n_rows: int, n_cols: int) -> int:
    """The gap between thumbnails, in cells: about a sixth of a thumbnail, at least one cell."""
    return max(1, round(max(n_rows, n_cols) / 6))


def tile(tiles: np.ndarray, gap: int, fill) -> np.ndarray:
    """(L, H, Tq, Tk, ...) tiles laid out as one (L·(Tq+gap) − gap, H·(Tk+gap) − gap, ...) mosaic, fill in the
    gaps: one strided copy, no loop over heads."""
    L, H, Tq, Tk = tiles.shape[:4]
    rest = tiles.shape[4:]
    shape = (L, Tq + gap, H, Tk + gap, *rest)
    out = np.zeros(shape, dtype=tiles.dtype) if fill == 0 else np.full(shape, fill, dtype=tiles.dtype)
    out[:, :Tq, :, :Tk] = tiles.swapaxes(1, 2)
    return out.reshape(L * (Tq + gap), H * (Tk + gap), *rest)[: L * (Tq + gap) - gap, : H * (Tk + gap) - gap]


def colour_tiles(weights: np.ndarray, masks: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """(L, H, Tq, Tk) uint32, each an RGBA pixel: each head from 0 to its own largest weight through lut
    (256, 4) uint8; masked cells transparent (0)."""
    top = np.maximum(weights.max(axis=(2, 3), keepdims=True), np.float32(1e-6))
    packed = packed_colours(weights, 0.0, top, lut, nan=False)
    packed *= masks[:, None]                  # masked cells: 0, a transparent pixel
    return packed


class ModelViewPanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.kind = KindPicker()
        self.kind.setToolTip("Which attention sublayer: every layer (rows) and head (columns) of it")
        self.kind.activated.connect(lambda i: self.state.update(kind=self.kind.itemData(i)))
        self.canvas = pg.GraphicsLayoutWidget()
        accessible.name(self.canvas, "Model view: every layer and head of the attention kind",
                        "The arrow keys or a click choose a head: the attention panel focuses it, and its metrics are "
                        "read out")
        self.canvas.installEventFilter(self)      # the arrow keys: it could not be used from the keyboard (QA)
        accessible.name(self.kind, "Attention kind")
        self.canvas.setBackground("w")
        self.plot = self.canvas.addPlot(enableMenu=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.invertY(True)
        self.plot.hideAxis("bottom")
        self.plot.showAxis("top")
        for side in ("left", "top"):
            axis = self.plot.getAxis(side)
            axis.setPen("k")
            axis.setTextPen("k")
            axis.setTickFont(tick_font(9))
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.colormap.get(COLORMAP))
        self.plot.addItem(self.image)
        self.frame = HaloRect(width=2.5)         # the focused head
        self.frame.setZValue(10)
        self.plot.addItem(self.frame)
        self.crosses = pg.PlotCurveItem(pen=pg.mkPen("#d62728", width=2), connect="pairs")
        self.crosses.setZValue(20)
        self.plot.addItem(self.crosses)
        # its colour scale under the heads: each from 0 to its own largest weight (a sentence in the hint had been
        # the only word of it, on screen and in the export: QA, a low-vision teacher)
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLORMAP), interactive=False,
                                   orientation="horizontal", width=10, colorMapMenu=False)
        self.bar.axis.setTicks([[]])            # (a number at either end was cut at the canvas' edge)
        self.bar.axis.setPen("k")
        self.bar.axis.setLabel(SCALE, color="k", **{"font-size": "9pt"})
        self.bar.setFixedHeight(10 + 2.2 * QtGui.QFontMetricsF(tick_font(9)).height())    # the bar and its words
        self.canvas.nextRow()
        self.canvas.addItem(self.bar)
        self.hover = WrappedLabel()        # as tall as its text: four lines in a class's narrow dock were cut (QA)
        self.hover.setText(MODEL_VIEW_HINT)
        self.hover.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.kind)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.hover)
        self.trace = None
        self.shown_kind = ""
        self.weights: np.ndarray | None = None   # (L, H, Tq, Tk) of the kind shown
        self.masks: np.ndarray | None = None     # (L, Tq, Tk)
        self._raw: np.ndarray | None = None
        self.lut = lookup_table(COLORMAP)     # (256, 4) uint8
        self.shape = (0, 0, 0, 0)                # layers, heads, Tq, Tk
        self.gap = 1
        self._shown = None                       # (trace, kind) the mosaic shows
        self._metrics: dict = {}                 # (kind, layer, head) 0-based -> HeadMetrics, for the trace shown
        self.crossed: list[tuple[int, int]] = []  # (layer, head) of the switched-off heads of the kind shown
        self.canvas.scene().sigMouseClicked.connect(lambda ev: self._clicked(ev.scenePos()))
        self.canvas.scene().sigMouseMoved.connect(self._hovered)
        self.label_steps = (1, 1)                # every row's and column's label drawn, or every k-th
        self.plot.vb.sigResized.connect(self._label_axes)

    def leaveEvent(self, event) -> None:
        self.hover.setText(MODEL_VIEW_HINT)
        super().leaveEvent(event)

    def view_key(self, state):
        return (state.kind, state.layer, state.stack == OUTPUT, state.head)    # (the output shows the last layer)

    # --- reading back (tests) -------------------------------------------------------------------
    @property
    def raw(self) -> np.ndarray | None:
        """The mosaic of the weights shown, laid out as the image (NaN in the gaps and at masked cells)."""
        if self._raw is None and self.weights is not None:
            self._raw = tile(np.where(self.masks[:, None], self.weights, np.nan), self.gap, np.nan)
        return self._raw

    @property
    def rgba(self) -> np.ndarray:
        """The image's pixels (rows × columns × RGBA)."""
        return self.image.image

    def thumbnail(self, layer: int, head: int) -> np.ndarray:
        """The raw weights in one thumbnail (NaN at masked cells)."""
        _, _, Tq, Tk = self.shape
        g = self.gap
        return self.raw[layer * (Tq + g): layer * (Tq + g) + Tq, head * (Tk + g): head * (Tk + g) + Tk]

    def tile_rect(self, layer: int, head: int) -> QtCore.QRectF:
        _, _, Tq, Tk = self.shape
        return QtCore.QRectF(head * (Tk + self.gap), layer * (Tq + self.gap), Tk, Tq)

    def head_at(self, scene_pos) -> tuple[int, int] | None:
        """(layer, head) of the thumbnail under a scene position, or None (outside, or in a gap)."""
        if self.weights is None:
            return None
        p = self.plot.vb.mapSceneToView(scene_pos)
        L, H, Tq, Tk = self.shape
        x, y = p.x(), p.y()
        if x < 0 or y < 0:
            return None
        h, dx = divmod(x, Tk + self.gap)
        l, dy = divmod(y, Tq + self.gap)
        if dx >= Tk or dy >= Tq or h >= H or l >= L:
            return None
        return int(l), int(h)

    # --- drawing --------------------------------------------------------------------------------
    def set_colormap(self, name: str) -> None:
        """Colour the heads in this colour map, as Colours ▸ colour map colours the attention panel (the model view
        stayed viridis when the heatmap went cividis)."""
        self.lut = lookup_table(name)
        self.image.setColorMap(pg.colormap.get(name))
        self.bar.setColorMap(pg.colormap.get(name))
        if self.trace is not None:
            self._draw(self.trace, self.shown_kind)

    def render(self, trace, state) -> None:
        schema = trace.schema
        kind = state.kind if state.kind in schema.kind_names else schema.kinds[0].name
        self.kind.show_kind(schema, kind)
        if self._shown is None or self._shown[0] is not trace or self._shown[1] != kind:
            self._draw(trace, kind)
        L = self.shape[0]
        layer = state.attention_layer(L)
        if state.kind == kind and 0 <= layer < L:
            self.frame.setRect(self.tile_rect(layer, min(state.head, self.shape[1] - 1)).adjusted(
                -0.5, -0.5, 0.5, 0.5))
            self.frame.setVisible(True)
        else:
            self.frame.setVisible(False)
        if self.label_steps != (1, 1):           # the focused layer and head keep their labels
            self._label_axes()

    def _draw(self, trace, kind: str) -> None:
        info = trace.schema.kind(kind)
        L = trace.n_layers(info.stack)
        self.weights = np.stack([trace.attention(kind, l) for l in range(L)]).astype(np.float32, copy=False)
        self.masks = np.stack([trace.mask(kind, l) for l in range(L)])                          # (L, Tq, Tk)
        self._raw = None
        H, Tq, Tk = self.weights.shape[1:]
        self.shape = (L, H, Tq, Tk)
        self.gap = gap_of(Tq, Tk)
        # colours computed here (uint8 RGBA): pyqtgraph then has no float image to scale and no NaN to find
        packed = tile(colour_tiles(self.weights, self.masks, self.lut), self.gap, 0)
        rgba = rgba_image(packed)
        self.image.setImage(rgba, autoLevels=False)
        self.image.setRect(QtCore.QRectF(0, 0, rgba.shape[1], rgba.shape[0]))
        # a margin of a cell at least: the focus frame, half a cell outside its tile, lost its left and bottom edges
        # on the grid's edge (1% of an 8-token grid is a third of a cell)
        m = max(1.0, 0.01 * max(rgba.shape[:2]))
        self.plot.vb.setRange(xRange=(-m, rgba.shape[1] + m), yRange=(-m, rgba.shape[0] + m), padding=0)
        self._label_axes()
        off = sorted((l, h) for k, l, h in ablated_heads(trace) if k == kind and l < L and h < H)
        xs, ys = [], []
        for l, h in off:
            r = self.tile_rect(l, h)
            xs += [r.left(), r.right(), r.right(), r.left()]
            ys += [r.top(), r.bottom(), r.top(), r.bottom()]
        self.crosses.setData(np.array(xs, dtype=float), np.array(ys, dtype=float))
        self.crossed = off
        self.trace, self.shown_kind, self._shown = trace, kind, (trace, kind)
        self._metrics = {}
        set_title(self.plot, f"{info.title}: {L} layers × {H} heads", "k", 10)   # never wider than the dock

    def _label_axes(self) -> None:
        """L1 … and H1 … on the rows and columns, every k-th where all would overlap: with 24 layers and 16 heads
        in a dock the labels piled up ("H9H10H11…", QA); the focused head's layer and head keep theirs."""
        L, H, Tq, Tk = self.shape
        if not L:
            return
        g = self.gap
        rect = self.plot.vb.viewRect()
        px = self.plot.vb.width() / max(rect.width(), 1e-9), self.plot.vb.height() / max(rect.height(), 1e-9)
        metrics = QtGui.QFontMetricsF(tick_font(9))
        row_step = max(1, math.ceil(1.15 * metrics.height() / max((Tq + g) * px[1], 1e-9)))
        col_step = max(1, math.ceil((metrics.horizontalAdvance(f"H{H}") + 6) / max((Tk + g) * px[0], 1e-9)))
        keep_l, keep_h = self.state.attention_layer(L), self.state.head

        def shown(i: int, step: int, keep: int) -> bool:
            near = step > 1 and keep >= 0 and i != keep and abs(i - keep) < step   # room for the kept one's label
            return (i == keep or i % step == 0) and not near
        self.plot.getAxis("left").setTicks([[(l * (Tq + g) + Tq / 2, f"L{l + 1}") for l in range(L)
                                             if shown(l, row_step, keep_l)], []])
        self.plot.getAxis("top").setTicks([[(h * (Tk + g) + Tk / 2, f"H{h + 1}") for h in range(H)
                                            if shown(h, col_step, keep_h)], []])
        self.label_steps = (row_step, col_step)

    def metrics_of(self, layer: int, head: int):
        if not self._metrics:
            self._metrics = {m.key: m for m in trace_metrics(self.trace) if m.kind == self.shown_kind}
        return self._metrics[(self.shown_kind, layer, head)]

    def _hovered(self, scene_pos, where: tuple[int, int] | None = None) -> None:
        where = self.head_at(scene_pos) if where is None else where
        if where is None:           # off the heads: the hint again (a head's metrics stayed, into Export all's
            self.canvas.setToolTip("")                                                      # picture too, QA)
            self.hover.setText(MODEL_VIEW_HINT)
            return
        m = self.metrics_of(*where)
        positional = not math.isnan(m.mean_distance)     # NaN in cross-attention: two sentences' positions
        text = (f"Layer {m.layer}, head {m.head}: entropy {m.entropy_bits:.2f} bits"
                + (f", distance {m.mean_distance:.2f}" if positional else "")
                + f", max {m.max_weight:.2f}; on the first token {m.first_token:.0%}"
                + ("" if math.isnan(m.end_token) else f", the end token {m.end_token:.0%}")   # a causal decoder never
                + f", punctuation {m.punctuation:.0%}"                                      # reads </s> ("nan%", QA)
                + (f", itself {m.diagonal:.0%}, the previous token {m.previous_token:.0%}" if positional else "")
                + (" — switched off" if (m.layer - 1, m.head - 1) in self.crossed else ""))
        self.hover.setText(text)
        self.canvas.setToolTip(text)

    def eventFilter(self, watched, event) -> bool:
        if (watched is self.canvas and event.type() == QtCore.QEvent.Type.KeyPress and event.key() in MOVES
                and not event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier):
            self.step_head(*MOVES[event.key()])
            return True
        return False

    def step_head(self, layers: int, heads: int) -> None:
        """The arrow keys: the focused head a layer (row) or a head (column) on, within the mosaic; its metrics are
        shown and read out, as a hover shows them."""
        if self.weights is None:
            return
        L, H = self.shape[:2]
        on_kind = self.state.kind == self.shown_kind
        layer = self.state.attention_layer(L) if on_kind else 0
        head = min(self.state.head, H - 1) if on_kind else 0
        layer, head = min(max(layer + layers, 0), L - 1), min(max(head + heads, 0), H - 1)
        self.state.update(kind=self.shown_kind, layer=layer, head=head)
        self._hovered(None, (layer, head))
        accessible.announce(self.canvas, self.hover.text())

    def _clicked(self, scene_pos) -> None:
        where = self.head_at(scene_pos)
        if where is not None:
            self.state.update(kind=self.shown_kind, layer=where[0], head=where[1])
