"""A scene as a picture: PNG through pyqtgraph's ImageExporter, SVG and PDF through Qt's QSvgGenerator and
QPdfWriter."""
from __future__ import annotations

import contextlib

import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from ..text_safety import xml_safe
from .text import TICK_PT, tick_font


def scene_image(view: pg.GraphicsView, scale: float = 1.0) -> QtGui.QImage:
    """The view's scene through pyqtgraph's ImageExporter, scale times the pixels on screen."""
    exporter = ImageExporter(view.scene())
    exporter.parameters()["width"] = max(1, int(round(view.width() * scale)))
    image = exporter.export(toBytes=True)
    # the resolution written in the file: scale times the screen's, so that a 3× picture for print is placed at
    # the figure's size (tagged 96 dpi it came into a document three times as wide: 28 inches)
    dpi = screen_dpi() * image.width() / max(1, view.width())
    image.setDotsPerMeterX(int(round(dpi / 0.0254)))
    image.setDotsPerMeterY(int(round(dpi / 0.0254)))
    return image


def caption_font() -> QtGui.QFont:
    """The font of the line under a figure that names its run (see captioned): in pixels of the figure (at 96 dpi,
    the tick labels' size), so that a picture's scale, not its device's resolution, sizes it."""
    font = tick_font(TICK_PT)
    font.setPixelSize(round(TICK_PT * 96 / 72))
    return font


def screen_dpi() -> float:
    """The logical dots per inch scenes are laid out at (96 on most screens)."""
    screen = QtGui.QGuiApplication.primaryScreen()
    return screen.logicalDotsPerInch() if screen is not None else 96.0


def caption_height() -> float:
    return 1.8 * QtGui.QFontMetricsF(caption_font()).height()


def draw_caption(painter: QtGui.QPainter, band: QtCore.QRectF, text: str) -> None:
    """text on one line (cut with "…" where longer) in band, at the left, dark grey on the figure's white."""
    painter.setFont(caption_font())
    painter.setPen(QtGui.QColor("#333333"))
    inner = band.adjusted(8, 0, -8, 0)
    shown = fitted_caption(text, QtGui.QFontMetricsF(caption_font()), inner.width())
    painter.drawText(inner, int(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignVCenter), shown)


