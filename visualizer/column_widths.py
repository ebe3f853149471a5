"""The side columns' widths kept as shares of the window's width: a window made narrow and then wide again gives
its side docks their room back. Qt gives a growing window's new width to the centre alone: QA saw the output
distribution and LayerNorm panels left 160 pixels wide at 1280 × 720 after the window had been 800 wide, until
View ▸ Reset layout."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

SIDES = (QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
SLACK = 8                 # pixels a column may be narrower than its share before it is widened


class ColumnWidths(QtCore.QObject):
    """Remembers each side column's share of the window's width when the layout is set (the default sizes, a
    restored layout) and when the user drags a column's edge; widens a column back to its share as the window
    grows. A shrinking window squeezes the columns as Qt does (their shares stay)."""

    def __init__(self, window: QtWidgets.QMainWindow, docks: dict[str, QtWidgets.QDockWidget]):
        super().__init__(window)
        self.window, self.docks = window, docks
        self.shares: dict[QtWidgets.QDockWidget, float] = {}
        self._width = 0                          # the window's width the shares and the columns were last seen at
        for dock in docks.values():
            dock.installEventFilter(self)

    def columns(self) -> list[QtWidgets.QDockWidget]:
        """The widest shown, docked dock of the left and of the right area: its width is its column's (a dock
        behind a tab may report another)."""
        found = []
        for area in SIDES:
            docked = [d for d in self.docks.values()
                      if d.isVisible() and not d.isFloating() and self.window.dockWidgetArea(d) == area]
            found += [max(docked, key=lambda d: d.width())] if docked else []
        return found

    def remember(self) -> None:
        width = self.window.width()
        if width > 0:
            self.shares = {d: d.width() / width for d in self.columns()}
            self._width = width

    def remember_soon(self) -> None:
        """remember() once the layout just set has been applied (resizeDocks and restoreState take effect later)."""
        QtCore.QTimer.singleShot(0, self, self.remember)

    def eventFilter(self, watched, event) -> bool:
        # a column resized while the window keeps its width, with the mouse button down: its edge is being dragged
        if (event.type() == QtCore.QEvent.Type.Resize and self.window.width() == self._width
                and QtWidgets.QApplication.mouseButtons() & QtCore.Qt.MouseButton.LeftButton):
            self.remember()
        return False

    def window_resized(self) -> None:
        """The window's width changed: as it grows, each column narrower than its share is widened to it."""
        width, before = self.window.width(), self._width
        self._width = width
        if width > before:
            self.restore(widen_only=True)

    def restore(self, widen_only: bool = False) -> None:
        """Each column to its share of the window's width again (widen_only: only those narrower than it). After
        a text size change too: larger text widened the centre's least width, Qt took the room from the right
        column, and smaller text again left the output distribution 160 pixels wide and cut, after a restart too
        (QA as a teacher)."""
        if not self.shares:
            return
        width = self.window.width()
        docks = [d for d in self.columns() if d in self.shares]
        wanted = [int(self.shares[d] * width) for d in docks]
        if any(d.width() < w - SLACK or (not widen_only and d.width() > w + SLACK) for d, w in zip(docks, wanted)):
            self.window.resizeDocks(docks, wanted, QtCore.Qt.Orientation.Horizontal)
