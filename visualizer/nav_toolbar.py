"""The navigation toolbar's button texts, fitted to its width: in words ("◀ Sublayer", "Sublayer ▶") where they
fit, else each pair named once ("◀", "Sublayer ▶"), so that no step goes behind the toolbar's "»" menu. At a
class's text size (presentation mode, then Ctrl++ at 1024 × 768) ◀ Step and Step ▶ went behind it (QA as a
teacher). The menus and tooltips keep the full names."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


def tight(short: str) -> str:
    """A step's text in a crowded toolbar: the backward one of a pair as its arrow alone ("◀ Head" → "◀"), First
    and Last as theirs ("« First" → "«"), the forward one whole ("Head ▶")."""
    if short in ("« First", "Last »"):
        return short.split()[0] if short.startswith("«") else short.split()[-1]
    head, _, _ = short.partition(" ")
    return head if head in ("◀", "▲") else short


class FittedTexts(QtCore.QObject):
    """Keeps a toolbar's actions' texts (their iconText) whole or tight as its width allows."""

    def __init__(self, toolbar: QtWidgets.QToolBar, actions: list[QtGui.QAction], refitted=lambda: None):
        """refitted: called after the texts change. A button takes its action's enabled state again at any change
        of its action: the steps greyed as the buttons (see actions.grey_moves) came back bright after presentation
        mode, at the pipeline's first head and step."""
        super().__init__(toolbar)
        self.toolbar, self.actions, self.refitted = toolbar, actions, refitted
        self.whole = {a: a.iconText() for a in actions}
        self.is_tight = False
        toolbar.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.FontChange,
                            QtCore.QEvent.Type.StyleChange):
            QtCore.QTimer.singleShot(0, self, self.fit)          # once the buttons have the new font
        return False

    def needed(self, texts: dict) -> int:
        """The width the buttons need with texts, from their widths with the texts they show now."""
        total = 0
        for act in self.actions:
            button = self.toolbar.widgetForAction(act)
            if button is None:
                continue
            fm = button.fontMetrics()
            total += (button.sizeHint().width() - fm.horizontalAdvance(act.iconText())
                      + fm.horizontalAdvance(texts[act]) + self.toolbar.layout().spacing())
        return total

    def room(self) -> int:
        """The toolbar's width less its handle, margins, separators and the room of its "»" button."""
        style, bar = self.toolbar.style(), self.toolbar
        separators = sum(w.width() for w in bar.findChildren(QtWidgets.QWidget)
                         if type(w).__name__ == "QToolBarSeparator")
        handle = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ToolBarHandleExtent, None, bar)
        extension = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ToolBarExtensionExtent, None, bar)
        left, _, right, _ = bar.layout().getContentsMargins()
        return bar.width() - separators - handle - extension - left - right - 8

    def fit(self) -> None:
        tight_now = self.needed(self.whole) > self.room()
        if tight_now == self.is_tight:
            return
        self.is_tight = tight_now
        for act in self.actions:
            act.setIconText(tight(self.whole[act]) if tight_now else self.whole[act])
        self.refitted()
