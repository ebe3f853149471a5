"""Letters typed in an open menu go to the item whose words begin with them, as in a file list: the menus' items
have no underlined letter, and the View menu's 30-odd items had to be arrowed through (QA, a keyboard user). Qt's
own search (the style's SH_Menu_KeyboardSearch) goes to the first item that holds the letters anywhere: "n" chose
"Go to panel" (QA)."""
from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

PAUSE_S = 1.0          # a longer pause between two letters starts a new word


def words(action) -> str:
    """An item's words as shown: its mnemonic's & left out, its shortcut's column (after a tab) too."""
    return action.text().split("\t", 1)[0].replace("&&", "\0").replace("&", "").replace("\0", "&").casefold()


class TypeAhead(QtCore.QObject):
    """Installed on menus (install): a letter goes to the next item that begins with the letters typed so far;
    the same letter again goes on to the next item that begins with it."""

    def __init__(self, parent: QtCore.QObject):
        super().__init__(parent)
        self.typed, self.at = "", 0.0

    def install(self, root: QtWidgets.QWidget) -> None:
        """On every menu under root (a menu bar's menus and their submenus), and on root if it is a menu."""
        menus = root.findChildren(QtWidgets.QMenu) + ([root] if isinstance(root, QtWidgets.QMenu) else [])
        for menu in menus:
            menu.removeEventFilter(self)
            menu.installEventFilter(self)

    def eventFilter(self, menu, event) -> bool:
        if event.type() != QtCore.QEvent.Type.KeyPress or not isinstance(menu, QtWidgets.QMenu):
            return False
        letter = event.text()
        plain = QtCore.Qt.KeyboardModifier.ShiftModifier | QtCore.Qt.KeyboardModifier.KeypadModifier
        if len(letter) != 1 or not letter.isprintable() or letter.isspace() or event.modifiers() & ~plain:
            return False
        now = time.monotonic()
        self.typed = (self.typed if now - self.at < PAUSE_S else "") + letter.casefold()
        self.at = now
        items = [a for a in menu.actions() if not a.isSeparator() and a.isVisible() and a.isEnabled() and a.text()]
        if not items:
            return True
        current = menu.activeAction()
        start = items.index(current) if current in items else -1
        same = len(set(self.typed)) == 1               # one letter again and again: the next item it begins
        wanted = self.typed[0] if same and len(self.typed) > 1 else self.typed
        after = items[start + 1:] + items[:start + 1] if same else items[max(start, 0):] + items[:max(start, 0)]
        found = next((a for a in after if words(a).startswith(wanted)), None)
        if found is not None:
            menu.setActiveAction(found)
        return True
