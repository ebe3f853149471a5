"""What a screen reader says: names for the controls and plots that have no words of their own to be read (a spin box
said "1.00", a plot nothing at all), and announcements of what changes without the keyboard's focus moving (a
heatmap cell read out by the arrow keys, a status-bar message, a new translation).

A blind student's QA pass found no accessible name on any spin box, plot or table, and no event sent for anything."""
from __future__ import annotations

import re

from PySide6 import QtGui, QtWidgets

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
    if description is not None and widget.accessibleDescription() != description:
        widget.setAccessibleDescription(description)


def announce(widget: QtWidgets.QWidget, text: str) -> None:
    """Have a screen reader say text now (politely, after what it is saying), as coming from widget. Nothing is
    sent while no assistive technology listens."""
    if text and QtGui.QAccessible.isActive():
        QtGui.QAccessible.updateAccessibility(QtGui.QAccessibleAnnouncementEvent(widget, plain(text)))
