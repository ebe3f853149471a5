"""LayerNorm panel for the selected stack, layer and sublayer: per-token mean μ and standard deviation σ of the
LayerNorm input v = x + Sublayer(x), histograms of all values before (v) and after (LN(v)) normalisation, and
the learned γ and β per dimension.

Embeddings and the output layer have no LayerNorm: there the panel shows the nearest Add & Norm and says so.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from model.schema import LAYER_NORM, NORM_AFTER, OUTPUT, Stage

from ..equation_text import equation_html
from ..plotting.colormaps import BLUE, GREEN, VERMILLION
from ..plotting.plot_box import PlotBox
from ..plotting.text import escape
from ..plotting.token_axis import TokenAxis
from .background import TraceBackground
from .widgets import GridPanel, ResponsiveGrid, notice_label

N_BINS = 60


def ln_stage(state, schema) -> tuple[str, int, str, str]:
    """(stack, layer, sublayer, note): the norm of the sublayer in view, or the nearest one and why."""
    stack = getattr(state, "stack", "")
    layer = int(getattr(state, "layer", 0) or 0)
    sub = getattr(state, "sublayer", "")
    first = schema.stacks[0]
    try:
        st = schema.stack_of_stage(Stage(stack))
    except KeyError:
        return first.key, 0, first.sublayers[0].key, \
            f"Unknown stage {stack!r}: showing the first {first.title.lower()} {schema.norm}."
    if stack == OUTPUT:
        return st.key, st.n_layers - 1, st.sublayers[-1].key, \
            f"The output layer (linear + softmax) has no {schema.norm}: showing the nearest one, after the last " \
            f"{st.title.lower()} {st.sublayers[-1].name}."
    if stack == st.embed_stage:
        return st.key, 0, st.sublayers[0].key, \
            f"The embedding has no {schema.norm}: showing the nearest one, " \
            f"{'after' if schema.norm_place == NORM_AFTER else 'before'} the first {st.title.lower()} " \
            f"{st.sublayers[0].name}."
    layer = min(max(layer, 0), max(st.n_layers - 1, 0))
    if sub not in [s.key for s in st.sublayers]:
        return stack, layer, st.sublayers[0].key, ""
    return stack, layer, sub, ""


def histogram(values: np.ndarray, bins: int = N_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(edges, counts) over the values' own range; a constant array gets one bin around its value."""
    v = np.asarray(values).ravel()             # in its own precision: a float64 copy of 512 × 768 doubled the time
    if v.dtype.kind != "f":
        v = v.astype(np.float64)
    if v.size == 0:
        return np.array([0.0, 1.0]), np.array([0])
    lo, hi = float(v.min()), float(v.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):  # only then is a copy without the NaN and infinities made
        v = v[np.isfinite(v)]
        if v.size == 0:
            return np.array([0.0, 1.0]), np.array([0])
        lo, hi = float(v.min()), float(v.max())
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    return edges.astype(np.float64), counts


