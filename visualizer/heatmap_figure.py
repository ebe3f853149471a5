"""A stand-alone heatmap figure (pyqtgraph): title, token labels on both axes, colour bar, masked cells hatched.

Used for exported images; rendered offscreen through pyqtgraph's exporters.
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


class HeatmapFigure:
    """One matrix drawn as an image with labelled axes; masked cells are NaN (transparent over a hatch)."""

    def __init__(self, width: int = 900, height: int = 760, background: str = "w"):
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground(background)
        self.widget.resize(width, height)
        # laid out like a shown window, but never on screen (exports run headless or behind the app)
        self.widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.widget.show()
        self.plot = self.widget.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.invertY(True)                       # first query token at the top
        self.plot.setAspectLocked(False)
        self.plot.hideButtons()
        font = QtGui.QFont()
        font.setPointSize(11)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTickFont(font)
            axis.setPen("k")
            axis.setTextPen("k")
        self.plot.setLabel("left", "query (row)", **{"color": "k", "font-size": "12pt"})
        self.plot.setLabel("bottom", "key (column)", **{"color": "k", "font-size": "12pt"})
        self.hatch = QtWidgets.QGraphicsRectItem()
        self.hatch.setBrush(hatch_brush())
        self.hatch.setPen(pg.mkPen(None))
        self.hatch.setZValue(-10)
        self.plot.addItem(self.hatch)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get(COLORMAP),
                                        interactive=False, label="attention weight", width=18)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.setTextPen("k")
        self.colorbar.axis.setTickFont(font)
        self.shown: np.ndarray | None = None          # the array on screen, NaN where masked

    def show_spec(self, spec) -> None:
        self.show_matrix(spec.matrix, spec.mask, spec.rows, spec.cols, spec.title)

    def show_matrix(self, matrix: np.ndarray, mask: np.ndarray | None, rows: list[str], cols: list[str],
                    title: str, levels: tuple[float, float] = (0.0, 1.0)) -> None:
        shown = np.asarray(matrix, dtype=np.float32).copy()
        if mask is not None:
            shown[~np.asarray(mask, dtype=bool)] = np.nan
        self.shown = shown
        self.image.setImage(shown, levels=levels)
        self.colorbar.setLevels(levels)
        Tq, Tk = shown.shape
        self.image.setRect(QtCore.QRectF(0, 0, Tk, Tq))
        self.hatch.setRect(QtCore.QRectF(0, 0, Tk, Tq))
        self.plot.getAxis("bottom").setTicks([token_ticks(cols), []])
        self.plot.getAxis("left").setTicks([token_ticks(rows), []])
        self.plot.setXRange(0, Tk, padding=0.01)
        self.plot.setYRange(0, Tq, padding=0.01)
        self.plot.setTitle(title, color="k", size="13pt")
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
        scene = self.widget.scene()
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
            scene.render(painter, QtCore.QRectF(0, 0, rect.width(), rect.height()), rect)
        finally:
            painter.end()
        return bytes(buf.data())
