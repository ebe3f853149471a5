"""Widgets the panels share around their plots: a grid that goes to one column when narrow, a warning line and
a header line that gives its detail to its tooltip in a short dock. (The plots themselves are drawn by visualizer/plotting.)"""
from __future__ import annotations

import weakref

from PySide6 import QtCore, QtGui, QtWidgets

from ..plotting.colormaps import MARKED
from ..steady_label import SteadyLabel

HEADER_PT, HEADER_SCALE = 12.0, 0.8
SHORT_PANEL_LINES = 20       # a panel given fewer lines of its header's text than this: the header's short form


class ResponsiveGrid(QtWidgets.QScrollArea):
    """Plots in two columns when there is room, one column (scrolling) in a narrow dock.

    Items are (widget, wide): a wide widget takes a whole row in the two-column layout.
    """

    TWO_COLUMNS_FROM = 760    # pixels of width

    def __init__(self, items: list[tuple[QtWidgets.QWidget, bool]], parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.inner = QtWidgets.QWidget()
        self.grid = QtWidgets.QGridLayout(self.inner)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(6)
        self.setWidget(self.inner)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)     # Tab goes to its plots (scrolled into view)
        self.items = items
        self.columns = 0
        self._arrange(2)

    def _arrange(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        for w, _ in self.items:
            self.grid.removeWidget(w)
        row = col = 0
        text_rows = set()          # rows of text (a label that takes only its height): they do not stretch
        for w, wide in self.items:
            if isinstance(w, QtWidgets.QLabel):
                text_rows.add(row + (1 if wide and col and columns == 2 else 0))
            if columns == 1:
                self.grid.addWidget(w, row, 0)
                row += 1
                continue
            if wide:
                if col:
                    row, col = row + 1, 0
                self.grid.addWidget(w, row, 0, 1, 2)
                row += 1
            else:
                self.grid.addWidget(w, row, col)
                row, col = (row, 1) if col == 0 else (row + 1, 0)
        used = row + (1 if col else 0)
        for r in range(self.grid.rowCount()):
            self.grid.setRowStretch(r, 1 if r < used and r not in text_rows else 0)

    def set_items(self, items: list[tuple[QtWidgets.QWidget, bool]]) -> None:
        """Lay out other widgets (those left out are hidden, kept for later)."""
        if [w for w, _ in items] == [w for w, _ in self.items]:
            return
        for w, _ in self.items:
            self.grid.removeWidget(w)
            w.setVisible(False)
        self.items = items
        for w, _ in items:
            w.setVisible(True)
        columns, self.columns = self.columns, 0
        self._arrange(columns)

    def resizeEvent(self, event) -> None:
        self._arrange(2 if event.size().width() >= self.TWO_COLUMNS_FROM else 1)
        super().resizeEvent(event)


TONES = {"warning": (MARKED, "#ffb454"), "alert": ("#b3261e", "#ff8a80")}   # (on a light window, on a dark one)


def tone_colour(tone: str) -> str:
    """The colour of a tone ("warning", "alert") that reads on the theme now on screen."""
    light, dark = TONES[tone]
    window = QtWidgets.QApplication.palette().color(QtGui.QPalette.ColorRole.Window)    # the theme's, not the
    return dark if window.lightness() < 128 else light                                 # sheet's


def weight_only_font(bold: bool) -> QtGui.QFont:
    """A font whose weight alone is a widget's own: its size follows the window's (presentation mode's larger text
    reaches it), as a style sheet's font did not."""
    font = QtGui.QFont()
    font.setBold(bold)
    return font


def quiet_colour() -> str:
    """The colour of a quiet aside ("[greedy]"), the theme's placeholder text: it reads on every theme (a fixed
    #888 was dim on the high-contrast theme's black)."""
    return QtWidgets.QApplication.palette().color(QtGui.QPalette.ColorRole.PlaceholderText).name()


class ToneLabel(QtWidgets.QLabel):
    """Text in a warning (orange) or alert (red) colour that reads on the window's theme: the dark shade on a light
    window, a light one on a dark window (the dark theme's "1 head off" was dark red on near-black)."""

    shown: "weakref.WeakSet[ToneLabel]" = weakref.WeakSet()      # every one alive, for theme.apply_theme

    def __init__(self, tone: str | None, bold: bool = False, parent=None):
        super().__init__(parent)
        self.tone, self.bold = tone, bold        # tone None: the palette's own text colour, untouched
        self.theme_changed()
        ToneLabel.shown.add(self)

    def colour(self) -> str:
        return tone_colour(self.tone)

    def theme_changed(self) -> None:
        """The colour for the theme now on screen; theme.apply_theme calls it for every one alive. In the label's
        palette and font, not a style sheet: a style sheet's font is the label's own, and the class's text size
        reached it one change late (in presentation mode the notes were the smallest text on screen, after it
        the largest)."""
        if self.tone:
            palette = self.palette()
            palette.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(self.colour()))
            self.setPalette(palette)
        if self.font().bold() != self.bold:
            self.setFont(weight_only_font(self.bold))


