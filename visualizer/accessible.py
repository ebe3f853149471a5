"""What a screen reader says: names for the controls and plots that have no words of their own to be read (a spin box
said "1.00", a plot nothing at all), and announcements of what changes without the keyboard's focus moving (a
heatmap cell read out by the arrow keys, a status-bar message, a new translation).

A blind student's QA pass found no accessible name on any spin box, plot or table, and no event sent for anything."""
from __future__ import annotations

import re

from PySide6 import QtCore, QtGui, QtWidgets

TAG = re.compile(r"<[^>]+>")


def plain(rich: str) -> str:
    """Rich text as a screen reader should read it: tags gone, entities read, one line."""
    text = QtGui.QTextDocumentFragment.fromHtml(TAG.sub(" ", rich.replace("<br>", " · "))).toPlainText()
    return " ".join(text.replace("\u2060", "").split())


def name(widget: QtWidgets.QWidget, words: str, description: str | None = None) -> None:
    """Give widget the name a screen reader says for it (and a description, read after it), when they change."""
    words = plain(words)
    if widget.accessibleName() != words:
        widget.setAccessibleName(words)
        if isinstance(widget, QtWidgets.QComboBox):
            (widget.findChild(BoxLabel) or BoxLabel(widget)).place()
    if description is not None and widget.accessibleDescription() != description:
        widget.setAccessibleDescription(description)


class BoxLabel(QtCore.QObject):
    """A combo box's name, where Qt reads it from the label whose buddy the box is: on Linux it passes over the
    box's accessibleName and says its current item (Orca read the attention kind's box as "Encoder self", the
    Rollout tab's as "Rollout (self-attention, heads averaged)": QA). A label never shown, beside the box in its
    parent, follows the box's name and parent."""

    def __init__(self, box: QtWidgets.QComboBox):
        super().__init__(box)
        self.box = box
        self.label: QtWidgets.QLabel | None = None
        box.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QtCore.QEvent.Type.ParentChange:
            self.place()
        return False

    def place(self) -> None:
        parent = self.box.parentWidget()
        if parent is None:                   # not yet in a panel: placed when it is
            return
        if self.label is None:
            self.label = QtWidgets.QLabel(parent)
            self.label.setBuddy(self.box)
        elif self.label.parentWidget() is not parent:
            self.label.setParent(parent)
        self.label.hide()
        self.label.setText(self.box.accessibleName())


def announce(widget: QtWidgets.QWidget, text: str) -> None:
    """Have a screen reader say text now (politely, after what it is saying), as coming from widget. Nothing is
    sent while no assistive technology listens."""
    if text and QtGui.QAccessible.isActive():
        QtGui.QAccessible.updateAccessibility(QtGui.QAccessibleAnnouncementEvent(widget, plain(text)))
