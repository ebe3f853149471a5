"""A heatmap's cells as vector shapes, for the SVG and PDF of a figure.

On screen the matrix is an image of one pixel a cell, drawn unsmoothed, over a hatch pattern where cells are masked.
Written into an SVG or a PDF that image stays a tiny bitmap (6 × 22 pixels) with a "do not smooth" hint that many
viewers ignore, so the whole heatmap came out blurred, and the hatch pattern became a bitmap too (grey smears). Here
each cell is a filled square and each masked cell a few hatch lines, so that a figure is sharp at any size.
"""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

SEAM = 0.02          # each square reaches this far into its right and lower neighbours: no hairline seams between
HATCH = (0.4, 0.8, 1.2, 1.6)   # the hatch lines of a masked cell: x + y = s inside the unit square ("/" strokes)


class VectorCells(QtWidgets.QGraphicsItem):
    """rows × cols × RGBA pixels (alpha 0: a masked cell) drawn as squares in a heatmap's view coordinates (cell
    (r, c) spans c − 0.5 … c + 0.5 and r − 0.5 … r + 0.5, as the heatmap's image)."""

    def __init__(self, pixels: np.ndarray, hatch: str):
        super().__init__()
        self.pixels = np.asarray(pixels, dtype=np.uint8)
        self.hatch = QtGui.QColor(hatch)

    def boundingRect(self) -> QtCore.QRectF:
        rows, cols = self.pixels.shape[:2]
        return QtCore.QRectF(-0.5, -0.5, cols + SEAM, rows + SEAM)

    def paint(self, painter: QtGui.QPainter, option=None, widget=None) -> None:
        rows, cols = self.pixels.shape[:2]
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        masked = []
        for r in range(rows):
            for c in range(cols):
                red, green, blue, alpha = (int(v) for v in self.pixels[r, c])
                if alpha == 0:
                    masked.append((r, c))
                    continue
                painter.fillRect(QtCore.QRectF(c - 0.5, r - 0.5, 1 + SEAM, 1 + SEAM),
                                 QtGui.QColor(red, green, blue, alpha))
        if masked:
            pen = QtGui.QPen(self.hatch, 0.75)
            pen.setCosmetic(True)                     # a line a pixel (a point in a PDF) wide at any scale
            painter.setPen(pen)
            painter.drawLines([line for r, c in masked for line in hatch_lines(r, c)])


def hatch_lines(r: int, c: int) -> list[QtCore.QLineF]:
    """The hatch strokes of cell (r, c), each clipped to the cell by hand (a clip path a cell would bloat the file)."""
    x0, y0 = c - 0.5, r - 0.5
    lines = []
    for s in HATCH:
        if s <= 1:
            lines.append(QtCore.QLineF(x0 + s, y0, x0, y0 + s))
        else:
            lines.append(QtCore.QLineF(x0 + 1, y0 + s - 1, x0 + s - 1, y0 + 1))
    return lines