class NoteArea(QtWidgets.QScrollArea):
    """A word-wrapped label in a frameless scroll area as tall as the label's text at its width, up to `most`
    pixels, past which the text scrolls: the notes made whole under a translation ([more]) took 12 lines at
    1024 × 768 and left the heatmap a 10-pixel strip (QA as a teacher). Shown while the label is."""

    def __init__(self, label: QtWidgets.QLabel, parent=None):
        super().__init__(parent)
        self.label, self.most = label, 0                 # most: the tallest it grows (0: as tall as the text)
        self.setWidget(label)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setAutoFillBackground(False)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)      # Tab goes to the label's link, not a nameless pane
        policy = QtWidgets.QSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        label.installEventFilter(self)
        label.setVisible(False)                          # (setWidget showed it) hidden, as the area, until shown

    def set_most(self, pixels: int) -> None:
        if pixels != self.most:
            self.most = pixels
            self.updateGeometry()

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        text = max(self.label.heightForWidth(width), self.label.minimumSizeHint().height())
        return min(text, self.most) if self.most > 0 else text

    def sizeHint(self) -> QtCore.QSize:
        hint = self.label.sizeHint()
        return QtCore.QSize(hint.width(), self.heightForWidth(self.width()) if self.width() > 1 else hint.height())

    def minimumSizeHint(self) -> QtCore.QSize:
        # a line: the layout asks heightForWidth at the width it gives (at a width of 1 a word a line was the
        # window's least height, and the docks' shares moved when presentation mode's text came and went)
        return QtCore.QSize(0, self.label.minimumSizeHint().height())

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if watched is self.label and kind in (QtCore.QEvent.Type.ShowToParent, QtCore.QEvent.Type.HideToParent):
            self.setVisible(kind == QtCore.QEvent.Type.ShowToParent)      # the label's own setVisible decides
        elif watched is self.label and kind == QtCore.QEvent.Type.FontChange:
            self.updateGeometry()
        return super().eventFilter(watched, event)


