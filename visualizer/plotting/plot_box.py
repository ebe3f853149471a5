"""Plot widgets of the panels: PlotBox (projector-sized fonts, black on white, no mouse zoom, updates deferred
while scrolled out of sight) and HeatmapBox (a PlotBox showing one Heatmap, with a colour bar and the value
under the mouse as a tooltip)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..theme import PLOT_BACKGROUND, PLOT_FOREGROUND
from .colormaps import SIGNED_COLORMAP
from .heatmap import Heatmap, plain_numbers
from .text import LABEL_PT, TICK_PT, TITLE_PT, tick_font
from .titles import set_title
from .token_axis import TokenAxis


def style_plot(plot: pg.PlotItem, title: str = "", left: str | None = None, bottom: str | None = None,
               foreground: str = "k") -> None:
    """Large fonts, black text, no mouse zoom (a panel is read, not explored), a title."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    plain_numbers(plot)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setTickFont(tick_font())
        axis.setPen(foreground)
        axis.setTextPen(foreground)
        if not isinstance(axis, TokenAxis):   # ticks at two levels: a third level's faint ticks cost paint time
            axis.setStyle(maxTickLevel=1)
    if left:
        plot.setLabel("left", left, color=foreground, **{"font-size": f"{LABEL_PT}pt"})
    if bottom:
        plot.setLabel("bottom", bottom, color=foreground, **{"font-size": f"{LABEL_PT}pt"})
    set_title(plot, title, foreground)


class WholeNumberAxis(pg.AxisItem):
    """An axis of things counted (dimensions, positions, counts): ticks at whole numbers only. The seed example's
    two dimensions were ticked 0, 0.5 and 1 (a student asked what dimension 0.5 was)."""

    def tickSpacing(self, minVal, maxVal, size):
        levels = [(spacing, offset) for spacing, offset in super().tickSpacing(minVal, maxVal, size)
                  if spacing >= 1 and float(spacing).is_integer()]
        return levels or [(1.0, 0.0)]


class PlotBox(pg.PlotWidget):
    """A PlotWidget with projector-sized fonts and a sensible minimum size."""

    text_size_changed = QtCore.Signal(float)           # the ticks' new size in points (text_pt)

    def __init__(self, title: str = "", left: str | None = None, bottom: str | None = None,
                 axisItems: dict | None = None, min_height: int = 220, fixed_min_height: bool = False,
                 whole: tuple[str, ...] = ()):
        """fixed_min_height: the least height stays min_height at any text size (a chart that shrinks its own
        labels to its rows, as the output distribution does, rather than scroll). whole: the sides ("left",
        "bottom") whose numbers count things, ticked at whole numbers only."""
        bg, fg = PLOT_BACKGROUND, PLOT_FOREGROUND      # in every theme, and whether or not the CLI set a theme
        axisItems = {**{side: WholeNumberAxis(side) for side in whole}, **(axisItems or {})}
        super().__init__(background=bg, axisItems=axisItems, enableMenu=False)   # no menu built
        self.foreground, self.background = fg, bg
        # one paint of the whole view per frame: cheaper than several partial ones when every item changes
        self.setViewportUpdateMode(QtWidgets.QGraphicsView.ViewportUpdateMode.FullViewportUpdate)
        self.setMinimumSize(260, min_height)
        self.base_min_height = min_height           # at the plots' own text size; grows with it (_apply_fonts)
        self.fixed_min_height = fixed_min_height
        self.item: pg.PlotItem = self.getPlotItem()
        style_plot(self.item, title, left, bottom, fg)
        self.axis_titles = {"left": left, "bottom": bottom}
        self.text_pt = float(TICK_PT)               # the ticks' size; axis titles 1 point and the title 2 above
        self._size_axes()
        self._apply_fonts()

    def _size_axes(self) -> None:
        """Axes of fixed size: when a new layer's numbers are wider, an auto-sized axis would re-lay the plot out
        and paint it again. Token axes keep their automatic width (their labels change with the sentence only)."""
        metrics = QtGui.QFontMetrics(tick_font(self.text_pt))
        if not isinstance(self.item.getAxis("left"), TokenAxis):
            self.item.getAxis("left").setWidth(metrics.horizontalAdvance("−0.000") + 2 * metrics.height())
        if self.axis_titles["bottom"]:   # token labels may take two staggered lines
            lines = 3.9 if isinstance(self.item.getAxis("bottom"), TokenAxis) else 2.4
            self.item.getAxis("bottom").setHeight(int(lines * metrics.height()))

    # --- text size ---------------------------------------------------------------------------------------
    def _apply_fonts(self) -> None:
        """The plot's text follows the widgets' (presentation mode, Ctrl++), 2 points below it, never below the plots'
        own TICK_PT: presentation mode at 1080p drew the charts' tokens and numbers at 12 points beside the window's
        19.6; at a 720p projector's 14 points the plots keep 12 (their rows have no more room)."""
        pt = max(float(TICK_PT), round(self.font().pointSizeF() - 2, 1))
        if pt == self.text_pt:
            return
        self.text_pt = pt
        # the axes and titles grow with the text: the least height too, so that the plot keeps its share (a
        # Compare runs matrix at a class's 1080p text size was left 45 pixels of its 200 for 10 rows, QA)
        self.setMinimumHeight(round(self.base_min_height * (1 if self.fixed_min_height else pt / TICK_PT)))
        font = tick_font(pt)
        for side in ("left", "bottom"):
            self.item.getAxis(side).setTickFont(font)
        self._size_axes()
        for side, text in self.axis_titles.items():
            if text:
                self.set_axis_title(side, text)
        if self.title:
            self.set_title(self.title)
        self.text_size_changed.emit(pt)             # the parts of a plot's own (a colour bar, a panel's labels)

    def set_axis_title(self, side: str, text: str) -> None:
        """An axis's title ("left" or "bottom"), 1 point above the ticks, kept through text size changes."""
        self.axis_titles[side] = text
        size = {"font-size": f"{self.text_pt + LABEL_PT - TICK_PT:g}pt"}
        self.item.setLabel(side, text, color=self.foreground, **size)

    def changeEvent(self, event) -> None:
        changed = event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange)
        if changed and hasattr(self, "text_pt"):        # (also called while pyqtgraph's __init__ runs)
            self._apply_fonts()
        super().changeEvent(event)

    def sizeHint(self) -> QtCore.QSize:                 # QGraphicsView asks for 640 × 480: too tall for a dock
        return QtCore.QSize(max(self.minimumWidth(), 360), self.minimumHeight())

    # --- plots scrolled out of sight are brought up to date when they come into sight -------------------
    def defer(self, update, part: str = "data") -> None:
        """Run update() (which sets one part of this plot: its data, ranges and titles, or its colours) now if the
        plot can be seen, else just before it is next painted. A panel's plots below the fold of a scroll area
        then cost nothing at each view change. A plot outside any shown window (tests, pictures of background
        panels) is updated at once. The newest update of a part replaces an older one still waiting."""
        pending = self.__dict__.setdefault("_pending", {})
        if self._scrolled_out():
            pending[part] = update
        else:
            self.flush()
            update()

    def _scrolled_out(self) -> bool:
        """Whether a scroll area around this shown plot has scrolled it wholly out of its viewport."""
        if not self.isVisible():
            return False
        parent = self.parentWidget()
        while parent is not None:
            if isinstance(parent, QtWidgets.QAbstractScrollArea):
                viewport = parent.viewport()
                if viewport.isAncestorOf(self):
                    area = QtCore.QRect(self.mapTo(viewport, QtCore.QPoint(0, 0)), self.size())
                    return not area.intersects(viewport.rect())
            parent = parent.parentWidget()
        return False

    def flush(self) -> None:
        pending = self.__dict__.get("_pending")
        while pending:
            pending.pop(next(iter(pending)))()

    def paintEvent(self, event) -> None:
        self.flush()
        super().paintEvent(event)

    @property
    def title_pt(self) -> float:
        """The title's size: 2 points above the ticks."""
        return self.text_pt + TITLE_PT - TICK_PT

    def set_title(self, title: str) -> None:
        set_title(self.item, title, self.foreground, self.title_pt)

    @property
    def title(self) -> str:
        return getattr(self.item, "_shown_title", "")


