"""Beam tree: the hypotheses a beam search kept or finished (model/beam_tree.py), left to right by generation step,
each labelled with its token and log-probability (a finished one with its length-penalised score). The chosen
translation runs along the top row, thick and in the accent colour; pruned branches are grey; finished hypotheses
are framed in green. Drag to pan, wheel to zoom (labels show whenever they fit without overlapping), hover for the
whole hypothesis and its scores, click one to see the decoder's attention for it (the window runs a
teacher-forced pass over that prefix). Right-click to save the picture or the nodes as CSV."""
from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import replace
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from model.beam_tree import CHOSEN, COLUMNS, FINISHED, KEPT, META_KEY, NODE_KEY, PRUNED, BeamTree, BeamTreeError, tree_of
from model.assets import short_name
from model.schema import DECODER_ONLY, ENCODER_ONLY

from ..export import TITLE_CHARS, cut_words
from ..plotting.colormaps import BLUE, GREEN, VERMILLION
from ..plotting.text import short, signed, tick_font
from ..plotting.titles import set_title
from ..plotting.tree_layout import layout_rows
from ..row_words import output_word
from .widgets import ElidedLabel, WrappedLabel, tone_colour

ACCENT = VERMILLION
# per fate: edge pen (colour, width), label text colour, border (colour, width), fill
STYLE = {
    CHOSEN: ((ACCENT, 4.0), "#000000", (ACCENT, 2.5), "#fde3d2"),
    KEPT: (("#555555", 1.5), "#111111", ("#777777", 1.0), "#ffffff"),
    FINISHED: (("#555555", 1.5), "#111111", (GREEN, 2.5), "#dcf2ea"),
    PRUNED: (("#c8c8c8", 1.2), "#9a9a9a", ("#d4d4d4", 1.0), "#f7f7f7"),
}
SELECTED = (BLUE, 3.5)          # the border of the hypothesis whose trace is on screen
GAP_X, GAP_Y = 34, 8            # pixels between label columns and rows at the readable size
FIGURE_MOST = 4000              # pixels: a figure's longest side
VECTOR_MOST = 16000             # … in an SVG or PDF, which hold no pixels (71 steps of width 8 were dots at 4000)
GREEDY_NOTE = "Beam tree: choose beam search (width ≥ 2) in Decoding, or press the button."


def elbow(parent: tuple[float, float], child: tuple[float, float]) -> list[tuple[float, float]]:
    """An edge as three segments (pairs of points): right from the parent to half a column, along that column's
    middle to the child's row, right to the child. Siblings share the vertical part; no edge runs through a label."""
    (x0, y0), (x1, y1) = parent, child
    mid = (x0 + x1) / 2
    return [(x0, y0), (mid, y0), (mid, y0), (mid, y1), (mid, y1), (x1, y1)]


HINT = ("Under each token: the hypothesis' log p (at </s>: its length-penalised score). Hover over one for its "
        "details; click it to see the decoder's attention for it.",
        ("Under each token: log p. Hover for details; click for its attention.",))
# zoomed out, the labels hold their tokens alone: the hint says where log p went
TOKENS_HINT = ("Zoomed out, each label shows its token alone (Full size shows log p under it). Hover over one for its "
               "details; click it to see the decoder's attention for it.",
               ("Tokens alone (Full size: log p). Hover for details; click for its attention.",))


def paper(label: QtWidgets.QLabel) -> None:
    """A legend on the plot's own white with its dark text, whatever the theme: its swatches are the plot's colours,
    and on the dark theme's grey the "kept" line had a contrast of 1.8:1, darker than "pruned" (QA)."""
    palette = label.palette()
    palette.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("#ffffff"))
    palette.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(STYLE[KEPT][1]))
    label.setPalette(palette)
    label.setAutoFillBackground(True)
    label.setContentsMargins(6, 2, 6, 2)