class WrappedLabel(QtWidgets.QLabel):
    """A word-wrapped label at least as tall as its text at its width: a layout asks a label's minimum height at a
    width of its own guessing, and a narrow dock cut the LayerNorm panel's three-line note through its third line
    (QA)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)

    def _fit(self) -> None:
        if self.width() > 0:
            height = self.heightForWidth(self.width())
            if height > 0 and height != self.minimumHeight():
                self.setMinimumHeight(height)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.FontChange:      # presentation mode's larger text, at one width
            self._fit()


def notice_label(background: str = "#fde9c8", text: str = "#5a3300", bold: bool = True) -> QtWidgets.QLabel:
    """A note on a band of its own colour (a warning: bold, dark text on pale orange), in every theme; hidden while
    empty."""
    label = WrappedLabel()
    label.setTextFormat(QtCore.Qt.TextFormat.RichText)
    # colours in the label's palette, weight in its font: with a style sheet the label's font took the window's
    # size one change late, and kept presentation mode's after it (the LayerNorm panel's note filled the panel; QA)
    palette = label.palette()
    for role, colour in ((QtGui.QPalette.ColorRole.Window, background), (QtGui.QPalette.ColorRole.WindowText, text),
                         (QtGui.QPalette.ColorRole.Text, text), (QtGui.QPalette.ColorRole.Link, text)):
        palette.setColor(role, QtGui.QColor(colour))
    label.setPalette(palette)
    label.setAutoFillBackground(True)
    label.setFrameShape(QtWidgets.QFrame.Shape.Box)          # a thin line in the text's colour
    label.setContentsMargins(8, 4, 8, 4)
    if bold:
        label.setFont(weight_only_font(True))
    label.setVisible(False)
    return label


class ShortHeader(QtCore.QObject):
    """A panel header in two parts: its head, always shown, and a detail that becomes the header's tooltip while
    the panel is given fewer than SHORT_PANEL_LINES lines of the header's text (at 1280 × 720 the LayerNorm
    panel's whole header took 135 of its dock's 225 pixels, and the first plot showed its top). The room is the
    dock's scroll area's when the panel sits in one (it overflows it, down to its least height), else its own."""

    def __init__(self, panel: QtWidgets.QWidget, header: SteadyLabel):
        super().__init__(panel)
        self.panel, self.header = panel, header
        self.parts: tuple[str, str] | None = None
        self.is_short = False
        panel.installEventFilter(self)

    def set(self, head: str, detail: str) -> None:
        self.parts = (head, detail)
        self.is_short = self.short()
        self.header.setText(head if self.is_short else f"{head}<br>{detail}")
        self.header.setToolTip(detail if self.is_short else "")

    def short(self) -> bool:
        return self._room() < SHORT_PANEL_LINES * QtGui.QFontMetrics(self.header.label.font()).height()

    def _room(self) -> int:
        holder = self.panel.parentWidget()
        if holder is not None and isinstance(holder.parentWidget(), QtWidgets.QAbstractScrollArea):
            return holder.height()
        return self.panel.height()

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QtCore.QEvent.Type.ParentChange and watched is self.panel and self.panel.parentWidget():
            self.panel.parentWidget().installEventFilter(self)     # a scroll area's viewport: its resizes
        elif kind == QtCore.QEvent.Type.Resize and self.parts is not None and self.short() != self.is_short:
            self.set(*self.parts)
            self.header.refit()          # smaller too (a header only grows as its text changes)
        return False


def header_label() -> SteadyLabel:
    """A panel's header line: rich text, wrapped, at least 12 pt, and 0.8 of the application's font size when that
    is larger (presentation mode: readable from the back, and the plot below keeps its room). It changes at every
    step or layer, so it is a SteadyLabel (rewriting it does not lay the window out again) whose height only grows
