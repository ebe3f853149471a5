"""HeatmapFigure: one attention matrix as a stand-alone figure for export (title, labelled axes, colour bar),
rendered offscreen. The Heatmap in it is the one the attention panel draws with."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .heatmap import Heatmap
from ..figure_size import FIGURE_SIZE
from .colormaps import MASK_GREY
from .render import encode_png, scene_image, scene_vector
from .text import FIGURE_LABEL_PT
from .token_axis import TokenAxis
from .vector_cells import VectorCells


class HeatmapFigure:
    def __init__(self, width: int = FIGURE_SIZE[0], height: int = FIGURE_SIZE[1], background: str = "w",
                 bar_label: str = "attention weight", row_label: str = "query (row)", col_label: str = "key (column)"):
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground(background)
        self.widget.resize(width, height)
        # laid out like a shown window, but never on screen (exports run headless or behind the app)
        self.widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.widget.show()
        self.heatmap = Heatmap(self.widget.addPlot(row=0, col=0, enableMenu=False), row_label=row_label,
                               col_label=col_label)
        self.plot, self.image = self.heatmap.plot, self.heatmap.image
        self.colorbar = self.heatmap.add_colorbar(bar_label, width=18)
        if width < FIGURE_SIZE[0] or height < FIGURE_SIZE[1]:   # a paper's column, read up close: every row
            for side in ("left", "bottom"):                     # labelled in smaller type before any is left out
                axis = self.plot.getAxis(side)
                if isinstance(axis, TokenAxis):
                    axis.min_points = FIGURE_LABEL_PT

    @property
    def shown(self) -> np.ndarray | None:
        return self.heatmap.shown

    def show_spec(self, spec) -> None:
        """A HeatmapSpec (see export.py): its matrix, mask, tokens, title and colour scale."""
        self.show_matrix(spec.matrix, spec.mask, spec.rows, spec.cols, spec.title, spec.levels)

    def show_matrix(self, matrix, mask, rows, cols, title, levels=(0.0, 1.0)) -> None:
        """title "": a figure without one (its row given to the matrix)."""
        self.heatmap.show_title(bool(title))
        self.heatmap.show_matrix(matrix, mask, rows, cols, title, levels)
        QtWidgets.QApplication.processEvents()
        # an axis measures its labels when it is first painted and only then asks for the room they need: on
        # screen the next paint has it, but an export is one paint, and its row labels ran into "query (row)".
        # One paint to a scratch image, then the layout, give the export its final room.
        # A second such paint lets the axes give back room the first fit took: at 450 × 380 the columns fitted
        # upright before the layout and staggered after it, and the upright labels' room stayed, empty, between
        # them and "key (column)" (a quarter of the figure; QA as a researcher).
        for again in (False, True):
            if again:
                for axis in (self.plot.getAxis("bottom"), self.plot.getAxis("left")):
                    axis._may_shrink = axis._shrink_width = True      # (the width: a left axis')
            scratch = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
            painter = QtGui.QPainter(scratch)
            try:
                self.widget.scene().render(painter, QtCore.QRectF(0, 0, 8, 8), self.widget.ci.sceneBoundingRect())
            finally:
                painter.end()
            QtWidgets.QApplication.processEvents()

    def png_image(self, scale: float = 1.0) -> QtGui.QImage:
        """The figure rendered by pyqtgraph's ImageExporter, scale times the on-screen pixels."""
        return scene_image(self.widget, scale)

    def png_bytes(self, scale: float = 1.0) -> bytes:
        return encode_png(self.png_image(scale))

    def vector_bytes(self, fmt: str) -> bytes:
        """The visible figure as SVG or PDF, its cells drawn as squares and its masked cells hatched with lines
        (plotting/vector_cells.py) instead of the on-screen image and hatch pattern."""
        hm = self.heatmap
        cells = VectorCells(hm.cell_pixels(), MASK_GREY)
        cells.setZValue(hm.image.zValue())
        hidden = [item for item in (hm.image, hm.hatch) if item is not None and item.isVisible()]
        for item in hidden:
            item.setVisible(False)
        self.plot.addItem(cells)
        try:
            return scene_vector(self.widget.scene(), self.widget.ci.sceneBoundingRect(), fmt, hm._title or "")
        finally:
            self.plot.removeItem(cells)
            for item in hidden:
                item.setVisible(True)

    def set_colormap(self, name: str) -> None:
        """The colour map of the image and its colour bar (exports use the one on screen)."""
        self.heatmap.set_colormap(name)
