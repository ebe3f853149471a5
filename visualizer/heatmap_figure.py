"""Heatmaps with token labels (pyqtgraph): the plot used by the attention panel and by exported figures.

Masked cells are NaN in the image (transparent) over a hatched background, so they never read as 0.
"""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

COLORMAP = "viridis"   # perceptually uniform and colour-blind safe


def token_ticks(tokens: list[str], max_labels: int = 60) -> list[tuple[float, str]]:
    """Tick positions at cell centres; thinned out when there are too many to read."""
    step = max(1, int(np.ceil(len(tokens) / max_labels)))
    return [(i + 0.5, t) for i, t in enumerate(tokens) if i % step == 0]


def short_token(token: str, limit: int = 12) -> str:
    """A token as an axis label: control characters made visible, long pieces cut with an ellipsis."""
    text = "".join(ch if ch.isprintable() else "·" for ch in str(token))
    return text if len(text) <= limit else text[: limit - 1] + "…"


LABEL_SCALES = (1.0, 0.9, 0.8, 0.7)   # token labels are drawn this much smaller before any is left out


def scaled_fonts(base: QtGui.QFont):
    """base at each of LABEL_SCALES of its size, largest first (base alone if it has no point size)."""
    size = base.pointSizeF()
    for scale in LABEL_SCALES if size > 0 else (1.0,):
        font = QtGui.QFont(base)
        if size > 0:
            font.setPointSizeF(size * scale)
        yield font


class TokenAxis(pg.AxisItem):
    """Token labels at cell centres (i + 0.5); only every k-th one, k chosen at paint time from the axis length in
    pixels, so that labels never overlap however many tokens there are or however large the font. Before it leaves
    any label out, a bottom axis staggers its labels on two lines, and either axis draws them smaller (down to
    SMALLEST of the set size): a row without its token cannot be read at all, a smaller one can."""

    SMALLEST = LABEL_SCALES[-1]

    def __init__(self, orientation: str, **kwargs):
        super().__init__(orientation, **kwargs)
        # the first and last labels may reach past the axis ends (into the corner); the thinning prevents overlaps
        self.setStyle(hideOverlappingLabels=False)
        self.enableAutoSIPrefix(False)     # token positions: never "query (row) (x0.001)" on an empty plot
        self.tokens: list[str] = []
        self.max_labels = 60
        self.shown_step = 1
        self.staggered = False
        self.base_font = QtGui.QFont()     # the size set by setTickFont; the labels may be drawn smaller
        self._fit: tuple | None = None     # (length, (font, step, staggered)): painting asks twice per paint

    def setTickFont(self, font: QtGui.QFont | None) -> None:
        self.base_font = QtGui.QFont(font) if font is not None else QtGui.QFont()
        self._fit = None
        super().setTickFont(font)

    def set_tokens(self, tokens: list[str], max_labels: int = 60) -> None:
        self.tokens = [short_token(t) for t in tokens]
        self.max_labels = max_labels
        self._fit = None
        self.picture = None
        self.update()

    def label_step(self, length_px: float, font: QtGui.QFont | None = None) -> tuple[int, bool]:
        """(every how many cells a label fits along length_px at font, on two staggered lines or not); labels of
        neighbouring shown cells must not touch."""
        n = len(self.tokens)
        if n == 0 or self.max_labels <= 0:
            return 0, False
        fm = QtGui.QFontMetricsF(font or self.base_font)
        per_cell = max(length_px, 1.0) / n
        least = int(np.ceil(n / self.max_labels))
        if self.orientation in ("left", "right"):
            return max(1, least, int(np.ceil(fm.height() * 1.05 / per_cell))), False
        widths = [fm.horizontalAdvance(t) for t in self.tokens]
        gap = fm.horizontalAdvance(" ") + 2

        def fits(step: int, lines: int) -> bool:
            shown = list(range(0, n, step))
            return all((widths[a] + widths[b]) / 2 + gap <= (b - a) * per_cell
                       for a, b in zip(shown, shown[lines:]))

        for step in range(max(1, least), n + 1):
            for lines in (1, 2):
                if fits(step, lines):
                    return step, lines == 2
        return n, True

    def fitted(self, length_px: float) -> tuple[QtGui.QFont, int, bool]:
        """(font, step, staggered): the set font if it shows every label it may, else the largest smaller size
        (to SMALLEST of it) that does, else SMALLEST with every k-th label."""
        key = round(length_px, 1)
        if self._fit is None or self._fit[0] != key:
            least = max(1, int(np.ceil(len(self.tokens) / max(self.max_labels, 1))))
            for font in scaled_fonts(self.base_font):
                step, staggered = self.label_step(length_px, font)
                if step <= least:
                    break
            self._fit = (key, (font, step, staggered))
        return self._fit[1]

    def generateDrawSpecs(self, p):
        # the font is chosen here, before pyqtgraph measures and places the labels with it
        lo, hi = self.range
        size = self.geometry().height() if self.orientation in ("left", "right") else self.geometry().width()
        font, _, _ = self.fitted(size * len(self.tokens) / max(abs(hi - lo), 1e-9))
        self.style["tickFont"] = font
        return super().generateDrawSpecs(p)

    def tickValues(self, minVal, maxVal, size):
        _, step, self.staggered = self.fitted(size * len(self.tokens) / max(abs(maxVal - minVal), 1e-9))  # inverted too
        self.shown_step = step
        if not step:
            return [(1.0, [])]
        return [(float(step), [i + 0.5 for i in range(0, len(self.tokens), step)])]

    def _updateMaxTextSize(self, x):
        # pyqtgraph measures tick text at 0.8 of its height: enough room for one line, but two staggered lines
        # then overlap the axis title by a third of a line. Reserve their full height.
        if self.staggered and self.orientation in ("bottom", "top"):
            x = x / 0.8
        return super()._updateMaxTextSize(x)

    def tickStrings(self, values, scale, spacing):
        out = []
        for j, v in enumerate(values):
            label = self.tokens[int(v)] if 0 <= int(v) < len(self.tokens) else ""
            out.append("\n" + label if self.staggered and j % 2 else label)    # every other label one line lower
        return out