class ValueStats:
    """Histogram, mean and std of a trace's norm inputs and outputs, computed once per array (a layer change at 512
    tokens of a GPT-2-sized model spent 10 ms on its two histograms) and, after a new trace is shown, for every
    layer in a background thread (numpy releases the interpreter lock for most of the work)."""

    def __init__(self):
        self._done: dict[int, tuple] = {}       # id(array) -> (weak reference to it, (edges, counts, mean, std))
        self._lock = threading.Lock()
        self.background = TraceBackground("norm-histograms")

    def of(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
        with self._lock:
            ref, got = self._done.get(id(values), (None, None))
        if ref is not None and ref() is values:
            return got
        edges, counts = histogram(values)
        got = (edges, counts, float(values.mean()), float(values.std()))
        with self._lock:
            if len(self._done) > 4096:           # forget the arrays of traces gone
                self._done = {k: v for k, v in self._done.items() if v[0]() is not None}
            self._done[id(values)] = (weakref.ref(values), got)
        return got

    def warm(self, trace) -> None:
        """Compute the rest of trace's norm arrays in the background; a newer trace stops the work."""
        self.background.follow(trace)
        self.background.submit(norm_array_keys, self._warm_one)

    def _warm_one(self, trace, key: str) -> None:
        values = trace.arrays.get(key)
        if isinstance(values, np.ndarray):
            self.of(values)


def norm_array_keys(trace) -> list[str]:
    """The Trace keys of every norm's input (v) and output, in layer order."""
    keys = []
    for st in trace.schema.stacks:
        for layer in range(st.n_layers):
            for sub in st.sublayers:
                base = f"{st.key}.{layer}.{sub.key}"
                keys += [f"{base}.ln_in" if f"{base}.ln_in" in trace.arrays else f"{base}.residual", f"{base}.ln_out"]
    return keys


def set_range(plot: PlotBox, x0: float, x1: float, y0: float, y1: float, pad_x: float = 0.01) -> None:
    """Both ranges at once, so a render costs one repaint (auto-range would repaint again after the data)."""
    if not np.isfinite([x0, x1, y0, y1]).all():
        x0, x1, y0, y1 = 0.0, 1.0, 0.0, 1.0
    dy = (y1 - y0) or 1.0
    dx = (x1 - x0) if x1 > x0 else 1.0
    plot.item.vb.setRange(xRange=(x0 - pad_x * dx, x0 + dx * (1 + pad_x)), yRange=(y0 - 0.06 * dy, y1 + 0.06 * dy),
                          padding=0)


class LayerNormPanel(GridPanel):
    def __init__(self, parent=None):
        super().__init__(parent)           # (GridPanel: the header, whose detail a short dock tooltips)
        self.notice = notice_label()
        self.mu_plot = PlotBox("mean μ of v, per token", "μ", "token", axisItems={"bottom": TokenAxis("bottom")})
        self.sigma_plot = PlotBox("σ (std. deviation) of v, per token", "σ", "token",
                                  axisItems={"bottom": TokenAxis("bottom")})
        self.mu_bars = pg.BarGraphItem(x=[], height=[], width=0.75, brush=BLUE, pen=None)
        self.sigma_bars = pg.BarGraphItem(x=[], height=[], width=0.75, brush=BLUE, pen=None)
        # the generation step's bar, drawn over the others (one brush each: 512 bars brushed one by one cost more
        # than the rest of a layer change)
        self.mu_mark = pg.BarGraphItem(x=[], height=[], width=0.75, brush=VERMILLION, pen=None)
        self.sigma_mark = pg.BarGraphItem(x=[], height=[], width=0.75, brush=VERMILLION, pen=None)
        self.mu_plot.item.addItem(self.mu_bars)
        self.mu_plot.item.addItem(self.mu_mark)
        self.mu_plot.item.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#777777", width=1)))
        self.sigma_plot.item.addItem(self.sigma_bars)
        self.sigma_plot.item.addItem(self.sigma_mark)
        self.before_plot = PlotBox("before: values of v = x + Sublayer(x)", "count", "value", whole=("left",))
        self.after_plot = PlotBox("after: values of LN(v)", "count", "value", whole=("left",))
        self.before_curve = self.before_plot.item.plot(stepMode="center", fillLevel=0, pen=pg.mkPen(BLUE, width=2),
                                                       brush=pg.mkBrush(0, 114, 178, 90))
        self.after_curve = self.after_plot.item.plot(stepMode="center", fillLevel=0, pen=pg.mkPen(GREEN, width=2),
                                                     brush=pg.mkBrush(0, 158, 115, 90))
        self.gamma_plot = PlotBox("γ (scale), per dimension", "γ", "dimension", whole=("bottom",))
        self.beta_plot = PlotBox("β (shift), per dimension", "β", "dimension", whole=("bottom",))
        self.gamma_plot.item.addItem(pg.InfiniteLine(pos=1, angle=0, pen=pg.mkPen("#777777", width=1,
                                                                                    style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.beta_plot.item.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#777777", width=1,
                                                                                   style=pg.QtCore.Qt.PenStyle.DashLine)))
        self.gamma_curve = self.gamma_plot.item.plot(pen=pg.mkPen(BLUE, width=2), antialias=False)   # d points: fast
        self.beta_curve = self.beta_plot.item.plot(pen=pg.mkPen(GREEN, width=2), antialias=False)
        self.grid = ResponsiveGrid([(self.mu_plot, False), (self.sigma_plot, False), (self.before_plot, False),
                                    (self.after_plot, False), (self.gamma_plot, False), (self.beta_plot, False)])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.notice)
        layout.addWidget(self.grid, 1)

        self.stage: tuple[str, int, str] | None = None
        self.note = ""
        self.tokens: list[str] = []
        self.highlight: int | None = None                  # the generation step's bar, in the decoder
        self.shown: dict[str, np.ndarray] = {}             # mu, sigma, gamma, beta, before (v), after (LN(v))
        self.hist: dict[str, tuple[np.ndarray, np.ndarray]] = {}     # before/after: (edges, counts)
        self.stats = ValueStats()
        self._shown_trace = None
        self._hist_titles: dict[str, tuple[str, str]] = {}     # before/after: (title, its line of figures)
        for key, plot in (("before", self.before_plot), ("after", self.after_plot)):
            plot.text_size_changed.connect(lambda _pt, key=key: self._hist_title(key))

    def _hist_title(self, key: str) -> None:
        """A histogram's title, its figures on a second line at the plot's tick size (presentation mode's too)."""
        if key in self._hist_titles:
            plot = self.before_plot if key == "before" else self.after_plot
            title, figures = self._hist_titles[key]
            plot.set_title(f"{title}<br><span style='font-size:{plot.text_pt:g}pt'>{figures}</span>")

    # --- the window's protocol --------------------------------------------------------------------
    def view_key(self, state):
        if state.schema is None:
            return None
        stack, layer, sub, _ = ln_stage(state, state.schema)
        return (stack, layer, sub, state.step if state.schema.stack(stack).by_step else None, state.stack)

    def render(self, trace, state) -> None:
        schema = trace.schema
        stack, layer, sub, note = ln_stage(state, schema)
        if self._shown_trace is trace and self.stage == (stack, layer, sub) and self.note == note:
            self._show_highlight(state)           # a generation step only moves the highlighted bar
            return
        if self._shown_trace is not trace:
            self.stats.warm(trace)
        self._shown_trace = trace
        self.stage, self.note = (stack, layer, sub), note

        def get(name):
            return np.asarray(trace.get(stack, layer, sub, name))

        pre_input = f"{stack}.{layer}.{sub}.ln_in" in trace.arrays               # pre-norm: the norm's own input
        mu, sigma, v, out = get("ln_mean"), get("ln_sigma"), get("ln_in" if pre_input else "residual"), get("ln_out")
        gamma = get("gamma")
        has_beta = schema.norm == LAYER_NORM
        beta = get("beta") if has_beta else np.zeros_like(gamma)                # RMSNorm has no shift
        self.shown = {"mu": mu, "sigma": sigma, "gamma": gamma, "beta": beta, "before": v, "after": out}
        self.tokens = list(trace.tokens(schema.stack(stack).tokens))
        T, d = v.shape

        x = np.arange(T)
        tokens = self.tokens

        def bars_update(plot, bars, values):
            def update():
                bars.setOpts(x=x, height=values, width=0.75 if T <= 48 else 1.0)   # no moiré
                plot.item.getAxis("bottom").set_labels(tokens)
                set_range(plot, -0.6, T - 0.4, min(0.0, float(values.min())), max(0.0, float(values.max())), pad_x=0)
            return update

        for plot, bars, values in ((self.mu_plot, self.mu_bars, mu), (self.sigma_plot, self.sigma_bars, sigma)):
            plot.defer(bars_update(plot, bars, values))

        stats = {"before": self.stats.of(v), "after": self.stats.of(out)}
        self.hist = {key: got[:2] for key, got in stats.items()}

        reads = schema.norm_input(stack, sub)

        def histogram_update(key, curve, plot):
            edges, counts, mean, std = stats[key]
            name = reads if key == "before" else ("LN(v)" if schema.norm == LAYER_NORM else f"{schema.norm}(v)")
            mean = round(float(mean), 2) + 0.0        # "mean -0.00" after the norm, read as a sign (QA)
            self._hist_titles[key] = (f"{key}: {name}", f"all {T}×{d} values · mean {mean:.2f} · std {std:.2f}")

            def update():
                curve.setData(edges, counts)
                set_range(plot, edges[0], edges[-1], 0.0, float(counts.max()))
                self._hist_title(key)
            return update

        for key, curve, plot in (("before", self.before_curve, self.before_plot),
                                 ("after", self.after_curve, self.after_plot)):
            plot.defer(histogram_update(key, curve, plot))

        dims = np.arange(d)

        def parameter_update(plot, curve, values, rest):
            def update():
                curve.setData(dims, values)
                set_range(plot, -0.5, d - 0.5, min(float(values.min()), rest), max(float(values.max()), rest))
            return update

        self.gamma_plot.defer(parameter_update(self.gamma_plot, self.gamma_curve, gamma, 1.0))
        self.beta_plot.defer(parameter_update(self.beta_plot, self.beta_curve, beta, 0.0))
        self.beta_plot.set_title("β (shift), per dimension" if has_beta else f"β: {schema.norm} has no shift (0)")

        self.notice.setText(escape(note))
        self.notice.setVisible(bool(note))
        self.highlight = -1                          # nothing highlighted yet: _show_highlight draws the bars
        self._show_highlight(state)

    def _show_highlight(self, state) -> None:
        """The bar of the generation step in vermillion (decoder only) and the header that names it."""
        stack, layer, sub = self.stage
        schema = self._shown_trace.schema
        st = schema.stack(stack)
        T, d = self.shown["before"].shape
        step = int(getattr(state, "step", 0) or 0)
        highlight = min(max(step, 0), T - 1) if st.by_step else None
        if highlight == self.highlight:
            return
        self.highlight = highlight
        width = 0.75 if T <= 48 else 1.0
        for plot, mark, key in ((self.mu_plot, self.mu_mark, "mu"), (self.sigma_plot, self.sigma_mark, "sigma")):
            x, h = ([highlight], [float(self.shown[key][highlight])]) if highlight is not None else ([], [])
            plot.defer(lambda mark=mark, x=x, h=h: mark.setOpts(x=x, height=h, width=width), part="colours")
        tokens = st.token_noun + ("s" if T != 1 else "")
        sublayer = st.sublayer(sub).name
        where = f"Add &amp; Norm after {sublayer}" if schema.norm_place == NORM_AFTER else f"{schema.norm} before {sublayer}"
        v = schema.norm_input(stack, sub)
        spread = "μ and σ = √(var + ε)" if schema.norm == LAYER_NORM else "μ, and the root mean square as σ,"
        eps = self._shown_trace.norm_eps         # its value, where the run recorded it (it was nowhere: QA)
        notes = ([f"the variance ÷ {d}, not {d - 1}"] if schema.norm == LAYER_NORM else []) + \
            ([f"ε = {eps:g}"] if eps is not None else [])
        biased = f" ({'; '.join(notes)})" if notes else ""
        step_text = (f" &nbsp; <span style='color:{VERMILLION}'>■</span> generation step {highlight}"
                     if highlight is not None else "")
        self.short_header.set(f"<b>{st.title} layer {layer + 1} · {where}</b>{step_text}"
                              f"<br><span style='font-family:serif; font-size:15pt'><i>"
                              f"{equation_html(schema.norm_equation, whole_sides=True)}</i></span>",
                              f"{v}; {spread} over the {d} dimensions of each of the {T} {tokens}{biased}")