class TreeView(pg.PlotWidget):
    """The tree's plot; table_csv() gives its nodes (plot menus save them as CSV), and figure() the whole tree as a
    view of its own (plot menus and Export all picture that one)."""

    def __init__(self):
        super().__init__(background="w", enableMenu=False)
        self.tree: BeamTree | None = None
        self.figure: Callable[[bool], pg.GraphicsView | None] = lambda vector=False: None

    def table_csv(self) -> str | None:
        if self.tree is None:
            return None
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([*COLUMNS, "search_score_formula"])
        for n in self.tree.nodes:
            w.writerow([*(getattr(n, c) for c in COLUMNS), self.tree.penalty.describe()])
        return buf.getvalue()


class BeamTreePanel(QtWidgets.QWidget):
    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.note = WrappedLabel()
        self.note.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.note.setText(GREEDY_NOTE)
        self.action = QtWidgets.QPushButton("Use beam search")
        self.action.clicked.connect(self._act)
        self.readable = QtWidgets.QToolButton(text="Full size")
        self.readable.setToolTip("Labels at full size, the start of the tree in view (drag to pan)")
        self.readable.clicked.connect(lambda: self.fit_readable())
        self.whole = QtWidgets.QToolButton(text="Whole tree")
        self.whole.setToolTip("The whole tree in view (labels show when they fit; wheel to zoom)")
        self.whole.clicked.connect(lambda: self.fit_whole())
        # the button under its note, and the legend free to wrap: beside each other they made the dock 380 pixels
        # wide at the least, and the window wider than a 1024-pixel projector (QA)
        bar = QtWidgets.QVBoxLayout()
        bar.addWidget(self.note)
        bar.addWidget(self.action, 0, QtCore.Qt.AlignmentFlag.AlignLeft)
        self.legend = WrappedLabel()
        self.legend.setText(self._legend())
        paper(self.legend)
        self.legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.legend.setToolTip("The numbers: each hypothesis' log-probability log p (the sum of its "
                               "tokens' log-probabilities) under its last token. A finished one (ending with the end "
                               "token) shows its score instead: log p "
                               "divided by the length penalty; the search chooses the best score.")
        below = QtWidgets.QHBoxLayout()
        below.addWidget(self.legend, 1)
        below.addWidget(self.readable)
        below.addWidget(self.whole)
        self.view = TreeView()
        self.view.setMinimumHeight(150)              # three rows of labels, in the shortest dock
        self.plot: pg.PlotItem = self.view.getPlotItem()
        self.vb: pg.ViewBox = self.plot.getViewBox()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.showAxis("top")
        top = self.plot.getAxis("top")
        top.setPen("k")
        top.setTextPen("k")
        self.vb.setMouseEnabled(x=True, y=True)
        self.edges: dict[str, pg.PlotCurveItem] = {}
        for z, fate in enumerate((PRUNED, KEPT, FINISHED, CHOSEN)):
            (colour, width), *_ = STYLE[fate]
            curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=width), connect="pairs", antialias=True)
            curve.setZValue(z)
            self.plot.addItem(curve)
            self.edges[fate] = curve
        self.dots = pg.ScatterPlotItem(size=7, pen=None)
        self.dots.setZValue(5)
        self.plot.addItem(self.dots)
        self.ring = pg.ScatterPlotItem(size=22, pen=pg.mkPen(SELECTED[0], width=3), brush=pg.mkBrush(None))
        self.ring.setZValue(6)                           # the hypothesis on screen, zoomed out too
        self.plot.addItem(self.ring)
        self.band = QtWidgets.QGraphicsRectItem()        # the column of the generation step in view
        self.band.setBrush(pg.mkBrush(255, 200, 0, 40))
        self.band.setPen(pg.mkPen(None))
        self.band.setZValue(-10)
        self.plot.addItem(self.band)
        self.hover = ElidedLabel()
        self.hover.setText(*HINT)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addLayout(below)
        layout.addWidget(self.view, 1)
        self.filler = QtWidgets.QWidget()        # keeps a message at the top while there is no tree
        layout.addWidget(self.filler, 1)
        layout.addWidget(self.hover)
        self.tree: BeamTree | None = None
        self.labels: dict[int, pg.TextItem] = {}        # node id -> its label
        self.pos: dict[int, tuple[float, float]] = {}  # node id -> (column, row)
        self.selected: int | None = None
        self.label_size = (60.0, 30.0)                  # the widest and tallest label, pixels
        self.token_size = (40.0, 16.0)                  # … of the labels' first lines alone (their tokens)
        self.labels_shown = True
        self.label_mode = "full"                        # "full": token and log p; "token": the token; "": dots
        self._text_mode = "full"                        # what the labels hold (kept while only dots show)
        self._data = None                               # the meta entry drawn
        self.offset = 0                                 # the window's step of the tree's step 0 (a prompt's rows)
        self._tick_every = 0                            # the step numbers shown: every this many
        self.written = "translation"                    # the output's name, as the window's row names it
        self.prompted = False                           # a decoder-only model's: its start is the prompt's end
        self._xy = np.zeros((0, 2))
        self._ids: list[int] = []
        self._action: Callable[[], None] | None = None
        self._on_prefix: Callable[[int], None] | None = None
        self._font_pt = 0.0
        self._apply_fonts()
        self._px: tuple[float, float] | None = None    # pixels per column and row the user (or a fit) chose
        self.vb.sigRangeChanged.connect(lambda *_: self._fit_labels())
        self.vb.sigRangeChangedManually.connect(lambda *_: self._keep_scale())
        self.vb.sigResized.connect(lambda *_: self._resized())
        self.vb.sigResized.connect(lambda *_: self._fit_hover())
        self.view.scene().sigMouseMoved.connect(self._hovered)
        self.view.scene().sigMouseClicked.connect(self._clicked)
        self._show_tree(False)
        self.view.figure = self.figure_view
        self.view.names_its_run = True            # its figure's title names the run (no second line under it)
        self._run = ("", "")                            # the run's sentence and model, for a figure's title

    def figure_view(self, vector: bool = False) -> pg.GraphicsView | None:
        """The whole tree as a figure: a view of its own, off screen, as large as every label at full size needs
        (at most FIGURE_MOST pixels a side, VECTOR_MOST for a vector file: beyond, the labels show their tokens
        alone, or dots), titled with the run and the legend. A saved picture had been the part of the tree in
        view, "Whole tree" zoomed out to dots with no legend, and Export all's picture cut at the dock's edge (QA,
        a teacher's handout)."""
        if self.tree is None:
            return None
        fig = BeamTreePanel(self.state)
        fig.setFont(self.font())                 # the labels' size: the window's text, as on screen
        fig._apply_fonts()
        fig.offset, fig.written, fig.prompted = self.offset, self.written, self.prompted
        fig._draw(self.tree)
        sentence, model = self._run
        said = f"“{html.escape(cut_words(sentence, TITLE_CHARS))}” ({html.escape(model)}) → " if sentence else ""
        set_title(fig.plot, f"Beam search, width {self.tree.width}: {said}{html.escape(self._sentence(self.tree))}"
                            f"<br>{self._legend()}", "k", fig._font_pt)
        fig._fit_hover = lambda: None            # the panel is its view alone: no buttons, notes or read-out
        for w in (fig.note, fig.action, fig.legend, fig.readable, fig.whole, fig.hover, fig.filler):
            w.hide()
        fig.layout().setContentsMargins(0, 0, 0, 0)
        fig.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        px, py = fig.cell
        rows = int(fig._xy[:, 1].max()) + 1 if len(fig._xy) else 1
        title = 3 * QtGui.QFontMetricsF(tick_font(fig._font_pt)).height()       # two lines, and the step numbers
        most = VECTOR_MOST if vector else FIGURE_MOST
        fig.resize(min(most, round((self.tree.n_steps + 1.5) * px + 20)), min(most, round(rows * py + title + 40)))
        fig.show()
        QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)    # laid out at that size
        fig.fit_whole()
        return fig.view

    def figure_image(self) -> QtGui.QImage | None:
        """Export all's picture of the panel: the whole tree's figure."""
        from ..plotting.render import scene_image
        view = self.figure_view()
        if view is None:
            return None
        try:
            return scene_image(view)
        finally:
            window = QtWidgets.QWidget.window(view)      # the figure's own panel, off screen
            window.hide()
            window.deleteLater()

    # --- the window's hooks ---------------------------------------------------------------------
    def set_prefix_handler(self, handler: Callable[[int], None] | None) -> None:
        """handler(node id): show the decoder's attention for that hypothesis (the window's)."""
        self._on_prefix = handler

    def view_key(self, state):
        return (state.step,)

    # --- rendering ------------------------------------------------------------------------------
    def render(self, trace, state) -> None:
        try:
            tree = tree_of(trace)
        except BeamTreeError as e:
            self._message(f"Beam tree: {html.escape(str(e))}.")
            return
        if tree is None:
            self._explain(trace, state)
            return
        data = trace.meta.get(META_KEY)
        self._run = (str(trace.meta.get("sentence", "")), short_name(str(trace.meta.get("model", ""))))
        # a decoder-only model's rows read its prompt first: the tree's step 0 is the window's step prompt_rows()
        # (QA: the band stood 6 columns right of GPT-2's first written token, the steps read from 0 there)
        offset, prompted = trace.prompt_rows(), trace.schema.layout == DECODER_ONLY
        written = output_word(trace.schema.layout, trace.schema.family, self.state.model_name)
        if data is not self._data or (offset, written, prompted) != (self.offset, self.written, self.prompted):
            self.offset, self.written, self.prompted = offset, written, prompted
            self._draw(tree)
            self._data = data
        self.select(trace.meta.get(NODE_KEY))
        self._show_step(state.step - self.offset)

    def _message(self, text: str, action: str = "", do: Callable[[], None] | None = None) -> None:
        self.note.setText(text)
        self.action.setText(action)
        self.action.setVisible(bool(action))
        self._action = do
        self._show_tree(False)

    def _show_tree(self, on: bool) -> None:
        for w in (self.view, self.legend, self.readable, self.whole):
            w.setVisible(on)
        self._fit_hover()
        self.filler.setVisible(not on)
        if not on:
            self.tree, self._data, self.view.tree = None, None, None

    def _fit_hover(self) -> None:
        """The line under the tree only where the tree keeps room above it: on a 720p projector's short dock it was
        drawn over the tree's top row (the view's tooltip has the same words)."""
        on = self.view.isVisibleTo(self)
        if on:          # the height the panel's parts need with the line (Qt overlaps them when it has less)
            line = 0 if self.hover.isVisibleTo(self) else self.hover.sizeHint().height() + self.layout().spacing()
            on = self.height() >= self.layout().minimumSize().height() + line
        if on != self.hover.isVisibleTo(self):
            self.hover.setVisible(on)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_hover()

    def _explain(self, trace, state) -> None:
        """Why there is no tree, in one line, with a button that makes one where a setting can."""
        mode = trace.meta.get("mode", "")
        if trace.schema.layout == ENCODER_ONLY:
            self._message("Beam tree: this model does not generate text, so there is no search to show.")
        elif mode == "teacher-forced" or state.target.strip():
            self._message("Beam tree: the decoder is forced through the given target; clear Target and choose "
                          "beam search (width ≥ 2) in Decoding.", "Clear the target and use beam search",
                          lambda: self.state.update(target="", decoding=self._beam(state)))
        elif mode == "beam":
            self._message("Beam tree: this run's search was not recorded (a frame saved before beam trees were "
                          "kept); it is recorded when the model runs again.")
        else:
            self._message(GREEDY_NOTE, f"Use beam search (width {self._beam(state).beam})",
                          lambda: self.state.update(decoding=self._beam(state)))

    @staticmethod
    def _beam(state):
        return replace(state.decoding, method="beam", beam=max(2, state.decoding.beam))

    def _act(self) -> None:
        if self._action is not None:
            self._action()

    def _draw(self, tree: BeamTree) -> None:
        self._show_tree(True)
        self.tree = self.view.tree = tree
        self.selected = None
        self.hover.setText(*HINT)            # not the last tree's hypothesis ("professeur" under "musique", QA)
        self.ring.setData(pos=[])
        self.action.setVisible(False)
        chosen = tree.nodes[tree.chosen] if tree.chosen >= 0 else None
        finished = tree.count(FINISHED) + (1 if chosen is not None and chosen.ended else 0)
        summary = (f"Beam search, width {tree.width}: {len(tree.nodes) - 1} hypotheses over {tree.n_steps} steps, "
                   f"{finished} finished, {tree.count(PRUNED)} pruned.")
        if chosen is not None:
            summary += f" Chosen: log p {signed(chosen.cum)}, score {signed(chosen.score)}."
        if tree.width == 1:
            summary += " (Width 1 is greedy search: one path.)"
        if tree.note:
            summary += f" <span style='color:{tone_colour('warning')}'>Note: {html.escape(tree.note)}.</span>"
        self.note.setText(summary)
        # children in drawing order: the chosen one first (it continues the top row), then the likeliest
        kids = {n.id: sorted(tree.children(n.id), key=lambda c: (c.fate != CHOSEN, -c.cum)) for n in tree.nodes}
        rows = layout_rows(0, lambda i: [c.id for c in kids[i]])
        self.pos = {n.id: (float(n.step + 1), rows[n.id]) for n in tree.nodes}
        for fate, curve in self.edges.items():
            pts = np.array([elbow(self.pos[n.parent], self.pos[n.id]) for n in tree.nodes[1:] if n.fate == fate],
                           dtype=float).reshape(-1, 2)
            curve.setData(pts[:, 0], pts[:, 1])
        for item in self.labels.values():
            self.plot.removeItem(item)
        self.labels = {}
        self._hold_full()
        for n in tree.nodes:
            item = pg.TextItem(anchor=(0.5, 0.5))
            item.setZValue(10)
            self.labels[n.id] = item
            self._style(n)
            item.setPos(*self.pos[n.id])
            self.plot.addItem(item)
        self._ids = [n.id for n in tree.nodes]
        self._xy = np.array([self.pos[i] for i in self._ids], dtype=float)
        self.dots.setData(pos=self._xy, brush=[pg.mkBrush(STYLE[n.fate][2][0]) for n in tree.nodes],
                          symbol=["s" if n.ended else "o" for n in tree.nodes],
                          size=[11 if n.ended else 7 for n in tree.nodes])
        n_rows = 1 + max(rows.values())
        self.vb.setLimits(xMin=-1.0, xMax=tree.n_steps + 2.0, yMin=-1.0, yMax=n_rows + 1.0)
        self._tick_every = 0
        self._fit_ticks()
        set_title(self.plot, f"Beam search, width {tree.width}: {html.escape(self._sentence(tree))}", "k",
                  self._font_pt)
        self._measure()
        self.fit_readable()

    @staticmethod
    def _sentence(tree: BeamTree) -> str:
        return tree.nodes[tree.chosen].text if tree.chosen >= 0 else ""

    def _label_html(self, n, mode: str = "full") -> str:
        token = html.escape(short(n.piece))
        second = f"score {signed(n.score)}" if n.ended else signed(n.cum)
        colour = STYLE[n.fate][1]
        weight = "bold" if n.fate == CHOSEN else "normal"
        if mode == "token":
            return f"<div style='color:{colour}; font-weight:{weight}'>{token}</div>"
        return (f"<div style='color:{colour}; font-weight:{weight}'>{token}<br>"
                f"<span style='font-size:{self._font_pt * 0.85:.1f}pt'>{second}</span></div>")

    def _style(self, n) -> None:
        item = self.labels[n.id]
        _, _, (border, width), fill = STYLE[n.fate]
        if n.id == self.selected:
            border, width = SELECTED
        item.border = pg.mkPen(border, width=width)
        item.fill = pg.mkBrush(fill)
        item.setFont(tick_font(self._font_pt))
        self._set_text(item, self._label_html(n, self._text_mode))

    @staticmethod
    def _set_text(item, text: str) -> None:
        item.setHtml(text)
        doc = item.textItem.document()
        doc.setDefaultTextOption(QtGui.QTextOption(QtCore.Qt.AlignmentFlag.AlignHCenter))
        doc.setTextWidth(-1)                        # unwrapped (a larger font must not wrap at the old width)
        doc.setTextWidth(doc.idealWidth())          # the lines centred on each other
        item.updateTextPos()
        item.update()

    def _hold_full(self) -> None:
        """The labels about to be styled hold token and log p, shown (as fit_readable, which follows, has them)."""
        self._text_mode = self.label_mode = "full"
        self.labels_shown = True

    def _measure(self) -> None:
        """The largest label's size in pixels: the readable scale keeps one column and one row wider than it. The
        labels hold their full text here (_hold_full); a token alone is measured by its font, in bold (the chosen
        line's), with the document's margins: setting every label's text twice more took 100 ms of a 240-node
        tree's 500 ms drawing."""
        if not self.labels:
            return
        rects = [item.textItem.boundingRect() for item in self.labels.values()]
        self.label_size = (max(r.width() for r in rects), max(r.height() for r in rects))
        font = QtGui.QFont(tick_font(self._font_pt))
        font.setBold(True)
        metrics = QtGui.QFontMetricsF(font)
        margin = 2 * next(iter(self.labels.values())).textItem.document().documentMargin()
        self.token_size = (max(metrics.horizontalAdvance(short(n.piece)) for n in self.tree.nodes) + margin,
                           math.ceil(metrics.height()) + margin)

    @property
    def cell(self) -> tuple[float, float]:
        """Pixels per column and per row at the readable size."""
        return self.label_size[0] + GAP_X, self.label_size[1] + GAP_Y

    def fit_readable(self) -> None:
        """Labels at full size: the tree's start (and the chosen translation's row) at the top left."""
        self._px = self.cell
        self._show_from(-0.5, -0.5)

    def fit_whole(self) -> None:
        if self.tree is None or not len(self._xy):
            return
        self.vb.setRange(xRange=(-0.5, self._xy[:, 0].max() + 0.5), yRange=(-0.5, self._xy[:, 1].max() + 0.5),
                         padding=0)
        self._keep_scale()
        self._fit_labels()

    def _show_from(self, x0: float, y0: float) -> None:
        """The view from (x0, y0) at the top left, at the kept scale, as far as the panel's size reaches."""
        px, py = self._px or self.cell
        w, h = max(self.vb.width(), 50.0), max(self.vb.height(), 50.0)
        self.vb.setRange(xRange=(x0, x0 + w / px), yRange=(y0, y0 + h / py), padding=0)
        self._fit_labels()

    def _keep_scale(self) -> None:
        """Remember the scale on screen (after a pan, a zoom or a fit): a resize keeps it."""
        if self.vb.width() > 1 and self.vb.height() > 1:
            self._px = self.scale()

    def _resized(self) -> None:
        """A new size shows more (or less) of the tree at the same scale, from the same top left corner."""
        if self.tree is not None:
            (x0, _), (y0, _) = self.vb.viewRange()
            self._show_from(x0, y0)

    def center_on(self, node_id: int) -> None:
        """Pan (at the scale on screen) so that a hypothesis sits in the middle of the view."""
        (x0, x1), (y0, y1) = self.vb.viewRange()
        x, y = self.pos[node_id]
        self.vb.setRange(xRange=(x - (x1 - x0) / 2, x + (x1 - x0) / 2), yRange=(y - (y1 - y0) / 2, y + (y1 - y0) / 2),
                         padding=0)
        self._keep_scale()

    def scale(self) -> tuple[float, float]:
        """Pixels per column and per row now."""
        (x0, x1), (y0, y1) = self.vb.viewRange()
        return self.vb.width() / max(x1 - x0, 1e-9), self.vb.height() / max(y1 - y0, 1e-9)

    def _fit_ticks(self) -> None:
        """The step numbers along the top, every one where they fit, else every 2nd, 5th, 10th …: zoomed out, a
        language model's steps 10 to 18 ran together as "1011121314151617" (QA)."""
        if self.tree is None:
            return
        px = self.scale()[0] if self.vb.width() > 1 else self.cell[0]
        widest = QtGui.QFontMetricsF(tick_font(self._font_pt or 10.0)).horizontalAdvance(
            str(self.tree.n_steps + self.offset)) + 8
        every = next(k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10 ** 9) if k * px >= widest)
        if every != self._tick_every:
            self._tick_every = every
            labels = [(s + 1.0, str(s + self.offset)) for s in range(self.tree.n_steps)
                      if (s + self.offset) % every == 0]
            self.plot.getAxis("top").setTicks([labels, []])

    def _fit_labels(self) -> None:
        """Labels show when every one fits in its cell (none can overlap another); else their tokens alone, when
        those fit (zoomed out, the whole tree was dots only, QA); else only the dots."""
        self._fit_ticks()
        px, py = self.scale()

        def fits(size) -> bool:
            return bool(px >= size[0] + 4 and py >= size[1] + 1)
        mode = "full" if fits(self.label_size) else "token" if fits(self.token_size) else ""
        if mode != self.label_mode:
            self.label_mode, self.labels_shown = mode, bool(mode)
            if mode and mode != self._text_mode and self.tree is not None:
                self._text_mode = mode
                for n in self.tree.nodes:
                    self._set_text(self.labels[n.id], self._label_html(n, mode))
            for item in self.labels.values():
                item.setVisible(bool(mode))
            if self.hover.text() in (HINT[0], TOKENS_HINT[0]):      # a hint, not a hypothesis' read-out
                self.hover.setText(*(TOKENS_HINT if mode == "token" else HINT))

    def _show_step(self, step: int) -> None:
        if self.tree is None:
            return
        n_rows = self._xy[:, 1].max() + 1 if len(self._xy) else 1
        self.band.setRect(QtCore.QRectF(step + 0.5, -1.0, 1.0, n_rows + 2.0))

    def select(self, node_id) -> None:
        """Frame the hypothesis whose trace the window shows (None: the chosen translation's)."""
        node_id = node_id if isinstance(node_id, int) and self.tree is not None and \
            0 < node_id < len(self.tree.nodes) else None
        if node_id == self.selected:
            return
        old, self.selected = self.selected, node_id
        for i in (old, node_id):
            if i is not None and self.tree is not None:
                self._style(self.tree.nodes[i])
        self.ring.setData(pos=[self.pos[node_id]] if node_id is not None else [])
        if node_id is not None and not self.vb.viewRect().contains(QtCore.QPointF(*self.pos[node_id])):
            self.center_on(node_id)

    # --- fonts ----------------------------------------------------------------------------------
    def _apply_fonts(self) -> None:
        """Labels 1 point larger than the widgets' text (presentation mode: large on a projector)."""
        pt = self.font().pointSizeF()
        if pt <= 0 or pt + 1 == self._font_pt:
            return
        self._font_pt = pt + 1
        top = self.plot.getAxis("top")
        top.setTickFont(tick_font(self._font_pt))
        top.setLabel("generation step", color="k", **{"font-size": f"{self._font_pt:g}pt"})
        if self.tree is not None:
            self._hold_full()
            for n in self.tree.nodes:
                self._style(n)
            set_title(self.plot, f"Beam search, width {self.tree.width}: "
                                 f"{html.escape(self._sentence(self.tree))}", "k", self._font_pt)
            self._measure()
            self.fit_readable()

    def changeEvent(self, event) -> None:
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            self._apply_fonts()
        super().changeEvent(event)

    def _legend(self) -> str:
        def swatch(fate: str, text: str) -> str:
            (colour, width), *_ = STYLE[fate]
            return (f"<span style='color:{colour}; font-weight:bold'>{'━' if width > 2 else '─'}</span>&nbsp;"
                    f"{text}")
        # a line breaks between entries, never inside one (a narrow dock put "▢" and "finished" on two lines)
        # finished: the dot's filled square (its label's green frame had been drawn as a hollow one)
        return " &nbsp; ".join([swatch(CHOSEN, "chosen"), swatch(KEPT, "kept"),
                                f"<span style='color:{GREEN}; font-weight:bold'>■</span>&nbsp;finished",
                                swatch(PRUNED, "pruned")])

    # --- the mouse ------------------------------------------------------------------------------
    def node_at(self, scene_pos) -> int | None:
        """The hypothesis under a scene position (its label, or near its dot), or None."""
        if self.tree is None or not len(self._xy) or not self.vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.vb.mapSceneToView(scene_pos)
        px, py = self.scale()
        if min(px, py) < 1e-6:                  # a view squeezed to nothing shows nothing to point at
            return None
        dx = np.abs(self._xy[:, 0] - p.x()) * px
        dy = np.abs(self._xy[:, 1] - p.y()) * py
        size = self.label_size if self.label_mode == "full" else self.token_size
        half_w, half_h = (size[0] / 2, size[1] / 2) if self.labels_shown else (8.0, 8.0)
        inside = (dx <= half_w) & (dy <= half_h)
        if not inside.any():
            return None
        best = np.argmin(np.where(inside, dx + dy, np.inf))
        return self._ids[int(best)]

    def scene_pos_of(self, node_id: int) -> QtCore.QPointF:
        """Where a node sits in the scene (tests click there)."""
        return self.vb.mapViewToScene(QtCore.QPointF(*self.pos[node_id]))

    def describe(self, node_id: int, short: bool = False) -> str:
        """The hover text of a hypothesis: the whole prefix and its scores (short: its token, log p, score and
        fate, for a read-out narrower than the whole text)."""
        t = self.tree
        n = t.nodes[node_id]
        step = n.step + self.offset                   # as the window counts steps
        if node_id == 0:
            if self.prompted:                         # (it said the decoder read "<unk>" first: GPT-2, QA)
                n = self.offset + 1
                return f"The start: the prompt ({n} token{'s' if n > 1 else ''}), after which the model writes."
            return f"The start: the decoder reads “{n.piece}” first."
        if short:
            fate = {CHOSEN: "chosen", FINISHED: "finished", KEPT: "kept", PRUNED: "pruned"}[n.fate]
            return f"“{n.piece}” at step {step}: log p {signed(n.logp)}, score {signed(n.score)}; {fate}."
        fate = {CHOSEN: f"on the chosen {self.written}", FINISHED: "finished (a complete hypothesis, not chosen)",
                KEPT: "kept in the beam", PRUNED: self._pruned(n)}[n.fate]
        text = (f"“{n.text}” — step {step}, token “{n.piece}”: log p(token) = {signed(n.logp)}, "
                f"log p(hypothesis) = {signed(n.cum)}, score {signed(n.score)} ({t.penalty.describe()}); {fate}")
        if n.rule_logp is not None:
            text += f"; the model's generation rules set this token's log p to {signed(n.rule_logp)} in the search"
        return text + "."

    def _pruned(self, n) -> str:
        """A dead end's words: its line may have stayed in the beam some steps before it left ("none of its
        continuations stayed" was said of "Cette petite", whose "Cette petite fille" was in the next beam, QA)."""
        last, todo = n.step, [n.id]
        while todo:
            for c in self.tree.children(todo.pop()):
                last = max(last, c.step)
                todo.append(c.id)
        if last == n.step:
            return "pruned: none of its continuations stayed in the beam"
        return f"pruned: its line stayed in the beam to step {last + self.offset}, then left it"

    def _hovered(self, scene_pos) -> None:
        i = self.node_at(scene_pos)
        if i is None:
            self.view.setToolTip("")
            return
        text = self.describe(i)
        self.hover.setText(text, shorter=(self.describe(i, short=True),))
        self.view.setToolTip(f"<p>{html.escape(text)}</p>")        # rich text: tokens such as </s> stay

    def _clicked(self, event) -> None:
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        i = self.node_at(event.scenePos())
        if i is not None:
            self.choose(i)

    def choose(self, node_id: int) -> None:
        """Ask the window for the decoder's attention for this hypothesis (the root: back to the translation)."""
        if self._on_prefix is not None:
            self._on_prefix(node_id)
