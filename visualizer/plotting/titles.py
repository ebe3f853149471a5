"""Plot titles that never widen their plot, with a row as tall as their text (one or two lines, any size)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore

from .text import TITLE_PT


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


def fit_title_row(plot: pg.PlotItem) -> None:
    """The title row as tall as the title's text (pyqtgraph fixes 30 px: too little for big or two-line text)."""
    label = plot.titleLabel
    h = max(30.0, label.itemRect().height())
    if getattr(plot, "_title_height", None) != h:
        plot._title_height = h
        label.setMaximumHeight(h)
        plot.layout.setRowFixedHeight(0, h)


def hide_title(plot: pg.PlotItem) -> None:
    """No title and no title row (where the room is better spent on the plot); set_title brings it back."""
    plot.titleLabel.setVisible(False)
    plot.titleLabel.setMaximumHeight(0)
    plot.layout.setRowFixedHeight(0, 0)
    plot._title_height = 0.0


def free_title_width(label: pg.LabelItem) -> None:
    """A long title may overhang its plot, but must not widen it (LabelItem asks for its text's width). Nor
    does a new title share the room of a layout of plots out again (the attention panel's focused head beside
    the small ones): that would resize and redraw every plot of it."""
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
