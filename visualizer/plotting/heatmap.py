"""Heatmap: one matrix in a plot, rows and columns labelled with tokens (or numbers). The attention panel's
heads, the embeddings panel's matrices and every exported figure are drawn by it.

Cell (r, c) is centred on (c, r), as bar i of a bar chart is centred on i; row 0 is at the top. Masked cells
are NaN in the matrix and transparent pixels over a hatched background, so they never read as 0 (a NaN the model
computed, in a cell not masked, is cyan: colormaps.NAN_COLOUR). The image is
coloured here (packed RGBA pixels, see colormaps.packed_colours), not by pyqtgraph from a float image; the colour
bar shows the same levels and colour map.
"""
from __future__ import annotations

import math

import html

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .colormaps import COLORMAP, MASK_GREY, NAN_COLOUR, lookup_table, packed_colours, rgba_image
from .halo import HaloRect
from .text import TICK_PT, tick_font
from .titles import SMALLEST, hide_title, set_title
from .token_axis import TokenAxis

LABEL_MARGIN_PX = 4      # a QGraphicsTextItem's document margin, at each end of an axis label


def plain_numbers(plot: pg.PlotItem) -> None:
    """No SI prefix on any of a plot's four axes ("μ (x0.001)" reads as a unit). The hidden right and top axes
    too: with the prefix on, every range change typeset their empty labels again (no measurable time, though:
    benchmarks/gui_speed.py --views-only gives the same figures with and without)."""
    for name in ("left", "bottom", "right", "top"):
        plot.getAxis(name).enableAutoSIPrefix(False)


DIMMED = 0.3             # a stand-in matrix's opacity (see Heatmap.set_dimmed)


