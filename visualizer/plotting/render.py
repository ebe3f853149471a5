"""A scene as a picture: PNG through pyqtgraph's ImageExporter, SVG through Qt's QSvgGenerator."""
from __future__ import annotations

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from ..text_safety import xml_safe


def scene_image(view: pg.GraphicsView, scale: float = 1.0) -> QtGui.QImage:
    """The view's scene through pyqtgraph's ImageExporter, scale times the pixels on screen."""
    exporter = ImageExporter(view.scene())
    exporter.parameters()["width"] = max(1, int(round(view.width() * scale)))
    return exporter.export(toBytes=True)


def scene_svg(scene: QtWidgets.QGraphicsScene, rect: QtCore.QRectF, title: str = "",
              background: str = "white") -> bytes:
    """A region of a scene as SVG through Qt's QSvgGenerator (pyqtgraph 0.14's SVGExporter fails on the
    closed paths Qt 6 writes: pyqtgraph issue #3495)."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    gen = QtSvg.QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(rect.size().toSize())
    # the scene is laid out at the screen's logical dots per inch (96 on most); at QSvgGenerator's default 72
    # the axes, which pyqtgraph draws through the device transform, came out at 72/96 of the image beside them
    screen = QtGui.QGuiApplication.primaryScreen()
    gen.setResolution(round(screen.logicalDotsPerInch()) if screen is not None else 96)
    gen.setViewBox(QtCore.QRectF(0, 0, rect.width(), rect.height()))
    gen.setTitle(title)
    painter = QtGui.QPainter(gen)
    try:
        painter.fillRect(QtCore.QRectF(0, 0, rect.width(), rect.height()), QtGui.QColor(background))
        scene.render(painter, QtCore.QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()
    return xml_safe(bytes(buf.data()))       # control characters in labels would make it invalid XML


def encode_png(image: QtGui.QImage) -> bytes:
    """PNG bytes; Qt's quality 80 is zlib at a moderate level: twice as fast as the default, files ~20% larger."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG", 80):
        raise RuntimeError("Qt could not encode the PNG")
    return bytes(buf.data())