class ShrinkableLabel(pg.LabelItem):
    """A plot title that does not force its plot to be as wide as the text (long titles, big fonts)."""

    def updateMin(self):
        super().updateMin()
        self.setMinimumWidth(0)
        self._sizeHint[QtCore.Qt.SizeHint.MinimumSize] = (0, self._sizeHint[QtCore.Qt.SizeHint.MinimumSize][1])
        self.updateGeometry()


def shrinkable_title(plot: pg.PlotItem) -> None:
    """Swap the plot's title label for a ShrinkableLabel in the same place of its layout."""
    old = plot.titleLabel
    plot.layout.removeItem(old)
    old.setParentItem(None)
    if old.scene() is not None:
        old.scene().removeItem(old)
    plot.titleLabel = ShrinkableLabel("", size="11pt", parent=plot)
    plot.layout.addItem(plot.titleLabel, 0, 1)
    plot.setTitle(None)


def hatch_brush(color: str = "#9a9a9a") -> QtGui.QBrush:
    return QtGui.QBrush(QtGui.QColor(color), QtCore.Qt.BrushStyle.BDiagPattern)


def encode_png(image: QtGui.QImage) -> bytes:
    """PNG bytes; Qt's quality 80 is zlib at a moderate level: twice as fast as the default, files ~20% larger."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG", 80):
        raise RuntimeError("Qt could not encode the PNG")
    return bytes(buf.data())


class HeatmapPlot:
    """A PlotItem holding one matrix: image, hatch under masked cells, token ticks, optional highlighted row."""

    def __init__(self, plot: pg.PlotItem, font_size: int = 11, labels: bool = True, foreground: str = "k",
                 row_label: str = "query (row)", col_label: str = "key (column)"):
        self.plot = plot
        plot.setAxisItems({"left": TokenAxis("left"), "bottom": TokenAxis("bottom")})
        shrinkable_title(plot)
        plot.setMenuEnabled(False)
        plot.invertY(True)                       # first query token at the top
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        self.font = QtGui.QFont()
        self._title_text: str | None = None
        self.font_size = font_size
        self.axis_labels = (row_label, col_label) if labels else None
        self.foreground = foreground
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
        self.set_font_size(font_size)
        self.hatch = QtWidgets.QGraphicsRectItem()
        self.hatch.setBrush(hatch_brush())
        self.hatch.setPen(pg.mkPen(None))
        self.hatch.setZValue(-10)
        plot.addItem(self.hatch)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.colormap.get(COLORMAP))
        plot.addItem(self.image)
        self.row_box = QtWidgets.QGraphicsRectItem()
        self.row_box.setPen(pg.mkPen("#ff3b30", width=3))
        self.row_box.setZValue(10)
        self.row_box.setVisible(False)
        plot.addItem(self.row_box)
        self.shown: np.ndarray | None = None     # the array on screen, NaN where masked
        self.rows: list[str] = []
        self.cols: list[str] = []
        self._shape = None
        self._title_text: str | None = None

    def set_colormap(self, name: str) -> None:
        self.image.setColorMap(pg.colormap.get(name))

    def set_font_size(self, points: float) -> None:
        """Tick labels at this size, axis labels and the title a little larger (projectors, presentation mode)."""
        self.font_size = points
        self.font.setPointSizeF(points)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setTickFont(self.font)
        if self.axis_labels:
            style = {"color": self.foreground, "font-size": f"{points + 1:g}pt"}
            self.plot.setLabel("left", self.axis_labels[0], **style)
            self.plot.setLabel("bottom", self.axis_labels[1], **style)
        if self._title_text is not None:
            self._set_title(self._title_text)

    def show_title(self, on: bool) -> None:
        """Hide the title (and its row) where the room is better spent on the matrix; the text is kept."""
        if on != getattr(self, "_title_on", True):
            self._title_on = on
            if self._title_text is not None:
                self._set_title(self._title_text)

    def _set_title(self, title: str) -> None:
        self._title_text = title
        if not getattr(self, "_title_on", True):
            self.plot.titleLabel.setVisible(False)
            self.plot.titleLabel.setMaximumHeight(0)
            self.plot.layout.setRowFixedHeight(0, 0)
            return
        self.plot.setTitle(html.escape(title), color=self.foreground, size=f"{self.font_size + 2:g}pt")
        font = QtGui.QFont(self.font)
        font.setPointSizeF(self.font_size + 2)
        height = int(QtGui.QFontMetricsF(font).height() * 1.3) + 4   # pyqtgraph fixes 30 px: too little for big text
        self.plot.titleLabel.setMaximumHeight(height)
        self.plot.layout.setRowFixedHeight(0, height)

    def show_matrix(self, matrix: np.ndarray, mask: np.ndarray | None, rows: list[str], cols: list[str],
                    title: str | None = None, levels: tuple[float, float] = (0.0, 1.0), max_labels: int = 60,
                    max_row_labels: int | None = None) -> None:
        """matrix (rows × cols) with NaN where mask is False; at most max_labels token labels per axis (0: none),
        fewer when they would overlap. The title is 2 points larger than the tick labels."""
        shown = np.asarray(matrix, dtype=np.float32).copy()
        if mask is not None:
            shown[~np.asarray(mask, dtype=bool)] = np.nan
        self.shown = shown
        self.hatch.setVisible(bool(np.isnan(shown).any()))    # a pattern fill costs paint time: only when masked
        self.image.setImage(shown, levels=levels, autoLevels=False)
        Tq, Tk = shown.shape
        if self._shape != (Tq, Tk) or self.rows != rows or self.cols != cols:
            self._shape, self.rows, self.cols = (Tq, Tk), list(rows), list(cols)
            self.image.setRect(QtCore.QRectF(0, 0, Tk, Tq))
            self.hatch.setRect(QtCore.QRectF(0, 0, Tk, Tq))
            self.plot.getAxis("bottom").set_tokens(cols, max_labels)
            self.plot.getAxis("left").set_tokens(rows, max_labels if max_row_labels is None else max_row_labels)
            self.plot.setXRange(0, Tk, padding=0.01)
            self.plot.setYRange(0, Tq, padding=0.01)
        if title is not None and title != self._title_text:
            self._set_title(title)               # setting a title relays out the plot: only when it changes

    def highlight_row(self, row: int | None) -> None:
        if row is None or self.shown is None or not 0 <= row < self.shown.shape[0]:
            self.row_box.setVisible(False)
            return
        self.row_box.setRect(QtCore.QRectF(0, row, self.shown.shape[1], 1))
        self.row_box.setVisible(True)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """(row, column) under a scene position, or None outside the matrix."""
        if self.shown is None:
            return None
        p = self.plot.vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        if 0 <= r < self.shown.shape[0] and 0 <= c < self.shown.shape[1]:
            return r, c
        return None


class HeatmapFigure:
    """A stand-alone figure for export: title, labelled axes, colour bar; rendered offscreen."""

    def __init__(self, width: int = 900, height: int = 760, background: str = "w"):
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground(background)
        self.widget.resize(width, height)
        # laid out like a shown window, but never on screen (exports run headless or behind the app)
        self.widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.widget.show()
        self.heatmap = HeatmapPlot(self.widget.addPlot(row=0, col=0))
        self.plot, self.image = self.heatmap.plot, self.heatmap.image
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLORMAP),
                                        interactive=False, label="attention weight", width=18)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.setTextPen("k")
        self.colorbar.axis.setTickFont(self.heatmap.font)

    @property
    def shown(self) -> np.ndarray | None:
        return self.heatmap.shown

    def show_spec(self, spec) -> None:
        self.show_matrix(spec.matrix, spec.mask, spec.rows, spec.cols, spec.title)

    def show_matrix(self, matrix, mask, rows, cols, title, levels=(0.0, 1.0)) -> None:
        self.heatmap.show_matrix(matrix, mask, rows, cols, title, levels)
        self.colorbar.setLevels(levels)
        QtWidgets.QApplication.processEvents()

    def png_image(self, scale: float = 1.0) -> QtGui.QImage:
        """The figure rendered by pyqtgraph's ImageExporter, scale times the on-screen pixels."""
        from .plot_menu import scene_image
        return scene_image(self.widget, scale)

    def png_bytes(self, scale: float = 1.0) -> bytes:
        return encode_png(self.png_image(scale))

    def svg_bytes(self) -> bytes:
        """The visible figure (not the whole scene) as SVG."""
        from .plot_menu import scene_svg
        return scene_svg(self.widget.scene(), self.widget.ci.sceneBoundingRect(), self._title())

    def _title(self) -> str:
        return self.heatmap._title_text or ""

    def set_colormap(self, name: str) -> None:
        """The colour map of the image and its colour bar (exports use the one on screen)."""
        self.heatmap.set_colormap(name)
        self.colorbar.setColorMap(pg.colormap.get(name))