class Heatmap:
    """A PlotItem holding one matrix: image, hatch under masked cells, token axes, an optional highlighted row
    and colour bar. A view change gives it a new matrix: the image, axes and bar are reused, never rebuilt.

    font_size: tick labels at this size, axis labels 1 point and the title 2 points larger (None: the plot's
    fonts are left as they are). row_tokens / col_tokens: label that side with tokens, else with numbers."""

    def __init__(self, plot: pg.PlotItem, font_size: float | None = 11, labels: bool = True, foreground: str = "k",
                 row_label: str = "query (row)", col_label: str = "key (column)", row_tokens: bool = True,
                 col_tokens: bool = True, colormap: str = COLORMAP, padding: float = 0.01):
        self.plot = plot
        self.padding = padding           # around the matrix, as a fraction of its size
        axes = {}
        for side, wanted in (("left", row_tokens), ("bottom", col_tokens)):
            if wanted and not isinstance(plot.getAxis(side), TokenAxis):
                axes[side] = TokenAxis(side)
        if axes:
            plot.setAxisItems(axes)
        plot.setMenuEnabled(False)
        plot.invertY(True)                       # first query token at the top
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        self.foreground = foreground
        self.axis_labels = (row_label, col_label) if labels else None
        self.font = tick_font(font_size or TICK_PT)
        self.font_size = font_size
        self._title: str | None = None
        self._title_on = True
        self.marked = False                      # chosen among several: title in bold (set_marked)
        self._axis_title_points: float | None = None     # None: 1 point larger than the ticks
        plain_numbers(plot)                      # row and column numbers: never "dimension (x0.001)"
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
        if font_size is not None:
            self.set_font_size(font_size)
        self.hatch: QtWidgets.QGraphicsRectItem | None = None      # made when a matrix first has masked cells
        self.image = pg.ImageItem(axisOrder="row-major")     # RGBA pixels coloured by show_matrix
        self.colormap = colormap
        self.lut = lookup_table(colormap)
        plot.addItem(self.image)
        self.row_box = HaloRect(width=3)                 # the generation step's row
        self.row_box.setZValue(10)
        self.row_box.setVisible(False)
        plot.addItem(self.row_box)
        self.colorbar: pg.ColorBarItem | None = None
        self.cross: pg.PlotCurveItem | None = None    # a cross over the matrix (a head switched off), made on demand
        self._values: np.ndarray | None = None   # the matrix on screen (see shown)
        self._mask: np.ndarray | None = None     # where attention is allowed (None: everywhere)
        self._shown: np.ndarray | None = None    # _values with NaN where masked, made when asked for
        self._pixels: tuple[int, int] | None = None    # the image's size (smaller than the matrix when pooled)
        self.max_pixels: int | None = None
        self.rows: list[str] = []
        self.cols: list[str] = []
        self.levels: tuple[float, float] | None = None
        self._shape = None
        self.zoomable = False                   # the wheel zooms and a drag pans (set_zoomable)
        self._max_labels = None
        self._row: int | None = None

    # --- parts ----------------------------------------------------------------------------------
    def add_colorbar(self, label: str, width: int = 16, font: QtGui.QFont | None = None) -> pg.ColorBarItem:
        """A colour bar beside the plot (inside its layout), following the image's levels and colour map."""
        bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(self.colormap), interactive=False,
                              width=width, colorMapMenu=False)
        bar.setImageItem([], insert_in=self.plot)     # no image to control: its levels are set with the matrix'
        plain_numbers(bar)                            # a ColorBarItem is a PlotItem: its axes as the plot's
        self.colorbar, self.colorbar_label = bar, label
        self._colorbar_label_on = True
        self._colorbar_ticks = 6                      # the most numbers the bar has room for (_fit_colorbar_ticks)
        if self.levels is not None:
            bar.setLevels(self.levels)
            bar.axis.setTicks(colour_ticks(*self.levels, self._colorbar_ticks))
        # a tick per labelled value and one between: pyqtgraph's third level adds some 40 faint ticks that cost
        # 5 ms a paint (the bar's numbers change with every layer and head)
        bar.axis.setStyle(maxTickLevel=1)
        bar.axis.setTextPen(self.foreground)
        bar.axis.setPen(self.foreground)
        self.set_colorbar_font(font or self.font)
        # a shorter plot: fitted again once the layout has settled (a new label during the layout's pass made the
        # window taller than the screen); the axis as the timer's context: no call once it is deleted
        axis = bar.getAxis("left")
        axis.geometryChanged.connect(lambda: QtCore.QTimer.singleShot(0, axis, self._fit_colorbar))
        return bar

    def _fit_colorbar(self) -> None:
        self._fit_colorbar_label()
        self._fit_colorbar_ticks()

    def _fit_colorbar_ticks(self) -> None:
        """As many numbers on the bar as its height holds, a line and a gap each (6 at most): a short plot at a
        class's text size drew "0.925 0.8 0.6 0.4 0.2 0" on top of each other (Compare runs at 1080p, QA)."""
        bar = self.colorbar
        height, font = bar.getAxis("left").height(), bar.axis.style["tickFont"] or self.font
        if height <= 0 or font is None:               # not laid out yet
            return
        most = int(min(6, max(2, height // (1.6 * QtGui.QFontMetricsF(font).height()))))
        if most != self._colorbar_ticks:
            self._colorbar_ticks = most
            if self.levels is not None:
                bar.axis.setTicks(colour_ticks(*self.levels, most))

    def set_colorbar_font(self, font: QtGui.QFont, label_points: float | None = None) -> None:
        """The colour bar's numbers at font, its label (beside the bar) at label_points (default: the same)."""
        bar = self.colorbar
        bar.axis.setTickFont(font)
        bar.axis.setWidth(int(QtGui.QFontMetricsF(font).horizontalAdvance("−0.000")) + 14)
        self._fit_colorbar_ticks()
        if not self._title_on:
            hide_title(self.plot, keep=self._top_room())
        self._colorbar_points = label_points or font.pointSizeF()
        self._colorbar_label_pt = None
        self._fit_colorbar_label()

    def _fit_colorbar_label(self) -> None:
        """The bar's label at its set size, or smaller (to SMALLEST of it) where the bar is shorter than the label: a
        short plot (a 720-line projector in presentation mode) cut "attention weight" to "attention weigh"."""
        axis = self.colorbar.getAxis("left")
        points = self._colorbar_points
        room = axis.height() - 2 * LABEL_MARGIN_PX
        if self._colorbar_label_pt and room > 0:
            # the label as drawn (its rich text's font), scaled from the size it has now to the size it is set at
            drawn = axis.label.boundingRect().width() - 2 * LABEL_MARGIN_PX
            natural = drawn * points / self._colorbar_label_pt
            if room < natural:
                points = max(SMALLEST * points, points * room / natural)
        points = round(points, 1)
        if points != self._colorbar_label_pt:
            self._colorbar_label_pt = points
            axis.setLabel(self.colorbar_label, color=self.foreground, **{"font-size": f"{points:g}pt"})
            axis.showLabel(self._colorbar_label_on)

    def show_colorbar_label(self, on: bool) -> None:
        """The colour bar's label beside it, or its numbers alone (a narrow panel gives the matrix the room)."""
        self._colorbar_label_on = on
        if self.colorbar is not None:
            self.colorbar.getAxis("left").showLabel(on)

    def _hatch(self) -> QtWidgets.QGraphicsRectItem:
        if self.hatch is None:
            self.hatch = QtWidgets.QGraphicsRectItem()
            self.hatch.setBrush(QtGui.QBrush(QtGui.QColor(MASK_GREY), QtCore.Qt.BrushStyle.BDiagPattern))
            self.hatch.setPen(pg.mkPen(None))
            self.hatch.setZValue(-10)
            self.hatch.setVisible(False)
            self.plot.addItem(self.hatch)
            if self._shape is not None:
                self.hatch.setRect(self._cells())
        return self.hatch

    def _cells(self) -> QtCore.QRectF:
        n_rows, n_cols = self._shape
        return QtCore.QRectF(-0.5, -0.5, n_cols, n_rows)

    # --- style ----------------------------------------------------------------------------------
    def set_colormap(self, name: str) -> None:
        """The colour map of the image and of its colour bar."""
        self.colormap = name
        self.lut = lookup_table(name)
        if self._values is not None:
            self._colour()
        if self.colorbar is not None:
            self.colorbar.setColorMap(pg.colormap.get(name))

    def set_font_size(self, points: float) -> None:
        """Tick labels at this size, axis labels 1 point and the title 2 points larger (projectors, presentation
        mode)."""
        self.font_size = points
        self.font = tick_font(points)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setTickFont(self.font)
        self._set_axis_titles()
        if self._title is not None:
            self.set_title(self._title)

    def set_axis_title_points(self, points: float | None) -> None:
        """The axis titles ("query (row)", "key (column)") at this size; None: 1 point larger than the ticks."""
        if points != self._axis_title_points:
            self._axis_title_points = points
            self._set_axis_titles()

    def _set_axis_titles(self) -> None:
        if self.axis_labels and self.font_size is not None:
            points = self._axis_title_points or self.font_size + 1
            style = {"color": self.foreground, "font-size": f"{points:g}pt"}
            self.plot.setLabel("left", self.axis_labels[0], **style)
            self.plot.setLabel("bottom", self.axis_labels[1], **style)

    def set_title(self, title: str) -> None:
        """The title (plain text), 2 points larger than the tick labels, in bold while marked (set_marked); kept
        while the title is hidden."""
        self._title = title
        if self._title_on:
            text = html.escape(title)
            set_title(self.plot, f"<b>{text}</b>" if self.marked else text, self.foreground,
                      (self.font_size or TICK_PT) + 2)

    def set_marked(self, on: bool) -> None:
        """Mark the plot as the one chosen among several: its title in bold, as well as its frame in colour (the
        focused head's small heatmap had its red frame alone, which red-green colour blindness loses: QA)."""
        if on != self.marked:
            self.marked = on
            if self._title is not None:
                self.set_title(self._title)

    def _top_room(self) -> float:
        """The title row's height while the title is hidden: the colour bar's top number stands half above the
        bar, and was cut by the view's edge ("0.974" in class, QA as a teacher)."""
        if self.colorbar is None:
            return 0.0
        return QtGui.QFontMetricsF(self.colorbar.axis.style["tickFont"] or self.font).height() / 2 + 1

    def show_title(self, on: bool) -> None:
        """Hide the title (and its row) where the room is better spent on the matrix; the text is kept."""
        if on == self._title_on:
            return
        self._title_on = on
        if not on:
            hide_title(self.plot, keep=self._top_room())
        elif self._title is not None:
            self.set_title(self._title)

    # --- data -----------------------------------------------------------------------------------
    def show_matrix(self, matrix: np.ndarray, mask: np.ndarray | None = None, rows: list[str] | None = None,
                    cols: list[str] | None = None, title: str | None = None, levels: tuple[float, float] = (0.0, 1.0),
                    max_labels: int | None = None, max_row_labels: int | None = None,
                    max_pixels: int | None = None, pixels: np.ndarray | None = None) -> None:
        """matrix (rows × cols) with NaN where mask is False; at most max_labels token labels per axis (0: none;
        None: as many as fit), fewer when they would overlap. rows / cols: the token (or number) of each row and
        column (default: 0, 1, 2, …). A new matrix of the same shape and labels changes only the image.
        max_pixels: a matrix with more rows or columns than this is drawn max-pooled to at most that many pixels
        a side (each pixel the largest value of its block, masked only when all of it is): a thumbnail of 512
        tokens keeps its peaks and costs a sixteenth of the colouring. pixels: the image coloured() gives for
        exactly these arguments, made beforehand (see panels/thumbnails.py), else it is coloured here."""
        values = np.asarray(matrix, dtype=np.float32)       # never written: the NaN copy is made when asked for
        masked = mask is not None and not np.all(mask)
        self._values, self._mask, self._shown = values, (np.asarray(mask, dtype=bool) if masked else None), None
        self.max_pixels = max_pixels
        lo, hi = float(levels[0]), float(levels[1])
        if not hi > lo:
            hi = lo + 1.0
        self.levels = (lo, hi)
        if masked or self.hatch is not None:
            self._hatch().setVisible(masked)     # a pattern fill costs paint time: only when masked
        n_rows, n_cols = values.shape
        shape_changed = self._shape != (n_rows, n_cols)
        self._shape = (n_rows, n_cols)
        self._colour(shape_changed, pixels)
        if self.colorbar is not None and self.colorbar.levels() != self.levels:
            self.colorbar.setLevels(self.levels)
            self.colorbar.axis.setTicks(colour_ticks(lo, hi, self._colorbar_ticks))
        rows = list(rows) if rows is not None else [str(i) for i in range(n_rows)]
        cols = list(cols) if cols is not None else [str(i) for i in range(n_cols)]
        if shape_changed:
            if self.hatch is not None:
                self.hatch.setRect(self._cells())
            if self.zoomable:
                self._zoom_limits()
            self.show_whole()
            if self.row_box.isVisible():
                self.highlight_row(self._row)
            if self.crossed:
                self.set_crossed(True)
        if rows != self.rows or cols != self.cols or (max_labels, max_row_labels) != self._max_labels:
            self.rows, self.cols, self._max_labels = rows, cols, (max_labels, max_row_labels)
            for side, labels, most in (("left", rows, max_labels if max_row_labels is None else max_row_labels),
                                       ("bottom", cols, max_labels)):
                axis = self.plot.getAxis(side)
                if isinstance(axis, TokenAxis):
                    axis.set_labels(labels, max_labels=most)
        if title is not None and title != self._title:
            self.set_title(title)               # setting a title relays out the plot: only when it changes

    # --- zoom (the attention panel's focused head) ---------------------------------------------------------
    def set_zoomable(self, on: bool) -> None:
        """The wheel zooms in on the matrix and a drag pans it, within the matrix and down to a few cells: a
        128-token head had a pixel a cell, and hitting one to read it was guesswork (QA). A new shape shows it
        whole; another head or step of the same shape keeps the zoom."""
        self.zoomable = on
        self.plot.setMouseEnabled(x=on, y=on)
        if on:
            self._zoom_limits()

    def _zoom_limits(self) -> None:
        rows, cols = self._shape if self._shape is not None else (1, 1)
        pad_x, pad_y = self.padding * cols, self.padding * rows
        self.plot.vb.setLimits(xMin=-0.5 - pad_x, xMax=cols - 0.5 + pad_x, yMin=-0.5 - pad_y,
                               yMax=rows - 0.5 + pad_y, minXRange=min(cols, 4), minYRange=min(rows, 4))

    @property
    def zoomed(self) -> bool:
        """Whether part of the matrix is out of view (the wheel zoomed in)."""
        if self._shape is None:
            return False
        (x0, x1), (y0, y1) = self.plot.vb.viewRange()
        rows, cols = self._shape
        return x0 > -0.5 + 1e-6 or x1 < cols - 0.5 - 1e-6 or y0 > -0.5 + 1e-6 or y1 < rows - 0.5 - 1e-6

    def show_whole(self) -> None:
        """The whole matrix in view (again), both ranges at once: one range change, one update of the axes."""
        if self._shape is not None:
            rows, cols = self._shape
            self.plot.vb.setRange(xRange=(-0.5, cols - 0.5), yRange=(-0.5, rows - 0.5), padding=self.padding)

    def zoom_by(self, factor: float, cell: tuple[int, int] | None = None) -> None:
        """The view's size times factor (0.5: twice as close), around a cell or the view's middle, within the
        matrix (the limits set_zoomable gave)."""
        vb = self.plot.vb
        centre = QtCore.QPointF(cell[1], cell[0]) if cell is not None else vb.viewRect().center()
        vb.scaleBy(s=(factor, factor), center=centre)

    def show_cell(self, row: int, col: int) -> None:
        """A zoomed view moved so that the cell (row, col) is in it (the arrow keys read one out of view)."""
        (x0, x1), (y0, y1) = self.plot.vb.viewRange()
        dx = min(0.0, col - 0.5 - x0) + max(0.0, col + 0.5 - x1)
        dy = min(0.0, row - 0.5 - y0) + max(0.0, row + 0.5 - y1)
        if dx or dy:
            self.plot.vb.setRange(xRange=(x0 + dx, x1 + dx), yRange=(y0 + dy, y1 + dy), padding=0)

    def mark_labels(self, rows=(), cols=()) -> None:
        """Underline the labels of these rows and columns in the warning colour (a rare word's pieces)."""
        for side, indices in (("left", rows), ("bottom", cols)):
            axis = self.plot.getAxis(side)
            if isinstance(axis, TokenAxis):
                axis.set_marked(indices)

    @property
    def shown(self) -> np.ndarray | None:
        """The matrix on screen (rows × cols, float32), NaN where masked."""
        if self._shown is None and self._values is not None:
            shown = np.array(self._values)
            if self._mask is not None:
                shown[~self._mask] = np.nan
            self._shown = shown
        return self._shown

    def is_masked(self, row: int, col: int) -> bool:
        """Whether the cell is masked (a NaN at a cell not masked is one the model computed)."""
        return self._mask is not None and not bool(self._mask[row, col])

    def _colour(self, reshaped: bool = False, pixels: np.ndarray | None = None) -> None:
        """The image's pixels (given, or coloured now) from the matrix, its mask, levels and colour map."""
        if pixels is None:
            pixels = coloured(self._values, self._mask, self.levels, self.lut, self.max_pixels)
        self.image.setImage(pixels, autoLevels=False)
        if reshaped or pixels.shape[:2] != self._pixels:
            self._pixels = pixels.shape[:2]
            self.image.setRect(self._cells())    # the image's pixels span the cells, pooled or not

    def cell_pixels(self) -> np.ndarray:
        """Every cell's colour (rows × cols × RGBA, masked cells transparent), never pooled: for vector exports."""
        return coloured(self._values, self._mask, self.levels, self.lut, None)

    def highlight_row(self, row: int | None) -> None:
        """A frame around one row (the generation step's), whose label is always drawn; None or a row outside the
        matrix: no frame."""
        self._row = row
        shown = row is not None and self._shape is not None and 0 <= row < self._shape[0]
        axis = self.plot.getAxis("left")
        if isinstance(axis, TokenAxis):
            axis.set_keep(row if shown else None)     # the framed row keeps its label when others are left out
        if not shown:
            self.row_box.setVisible(False)
            return
        self.row_box.setRect(QtCore.QRectF(-0.5, row - 0.5, self._shape[1], 1))
        self.row_box.setVisible(True)

    def labels_hidden(self) -> bool:
        """Whether some row or column has no label at the axes' present size (TokenAxis thinned them)."""
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            labels = getattr(axis, "labels", None)
            if not labels or axis.max_labels == 0 or not axis.isVisible():
                continue
            lo, hi = sorted(axis.range)          # zoomed in: the rows and columns in view (QA: every one in view had
            in_view = sum(lo - 0.5 <= p <= hi + 0.5 for p in axis.positions)   # its label, and the hint said not;
            # the rows' range comes high to low, the axis inverted, and had counted none: QA)
            if len(axis.visible_labels()) < min(len(labels), in_view):
                return True
        return False

    @property
    def dimmed(self) -> bool:
        return self.image.opacity() < 1

    def set_dimmed(self, on: bool) -> None:
        """Faded cells: the matrix stands in for a stage that has no attention of its own (a feed-forward
        sublayer, the embedding, the output layer), and must not read as that stage's."""
        self.image.setOpacity(DIMMED if on else 1.0)
        if self.hatch is not None:
            self.hatch.setOpacity(DIMMED if on else 1.0)
        if self.colorbar is not None:       # its colours as faded as the cells', so that they still read off it
            self.colorbar.bar.setOpacity(DIMMED if on else 1.0)

    @property
    def crossed(self) -> bool:
        return self.cross is not None and self.cross.isVisible()

    def set_crossed(self, on: bool) -> None:
        """Two diagonals over the whole matrix: the head it shows is switched off (ablated)."""
        if not on:
            if self.cross is not None:
                self.cross.setVisible(False)
            return
        if self.cross is None:
            self.cross = pg.PlotCurveItem(pen=pg.mkPen("#d62728", width=2.5), connect="pairs")
            self.cross.setZValue(20)
            self.plot.addItem(self.cross)
        n_rows, n_cols = self._shape or (1, 1)
        x0, x1, y0, y1 = -0.5, n_cols - 0.5, -0.5, n_rows - 0.5
        self.cross.setData(np.array([x0, x1, x1, x0]), np.array([y0, y1, y0, y1]))
        self.cross.setVisible(True)

    @property
    def framed_row(self) -> int | None:
        """The row framed as the generation step's (highlight_row), or None."""
        return self._row

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """(row, column) under a scene position, or None outside the matrix."""
        if self._shape is None:
            return None
        p = self.plot.vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(p.y() + 0.5)), int(np.floor(p.x() + 0.5))
        if 0 <= r < self._shape[0] and 0 <= c < self._shape[1]:
            return r, c
        return None


def colour_ticks(lo: float, hi: float, most: int = 6) -> list[list[tuple[float, str]]]:
    """The colour bar's ticks (pyqtgraph's setTicks): the two ends of the scale themselves and round values between,
    so that a head coloured 0 … 0.39 says 0.39 at the top of its bar (its round ticks stopped at 0.35), and a
    scale −0.5 … 0.5 (a difference of two runs) says 0."""
    span = hi - lo
    if not span >= 1e-3:                              # an all-zero matrix's scale: its two ends
        return [[(lo, f"{lo:.2g}"), (hi, f"{hi:.2g}")], []]
    raw = span / (most - 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if round(step / mag, 6) == 2.5 else 0)

    def label(v: float) -> str:
        if abs(v) < 1e-12:
            return "0"
        text = f"{v:.{decimals}f}"
        if abs(float(text) - v) < 1e-9:
            return text
        # an end between round values: up to 3 decimals (0.998 read "1." when cut to 2 and stripped of its 0s)
        return f"{v:.3f}".rstrip("0").rstrip(".")

    first = math.ceil(lo / step - 1e-9)
    inner = [i * step for i in range(first, math.floor(hi / step + 1e-9) + 1)]
    inner = [v for v in inner if v - lo > 0.12 * span and hi - v > 0.12 * span]   # not on an end's label
    minor = [v + step / 2 for v in [inner[0] - step] + inner if lo < v + step / 2 < hi] if inner else []
    return [[(lo, label(lo))] + [(v, label(v)) for v in inner] + [(hi, label(hi))], [(v, "") for v in minor]]


def coloured(values: np.ndarray, mask: np.ndarray | None, levels: tuple[float, float], lut: np.ndarray,
             max_pixels: int | None = None) -> np.ndarray:
    """The rows × columns × RGBA uint8 image of a matrix: levels through lut, max-pooled past max_pixels, masked
    cells (mask False) transparent, over the heatmap's hatch."""
    values, mask = max_pooled(values, mask, max_pixels)
    packed = packed_colours(values, *levels, lut, nan=False)      # its NaN cells coloured here, in one pass
    if mask is not None:
        packed *= mask
    # a NaN the model computed is no masked cell (QA: it was drawn over the hatch, and read "masked")
    not_a_number = np.isnan(values) if mask is None else np.isnan(values) & mask
    if not_a_number.any():
        packed[not_a_number] = np.array(NAN_COLOUR, dtype=np.uint8).view(np.uint32)[0]
    return rgba_image(packed)


def max_pooled(values: np.ndarray, mask: np.ndarray | None, most: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, mask) as they are when both sides have at most `most` cells (or most is None), else max-pooled in
    blocks to at most `most` a side: each block's largest allowed value, allowed where any of its cells is."""
    if most is None or max(values.shape) <= most:
        return values, mask
    R, C = values.shape
    fr, fc = -(-R // most), -(-C // most)
    v = values if mask is None else np.where(mask, values, np.float32(-np.inf))
    # rows first, then the columns as the rows of the transposed result: the maximum of strided row slices reads
    # whole contiguous rows (far quicker than a reduction over a short axis, or over strided columns)
    pooled = np.ascontiguousarray(_row_maxima(np.ascontiguousarray(_row_maxima(v, fr).T), fc).T)
    if mask is None:
        return pooled, None
    allowed = pooled != -np.inf           # a block holding a NaN the model computed is allowed (NaN > -inf is False)
    pooled[~allowed] = 0.0
    return pooled, (None if allowed.all() else allowed)


def _row_maxima(a: np.ndarray, f: int) -> np.ndarray:
    """Each block of f consecutive rows of a reduced to its elementwise maximum (the last block may be shorter)."""
    out = a[0::f].copy()
    for i in range(1, f):
        part = a[i::f]
        np.maximum(out[:part.shape[0]], part, out=out[:part.shape[0]])
    return out
