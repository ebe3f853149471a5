"""A highlight frame that shows on any colour: the accent's stroke inside a white one. Red alone was the only sign
of the focused head and of the generation step's row, and under red-green colour blindness it turned the olive of
a heatmap's middle colours (QA, a low-vision teacher); the white edge stands out from dark cells, the red core
from light ones."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from .colormaps import HIGHLIGHT

HALO = "#ffffff"


class HaloRect(QtWidgets.QGraphicsRectItem):
    """A rectangle drawn as a HIGHLIGHT stroke of `width` pixels over a HALO stroke 3 pixels wider (cosmetic pens:
    the same on screen at every zoom)."""

    def __init__(self, width: float, colour: str = HIGHLIGHT):
        super().__init__()
        self.core = pg.mkPen(colour, width=width)
        self.setPen(pg.mkPen(HALO, width=width + 3))      # the wider one: Qt's bounding rect follows the pen

    def paint(self, painter: QtGui.QPainter, option, widget=None) -> None:
        super().paint(painter, option, widget)              # the halo
        painter.setPen(self.core)
        painter.setBrush(self.brush())
        painter.drawRect(self.rect())
