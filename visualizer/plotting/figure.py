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
from .text import FIGURE_LABEL_PT, TICK_PT, tick_font
from .token_axis import TokenAxis
from .vector_cells import VectorCells


TITLE_SHARE = 0.25       # of a figure's height, the most its title takes before it is drawn smaller or shortened
SMALL_FIGURE_TITLE_SHARE = 0.12     # … in a figure smaller than the default (a paper's column: its rows come first)
SMALL_TITLE_PT = 9.0     # the smallest type a title is drawn in, before words of its sentence are left out


class FigureTitle(pg.GraphicsWidget):
    """A figure's title across the figure's whole width (not the plot's, which its axes' labels decide), centred and
    wrapped, as tall as its lines: its height is known before the layout, so the plot is laid out once under it."""

    def __init__(self, colour):
        super().__init__()
        self.text = QtWidgets.QGraphicsTextItem(self)
        self.text.document().setDefaultTextOption(QtGui.QTextOption(QtCore.Qt.AlignmentFlag.AlignHCenter))
        self.text.setDefaultTextColor(pg.mkColor(colour))
        self.setMinimumWidth(0)
        self.setPreferredWidth(0)

    def set(self, title: str, points: float, width: float) -> float:
        """Show title at points, wrapped at width pixels; its height."""
        font = QtGui.QFont()
        font.setPointSizeF(points)
        self.text.setFont(font)
        self.text.setPlainText(title.replace("-", "\u2011"))      # "(en-de)" not broken as "(en-" and "de)"
        self.text.setTextWidth(width)
        return self.text.boundingRect().height()


class HeatmapFigure:
    def __init__(self, width: int = FIGURE_SIZE[0], height: int = FIGURE_SIZE[1], background: str = "w",
                 bar_label: str = "attention weight", row_label: str = "query (row)", col_label: str = "key (column)"):
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setBackground(background)
        self.widget.resize(width, height)
        # laid out like a shown window, but never on screen (exports run headless or behind the app)
        self.widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        self.widget.show()
        self.heatmap = Heatmap(self.widget.addPlot(row=1, col=0, enableMenu=False), row_label=row_label,
                               col_label=col_label)
        self.heatmap.show_title(False)                    # the figure's own title is above the whole figure
        self.title_item = FigureTitle(self.heatmap.foreground)
        self.widget.addItem(self.title_item, row=0, col=0)
        self.title = ""
        self.plot, self.image = self.heatmap.plot, self.heatmap.image
        self.colorbar = self.heatmap.add_colorbar(bar_label, width=18)
        if width < FIGURE_SIZE[0] or height < FIGURE_SIZE[1]:   # a paper's column, read up close: every row
            for side in ("left", "bottom"):                     # labelled in smaller type before any is left out
                axis = self.plot.getAxis(side)
                if isinstance(axis, TokenAxis):
                    axis.min_points = FIGURE_LABEL_PT
            # and its colour bar's numbers and axis titles no larger than a title's smallest type: at 12 and 13 pt
            # they stood larger than the token labels and took the matrix's room (QA as a researcher)
            self.heatmap.set_colorbar_font(tick_font(SMALL_TITLE_PT))
            self.heatmap.set_axis_title_points(SMALL_TITLE_PT + 1)

    @property
    def shown(self) -> np.ndarray | None:
        return self.heatmap.shown

    def show_spec(self, spec) -> None:
        """A HeatmapSpec (see export.py): its matrix, mask, tokens, title and colour scale."""
        self.show_matrix(spec.matrix, spec.mask, spec.rows, spec.cols, spec.title, spec.levels)

    def show_matrix(self, matrix, mask, rows, cols, title, levels=(0.0, 1.0)) -> None:
        """title "": a figure without one (its row given to the matrix)."""
        self._set_title(title)
        self.heatmap.show_matrix(matrix, mask, rows, cols, None, levels)
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

    def _set_title(self, title: str) -> None:
        """The title in the type of the plot's title, then of its tick labels, then SMALL_TITLE_PT, whichever first
        keeps it within TITLE_SHARE of the figure's height (SMALL_FIGURE_TITLE_SHARE in a small one); else at
        SMALL_TITLE_PT with words left out of the middle of its sentence ("“A man in a red hat … in the park.”"):
        kind, layer, head and model stay. A long sentence took 40 % of a 450 × 380 figure, ran into the matrix at
        300 × 250, and at 900 × 760 was drawn in 9-point type on one line under 12-point labels (QA). The title's
        size stays within its bounds (Qt resizes one outside them when its figure is destroyed, and pyqtgraph's
        half-destroyed item crashed there)."""
        self.title = title
        layout = self.widget.ci.layout
        if not title:
            self.title_item.set("", SMALL_TITLE_PT, 0)
            self.title_item.setVisible(False)
            layout.setRowFixedHeight(0, 0)
            self.title_item.setMaximumHeight(0)
            self.title_item.resize(self.title_item.size().width(), 0)
            return
        self.title_item.setVisible(True)
        left, _, right, _ = layout.getContentsMargins()
        width = max(self.widget.width() - left - right - 8, 40)
        small = self.widget.width() < FIGURE_SIZE[0] or self.widget.height() < FIGURE_SIZE[1]
        limit = (SMALL_FIGURE_TITLE_SHARE if small else TITLE_SHARE) * self.widget.height()
        labels = self.heatmap.font_size or TICK_PT
        for points in (labels + 2, labels, SMALL_TITLE_PT):
            height = self.title_item.set(title, points, width)
            if height <= limit:
                break
        start, end = title.find("“"), title.rfind("”")
        words = title[start + 1:end].split() if 0 <= start < end else []
        keep = len(words)
        while height > limit and keep > 0:
            keep -= 1
            shown = words[:(keep + 1) // 2] + ["…"] + words[len(words) - keep // 2:]
            text = f"{title[:start + 1]}{' '.join(shown)}{title[end:]}"
            if not keep:                     # no word left: no sentence ("— “…” (models/bert)" said nothing, QA)
                dash = title.rfind(" — ", 0, start)
                text = (title[:dash] if dash >= 0 else title[:start].rstrip()) + title[end + 1:]
            height = self.title_item.set(text, points, width)
        self.title_item.setMinimumHeight(0)
        self.title_item.setMaximumHeight(height)
        self.title_item.resize(width, height)
        layout.setRowFixedHeight(0, height)

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
            return scene_vector(self.widget.scene(), self.widget.ci.sceneBoundingRect(), fmt, self.title)
        finally:
            self.plot.removeItem(cells)
            for item in hidden:
                item.setVisible(True)

    def set_colormap(self, name: str) -> None:
        """The colour map of the image and its colour bar (exports use the one on screen)."""
        self.heatmap.set_colormap(name)
