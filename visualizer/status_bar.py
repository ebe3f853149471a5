"""The window's status bar: a message that does not fit beside the permanent labels ends in "…", whole in the
tooltip (a class read "Same translation as bef" and "worked example by hand: d_mc", cut with no sign of it)."""
from __future__ import annotations

import re

from PySide6 import QtCore, QtWidgets

from . import accessible

PATH_END = re.compile(r"[/\\][^/\\\s]+\.\w{1,5}$")     # ends in a file's name: ".../cross_L2_H3.png"


def claim(note: str) -> str:
    """A note's first claim: the words before its first colon or full stop ("The text holds 3 sentences…")."""
    cut = min((i for i in (note.find(": "), note.find(". ")) if i > 0), default=-1)
    return note if cut < 0 else note[:cut] + "…"


class FittingStatusBar(QtWidgets.QStatusBar):
    """A QStatusBar whose messages fit: whole when there is room beside the permanent widgets, else cut with "…",
    the whole message in the bar's tooltip while it shows."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.permanent: list[QtWidgets.QWidget] = []
        self.messageChanged.connect(lambda text: text or self.setToolTip(""))

    def addPermanentWidget(self, widget, stretch: int = 0) -> None:
        self.permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def room(self) -> int:
        """Pixels a message has: the bar's width less its permanent widgets' and some spacing."""
        taken = sum(w.sizeHint().width() for w in self.permanent if w.isVisible())
        return self.width() - taken - 24

    def showMessage(self, text: str, timeout: int = 0) -> None:
        metrics, room = self.fontMetrics(), self.room()
        # a message that ends in a file's path keeps its end, the file's name ("Saved /home/…/cross_L2_H3.png")
        mode = QtCore.Qt.TextElideMode.ElideMiddle if PATH_END.search(text) else QtCore.Qt.TextElideMode.ElideRight
        shown = metrics.elidedText(text, mode, max(room, 40))
        self.setToolTip(text if shown != text else "")
        super().showMessage(shown, timeout)
        accessible.announce(self, text)          # whole, for a screen reader (the bar's changes say nothing)

    # events after which Qt shows the normal widgets again while a message still shows (presentation mode's font
    # and full screen drew "Model: en-fr …" over "Saved …", QA)
    RESHOWS = (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.StyleChange, QtCore.QEvent.Type.LayoutRequest,
               QtCore.QEvent.Type.Show, QtCore.QEvent.Type.Resize)

    def event(self, e) -> bool:
        done = super().event(e)
        if e.type() in self.RESHOWS and self.currentMessage():
            self.hideOrShow()                    # the widgets hidden again under the message
        return done

    def whole_message(self) -> str:
        """The message showing, whole (its tooltip when it was cut)."""
        return self.toolTip() or self.currentMessage()
