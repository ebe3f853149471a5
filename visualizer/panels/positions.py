"""What a model uses for positions when nothing is added to its embeddings, for the embeddings panel:

    rotary (Llama family)  cos(position × θ_i) per token and dimension pair, and the frequencies θ_i on a log axis
    relative (T5)          the bias one head adds to q·kᵀ, query × key, and the same bias by the key's offset j − i

Every number is the Trace's, under the keys its schema names (Schema.rotary_keys, Schema.bias_keys)."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from .. import accessible
from ..plotting.colormaps import PALETTE, symmetric_levels
from ..plotting.plot_box import HeatmapBox, PlotBox
from ..plotting.text import escape

ROTARY_CAPTION = ("<b>Rotary positions:</b> q and k of each head are rotated by position × θ<sub>i</sub> before "
                  "q·kᵀ; nothing is added to the embeddings (x = e).")
ROTARY_NOTES = ("Each head's q and k are rotated one pair of dimensions at a time: pair i of the token at position m "
                "turns by the angle m·θ<sub>i</sub>. A query at m and a key at n then meet at the angle "
                "(m − n)·θ<sub>i</sub>, so their score depends on how far apart they are: fast pairs tell near "
                "tokens apart, slow ones far ones.")
BIAS_CAPTION = ("<b>Relative position bias:</b> each head adds a learned number b(j − i) to q<sub>i</sub>·k<sub>j</sub> "
                "before the softmax (q·kᵀ is not divided by √d<sub>k</sub> here); nothing is added to the "
                "embeddings (x = e).")
BIAS_NOTES = ("The bias depends only on how far key j is from query i. The offsets j − i fall into buckets: one "
              "per offset for near tokens, then wider, logarithmic ones up to a maximum distance, beyond which all "
              "share the last; each head learns one number per bucket, so the bias is constant along each diagonal. "
              "It is computed once, in layer 1, and added in every layer.")


def wavelength(theta: float) -> str:
    """Tokens per full turn of a pair turning theta radians per position."""
    if theta <= 0:
        return "never turns"
    turn = 2 * math.pi / theta
    return f"a full turn every {turn:.3g} tokens" if turn < 1e5 else f"a full turn every {turn:.2e} tokens"


class RotaryPlots:
    """cos(position × θ_i) as the model multiplied q and k by, and θ_i per dimension pair on a log axis."""

    def __init__(self):
        self.table = HeatmapBox("cos(position × θᵢ)", "token (position)",
                                "dimension pair i", col_tokens=False, bar_label="cos")
        self.theta = PlotBox("θᵢ per pair: radians per position", "θᵢ (log axis)",
                             "dimension pair i", min_height=220, whole=("bottom",))
        self.theta.item.setLogMode(y=True)
        self.curve = self.theta.item.plot(pen=pg.mkPen(PALETTE[0], width=3), symbol="o", symbolSize=8,
                                          symbolBrush=PALETTE[0], symbolPen=None, name="theta_i")
        self.arrays: dict[str, np.ndarray] = {}     # theta, cos, sin, positions: what the plots show
        self.d_k = 0                                # the model's head width (a share of it may turn)

    @property
    def widgets(self) -> list[tuple[QtWidgets.QWidget, bool]]:
        return [(self.table, False), (self.theta, False)]

    def show(self, trace, stack: str, tokens: list[str]) -> str | None:
        """Draw the stack's rotary tables; a reason when the trace does not hold them."""
        keys = trace.schema.rotary_keys(stack)
        if keys is None or keys.theta not in trace.arrays:
            return "this run does not hold the rotary tables (it was made by an older version): run the model again"
        self.arrays = {name: np.asarray(trace[getattr(keys, name)]) for name in ("theta", "cos", "sin", "positions")}
        local = trace.arrays.get(keys.theta_local)                # Gemma 3: its local layers' own θ
        if local is not None:
            self.arrays["local"] = np.asarray(local)
        self.d_k = trace.schema.d_k
        cos, theta = self.arrays["cos"], self.arrays["theta"]
        self.table.show_matrix(cos, tokens, None, symmetric_levels(cos))
        pairs = np.arange(len(theta))
        self.curve.setData(pairs, theta)
        self.theta.item.setXRange(-0.5, max(len(theta) - 0.5, 0.5), padding=0.02)
        return None

    def summary(self) -> str:
        theta = self.arrays.get("theta")
        if theta is None or not len(theta):
            return ""
        fast, slow = int(np.argmax(theta)), int(np.argmin(theta))
        d_k = self.d_k or 2 * len(theta)
        turned = (f"{len(theta)} pairs per head (d<sub>k</sub> = {d_k})" if 2 * len(theta) >= d_k else
                  f"{len(theta)} pairs per head turn, the first {2 * len(theta)} of its d<sub>k</sub> = {d_k} "
                  f"dimensions; the other {d_k - 2 * len(theta)} are not rotated")
        local = self.arrays.get("local")
        other = "" if local is None or not len(local) else (
            f" These are the global layers' θ; the local (sliding-window) layers turn by a base of their own: "
            f"their slowest pair θ = {local.min():.3g} ({wavelength(float(local.min()))}).")
        return (f"{turned}: pair {fast} turns fastest, "
                f"θ = {theta[fast]:.3g} ({wavelength(float(theta[fast]))}); pair {slow} slowest, "
                f"θ = {theta[slow]:.3g} ({wavelength(float(theta[slow]))}).{other}")


