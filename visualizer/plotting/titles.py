"""Plot titles that never widen their plot, with a row as tall as their text (one or two lines, any size)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .. import accessible
from .text import TITLE_PT

SMALLEST = 0.7     # a title is drawn this much smaller before it takes another line


def set_title(plot: pg.PlotItem, title: str, foreground: str = "k", points: float = TITLE_PT) -> None:
    """Show title (rich text) above the plot at points; nothing happens when it is what the plot shows."""
    if (getattr(plot, "_shown_title", None), getattr(plot, "_title_style", None)) == (title, (foreground, points)) \
            and plot.titleLabel.isVisible():
        return
    plot._shown_title, plot._title_style = title, (foreground, points)
    label = plot.titleLabel
    if not getattr(label, "_free_width", False):
        free_title_width(label)
    label.setVisible(True)
    if getattr(plot, "_title_height", None) is None:
        plot.setTitle(title, color=foreground, size=f"{points:g}pt")
    else:       # PlotItem.setTitle would also reset the title row to 30 px, to be widened again: a relayout
        label.setText(title, color=foreground, size=f"{points:g}pt")
    fit_title_row(plot)
    view = plot.getViewWidget()
    if isinstance(view, pg.PlotWidget):         # a plot of its own: a screen reader names it by its title
        accessible.name(view, title)


def fit_title_row(plot: pg.PlotItem) -> None:
    """The title row as tall as the title's text (pyqtgraph fixes 30 px: too little for big or two-line text).
    At one width and font size it only grows: a title one line shorter at the next view change would lay the
    plot out again and draw it twice."""
    label = plot.titleLabel
    h = max(30.0, label.itemRect().height())
    key = (round(label.rect().width()), getattr(plot, "_title_style", None))
    if getattr(plot, "_title_fit", None) == key:
        h = max(h, getattr(plot, "_title_height", None) or 0.0)
    plot._title_fit = key
    if getattr(plot, "_title_height", None) != h:
        plot._title_height = h
        label.setMaximumHeight(h)
        plot.layout.setRowFixedHeight(0, h)


def hide_title(plot: pg.PlotItem, keep: float = 0.0) -> None:
    """No title (where the room is better spent on the plot), and a title row keep pixels high (0: none; room
    for the half of a number that stands above an axis' top end); set_title brings it back."""
    plot.titleLabel.setVisible(False)
    plot.titleLabel.setMaximumHeight(0)
    plot.layout.setRowFixedHeight(0, keep)
    plot._title_height, plot._title_fit = 0.0, None


def free_title_width(label: pg.LabelItem) -> None:
    """A long title must not widen its plot (LabelItem asks for its text's width), nor be cut at the plot's edges
    (a projector's large font, a narrow dock): it is drawn smaller, then wraps onto more lines, and the title row
    grows with it. Nor does a new title share the room of a layout of plots out again (the attention panel's
    focused head beside the small ones): that would resize and redraw every plot of it."""
    original_update_min, original_resize = label.updateMin, label.resizeEvent
    label.item.document().setDefaultTextOption(QtGui.QTextOption(QtCore.Qt.AlignmentFlag.AlignHCenter))

    def update_min():
        original_update_min()
        label.setMinimumWidth(0)
        h = label.itemRect().height()
        label._sizeHint[QtCore.Qt.SizeHint.MinimumSize] = (0, h)
        label._sizeHint[QtCore.Qt.SizeHint.PreferredSize] = (0, h)
        label.updateGeometry()

    def resize(event):
        wrap_title(label)
        original_resize(event)
        plot = label.parentItem()
        if isinstance(plot, pg.PlotItem) and plot.titleLabel is label and label.isVisible() \
                and getattr(plot, "_title_height", None) != 0.0:      # (0: hidden by hide_title)
            fit_title_row(plot)

    label.updateMin, label.resizeEvent = update_min, resize
    label._free_width = True


def wrap_title(label: pg.LabelItem) -> None:
    """A title wider than its label: drawn smaller (to SMALLEST of its size) until it fits on one line, else at
    that size on more lines, wrapped at the label's width."""
    item, width = label.item, label.rect().width()
    item.setTextWidth(-1)
    item.setScale(1.0)
    natural = item.boundingRect().width()
    if 0 < width < natural:
        scale = max(SMALLEST, width / natural)
        item.setScale(scale)
        if natural * scale > width:
            item.setTextWidth(width / scale)
