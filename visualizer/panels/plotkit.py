"""Shared pieces of the embeddings, LayerNorm and output panels: projector-sized fonts, token axes that thin
their labels to fit, labelled heatmaps with a colour bar, and a grid that goes to one column when narrow.

Convention: cell i of a heatmap or bar i of a bar chart is centred on the coordinate i.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..heatmap_figure import scaled_fonts
from ..steady_label import SteadyLabel
from ..theme import PLOT_BACKGROUND, PLOT_FOREGROUND

TICK_PT, LABEL_PT, TITLE_PT = 12, 13, 14
HEADER_PT, HEADER_SCALE = 12.0, 0.8
# Okabe-Ito: distinguishable with every common colour-vision deficiency
BLUE, ORANGE, GREEN, PINK, VERMILLION, SKY = "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9"
PALETTE = (BLUE, ORANGE, GREEN, PINK)
SIGNED_COLORMAP = "CET-CBD1"    # colorcet's colour-blind-safe diverging map (blue-white-yellow): 0 reads as white
MAX_LABEL_CHARS = 14


def short(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    label = str(label).replace("\n", "⏎").replace("\t", "⇥")
    return label if len(label) <= limit else label[: limit - 1] + "…"


def escape(text: str) -> str:
    """Text for a pyqtgraph title (rich text): tokens such as <s> must not read as tags."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tick_font(size: int = TICK_PT) -> QtGui.QFont:
    f = QtGui.QFont()
    f.setPointSize(size)
    return f


