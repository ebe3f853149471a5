"""Presentation mode (F11: full screen, large high-contrast text, room for the plots), text size and themes."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .theme import apply_theme


def presentation_point_size(screen_height: int) -> float:
    """The text size of presentation mode: a line per 1/55 of the screen's height, 14 to 24 points (a 720p
    projector: 14; 1080p: 19.6). A fixed 18 points left a 720-line screen too little room for the heatmap."""
    return float(min(24.0, max(14.0, round(screen_height / 55, 1))))


SMALLEST_TEXT = 8.0          # points: the least text keep_on_screen makes to fit a small screen
SETTLE_MS = 150              # a text size unchanged this long has settled (a held key repeats every 33 ms)


class Presentation:
    """Switches a window into presentation mode and back, restoring what it changed; text size and theme."""

    def __init__(self, window):
        self.window = window
        self._before: dict | None = None      # what presentation mode changed: font size, theme, details, layout
        self.theme = window.settings.get("theme")     # the theme on screen (high-contrast in class, unless chosen)
        # a screen of this size (a --screenshot's --size) instead of the real one: offscreen, whose screen is
        # 800 × 800, `--presentation --size 1280x720` had given an 803 × 800 picture (QA)
        self.screen_size: tuple[int, int] | None = None
        self._settle: QtCore.QTimer | None = None      # keep_on_screen's check once the text has settled
        self._asked: float | None = None               # … the size asked for before it took smaller text
        self._remember = False

    def toggle(self, theme: str | None = None) -> None:
        """Into presentation mode (in the high-contrast theme, or theme: `--theme dark --presentation` had opened
        in high contrast; QA as a teacher), or out of it."""
        w, actions = self.window, self.window.menus
        on = not self.active
        actions.present.setChecked(on)
        actions.leave_presentation.setEnabled(on)
        for act in actions.blank_actions.values():      # B and W are letters the fields type outside the class
            act.setEnabled(on)
        actions.blank.end()
        if on:
            actions.blank.watch_number_boxes()
        if on:
            self._before = {"font": QtWidgets.QApplication.font().pointSizeF(), "theme": w.settings.get("theme"),
                            "details": actions.details.isChecked()}
            self.set_theme(theme or "high-contrast", remember=False)
            height = self.screen_size[1] if self.screen_size else w.screen().geometry().height()
            self.set_font_size(presentation_point_size(height))
            actions.details.setChecked(False)      # room for the plots; View menu brings the controls back
            self._before["layout"] = w.saveState()
            self._before["geometry"] = w.geometry()
            self._full_screen()
            QtCore.QTimer.singleShot(0, self._size_docks)
            focus = w.focusWidget()        # (the one it will have once shown: --presentation enters before)
            if focus is None or isinstance(focus, QtWidgets.QLineEdit):
                # the keyboard off the sentence: a remote's keys (B to blank the screen) had typed into it, and it
                # translated again; a click or Alt+E brings it back to type
                w.attention.canvas.setFocus(QtCore.Qt.FocusReason.OtherFocusReason)
        else:
            before, self._before = self._before or {}, None
            before["tabs"] = w.docking.front_tabs()        # the tabs chosen in class stay in front after it
            self.set_theme(before.get("theme", "light"), remember=False)
            self.set_font_size(before.get("font", w.settings.get("font_size")))
            actions.details.setChecked(before.get("details", True))
            w.showNormal()
            if before.get("layout") is not None:
                # the docks as they were before the class; and again two turns of the event loop later, once the
                # smaller text has relaid the window out: restored at once only, they were sized against the
                # class's minimum widths (the output dock came back 177 pixels wide, not 307). The window's size
                # too: shown normal while the class's larger text still set its minimum size, it came back
                # 1608 × 861 on a 1366 × 768 screen, its docks and status bar off it
                w.docking.restore_state(before["layout"])
                w.docking.raise_tabs(before["tabs"])
                QtCore.QTimer.singleShot(0, w, lambda: QtCore.QTimer.singleShot(0, w, lambda: self._restore(before)))

    def _restore(self, before: dict) -> None:
        """The window's place, size and docks as before presentation mode."""
        w = self.window
        if self.active:                          # F11 again meanwhile
            return
        w.docking.restore_state(before["layout"])        # first: the docks set the window's least width
        w.docking.raise_tabs(before.get("tabs", ()))
        if before.get("geometry") is not None:
            w.setGeometry(before["geometry"])
        w.room_changed()

    @property
    def active(self) -> bool:
        """Whether presentation mode is on: its own record, not the window's full-screen flag, which a dock layout
        restored in class (F9 twice) cleared, so that F11 then entered presentation mode again instead of leaving
        it (the class's text stayed)."""
        return self._before is not None

    def keep_full_screen(self) -> None:
        """Full screen again if presentation mode is on and a restored layout left it."""
        if self.active and not self.window.isFullScreen() and not self.screen_size:
            self._full_screen()

    def _full_screen(self) -> None:
        if self.screen_size:
            self.window.resize(*self.screen_size)
            self.window.show()
        else:
            self.window.showFullScreen()

    def _size_docks(self) -> None:
        """In class the prediction matters more than LayerNorm statistics: the output panel gets 60% of the right
        column, so that its bars and their tokens can be read at the large font; the columns their default widths."""
        w, docks = self.window, self.window.docks
        if self.active:
            # the columns at their default shares: entered from a layout laid out at the normal text size, the
            # class's larger text had widened the right column to 545 of 1280 pixels and left the heatmap a strip
            # (entered with --presentation it had 387; QA)
            w.docking.size_columns()
        if self.active and "output" in docks and "layernorm" in docks:
            h = w.height()
            w.resizeDocks([docks["output"], docks["layernorm"]], [int(h * 0.6), int(h * 0.4)],
                          QtCore.Qt.Orientation.Vertical)

    def zoom(self, direction: int) -> None:
        """Text 2 points larger or smaller (View ▸ Larger text, Smaller text). Larger only while the window still
        fits the screen: at 1280 × 800, six steps made it 1319 pixels wide, the right column off the screen and the
        heatmap a 2-pixel line (QA, a low-vision teacher); see keep_on_screen."""
        before = QtWidgets.QApplication.font().pointSizeF()
        self.resize_text(before + 2 * direction)
        if direction > 0:
            self.keep_on_screen(remember=True)

    def normal_text(self) -> None:
        """The text size of the mode on screen: the app's default, or presentation mode's for this screen; smaller
        where the window would not fit the screen at it (see keep_on_screen)."""
        w = self.window
        if self.active:
            self.set_font_size(presentation_point_size(self.screen_size[1] if self.screen_size
                                                       else w.screen().geometry().height()))
        else:
            from .settings import DEFAULTS
            self.resize_text(DEFAULTS["font_size"])
        self.keep_on_screen(remember=False)

    def fit_screen(self) -> None:
        """At start: a window too large for its screen takes smaller text (a screen at 150 % scaling, 853 logical
        pixels wide, had the window 893 wide, its right column off the screen: QA); not remembered."""
        self.keep_on_screen(remember=False)

    def resize_text(self, size: float) -> None:
        """The text at size, remembered for the next start outside presentation mode."""
        self.set_font_size(size)
        if not self.active:
            self.window.settings.set("font_size", size)
            # the side columns to their shares once the new text has relaid the window out (see ColumnWidths)
            w = self.window
            QtCore.QTimer.singleShot(0, w, lambda: QtCore.QTimer.singleShot(0, w, w.docking.widths.restore))

    def room(self) -> QtCore.QSize | None:
        """The screen's room for the window (less its frame), or None where there is no screen to fit: offscreen,
        whose 800 × 800 is a placeholder, unless a --size stands for the screen."""
        w = self.window
        if self.screen_size:
            return QtCore.QSize(*self.screen_size)
        screen = w.screen()
        if screen is None or QtWidgets.QApplication.platformName() == "offscreen":
            return None
        frame = w.frameGeometry().size() - w.size()
        return screen.availableGeometry().size() - frame

    def fits(self) -> bool:
        """Whether the window's least size fits the screen's room."""
        room, least = self.room(), self.window.minimumSizeHint()
        return room is None or (least.width() <= room.width() and least.height() <= room.height())

    def keep_on_screen(self, remember: bool) -> None:
        """Once the text's size has settled (a held Ctrl++ sends a step every 33 ms; each relays the window out over
        two turns of the event loop), the text a point smaller at a time while the window's least size does not fit
        the screen, down to SMALLEST_TEXT; then the window within the screen and a word in the status bar.
        remember: the size it ends at is the one the next start takes (Ctrl++), else not (at start, Ctrl+0).
        A check per step had taken back one step of several, and said the window fit when it did not (a review)."""
        if self._settle is None:
            self._settle = QtCore.QTimer(self.window, singleShot=True, interval=SETTLE_MS)
            self._settle.timeout.connect(self._shrink_to_fit)
        self._asked = QtWidgets.QApplication.font().pointSizeF()       # the size last asked for
        self._remember = remember
        self._settle.start()

    def _shrink_to_fit(self) -> None:
        w, size = self.window, QtWidgets.QApplication.font().pointSizeF()
        if not self.fits() and size - 1 >= SMALLEST_TEXT:
            (self.resize_text if self._remember else self.set_font_size)(size - 1)
            self._settle.start()                    # checked again once that has relaid the window out
            return
        asked, self._asked = self._asked, None
        asked = max(asked, size)
        if size >= asked:
            return                                  # it fits as asked: nothing to say
        room = self.room()
        if room is not None and not w.isFullScreen():
            self._within(room)
        said = ("the largest at which the window fits this screen" if self.fits() else
                "the least it takes, and the window still does not fit this screen")
        self.say(f"Text at {size:g} pt (not {asked:g}): {said}. F9 gives the heatmap the window.")

    def say(self, text: str) -> None:
        """A word in the status bar, after the message showing (the notices of a start had been replaced: a
        review)."""
        bar = self.window.statusBar()
        before = bar.whole_message()
        bar.showMessage(f"{before} · {text}" if before and not before.startswith("Text at ") else text, 20000)

    def _within(self, room: QtCore.QSize) -> None:
        """The window back within room, and on its screen: Qt had widened it to the larger text's least width, and
        keeps the least size its layout last set until the layout runs again."""
        w = self.window
        w.layout().activate()
        w.resize(min(w.width(), room.width()), min(w.height(), room.height()))
        screen = w.screen()
        if screen is not None and not self.screen_size and QtWidgets.QApplication.platformName() != "offscreen":
            area, frame = screen.availableGeometry(), w.frameGeometry()
            x = min(max(frame.x(), area.left()), max(area.left(), area.right() + 1 - frame.width()))
            y = min(max(frame.y(), area.top()), max(area.top(), area.bottom() + 1 - frame.height()))
            if (x, y) != (frame.x(), frame.y()):
                w.move(x, y)

    def set_font_size(self, size: float) -> None:
        w = self.window
        if w.statusBar().currentMessage().startswith("Text at "):   # no longer true (it had stayed: QA)
            w.statusBar().clearMessage()
        apply_theme(QtWidgets.QApplication.instance(), self.theme, point_size=size)
        QtCore.QTimer.singleShot(0, w, self._resize_combos)
        w.refit_caption()          # the lines the window holds changed: the compact level may have too

    def _resize_combos(self) -> None:
        """A combo box keeps the least size it had before a font change (Qt forgets it on a style change only):
        after the class, the Model and Decoding boxes kept the class's height. Once the new font has reached them."""
        for combo in self.window.findChildren(QtWidgets.QComboBox):
            QtWidgets.QApplication.sendEvent(combo, QtCore.QEvent(QtCore.QEvent.Type.StyleChange))

    def set_theme(self, name: str, remember: bool = True) -> None:
        """Show a theme, and tick it in View ▸ Theme. Remembered for the next start unless in presentation mode,
        whose theme (high-contrast, or the one chosen in class) lasts until it ends."""
        self.theme = name
        apply_theme(QtWidgets.QApplication.instance(), name)
        self.window.theme_changed()
        action = getattr(getattr(self.window, "menus", None), "theme_actions", {}).get(name)
        if action is not None:
            action.setChecked(True)
        if remember and not self.active:
            self.window.settings.set("theme", name)