(until the width or font changes): a header one line shorter at another stage does not move the plots below
and draw them all again."""
    return SteadyLabel(min_point_size=HEADER_PT, scale=HEADER_SCALE, grow_only=True)


class GridPanel(QtWidgets.QWidget):
    """A panel whose plots scroll in a ResponsiveGrid of their own, under a header (`header`, whose detail
    `short_header` moves to its tooltip in a short dock). Its height for a width is its least height: its layout's
    (its header's height for its width plus the plots at their preferred sizes) made the dock's scroll area give
    it 508 pixels in a 217-pixel dock, and the plots scrolled in two scroll areas, the wheel turning one and then
    the other (QA)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.header = header_label()
        self.short_header = ShortHeader(self, self.header)

    def heightForWidth(self, width: int) -> int:
        return self.minimumSizeHint().height()


class ElidedLabel(ToneLabel):
    """One line of plain text that never widens its layout: the whole text where it fits, else the longest of its
    shorter forms that fits, else the shortest cut with “…” at its edge; the whole text is in its tooltip. In a
    tone (ToneLabel) when given one."""

    def __init__(self, text: str = "", parent=None, tone: str | None = None, bold: bool = False,
                 keeps_shortest: bool = False):
        super().__init__(tone, bold, parent)
        self._shorter: tuple[str, ...] = ()
        self.keeps_shortest = keeps_shortest     # never narrower than its shortest form (a layout squeezes others)
        super().setText(text)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)

    def setText(self, text: str, shorter: tuple[str, ...] = ()) -> None:
        """shorter: the same read-out in fewer words, longest first (a narrow window, a projector's large font)."""
        self._shorter = tuple(shorter)
        super().setText(text)
        self.setToolTip(text)
        if self.keeps_shortest and self.minimumSizeHint() != getattr(self, "_least", None):
            self._least = self.minimumSizeHint()         # (a layout asked again only when the least size changed:
            self.updateGeometry()                        # the time's text changes at every run)
        self.update()

    def minimumSizeHint(self) -> QtCore.QSize:
        width = 0
        if self.keeps_shortest and self.text():
            margins = self.contentsMargins()
            width = self.fontMetrics().horizontalAdvance((self.text(), *self._shorter)[-1]) + 1 + \
                margins.left() + margins.right()
        return QtCore.QSize(width, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as drawn at the label's width."""
        metrics, width = self.fontMetrics(), self.contentsRect().width()
        forms = (self.text(), *self._shorter)
        for form in forms:
            if metrics.horizontalAdvance(form) <= width:
                return form
        return metrics.elidedText(forms[-1], QtCore.Qt.TextElideMode.ElideRight, width)

    def paintEvent(self, event) -> None:
        from PySide6 import QtGui
        p = QtGui.QPainter(self)
        p.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
        p.drawText(self.contentsRect(), int(self.alignment()), self.shown_text())
        p.end()


class KindPicker(QtWidgets.QComboBox):
    """The attention kinds of the model in view, in pipeline order (label shown, short name as item data, title
    as tooltip); refilled only when the schema's kinds change, without emitting a choice."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._kinds: tuple = ()

    def show_kind(self, schema, kind: str) -> None:
        """List schema's kinds (if they changed) and select kind, without emitting activated."""
        self.blockSignals(True)
        if schema.kinds != self._kinds:
            self._kinds = schema.kinds
            self.clear()
            for k in schema.kinds:
                self.addItem(k.label, k.name)
                self.setItemData(self.count() - 1, k.title, QtCore.Qt.ItemDataRole.ToolTipRole)
        self.setCurrentIndex(schema.kind_names.index(kind))
        self.blockSignals(False)

    def shown_text(self) -> str:
        """The chosen kind's label as drawn: cut with "…" where the box is narrower than the label (presentation
        mode at 1024 × 768 drew "Cross (decoder → encoder" and no sign that anything was missing)."""
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option,
                                            QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, self)
        return self.fontMetrics().elidedText(self.currentText(), QtCore.Qt.TextElideMode.ElideRight, field.width())

    def paintEvent(self, event) -> None:
        painter = QtWidgets.QStylePainter(self)
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QtWidgets.QStyle.ControlElement.CE_ComboBoxLabel, option)


def shift_f10(event) -> bool:
    """Whether a key event is Shift+F10: the menu key of a keyboard without a Menu key (GNOME's and Windows'),
    for which Qt sends no context-menu event on Linux."""
    return (event.type() == QtCore.QEvent.Type.KeyPress and event.key() == QtCore.Qt.Key.Key_F10
            and event.modifiers() == QtCore.Qt.KeyboardModifier.ShiftModifier)


class PagingKeys(QtCore.QObject):
    """PageUp and PageDown page the focused list or page while it has more than it shows, as in every other
    program: the window's own PageUp and PageDown (a presenter's remote: the next stage) had taken them, and in the
    head metrics table PageDown moved the whole view a stage, not the table a page (QA, a keyboard user)."""

    def __init__(self, view: QtWidgets.QAbstractScrollArea):
        super().__init__(view)
        self.view = view
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if (event.type() == QtCore.QEvent.Type.ShortcutOverride
                and event.key() in (QtCore.Qt.Key.Key_PageUp, QtCore.Qt.Key.Key_PageDown)
                and not event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier
                and self.view.verticalScrollBar().maximum() > 0):
            event.accept()                   # the key goes to the view as a key press, not to the shortcut
            return True
        return False