class TokenAxis(pg.AxisItem):
    """An axis labelled with tokens at 0, 1, 2, …; labels never overlap: when they do not all fit, they are drawn
    a little smaller, then (on a bottom axis) on two staggered lines, then smaller still (to 0.7 of the size, as
    heatmap axes are), and only then are labels left out.

    The fitting happens at paint time from the axis' length in pixels, so resizing a dock fits the labels again.
    """

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        self.labels: list[str] = []
        self._font = tick_font()
        # the label space grows for longer tokens but never shrinks back: a narrower axis would re-lay out the
        # plot and paint it twice on every step (the output panel's token labels change with each step)
        self.setStyle(tickFont=self._font, autoExpandTextSpace=True, autoReduceTextSpace=False,
                      hideOverlappingLabels=False)
        self.positions = np.zeros(0)
        self._fit: tuple | None = None      # (key, font, shown indices, lines) of the last fitting
        self.staggered = False

    def set_labels(self, labels, positions=None) -> None:
        """Label i at coordinate positions[i] (default: i); positions must increase."""
        labels = [short(t) for t in labels]
        positions = np.arange(len(labels), dtype=float) if positions is None else np.asarray(positions, float)
        if labels == self.labels and np.array_equal(positions, self.positions):
            return
        self.labels, self.positions = labels, positions
        self._fit = None
        self.picture = None
        self.update()

    def _extents(self, font: QtGui.QFont) -> np.ndarray:
        """The room each label needs along the axis at font: its width (with a gap), or a line's height."""
        metrics = QtGui.QFontMetrics(font)
        if self.orientation in ("bottom", "top"):
            gap = 0.6 * metrics.height()
            return np.array([metrics.horizontalAdvance(t) + gap for t in self.labels], dtype=float)
        return np.full(len(self.labels), metrics.height() * 1.05)

    def label_indices(self, length_px: float, lo: float, hi: float, font: QtGui.QFont | None = None,
                      lines: int = 1) -> list[int]:
        """Indices of the labels to draw at font: in order, each one placed if it clears the one before it on its
        line (lines = 2: shown labels alternate between two lines)."""
        lo, hi = sorted((lo, hi))
        if not self.labels or length_px <= 0 or hi <= lo:
            return []
        widths = self._extents(font or self._font)
        per_unit = length_px / (hi - lo)
        shown, right = [], [-np.inf] * lines
        for i, pos in enumerate(self.positions):
            if not lo - 0.5 <= pos <= hi + 0.5:
                continue
            centre, half = (pos - lo) * per_unit, widths[i] / 2
            line = len(shown) % lines
            if centre - half >= right[line]:
                shown.append(i)
                right[line] = centre + half
        return shown

    def fitted(self, length_px: float, lo: float, hi: float) -> tuple[QtGui.QFont, list[int]]:
        """(font, indices shown): the first way that shows every label in range, of: the set font, 0.9 of it,
        then (bottom axes) two lines at each size, then one line at the smaller sizes; else the smallest size on
        the most lines, with every label that clears the one before it."""
        key = (round(length_px, 1), lo, hi)
        if self._fit is None or self._fit[0] != key:
            in_range = int(np.sum((self.positions >= min(lo, hi) - 0.5) & (self.positions <= max(lo, hi) + 0.5)))
            fonts = list(scaled_fonts(self._font))
            tries = [(f, 1) for f in fonts[:2]]
            if self.orientation == "bottom":
                tries += [(f, 2) for f in fonts]
            else:
                tries += [(f, 1) for f in fonts[2:]]
            for font, lines in tries:
                shown = self.label_indices(length_px, lo, hi, font, lines)
                if len(shown) >= in_range:
                    break
            self._fit = (key, font, shown, lines)
        self.staggered = self._fit[3] == 2
        return self._fit[1], self._fit[2]

    def _length(self) -> float:
        return self.width() if self.orientation in ("bottom", "top") else self.height()

    def generateDrawSpecs(self, p):
        # the font is chosen here, before pyqtgraph measures and places the labels with it
        self.style["tickFont"] = self.fitted(self._length(), *self.range)[0]
        return super().generateDrawSpecs(p)

    def tickValues(self, minVal, maxVal, size):
        shown = self.fitted(size, minVal, maxVal)[1]
        return [(1.0, [float(self.positions[i]) for i in shown])] if shown else []

    def tickStrings(self, values, scale, spacing):
        out = []
        for j, v in enumerate(values):
            i = int(np.argmin(np.abs(self.positions - v))) if len(self.positions) else -1
            label = self.labels[i] if i >= 0 and abs(self.positions[i] - v) < 1e-6 else ""
            out.append("\n" + label if self.staggered and j % 2 else label)    # every other label one line lower
        return out

    def visible_labels(self) -> list[str]:
        """The labels drawn at the axis' current size (for tests and screenshots)."""
        lo, hi = self.range
        ticks = self.tickValues(lo, hi, self._length())
        return [t.lstrip("\n") for t in self.tickStrings(ticks[0][1], 1, 1)] if ticks else []