class HeatmapBox(PlotBox):
    """A labelled matrix in a panel: rows and columns as token axes (or numbers), a colour bar, the value under
    the mouse as a tooltip. .heatmap is the Heatmap; .shown, .rows and .cols what it shows (plot menus export
    them)."""

    def __init__(self, title: str, row_label: str, col_label: str, row_tokens: bool = True,
                 col_tokens: bool = True, colormap: str = SIGNED_COLORMAP, bar_label: str = "value",
                 min_height: int = 280):
        # 280 px: in a narrow dock a smaller heatmap's rows lose their token labels (its scroll area scrolls)
        axes = {}                         # rows and columns are tokens, or numbered: whole numbers either way
        for side, tokens in (("left", row_tokens), ("bottom", col_tokens)):
            axes[side] = TokenAxis(side) if tokens else WholeNumberAxis(side)
        super().__init__(title, row_label, col_label, axisItems=axes, min_height=min_height)
        self.row_label, self.col_label, self.bar_label = row_label, col_label, bar_label
        self.figure_title = None          # () -> the title of its exported figure (None: the one on screen)
        self.heatmap = Heatmap(self.item, font_size=None, labels=False, foreground=self.foreground,
                               row_tokens=row_tokens, col_tokens=col_tokens, colormap=colormap, padding=0.0)
        self.image = self.heatmap.image
        self.colorbar = self.heatmap.add_colorbar(bar_label, width=14, font=tick_font(self.text_pt))
        self.text_size_changed.connect(self._colorbar_font)
        self.item.scene().sigMouseMoved.connect(self._hover)

    def _colorbar_font(self, points: float) -> None:
        self.heatmap.set_colorbar_font(tick_font(points))

    @property
    def shown(self) -> np.ndarray | None:
        return self.heatmap.shown

    @property
    def rows(self) -> list[str]:
        return self.heatmap.rows

    @property
    def cols(self) -> list[str]:
        return self.heatmap.cols

    @property
    def row_axis(self) -> pg.AxisItem:
        return self.item.getAxis("left")

    @property
    def col_axis(self) -> pg.AxisItem:
        return self.item.getAxis("bottom")

    def show_matrix(self, matrix: np.ndarray, rows: list[str], cols: list[str] | None,
                    levels: tuple[float, float], mask: np.ndarray | None = None) -> None:
        """mask: False where a cell is hatched (not used by the model), as in the attention panel."""
        self.heatmap.show_matrix(matrix, mask, rows, cols, levels=levels, max_labels=None)

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        return self.heatmap.cell_at(scene_pos)

    def _hover(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos) if self.item.vb.sceneBoundingRect().contains(scene_pos) else None
        if cell is None:
            self.setToolTip("")
            return
        r, c = cell
        row = self.rows[r] if r < len(self.rows) else str(r)
        col = self.cols[c] if c < len(self.cols) else str(c)
        self.setToolTip(f"{row} × {col}: {float(self.shown[r, c]):.6g}")
