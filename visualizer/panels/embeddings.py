"""Embeddings panel: scaled token embeddings e, positional encodings p and their sum x = e + p as heatmaps
(tokens × dimensions; the sum normalised, x = LayerNorm(e + p + s), in BERT and its kin: Schema.sum_term), the
sinusoids of chosen dimensions across positions, and the cosine similarity of x.
A model that adds nothing to its embeddings shows what it uses instead (visualizer/panels/positions.py): rotary
tables and frequencies (Llama family), or each head's relative position bias (T5).

It shows the source sentence (encoder input) while the view is on the source side (source embedding or
encoder), and the decoder input (<s> y_1 … y_n) while it is on the target side (target embedding, decoder,
output).
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .. import accessible
from ..equation_text import equation_html
from ..plotting.colormaps import SERIES, symmetric_levels
from ..plotting.plot_box import HeatmapBox, PlotBox
from ..plotting.text import escape
from .positions import BIAS_CAPTION, BIAS_NOTES, ROTARY_CAPTION, ROTARY_NOTES, BiasPlots, RotaryPlots
from .widgets import GridPanel, ResponsiveGrid, WrappedLabel, header_label, notice_label

N_WAVES = len(SERIES)


def cosine_similarity(x: np.ndarray) -> np.ndarray:
    """(T, T) cosine similarity of the rows of x; a zero row has similarity 0 with everything."""
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    u = np.divide(x, n, out=np.zeros_like(x), where=n > 0)
    return u @ u.T


def side_of(state) -> str:
    """The token list of the stack in view (its schema's "src" or "tgt"): the source while the view is on the
    encoder side, the decoder input on the decoder side and at the output."""
    schema = getattr(state, "schema", None)
    if schema is None:
        return "src"
    try:
        return schema.stack_of_stage(state.stage).tokens
    except KeyError:
        return schema.stacks[0].tokens


def sinusoid_table(n_pos: int, d_model: int) -> np.ndarray:
    """The paper's encoding: PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same)."""
    pos = np.arange(n_pos)[:, None]
    i2 = np.arange(0, d_model, 2)[None, :]
    angle = pos / np.power(10000.0, i2 / d_model)
    pe = np.zeros((n_pos, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)[:, : d_model // 2]
    return pe


# "d =" bound together: a word-wrapped label took "Dimensions from d" and "=" as its two lines (QA)
SINUSOIDS_FROM, DIMENSIONS_FROM = "Sinusoids from dimension d\u00a0=", "Dimensions from d\u00a0="


def series_pen(i: int, width: float):
    """The pen of series i (SERIES): its colour and its line style."""
    colour, _, _, style = SERIES[i]
    return pg.mkPen(colour, width=width, style=getattr(QtCore.Qt.PenStyle, style))


class EmbeddingsPanel(GridPanel):
    def __init__(self, parent=None):
        super().__init__(parent)           # (GridPanel: the header, whose detail a short dock tooltips)
        self.notice = notice_label()
        self.dim = QtWidgets.QSpinBox(minimum=0, maximum=0, singleStep=2)
        self.dim.setToolTip(f"The sinusoid plot shows dimensions d … d+{N_WAVES - 1} of the positional encoding; "
                            "their columns are marked on the heatmap of p.")
        self.dim_label = dim_label = WrappedLabel()   # on two lines in a narrow dock: on one it made the panel
        dim_label.setText(SINUSOIDS_FROM)   # 365 pixels wide, scrolled sideways at 1024 × 768 (QA)
        dim_label.setBuddy(self.dim)
        accessible.name(self.dim, "Sinusoids from dimension d")
        self.rotary, self.bias = RotaryPlots(), BiasPlots()
        self.head_label = QtWidgets.QLabel("Bias of")
        self.dim_widgets = (dim_label, self.dim)
        self.bias_widgets = (self.head_label, self.bias.head)
        bar = QtWidgets.QHBoxLayout()
        for w in (*self.dim_widgets, *self.bias_widgets):
            bar.addWidget(w)
        bar.addStretch(1)
        self.caption = header_label()          # what a rotary or relative-bias model does instead of adding p
        self.notes = WrappedLabel()             # how to read its plots, below them; as tall as its text
        self.notes.setTextFormat(QtCore.Qt.TextFormat.RichText)   # (the regular QLabel's lost its last line, QA)
        self.notes.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        self.notes.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Maximum)

        self.maps = {
            "embedding": HeatmapBox("scaled token embedding e", "token", "dimension", col_tokens=False),
            "pe": HeatmapBox("positional encoding p", "token (position)", "dimension", col_tokens=False),
            "x": HeatmapBox("sum x = e + p", "token", "dimension", col_tokens=False),
        }
        self.similarity = HeatmapBox("cosine similarity of x, token by token", "token", "token",
                                  bar_label="cosine")
        self.dim_marks = []
        for i in range(N_WAVES):          # the dimensions drawn as sinusoids, marked on the heatmap of p
            line = pg.InfiniteLine(angle=90, movable=False, pen=series_pen(i, 2))
            line.setVisible(False)
            self.maps["pe"].item.addItem(line)
            self.dim_marks.append(line)
        self.waves = PlotBox("positional encoding across positions", "p value", "position", min_height=200,
                             whole=("bottom",))
        self.wave_legend = QtWidgets.QLabel()         # beside the plot, so it never hides a curve
        self.wave_legend.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.wave_legend.setWordWrap(True)
        waves_box = QtWidgets.QWidget()
        wl = QtWidgets.QVBoxLayout(waves_box)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(2)
        wl.addWidget(self.waves, 1)
        wl.addWidget(self.wave_legend)
        self.waves.item.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#999999", width=1)))
        self.curves = [self.waves.item.plot(pen=series_pen(i, 3), symbol=mark, symbolSize=8, symbolBrush=c,
                                            symbolPen=None) for i, (c, mark, _, _) in enumerate(SERIES)]
        self.added_items = [(self.maps["embedding"], False), (self.maps["pe"], False), (self.maps["x"], False),
                            (self.similarity, False), (waves_box, True)]
        self.grid = ResponsiveGrid(list(self.added_items))
        for w, _ in self.rotary.widgets + self.bias.widgets + [(self.notes, True)]:   # laid out when needed
            w.setParent(self.grid.inner)                          # inside the panel: plot menus find them
            w.setVisible(False)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.caption)
        layout.addWidget(self.notice)
        layout.addLayout(bar)
        layout.addWidget(self.grid, 1)

        self.trace = None
        self.side = "src"
        self.tokens: list[str] = []
        self.arrays: dict[str, np.ndarray] = {}      # embedding, pe, x, similarity: what the panel shows
        self.sinusoidal = False                      # p matches the paper's sin/cos table
        self.learned = False                         # the model's p is a learned table (GPT-2, BERT, BART)
        self.positional = True
        self.mode = "added"                          # "added" (p is added), "rotary" or "relative": what is shown
        self.state = None
        self.wave_dims: list[int] = []
        self.wave_names: list[str] = []              # legend of the sinusoid plot
        self.levels: dict[str, tuple[float, float]] = {}
        self._legend_key = None
        self.dim.valueChanged.connect(self._on_dim)
        self.bias.head.currentIndexChanged.connect(self._on_head)
        self._set_mode("added")
        self._apply_fonts()

    # --- text size ---------------------------------------------------------------------------------------
    def _apply_fonts(self) -> None:
        """The controls and notes at the widgets' text size, 12 points at least. Set once at the size of the moment,
        a panel first opened in presentation mode kept its 19.6 points after it (QA), and one opened before it
        kept 12 in class."""
        font = QtGui.QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 12.0))
        for w in (*self.dim_widgets, *self.bias_widgets, self.notes, self.wave_legend):
            if w.font() != font:
                w.setFont(font)

    def changeEvent(self, event) -> None:
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            self._apply_fonts()
        super().changeEvent(event)

    # --- the window's protocol --------------------------------------------------------------------
    def view_key(self, state):
        schema = getattr(state, "schema", None)
        if schema is not None and schema.positions == "relative":     # the bias follows the kind and head in view
            return side_of(state), state.kind, state.head
        return side_of(state)

    def _set_mode(self, mode: str) -> None:
        self.mode = mode
        items = {"added": self.added_items,
                 "rotary": [*self.rotary.widgets, (self.maps["embedding"], False), (self.similarity, False),
                            (self.notes, True)],
                 "relative": [*self.bias.widgets, (self.maps["embedding"], False), (self.similarity, False),
                              (self.notes, True)]}[mode]
        self.grid.set_items(items)
        for w in self.dim_widgets:
            w.setVisible(mode == "added")
        for w in self.bias_widgets:
            w.setVisible(mode == "relative")
        self.caption.setVisible(mode != "added")

    def render(self, trace, state) -> None:
        self.trace, self.state = trace, state
        self.side = side = side_of(state)
        self.tokens = list(trace.tokens(side))
        e, p, x = (np.asarray(trace[f"{side}.{k}"]) for k in ("embedding", "pe", "x"))
        self.arrays = {"embedding": e, "pe": p, "x": x, "similarity": cosine_similarity(x)}
        T, d = x.shape
        positions = trace.schema.positions
        self._set_mode(positions if positions in ("rotary", "relative") else "added")
        self.learned = positions == "learned"
        switched_on = bool(trace.meta.get("positional", True))
        self.positional = switched_on and (self.mode != "added" or bool(np.any(p)))
        self.sinusoidal = self.mode == "added" and self.positional and np.allclose(p, sinusoid_table(T, d), atol=1e-4)
        self.levels = {}
        for key, hm in self.maps.items():            # each its own scale (p is ±1, e often larger): see bars
            self.levels[key] = symmetric_levels(self.arrays[key])
            hm.show_matrix(self.arrays[key], self.tokens, None, self.levels[key])
        self.similarity.show_matrix(self.arrays["similarity"], self.tokens, self.tokens, (-1.0, 1.0))
        st = next(st for st in trace.schema.stacks if st.tokens == side)
        letter = st.stream                    # the captions' letter: y on the paper's decoder side (a student: x here)
        who = ("Source sentence (encoder input)" if st.tokens == "src" and len(trace.schema.stacks) > 1
               else "Target side: decoder input &lt;s&gt; y₁ … yₙ" if len(trace.schema.stacks) > 1
               else f"{st.title} input")
        count = f"<b>{who}</b>: {T} token{'s' if T != 1 else ''} × {d} dimensions. &nbsp; "
        if self.mode == "added":
            e_term, p_term = (equation_html(t) for t in trace.schema.embedding_terms(positional=self.positional))
            segment = ", &nbsp; s = S[0] (segment 0's vector, not shown)" if trace.schema.segment else ""
            self.short_header.set(f"{count}<i>{letter} = {trace.schema.sum_term()}</i>, &nbsp; e = {e_term}, &nbsp; "
                                  f"p = {p_term}"
                                  + (" (switched off)" if not self.positional else " (learned)" if self.learned else "")
                                  + segment,
                                  f"(each map's colours run from −m to +m: m = {self.levels['embedding'][1]:.3g} "
                                  f"for e, {self.levels['pe'][1]:.3g} for p, {self.levels['x'][1]:.3g} for {letter})")
        else:
            e_term = equation_html(trace.schema.embedding_terms()[0])          # Gemma's is scaled
            self.short_header.set(f"{count}<i>{letter} = e</i> = {e_term}",
                                  f"(colours from −{self.levels['embedding'][1]:.3g} to "
                                  f"+{self.levels['embedding'][1]:.3g})")
        summed = "sum " if not trace.schema.embedding_norm else ""
        self.maps["x"].set_title(f"{summed}{letter} = {trace.schema.sum_term()}")
        self.similarity.set_title(f"cosine similarity of {letter}, token by token")
        off = " — OFF: all zeros" if not self.positional else ""
        self.maps["pe"].set_title(f"{self._p_name()} p{off}")
        scaled = "scaled token embedding e" if trace.schema.scale_embedding else "token embedding e"
        self.maps["embedding"].set_title(scaled if self.mode == "added"
                                         else f"token embedding e (= {letter}: nothing added)")
        self.dim_label.setText(DIMENSIONS_FROM if self.learned else SINUSOIDS_FROM)
        self._show_positions()
        self.dim.blockSignals(True)
        self.dim.setMaximum(max(0, d - 1))
        self.dim.blockSignals(False)
        self._waves()

    # --- rotary tables and relative bias --------------------------------------------------------
    def _show_positions(self) -> None:
        """The rotary or bias plots of the stack in view, their caption, and the notice when positions are off."""
        trace, st = self.trace, self.trace.schema.stack_of_stage(self.state.stage)
        problem, caption, notes = None, "", ""
        if self.mode == "rotary":
            problem = self.rotary.show(trace, st.key, self.tokens)
            caption, notes = ROTARY_CAPTION, f"{ROTARY_NOTES} {self.rotary.summary()}"
        elif self.mode == "relative":
            problem = self.bias.show(trace, st.key, self.state.kind, self.state.head)
            caption, notes = BIAS_CAPTION, BIAS_NOTES + (
                f" In this sentence the offsets fall into {self.bias.n_buckets} buckets; hover a cell for its "
                "offset and bucket." if problem is None else "")
        self.caption.setText(caption + (f" <i>Not shown: {problem}.</i>" if problem else ""))
        self.caption.setToolTip(notes)
        self.notes.setText(notes)
        what = {"added": f"p = 0, so {st.stream} = {trace.schema.sum_term(positional=False)}",
                "rotary": "q and k are not rotated (cos = 1, sin = 0)",
                "relative": "every head's bias is 0"}[self.mode]
        # a causal stack still orders its tokens by its mask (each sees those before it): en-fr still writes its
        # words in order with the positions off, and "the model cannot tell word order" said otherwise (QA)
        if any(k.causal for k in trace.schema.kinds if k.stack == st.key):
            order = "no token carries its place, but the causal mask still orders them (each sees only those before it)"
        else:
            order = f"the {st.title.lower()} cannot tell word order: it sees the sentence as a bag of tokens"
        if self.positional:
            self.notice.setVisible(False)
        else:
            self.notice.setText(f"Positional encoding is OFF: {what}; {order}.")
            self.notice.setVisible(True)

    def _on_head(self, head: int) -> None:
        if self.trace is not None and self.mode == "relative" and head >= 0:
            self.bias.show(self.trace, self.trace.schema.stack_of_stage(self.state.stage).key, self.state.kind,
                           head)

    # --- sinusoids --------------------------------------------------------------------------------
    def _on_dim(self, _value: int) -> None:
        if self.trace is not None:
            self._waves()

    def _waves(self) -> None:
        p = self.arrays["pe"]
        T, d = p.shape
        d0 = min(self.dim.value(), max(d - 1, 0))
        self.wave_dims = [d0 + i for i in range(N_WAVES) if d0 + i < d]
        positions = np.arange(T)
        dots = T <= 40                                  # a marker for each position while they stay apart
        for i, curve in enumerate(self.curves):
            if i < len(self.wave_dims):
                curve.setData(positions, p[:, self.wave_dims[i]], symbol=SERIES[i][1] if dots else None)
            else:
                curve.setData([], [])
        for i, line in enumerate(self.dim_marks):
            line.setVisible(i < len(self.wave_dims))
            if i < len(self.wave_dims):
                line.setValue(self.wave_dims[i])
        key = (tuple(self.wave_dims), d, self.sinusoidal)
        if key != self._legend_key:
            self._legend_key = key
            self.wave_names = [self._wave_name(k, d) for k in self.wave_dims]
            self.wave_legend.setText(" &nbsp; ".join(
                f"<span style='color:{c}; font-size:16pt'>{glyph}</span>&nbsp;"
                f"{escape(name).replace(' ', '&nbsp;')}" for (c, _, glyph, _), name in zip(SERIES, self.wave_names)))
        self.waves.item.setXRange(-0.5, max(T - 0.5, 0.5), padding=0.02)
        off = " (OFF: p = 0)" if not self.positional else ""
        self.waves.set_title(f"{self._p_name()} p across positions, dimensions {self._dims_text()}{off}")

    def _p_name(self) -> str:
        return "learned position embedding" if self.learned else "positional encoding"

    def _wave_name(self, k: int, d: int) -> str:
        if not self.sinusoidal:
            return f"dimension {k}"
        fn = "sin" if k % 2 == 0 else "cos"
        return f"dim {k}: {fn}(pos / 10000^({2 * (k // 2)}/{d}))"       # exact: 2/256 is not "0.01"

    def _dims_text(self) -> str:
        dims = self.wave_dims
        return escape(f"{dims[0]}–{dims[-1]}" if len(dims) > 1 else (str(dims[0]) if dims else "–"))
