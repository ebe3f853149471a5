"""A heatmap's cells as vector shapes, for the SVG and PDF of a figure.

On screen the matrix is an image of one pixel a cell, drawn unsmoothed, over a hatch pattern where cells are masked.
Written into an SVG or a PDF that image stays a tiny bitmap (6 × 22 pixels) with a "do not smooth" hint that many
viewers ignore, so the whole heatmap came out blurred, and the hatch pattern became a bitmap too (grey smears). Here
each cell is a filled square and the masked cells are hatched with lines, so that a figure is sharp at any size.
"""
from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

SEAM = 0.02          # each square reaches this far into its right and lower neighbours: no hairline seams between
HATCH_SPACING = 0.4   # "/" strokes u + v = 0.4, 0.8, … across the matrix: four or five through a cell, as the four
                      # a cell had of its own (x + y = 0.4, 0.8, 1.2, 1.6 inside it)


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
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        for rgba, path in colour_paths(self.pixels).items():
            painter.fillPath(path, QtGui.QColor(*rgba))
        masked = self.pixels[:, :, 3] == 0
        if masked.any():
            pen = QtGui.QPen(self.hatch, 0.75)
            pen.setCosmetic(True)                     # a line a pixel (a point in a PDF) wide at any scale
            painter.setPen(pen)
            painter.drawLines(hatch_segments(masked))


def colour_paths(pixels: np.ndarray) -> dict[tuple[int, int, int, int], QtGui.QPainterPath]:
    """One path a colour, of the cells in it (a row's run of cells of one colour as one rectangle), masked cells
    (alpha 0) left out: a square a cell, each in its own group, made a 65-token head's SVG 1 MB (QA: 2 GB for a
    24-layer model's export). Each rectangle reaches SEAM into its right and lower neighbours, and overlaps fill
    once (winding fill)."""
    rows, cols = pixels.shape[:2]
    if not rows or not cols:
        return {}
    packed = pixels.astype(np.uint32) @ np.array([1 << 24, 1 << 16, 1 << 8, 1], dtype=np.uint32)
    paths: dict[tuple[int, int, int, int], QtGui.QPainterPath] = {}
    for r in range(rows):
        row = packed[r]
        starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
        ends = np.concatenate((starts[1:], [cols]))
        for start, end in zip(starts, ends):
            rgba = tuple(int(v) for v in pixels[r, start])
            if rgba[3] == 0:
                continue
            path = paths.get(rgba)
            if path is None:
                path = paths[rgba] = QtGui.QPainterPath()
                path.setFillRule(QtCore.Qt.FillRule.WindingFill)
            path.addRect(QtCore.QRectF(start - 0.5, r - 0.5, end - start + SEAM, 1 + SEAM))
    return paths


def hatch_segments(masked: np.ndarray) -> list[QtCore.QLineF]:
    """The hatch strokes over the masked cells ((rows, cols) True where masked), each stroke whole across the
    masked cells it runs through in a row: the strokes a cell had made a 128-token causal head's SVG 5 MB (32,604
    lines, QA). In the matrix's own units u = x + 0.5, v = y + 0.5, the lines u + v = HATCH_SPACING · m, as dense
    as a cell's own four strokes were."""
    rows, cols = masked.shape
    lines = []
    for total in HATCH_SPACING * np.arange(1, math.ceil((rows + cols) / HATCH_SPACING)):
        lo, hi = max(0.0, total - rows), min(float(cols), total)
        if hi - lo < 1e-9:
            continue
        # where the line crosses a column's or a row's edge between its two ends, and the cell each piece lies in
        cuts = np.unique(np.concatenate(([lo, hi], np.arange(math.floor(lo) + 1, math.ceil(hi)),
                                         total - np.arange(math.floor(total - hi) + 1, math.ceil(total - lo)))))
        mids = (cuts[:-1] + cuts[1:]) / 2
        inside = masked[np.clip(np.floor(total - mids).astype(int), 0, rows - 1),
                        np.clip(np.floor(mids).astype(int), 0, cols - 1)]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], inside.astype(np.int8), [0]))))
        for start, end in zip(edges[::2], edges[1::2]):                 # each run of masked pieces: one stroke
            u0, u1 = cuts[start], cuts[end]
            lines.append(QtCore.QLineF(u1 - 0.5, total - u1 - 0.5, u0 - 0.5, total - u0 - 0.5))
    return lines
