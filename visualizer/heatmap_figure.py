"""Heatmaps with token labels (pyqtgraph): the plot used by the attention panel and by exported figures.

Masked cells are NaN in the image (transparent) over a hatched background, so they never read as 0.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

COLORMAP = "viridis"   # perceptually uniform and colour-blind safe


def token_ticks(tokens: list[str], max_labels: int = 60) -> list[tuple[float, str]]:
    """Tick positions at cell centres; thinned out when there are too many to read."""
    step = max(1, int(np.ceil(len(tokens) / max_labels)))
    return [(i + 0.5, t) for i, t in enumerate(tokens) if i % step == 0]


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
        plot.setMenuEnabled(False)
        plot.invertY(True)                       # first query token at the top
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        self.font = QtGui.QFont()
        self.font.setPointSize(font_size)
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setTickFont(self.font)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
        if labels:
            plot.setLabel("left", row_label, **{"color": foreground, "font-size": f"{font_size + 1}pt"})
            plot.setLabel("bottom", col_label, **{"color": foreground, "font-size": f"{font_size + 1}pt"})
        self.foreground = foreground
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

    def set_colormap(self, name: str) -> None:
        self.image.setColorMap(pg.colormap.get(name))

    def show_matrix(self, matrix: np.ndarray, mask: np.ndarray | None, rows: list[str], cols: list[str],
                    title: str | None = None, levels: tuple[float, float] = (0.0, 1.0), max_labels: int = 60,
                    title_size: str = "13pt", max_row_labels: int | None = None) -> None:
        shown = np.asarray(matrix, dtype=np.float32).copy()
        if mask is not None:
            shown[~np.asarray(mask, dtype=bool)] = np.nan
        self.shown = shown
        self.image.setImage(shown, levels=levels, autoLevels=False)
        Tq, Tk = shown.shape
        if self._shape != (Tq, Tk) or self.rows != rows or self.cols != cols:
            self._shape, self.rows, self.cols = (Tq, Tk), list(rows), list(cols)
            self.image.setRect(QtCore.QRectF(0, 0, Tk, Tq))
            self.hatch.setRect(QtCore.QRectF(0, 0, Tk, Tq))
            self.plot.getAxis("bottom").setTicks([token_ticks(cols, max_labels), []] if max_labels else [[], []])
            row_max = max_labels if max_row_labels is None else max_row_labels
            self.plot.getAxis("left").setTicks([token_ticks(rows, row_max), []] if row_max else [[], []])
            self.plot.setXRange(0, Tk, padding=0.01)
            self.plot.setYRange(0, Tq, padding=0.01)
        if title is not None:
            self.plot.setTitle(title, color=self.foreground, size=title_size)

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
        exporter = ImageExporter(self.widget.scene())
        exporter.parameters()["width"] = int(round(self.widget.width() * scale))
        return exporter.export(toBytes=True)

    def png_bytes(self, scale: float = 1.0) -> bytes:
        return encode_png(self.png_image(scale))

    def svg_bytes(self) -> bytes:
        """The scene through Qt's own QSvgGenerator: pyqtgraph 0.14's SVGExporter fails on the closed
        paths Qt 6 writes (pyqtgraph issue #3495)."""
        rect = self.widget.ci.sceneBoundingRect()          # the visible figure, not the whole scene
        buf = QtCore.QBuffer()
        buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
        gen = QtSvg.QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(rect.size().toSize())
        gen.setViewBox(QtCore.QRectF(0, 0, rect.width(), rect.height()))
        gen.setTitle(self.plot.titleLabel.text)
        painter = QtGui.QPainter(gen)
        try:
            painter.fillRect(QtCore.QRectF(0, 0, rect.width(), rect.height()), QtGui.QColor("white"))
            self.widget.scene().render(painter, QtCore.QRectF(0, 0, rect.width(), rect.height()), rect)
        finally:
            painter.end()
        return bytes(buf.data())
