"""A text label whose new text does not lay the whole window out again.

QLabel.setText always calls updateGeometry(). In a window of docks that request climbs to the main window,
which lays out every dock and repaints most of the screen: about 7 ms for each view change that rewrote a
caption or a panel header (measured with the step changes of benchmarks/gui_speed.py). Here the QLabel sits
in a holder widget without a layout, so its requests stop at the holder; the holder asks its own layout for
room only when the new text needs a different height at the current width.

grow_only: the height, once grown, stays until the width or the font changes. For the translation under the
sentence field: while typing, its text wraps onto one line more and one line less, and each change of height
would move every panel below it up or down and draw them all again.

set_reserve: texts the label will show next (the caption's for every stage of the pipeline): its height is the
tallest of theirs from the start, so that stepping through them moves nothing below it.
"""
from __future__ import annotations

import weakref

from PySide6 import QtCore, QtGui, QtWidgets


class SteadyLabel(QtWidgets.QWidget):
    _growing: "weakref.WeakSet[SteadyLabel]" = weakref.WeakSet()     # the grow_only ones, for refit_all

    @classmethod
    def refit_all(cls) -> None:
        """Fit every shown grow_only label to its text again, smaller too: when a result has settled. The output
        panel's header kept the blank line of a beam search's two-line header after greedy came back (QA)."""
        for label in list(cls._growing):
            try:
                shown = label.isVisible()
            except RuntimeError:          # its C++ side is gone (a closed window's)
                continue
            if shown:
                label.refit()

    def __init__(self, parent: QtWidgets.QWidget | None = None, *, rich: bool = True, wrap: bool = True,
                 min_point_size: float = 0.0, scale: float = 1.0, grow_only: bool = False):
        """The text follows the application's font size (presentation mode, zoom) times scale, but never below
        min_point_size."""
        super().__init__(parent)
        self.min_point_size, self.scale, self.grow_only = min_point_size, scale, grow_only
        if grow_only:
            SteadyLabel._growing.add(self)
        self._fitted_width = -1                     # the width the height was last fitted at
        self._heights: dict[tuple[str, int], int] = {}   # (text, width) -> height: rich text is slow to measure
        self._reserve: tuple[str, ...] = ()             # texts whose height the label keeps room for (set_reserve)
        self._scratch: QtWidgets.QLabel | None = None   # measures them, never shown
        self.label = QtWidgets.QLabel(self)
        self.label.setWordWrap(wrap)
        self.label.setTextFormat(QtCore.Qt.TextFormat.RichText if rich else QtCore.Qt.TextFormat.PlainText)
        policy = QtWidgets.QSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
        policy.setHeightForWidth(wrap)
        self.setSizePolicy(policy)
        self._fit_font()
        self._height = self._needed_height()

    # --- the QLabel calls the panels use --------------------------------------------------------------
    def text(self) -> str:
        return self.label.text()

    def setText(self, text: str) -> None:
        if text != self.label.text():
            self.label.setText(text)
            self._refit()

    # --- geometry ---------------------------------------------------------------------------------------
    def set_reserve(self, texts) -> None:
        """Keep room for the tallest of texts (besides the text shown) from now on: see the module's note."""
        texts = tuple(texts)
        if texts != self._reserve:
            self._reserve = texts
            self._refit(restart=True)

    def _needed_height(self, width: int | None = None) -> int:
        width = self.width() if width is None else width
        if not (self.label.wordWrap() and width > 0):
            return self.label.sizeHint().height()
        return max(self._height_of(t, width) for t in (self.label.text(), *self._reserve))

    def _height_of(self, text: str, width: int) -> int:
        key = (text, width)          # a layer change measures again the header of a layer seen before
        if key not in self._heights:
            if len(self._heights) > 512:
                self._heights.clear()
            self._heights[key] = self._measurer(text).heightForWidth(width)
        return self._heights[key]

    def _measurer(self, text: str) -> QtWidgets.QLabel:
        """The label itself for its own text; for another, a hidden label set up as it is."""
        if text == self.label.text():
            return self.label
        if self._scratch is None:
            self._scratch = QtWidgets.QLabel()
            self._scratch.setWordWrap(True)
        scratch, label = self._scratch, self.label
        scratch.setTextFormat(label.textFormat())
        scratch.setFont(label.font())
        scratch.setContentsMargins(label.contentsMargins())
        scratch.setText(text)
        return scratch

    def refit(self) -> None:
        """Fit the height to the text again, smaller too (a grow_only label whose text changed kind)."""
        self._refit(restart=True)

    def _refit(self, restart: bool = False) -> None:
        height = self._needed_height()
        if self.grow_only and not restart:
            height = max(height, self._height)
        if height != self._height:        # only then does the layout around this label need to change
            self._height = height
            self.updateGeometry()

    def hasHeightForWidth(self) -> bool:
        return self.label.wordWrap()

    def heightForWidth(self, width: int) -> int:
        if self.grow_only and width == self._fitted_width:
            return max(self._needed_height(width), self._height)
        return self._needed_height(width)

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(self.label.sizeHint().width(), self._height)

    def minimumSizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(self.label.minimumSizeHint().width(), self._height)

    def resizeEvent(self, event) -> None:
        self.label.setGeometry(self.rect())
        self._refit(restart=self.width() != self._fitted_width)
        self._fitted_width = self.width()
        super().resizeEvent(event)

    def _fit_font(self) -> None:
        self._heights.clear()
        if self.min_point_size or self.scale != 1.0:
            font = QtGui.QFont(self.font())
            font.setPointSizeF(max(font.pointSizeF() * self.scale, self.min_point_size))
            self.label.setFont(font)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange,
                            QtCore.QEvent.Type.StyleChange):
            self._fit_font()                     # measures again: the heights depend on the font
            self._refit(restart=True)