def style_plot(plot: pg.PlotItem, title: str = "", left: str | None = None, bottom: str | None = None,
               foreground: str = "k") -> None:
    """Large fonts, black text, no mouse zoom (a panel is read, not explored), a title."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=tick_font())
        axis.setPen(foreground)
        axis.setTextPen(foreground)
        axis.enableAutoSIPrefix(False)          # "μ (x0.001)" reads as a unit; keep the plain numbers
    if left:
        plot.setLabel("left", left, color=foreground, **{"font-size": f"{LABEL_PT}pt"})
    if bottom:
        plot.setLabel("bottom", bottom, color=foreground, **{"font-size": f"{LABEL_PT}pt"})
    set_title(plot, title, foreground)


def set_title(plot: pg.PlotItem, title: str, foreground: str = "k") -> None:
    if getattr(plot, "_shown_title", None) != title:
        plot._shown_title = title
        label = plot.titleLabel
        if not getattr(label, "_free_width", False):
            free_title_width(label)
        if getattr(plot, "_title_height", None) is None:
            plot.setTitle(title, color=foreground, size=f"{TITLE_PT}pt")
        else:       # PlotItem.setTitle would also reset the title row to 30 px, to be widened again: a relayout
            label.setText(title, color=foreground, size=f"{TITLE_PT}pt")
        h = max(30.0, label.itemRect().height())          # room for a two-line title
        if getattr(plot, "_title_height", None) != h:
            plot._title_height = h
            label.setMaximumHeight(h)
            plot.layout.setRowFixedHeight(0, h)


def free_title_width(label: pg.LabelItem) -> None:
    """A long title may overhang its plot, but must not widen it (LabelItem asks for its text's width)."""
    original = label.updateMin

    def update_min():
        original()
        label.setMinimumWidth(0)
        h = label.itemRect().height()
        label._sizeHint[QtCore.Qt.SizeHint.MinimumSize] = (0, h)
        label._sizeHint[QtCore.Qt.SizeHint.PreferredSize] = (0, h)
        label.updateGeometry()

    label.updateMin = update_min
    label._free_width = True


def legend(plot: pg.PlotItem, background: str, foreground: str, offset=(-10, 10)) -> pg.LegendItem:
    """A legend on an opaque box (readable over curves), in the upper right corner by default."""
    leg = plot.addLegend(offset=offset, labelTextColor=foreground, labelTextSize=f"{TICK_PT}pt",
                         brush=pg.mkBrush(QtGui.QColor(background if background != "w" else "#ffffff")),
                         pen=pg.mkPen(foreground, width=1))
    return leg


class PlotBox(pg.PlotWidget):
    """A PlotWidget with projector-sized fonts and a sensible minimum size."""

    def __init__(self, title: str = "", left: str | None = None, bottom: str | None = None,
                 axisItems: dict | None = None, min_height: int = 220):
        bg, fg = PLOT_BACKGROUND, PLOT_FOREGROUND      # in every theme, and whether or not the CLI set a theme
        super().__init__(background=bg, axisItems=axisItems or {})
        self.foreground, self.background = fg, bg
        # one paint of the whole view per frame: cheaper than several partial ones when every item changes
        self.setViewportUpdateMode(QtWidgets.QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setMinimumSize(260, min_height)
        self.item: pg.PlotItem = self.getPlotItem()
        style_plot(self.item, title, left, bottom, fg)
        # Axes of fixed size: when a new layer's numbers are wider, an auto-sized axis would re-lay the plot out
        # and paint it again. Token axes keep their automatic width (their labels change with the sentence only).
        metrics = QtGui.QFontMetrics(tick_font())
        if not isinstance(self.item.getAxis("left"), TokenAxis):
            self.item.getAxis("left").setWidth(metrics.horizontalAdvance("−0.000") + 2 * metrics.height())
        if bottom:   # token labels may take two staggered lines
            lines = 3.9 if isinstance(self.item.getAxis("bottom"), TokenAxis) else 2.9
            self.item.getAxis("bottom").setHeight(int(lines * metrics.height()))

    def sizeHint(self) -> QtCore.QSize:                 # QGraphicsView asks for 640 × 480: too tall for a dock
        return QtCore.QSize(max(self.minimumWidth(), 360), self.minimumHeight())

    # --- plots scrolled out of sight are brought up to date when they come into sight -------------------
    def defer(self, update, part: str = "data") -> None:
        """Run update() (which sets one part of this plot: its data, ranges and titles, or its colours) now if the
        plot can be seen, else just before it is next painted. A panel's plots below the fold of a scroll area
        then cost nothing at each view change. A plot outside any shown window (tests, pictures of background
        panels) is updated at once. The newest update of a part replaces an older one still waiting."""
        pending = self.__dict__.setdefault("_pending", {})
        if self._scrolled_out():
            pending[part] = update
        else:
            self.flush()
            update()

    def _scrolled_out(self) -> bool:
        """Whether a scroll area around this shown plot has scrolled it wholly out of its viewport."""
        if not self.isVisible():
            return False
        parent = self.parentWidget()
        while parent is not None:
            if isinstance(parent, QtWidgets.QAbstractScrollArea):
                viewport = parent.viewport()
                if viewport.isAncestorOf(self):
                    area = QtCore.QRect(self.mapTo(viewport, QtCore.QPoint(0, 0)), self.size())
                    return not area.intersects(viewport.rect())
            parent = parent.parentWidget()
        return False

    def flush(self) -> None:
        pending = self.__dict__.get("_pending")
        while pending:
            pending.pop(next(iter(pending)))()

    def paintEvent(self, event) -> None:
        self.flush()
        super().paintEvent(event)

    def set_title(self, title: str) -> None:
        set_title(self.item, title, self.foreground)

    @property
    def title(self) -> str:
        return getattr(self.item, "_shown_title", "")


class Heatmap(PlotBox):
    """A labelled matrix: rows and columns as token axes (or numbers), a colour bar, the value under the mouse."""

    def __init__(self, title: str, row_label: str, col_label: str, row_tokens: bool = True,
                 col_tokens: bool = True, colormap: str = SIGNED_COLORMAP, bar_label: str = "value",
                 min_height: int = 200):
        axes = {}
        if row_tokens:
            axes["left"] = TokenAxis("left")
        if col_tokens:
            axes["bottom"] = TokenAxis("bottom")
        super().__init__(title, row_label, col_label, axisItems=axes, min_height=min_height)
        self.item.invertY(True)                           # first token at the top
        self.image = pg.ImageItem(axisOrder="row-major")
        cmap = pg.colormap.get(colormap)
        self.image.setColorMap(cmap)
        self.item.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=cmap, interactive=False, width=14,
                                        colorMapMenu=False)
        self.colorbar.setImageItem(self.image, insert_in=self.item)
        self.colorbar.axis.setStyle(tickFont=tick_font())
        self.colorbar.axis.setTextPen(self.foreground)
        self.colorbar.axis.setPen(self.foreground)
        self.colorbar.axis.setLabel(bar_label, color=self.foreground, **{"font-size": f"{TICK_PT}pt"})
        self.shown: np.ndarray | None = None
        self.rows: list[str] = []
        self.cols: list[str] = []
        self._shape = None
        self.item.scene().sigMouseMoved.connect(self._hover)

    @property
    def row_axis(self) -> pg.AxisItem:
        return self.item.getAxis("left")

    @property
    def col_axis(self) -> pg.AxisItem:
        return self.item.getAxis("bottom")

    def show_matrix(self, matrix: np.ndarray, rows: list[str], cols: list[str] | None,
                    levels: tuple[float, float]) -> None:
        shown = np.asarray(matrix, dtype=np.float32)
        self.shown = shown
        lo, hi = float(levels[0]), float(levels[1])
        if not hi > lo:
            hi = lo + 1.0
        self.image.setImage(shown, levels=(lo, hi), autoLevels=False)
        self.colorbar.setLevels((lo, hi))
        n_rows, n_cols = shown.shape
        self.rows = list(rows)
        self.cols = list(cols) if cols is not None else [str(i) for i in range(n_cols)]
        if isinstance(self.row_axis, TokenAxis):
            self.row_axis.set_labels(self.rows)
        if isinstance(self.col_axis, TokenAxis):
            self.col_axis.set_labels(self.cols)
        if self._shape != shown.shape:
            self._shape = shown.shape
            self.image.setRect(QtCore.QRectF(-0.5, -0.5, n_cols, n_rows))
            self.item.setXRange(-0.5, n_cols - 0.5, padding=0)
            self.item.setYRange(-0.5, n_rows - 0.5, padding=0)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        if self.shown is None:
            return None
        p = self.item.vb.mapSceneToView(scene_pos)
        r, c = int(round(p.y())), int(round(p.x()))
        if 0 <= r < self.shown.shape[0] and 0 <= c < self.shown.shape[1]:
            return r, c
        return None

    def _hover(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos) if self.item.vb.sceneBoundingRect().contains(scene_pos) else None
        if cell is None:
            self.setToolTip("")
            return
        r, c = cell
        row = self.rows[r] if r < len(self.rows) else str(r)
        col = self.cols[c] if c < len(self.cols) else str(c)
        self.setToolTip(f"{row} × {col}: {float(self.shown[r, c]):.6g}")


def symmetric_levels(*arrays: np.ndarray) -> tuple[float, float]:
    m = max((float(np.nanmax(np.abs(a))) if np.size(a) else 0.0) for a in arrays)
    m = m if np.isfinite(m) and m > 0 else 1.0
    return -m, m


class ResponsiveGrid(QtWidgets.QScrollArea):
    """Plots in two columns when there is room, one column (scrolling) in a narrow dock.

    Items are (widget, wide): a wide widget takes a whole row in the two-column layout.
    """

    TWO_COLUMNS_FROM = 760    # pixels of width

    def __init__(self, items: list[tuple[QtWidgets.QWidget, bool]], parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.inner = QtWidgets.QWidget()
        self.grid = QtWidgets.QGridLayout(self.inner)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.setWidget(self.inner)
        self.items = items
        self.columns = 0
        self._arrange(2)

    def _arrange(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        for w, _ in self.items:
            self.grid.removeWidget(w)
        row = col = 0
        for w, wide in self.items:
            if columns == 1:
                self.grid.addWidget(w, row, 0)
                row += 1
                continue
            if wide:
                if col:
                    row, col = row + 1, 0
                self.grid.addWidget(w, row, 0, 1, 2)
                row += 1
            else:
                self.grid.addWidget(w, row, col)
                row, col = (row, 1) if col == 0 else (row + 1, 0)
        used = row + (1 if col else 0)
        for r in range(self.grid.rowCount()):
            self.grid.setRowStretch(r, 1 if r < used else 0)

    def resizeEvent(self, event) -> None:
        self._arrange(2 if event.size().width() >= self.TWO_COLUMNS_FROM else 1)
        super().resizeEvent(event)


def notice_label() -> QtWidgets.QLabel:
    """A warning line: bold, dark text on a pale orange band; hidden while empty."""
    label = QtWidgets.QLabel()
    label.setWordWrap(True)
    label.setTextFormat(QtCore.Qt.TextFormat.RichText)
    label.setStyleSheet("QLabel { background: #fde9c8; color: #5a3300; border: 1px solid #e69f00; "
                        "padding: 4px 8px; font-weight: bold; }")
    label.setVisible(False)
    return label


def header_label() -> SteadyLabel:
    """A panel's header line: rich text, wrapped, at least 12 pt, and 0.8 of the application's font size when that
    is larger (presentation mode: readable from the back, and the plot below keeps its room). It changes at every
    step or layer, so it is a SteadyLabel (rewriting it does not lay the window out again)."""
    return SteadyLabel(min_point_size=HEADER_PT, scale=HEADER_SCALE)


def settle_scenes(widget: QtWidgets.QWidget) -> None:
    """Apply the plots' new view ranges now, not when Qt paints them.

    pyqtgraph defers a range change to the start of the next paint; the transform it then changes marks the
    plot dirty again, so every range change cost two full paints. Likewise a plot whose axis grew is laid out
    again after its first paint. Settling both right after a render costs one paint.
    """
    for view in widget.findChildren(pg.GraphicsView):
        scene = view.scene()
        if scene is not None and view.isVisible():
            for item in scene.items():          # pending re-layouts (an axis grew) now, not after a first paint
                layout = QtWidgets.QGraphicsWidget.layout(item) if isinstance(item, QtWidgets.QGraphicsWidget) else None
                if layout is not None:        # (pyqtgraph items hide layout() behind a .layout attribute)
                    layout.activate()
            scene.prepareForPaint()
