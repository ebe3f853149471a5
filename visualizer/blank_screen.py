"""A black or white screen in presentation mode (B or W, as a slide show takes them): the class looks at the
teacher, not the heatmap. A presenter remote's "blank" button sends B or "." (W or "," for white); it had typed
"b" into the sentence, which then translated again (QA as a teacher)."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

# (colour, its name in the View menu, its keys: the letter, and the key a remote's button sends)
BLANKS = {"black": ("Black screen", ("B", ".")), "white": ("White screen", ("W", ","))}


class BlankScreen(QtWidgets.QWidget):
    """Covers the whole window, menus and docks too, in one colour. Any key or click brings the view back, with
    the keyboard where it was; the key does nothing else (Esc does not leave presentation mode, PageDown does not
    move the view: the class sees what it saw before)."""

    def __init__(self, window: QtWidgets.QMainWindow):
        super().__init__(window)
        self.window = window
        self.colour = ""
        self._focus: QtWidgets.QWidget | None = None
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.setCursor(QtCore.Qt.CursorShape.BlankCursor)
        self.setAccessibleName("Blank screen: press any key to show the window again")
        self.hide()
        self._floating: list[QtWidgets.QDockWidget] = []     # docks floated off the window, hidden while blank
        window.installEventFilter(self)
        # the Layer and Head boxes take no letters, "." or ",": the blank keys pass them (clicked in class, they
        # had the keyboard, and B did nothing; QA). On the boxes alone, from presentation mode on: on the whole
        # application it was a Python call at every event of every widget
        self._number_keys = _KeysPastNumberBoxes(self)

    def watch_number_boxes(self) -> None:
        """The window's whole-number spin boxes let the blank keys past (installed again: Qt keeps one of each)."""
        for box in self.window.findChildren(QtWidgets.QSpinBox):
            box.installEventFilter(self._number_keys)

    def show_colour(self, colour: str) -> None:
        """Blank the window in colour ("black" or "white"); the same colour again brings the view back."""
        if self.isVisible():
            self.end()
            return
        self.colour = colour
        self._focus = QtWidgets.QApplication.focusWidget()
        self.setGeometry(self.window.rect())
        # a dock floated off the window is a window of its own: it stayed over the black (QA)
        self._floating = [d for d in self.window.findChildren(QtWidgets.QDockWidget) if d.isFloating()
                          and d.isVisible()]
        for dock in self._floating:
            dock.hide()
        self.show()
        self.raise_()
        self.activateWindow()
        self.setFocus(QtCore.Qt.FocusReason.OtherFocusReason)

    def end(self) -> None:
        if not self.isVisible():
            return
        self.hide()
        for dock in self._floating:
            dock.show()
        self._floating = []
        if self._focus is not None and self._focus.isVisible():
            self._focus.setFocus(QtCore.Qt.FocusReason.OtherFocusReason)
        self._focus = None

    def paintEvent(self, _event) -> None:
        QtGui.QPainter(self).fillRect(self.rect(), QtGui.QColor(self.colour or "black"))

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ShortcutOverride:      # every key is the blank screen's, Esc too
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() not in (QtCore.Qt.Key.Key_Shift, QtCore.Qt.Key.Key_Control, QtCore.Qt.Key.Key_Alt,
                               QtCore.Qt.Key.Key_Meta):
            self.end()

    def mousePressEvent(self, _event) -> None:
        self.end()

    def eventFilter(self, watched, event) -> bool:
        if watched is self.window and event.type() == QtCore.QEvent.Type.Resize:
            self.setGeometry(self.window.rect())
        return False


class _KeysPastNumberBoxes(QtCore.QObject):
    """Lets the blank screen's keys (no modifier) past a focused whole-number spin box of a window in presentation
    mode: the box would take them as typing, and it takes no letter, "." or ",". A decimal box (T = 1.00) keeps "."
    and ","; a text field keeps them all."""

    KEYS = {QtGui.QKeySequence(k)[0].key() for _, keys in BLANKS.values() for k in keys}

    def eventFilter(self, watched, event) -> bool:
        if (event.type() == QtCore.QEvent.Type.ShortcutOverride and isinstance(watched, QtWidgets.QSpinBox)
                and event.modifiers() == QtCore.Qt.KeyboardModifier.NoModifier and event.key() in self.KEYS
                and getattr(getattr(watched.window(), "presentation", None), "active", False)):
            event.ignore()                        # not the box's: the window's shortcut takes it
            return True
        return False