class FocusInView(QtCore.QObject):
    """The widget the keyboard moves to is scrolled into view in each scroll area it is in: Shift+Tab put the
    LayerNorm panel's β plot 900 pixels below its dock's edge, and Tab left the focus frames of five plots cut at
    the window's bottom (QA, a keyboard user). Not for a click: the pointer is on what it clicked."""

    def __init__(self, window: QtWidgets.QWidget):
        super().__init__(window)
        self.window = window
        QtWidgets.QApplication.instance().focusChanged.connect(self._moved)

    def _moved(self, old, now) -> None:
        # a move within one window (Tab, a shortcut), not the window given the keyboard back: Alt+Tab back had
        # scrolled away from where the user had scrolled to (a review)
        window_of = QtWidgets.QWidget.window          # (some widgets keep the main window as .window)
        if old is None or now is None or window_of(old) is not window_of(now) \
                or QtGui.QGuiApplication.mouseButtons() != QtCore.Qt.MouseButton.NoButton:
            return
        widget = now                  # in the window, or in one of its docks floated (a window of its own)
        while widget is not None and widget is not self.window:
            widget = widget.parentWidget()
        if widget is None:
            return
        area = now.parentWidget()
        while area is not None:                 # the innermost first: the outer then sees where it was scrolled
            if isinstance(area, QtWidgets.QScrollArea) and area.widget() is not None \
                    and area.widget().isAncestorOf(now):
                into_view(area, QtCore.QRect(now.mapTo(area.widget(), QtCore.QPoint(0, 0)), now.size()))
            area = area.parentWidget()


def into_view(area: QtWidgets.QScrollArea, rect: QtCore.QRect, margin: int = 8) -> None:
    """Scroll area so that rect (in its widget's coordinates) is in view, its top left where it is larger than the
    view. (QScrollArea.ensureWidgetVisible goes by a plot's "cursor rectangle", which put the LayerNorm panel's last
    plot 14 pixels into view.)"""
    for bar, start, length, room in ((area.verticalScrollBar(), rect.top(), rect.height(), area.viewport().height()),
                                     (area.horizontalScrollBar(), rect.left(), rect.width(), area.viewport().width())):
        value = bar.value()
        if length + 2 * margin > room or start - margin < value:
            bar.setValue(start - margin)
        elif start + length + margin > value + room:
            bar.setValue(start + length + margin - room)


class FocusMark(QtWidgets.QWidget):
    """A frame in the highlight colour drawn over a plot while it has the keyboard: a plot took Tab stops and showed
    nothing (a keyboard student could not tell where the focus was, QA). Clicks go through it."""

    def __init__(self, view: QtWidgets.QWidget):
        super().__init__(view)
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind in (QtCore.QEvent.Type.FocusIn, QtCore.QEvent.Type.FocusOut, QtCore.QEvent.Type.Resize):
            self.setGeometry(watched.rect())
            self.setVisible(watched.hasFocus())
            self.raise_()
        return False

    def paintEvent(self, event) -> None:
        painter = QtGui.QPainter(self)
        painter.setPen(QtGui.QPen(self.palette().highlight().color(), 3))
        painter.drawRect(QtCore.QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5))



class DecimalBox(QtWidgets.QDoubleSpinBox):
    """A QDoubleSpinBox that writes its number with a point, as every other number in the window, the figures and
    the files do, whatever the system's language, and reads a comma typed for the point as the point. A plain one
    followed the locale: in German or French it wrote "T = 1,00" beside "temperature T = 1.00", and read a point
    typed there as a thousands separator to drop ("0.3" became 3, and η "0.01" became 1), as an English one read
    "0,3" (QA)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        c = QtCore.QLocale.c()
        c.setNumberOptions(QtCore.QLocale.NumberOption.OmitGroupSeparator
                           | QtCore.QLocale.NumberOption.RejectGroupSeparator)
        self.setLocale(c)

    def validate(self, text: str, pos: int):
        return super().validate(text.replace(",", "."), pos)

    def valueFromText(self, text: str) -> float:
        return super().valueFromText(text.replace(",", "."))