def fitted_caption(text: str, metrics: QtGui.QFontMetricsF, width: float) -> str:
    """text within width: its quoted sentence cut in the middle first ("“The little girl … today.” (en-fr)"), so
    that the model and the run's words after it stay (cut at its end, a long sentence took the model's name with
    it: QA); then, if still too wide, cut at its end."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    start, end = text.find("“"), text.find("”")
    if 0 <= start < end:
        rest = metrics.horizontalAdvance(text[:start + 1] + text[end:])
        inner = metrics.elidedText(text[start + 1:end], QtCore.Qt.TextElideMode.ElideMiddle, max(width - rest, 0.0))
        text = text[:start + 1] + (inner or "…") + text[end:]
        close = text.index("”", start)
        if metrics.horizontalAdvance(text) > width and " (" in text[close:]:  # then what stands between the quote
            text = text[:close + 1] + text[text.index(" (", close):]          # and the model (" + 19 tokens it
                                                                              # wrote" had pushed it out: QA)
    return metrics.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, width)


def captioned(image: QtGui.QImage, text: str) -> QtGui.QImage:
    """image with a line under it naming its run ("“The red car is fast.” (en-fr)"): a saved output distribution,
    rollout or LayerNorm chart said neither sentence nor model (QA, a teacher's handout). The line is drawn in the
    scene's pixels, scaled as the picture is: a 3× picture has a 3× line."""
    if not text:
        return image
    # the picture's pixels per pixel of the scene (dots per metre are whole: 96 dpi is stored as 3780)
    scale = round(image.dotsPerMeterY() * 0.0254 / screen_dpi(), 3)
    band = caption_height()
    out = QtGui.QImage(image.width(), image.height() + round(band * scale), QtGui.QImage.Format.Format_ARGB32)
    out.setDotsPerMeterX(image.dotsPerMeterX())
    out.setDotsPerMeterY(image.dotsPerMeterY())
    out.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(out)
    try:
        painter.drawImage(0, 0, image)
        painter.scale(scale, scale)          # in the scene's own units, as it was drawn
        draw_caption(painter, QtCore.QRectF(0, image.height() / scale, image.width() / scale, band), text)
    finally:
        painter.end()
    return out


def scene_vector(scene: QtWidgets.QGraphicsScene, rect: QtCore.QRectF, fmt: str, title: str = "",
                 background: str = "white", caption: str = "") -> bytes:
    """A region of a scene as a vector file: "svg" through Qt's QSvgGenerator (pyqtgraph 0.14's SVGExporter fails
    on the closed paths Qt 6 writes: pyqtgraph issue #3495), "pdf" through QPdfWriter, one page the region's size."""
    shown = rect
    if caption:                              # a line under the scene naming its run (see captioned)
        rect = QtCore.QRectF(rect.x(), rect.y(), rect.width(), rect.height() + caption_height())
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    # the scene is laid out at the screen's logical dots per inch (96 on most); at QSvgGenerator's default 72
    # the axes, which pyqtgraph draws through the device transform, came out at 72/96 of the image beside them
    screen = QtGui.QGuiApplication.primaryScreen()
    dpi = round(screen.logicalDotsPerInch()) if screen is not None else 96
    if fmt == "svg":
        device = QtSvg.QSvgGenerator()
        device.setOutputDevice(buf)
        device.setSize(rect.size().toSize())
        device.setResolution(dpi)
        device.setViewBox(QtCore.QRectF(0, 0, rect.width(), rect.height()))
        device.setTitle(title)
    elif fmt == "pdf":
        device = QtGui.QPdfWriter(buf)
        device.setResolution(dpi)
        device.setPageSize(QtGui.QPageSize(QtCore.QSizeF(rect.width() * 72 / dpi, rect.height() * 72 / dpi),
                                           QtGui.QPageSize.Unit.Point, "figure", QtGui.QPageSize.SizeMatchPolicy.ExactMatch))
        device.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
        device.setTitle(title)
        device.setCreator("Attention Visualizer")
    else:
        raise ValueError(f"vector format {fmt!r}: svg or pdf")
    painter = QtGui.QPainter(device)
    try:
        painter.fillRect(QtCore.QRectF(0, 0, rect.width(), rect.height()), QtGui.QColor(background))
        scene.render(painter, QtCore.QRectF(0, 0, shown.width(), shown.height()), shown)
        if caption:
            painter.fillRect(QtCore.QRectF(0, shown.height(), rect.width(), rect.height() - shown.height()),
                             QtGui.QColor("white"))
            draw_caption(painter, QtCore.QRectF(0, shown.height(), rect.width(), rect.height() - shown.height()),
                         caption)
    finally:
        painter.end()
    data = bytes(buf.data())
    return xml_safe(data) if fmt == "svg" else data     # control characters in labels would make it invalid XML


def encode_png(image: QtGui.QImage) -> bytes:
    """PNG bytes; Qt's quality 80 is zlib at a moderate level: twice as fast as the default, files ~20% larger."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG", 80):
        raise RuntimeError("Qt could not encode the PNG")
    return bytes(buf.data())


@contextlib.contextmanager
def laid_out_for_picture(panel: QtWidgets.QWidget, least_width: int):
    """The panel, while its picture is taken, at least least_width pixels wide and as wide and tall as a text view
    in it needs to show its text whole; back in its place after. Export all's pictures had their docks' sizes: the
    Embeddings panel 409 pixels wide with its axis titles over its tokens, the Math tab cut at its dock's height
    with its scroll bar in the picture. Only a panel in a scroll area that sizes it (the window's docks) is laid
    out anew: the area lets it go for the picture and sizes it again after."""
    parent = panel.parentWidget()
    holder = parent.parentWidget() if parent is not None else None
    if not isinstance(holder, QtWidgets.QScrollArea) or holder.widget() is not panel or not holder.widgetResizable():
        # a panel straight in its dock (the Model view, the Beam tree): resized for the picture, its layout puts it
        # back at the next event (its picture had been the dock's 409 × 360, QA)
        before = panel.size()
        if panel.width() < least_width and panel.isVisible():
            panel.resize(least_width, max(panel.height(), round(least_width * 0.8)))
            QtWidgets.QApplication.sendPostedEvents()
        try:
            yield
        finally:
            if panel.size() != before:
                panel.resize(before)
        return
    holder.setWidgetResizable(False)
    try:
        panel.resize(max(panel.width(), least_width), panel.height())
        views = [view for view in panel.findChildren(QtWidgets.QTextEdit) if view.isVisible()]
        wider = max((view.horizontalScrollBar().maximum() for view in views), default=0)   # (by pixels: a table
        if wider > 0:                                                  # wider than 900 was cut, QA)
            panel.resize(panel.width() + wider, panel.height())
        taller = sum(view.verticalScrollBar().maximum() for view in views)
        if taller > 0:
            panel.resize(panel.width(), panel.height() + taller)
        yield
    finally:
        holder.setWidgetResizable(True)          # sizes the panel to its place again


def whole_picture(panel: QtWidgets.QWidget) -> QtGui.QImage:
    """A panel as a picture, whole: a scroll area in it that hides part of its content (LayerNorm's charts in a
    short or narrow dock) is pictured at its content's full size, without its scroll bars, and what lies under it
    moves down. Export all's LayerNorm picture had stopped halfway down a chart, its scroll bar in the picture."""
    # a first paint, then the picture: plots scrolled out of view run their waiting updates when painted (a title
    # then laid out over its own top), and pyqtgraph's axes measure their tick labels while they paint and only
    # then ask for the room (a plot never painted on screen had "token (position)" over its tokens)
    _panel_picture(panel)
    QtWidgets.QApplication.processEvents()
    return _panel_picture(panel)


def _panel_picture(panel: QtWidgets.QWidget) -> QtGui.QImage:
    image = panel.grab().toImage()
    area = next((a for a in panel.findChildren(QtWidgets.QScrollArea) if a.isVisible() and a.widget() is not None
                 and (a.widget().height() > a.viewport().height() or a.widget().width() > a.viewport().width())),
                None)
    if area is None:
        return image
    r = image.devicePixelRatio()
    content = area.widget().grab().toImage()
    # put together in device pixels: drawn with their ratio, a HiDPI screen's pictures of two pixels a point went
    # in at half their size (Export all's LayerNorm in the picture's top-left quarter, QA at Qt scale 2)
    image.setDevicePixelRatio(1.0)
    content.setDevicePixelRatio(1.0)
    corner = area.mapTo(panel, QtCore.QPoint(0, 0))
    top, left = round(corner.y() * r), round(corner.x() * r)
    below = top + round(area.height() * r)                   # the first row under the scroll area, in the panel
    right = image.width() - left - round(area.width() * r)   # the panel's margin beside the scroll area
    whole = QtGui.QImage(max(image.width(), left + content.width() + right),
                         top + content.height() + image.height() - below, image.format())
    whole.fill(panel.palette().color(QtGui.QPalette.ColorRole.Window))
    painter = QtGui.QPainter(whole)
    painter.drawImage(QtCore.QPoint(0, 0), image, QtCore.QRect(0, 0, image.width(), top))
    painter.drawImage(QtCore.QPoint(left, top), content)
    painter.drawImage(QtCore.QPoint(0, top + content.height()), image,
                      QtCore.QRect(0, below, image.width(), image.height() - below))
    painter.end()
    whole.setDevicePixelRatio(r)
    return whole