class BiasHeatmap(HeatmapBox):
    """The bias of one head; hovering a cell also tells the key's offset and its bucket."""

    def __init__(self):
        super().__init__("relative position bias", "query token", "key token", bar_label="bias")
        self.buckets: np.ndarray | None = None

    def _hover(self, scene_pos) -> None:
        super()._hover(scene_pos)
        cell = self.cell_at(scene_pos) if self.item.vb.sceneBoundingRect().contains(scene_pos) else None
        if cell is not None and self.buckets is not None and cell[0] < self.buckets.shape[0] \
                and cell[1] < self.buckets.shape[1]:
            r, c = cell
            self.setToolTip(f"{self.toolTip()}\noffset j − i = {c - r}, bucket {int(self.buckets[r, c])}")


def bias_kind(schema, stack: str, kind: str | None) -> str | None:
    """The attention kind whose bias to show for a stack: the kind in view when it has one, else the stack's
    first that has one (T5: encoder self, decoder self; its cross-attention has none)."""
    names = [k.name for k in schema.kinds_of(stack) if schema.bias_keys(k.name) is not None]
    return kind if kind in names else (names[0] if names else None)


def bias_by_offset(bias: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets j − i, bias) of one head's (Tq, Tk) bias: one value per offset that some allowed cell has (the
    bias depends on the offset alone, so any cell of a diagonal gives it)."""
    offsets, values = [], []
    Tq, Tk = bias.shape
    for d in range(-(Tq - 1), Tk):
        cells = [(i, i + d) for i in range(Tq) if 0 <= i + d < Tk and mask[i, i + d]]
        if cells:
            offsets.append(d)
            values.append(float(bias[cells[0]]))
    return np.array(offsets, dtype=np.float64), np.array(values, dtype=np.float64)


class BiasPlots:
    """One head's relative position bias, query × key (masked cells hatched), and the same bias by offset."""

    def __init__(self):
        self.table = BiasHeatmap()
        self.by_offset = PlotBox("the bias by offset j − i", "bias", "key offset j − i",
                                 min_height=220, whole=("bottom",))
        self.by_offset.item.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#999999", width=1)))
        self.curve = self.by_offset.item.plot(pen=pg.mkPen(PALETTE[0], width=3), symbol="o", symbolSize=8,
                                              symbolBrush=PALETTE[0], symbolPen=None, name="bias")
        self.head = QtWidgets.QComboBox()
        accessible.name(self.head, "Head")
        self.head.setToolTip("The head whose bias is shown (it follows the head in view; pick another here)")
        self.kind: str | None = None
        self.arrays: dict[str, np.ndarray] = {}      # bias (Tq, Tk) of the head shown, buckets, offsets, by_offset
        self.n_buckets = 0

    @property
    def widgets(self) -> list[tuple[QtWidgets.QWidget, bool]]:
        return [(self.table, False), (self.by_offset, False)]

    def show(self, trace, stack: str, kind: str | None, head: int) -> str | None:
        """Draw one head's bias of the stack; a reason when there is none to draw."""
        sc = trace.schema
        self.kind = kind = bias_kind(sc, stack, kind)
        if kind is None:
            return f"the {escape(sc.stack(stack).title.lower())} adds no position bias"
        keys = sc.bias_keys(kind)
        if keys.bias not in trace.arrays:
            return "this run does not hold the position bias (it was made by an older version): run the model again"
        every = np.asarray(trace[keys.bias])                                    # (H, Tq, Tk)
        if self.head.count() != every.shape[0]:
            self.head.blockSignals(True)
            self.head.clear()
            self.head.addItems([f"head {h + 1}" for h in range(every.shape[0])])
            self.head.blockSignals(False)
        head = min(max(head, 0), every.shape[0] - 1)
        if self.head.currentIndex() != head:
            self.head.blockSignals(True)
            self.head.setCurrentIndex(head)
            self.head.blockSignals(False)
        mask = trace.mask(kind, 0)
        rows, cols = trace.axis_tokens(kind)
        buckets = np.asarray(trace[keys.buckets])
        self.table.buckets = buckets
        offsets, values = bias_by_offset(every[head], mask)
        self.arrays = {"bias": every[head], "buckets": buckets, "offsets": offsets, "by_offset": values}
        self.n_buckets = len(np.unique(buckets[mask]))
        label = sc.kind(kind).label
        self.table.set_title(f"bias, {escape(label)}, head {head + 1}")
        self.table.show_matrix(every[head], rows, cols, symmetric_levels(every[:, mask]), mask)
        self.curve.setData(offsets, values)
        self.by_offset.set_title(f"head {head + 1}'s bias by offset j − i")
        return None
