"""Light, dark and high-contrast (projector) themes, font scaling, and colour-blind-safe colour maps."""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .plotting.colormaps import COLORMAPS  # noqa: F401  (settings.py checks a saved colour map against it)


@dataclass(frozen=True)
class Theme:
    name: str
    window: str
    base: str
    text: str
    highlight: str
    placeholder: str
    disabled: str           # the text of a control that does nothing now (a beam width while decoding greedily)


THEMES = {
    "light": Theme("light", "#f4f4f4", "#ffffff", "#111111", "#1f6fd1", "#6e6e6e", "#8a8a8a"),
    "dark": Theme("dark", "#2b2b2b", "#1e1e1e", "#e8e8e8", "#4c9aff", "#9a9a9a", "#7a7a7a"),
    "high-contrast": Theme("high-contrast", "#000000", "#000000", "#ffffff", "#ffd400", "#c8c8c8", "#8c8c8c"),
}


def drawn_icon(paint, size: int = 48) -> QtGui.QIcon:
    """An icon drawn by paint(painter, size) on a transparent size × size pixmap, antialiased."""
    pixmap = QtGui.QPixmap(size, size)
    pixmap.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(pixmap)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    paint(painter, size)
    painter.end()
    return QtGui.QIcon(pixmap)


def more_icon(colour: QtGui.QColor, vertical: bool = False) -> QtGui.QIcon:
    """Two chevrons (») in colour: a toolbar's button for the actions that do not fit."""
    def paint(painter: QtGui.QPainter, size: int) -> None:
        pen = QtGui.QPen(colour, size / 10)
        pen.setCapStyle(QtCore.Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(QtCore.Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        if vertical:
            painter.translate(size, 0)
            painter.rotate(90)
        for x in (0.22, 0.52):
            painter.drawPolyline([QtCore.QPointF(size * x, size * 0.25), QtCore.QPointF(size * (x + 0.25), size * 0.5),
                                  QtCore.QPointF(size * x, size * 0.75)])
    return drawn_icon(paint)


def title_bar_icon(colour: QtGui.QColor, float_: bool) -> QtGui.QIcon:
    """A dock's close button (×) or float button (two overlapping squares) in colour."""
    def paint(painter: QtGui.QPainter, size: int) -> None:
        painter.setPen(QtGui.QPen(colour, size / 12))
        if float_:
            painter.drawRect(QtCore.QRectF(size * 0.35, size * 0.2, size * 0.45, size * 0.45))
            painter.drawRect(QtCore.QRectF(size * 0.2, size * 0.35, size * 0.45, size * 0.45))
        else:
            painter.drawLine(QtCore.QPointF(size * 0.25, size * 0.25), QtCore.QPointF(size * 0.75, size * 0.75))
            painter.drawLine(QtCore.QPointF(size * 0.75, size * 0.25), QtCore.QPointF(size * 0.25, size * 0.75))
    return drawn_icon(paint)


class VisibleControls(QtWidgets.QProxyStyle):
    """Fusion, with controls that show on black. Fusion draws a check box's frame, and the frames of text fields,
    spin boxes and drop-down lists, in the window colour darkened: black on black in the high-contrast theme (an
    unchecked box was invisible; the sentence and target fields and the layer and head boxes read as plain text).
    Here those frames are the placeholder grey and a checked box is filled with the highlight. (A style sheet would
    do it too, but an application style sheet stops the application font from reaching the widgets: presentation
    mode's larger text.)"""

    def __init__(self, base: str = "Fusion", frames: bool = True):
        super().__init__(base)
        self.frames = frames        # draw every frame and box (dark themes); else only the keyboard focus's

    def styleHint(self, hint, option=None, widget=None, data=None) -> int:
        # no widget animations: Qt's main window made a geometry animation for a dock at every re-layout, and
        # stopped ones stayed, about one a sentence over a lesson (982 → 1341 objects in 300 sentences; QA soak)
        if hint == QtWidgets.QStyle.StyleHint.SH_Widget_Animation_Duration:
            return 0
        # a dialog's buttons in words only in the dark themes: their icons were dark on dark (QA as a teacher)
        if hint == QtWidgets.QStyle.StyleHint.SH_DialogButtonBox_ButtonsHaveIcons and self.frames:
            return 0
        return super().styleHint(hint, option, widget, data)

    def pixelMetric(self, metric, option=None, widget=None) -> int:
        # the toolbar's "more" button as wide as a line of text: at Fusion's 12 pixels it was a speck in class
        if metric == QtWidgets.QStyle.PixelMetric.PM_ToolBarExtensionExtent:
            return max(super().pixelMetric(metric, option, widget),
                       round(1.6 * QtGui.QFontMetrics(QtWidgets.QApplication.font()).height()))
        return super().pixelMetric(metric, option, widget)

    def standardIcon(self, icon, option=None, widget=None) -> QtGui.QIcon:
        # the toolbar's "more" button (its buttons that do not fit: ◀ Step, Step ▶ at a class's text size) drawn
        # in the theme's text colour: Fusion's dark grey "»" was nearly invisible on black (QA)
        sp = QtWidgets.QStyle.StandardPixmap
        if icon in (sp.SP_ToolBarHorizontalExtensionButton, sp.SP_ToolBarVerticalExtensionButton):
            return more_icon(QtWidgets.QApplication.palette().buttonText().color(),
                             vertical=icon == sp.SP_ToolBarVerticalExtensionButton)
        # a dock's float and close buttons, which Fusion draws dark grey: gone on black (QA as a teacher)
        if self.frames and icon in (sp.SP_TitleBarCloseButton, sp.SP_DockWidgetCloseButton, sp.SP_TitleBarNormalButton):
            return title_bar_icon(QtWidgets.QApplication.palette().buttonText().color(),
                                  float_=icon == sp.SP_TitleBarNormalButton)
        return super().standardIcon(icon, option, widget)

    def drawPrimitive(self, element, option, painter, widget=None) -> None:
        pe, flag = QtWidgets.QStyle.PrimitiveElement, QtWidgets.QStyle.StateFlag
        if element == pe.PE_FrameFocusRect and isinstance(widget, (QtWidgets.QCheckBox, QtWidgets.QRadioButton)):
            # the keyboard on a check box: the fields' frame, not Fusion's faint fill (QA as a teacher, dark themes)
            self._frame(option, painter, focused=True)
            return
        super().drawPrimitive(element, option, painter, widget)
        on, enabled = bool(option.state & flag.State_On), bool(option.state & flag.State_Enabled)
        if element in (pe.PE_IndicatorCheckBox, pe.PE_IndicatorRadioButton) and self.frames:
            # a dark theme's unchecked box was 1.2:1 against its window, the high-contrast radio button invisible
            painter.save()
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            painter.setPen(QtGui.QPen(option.palette.text().color() if enabled else QtGui.QColor("#808080"), 2))
            box = QtCore.QRectF(option.rect).adjusted(1, 1, -1, -1)
            if element == pe.PE_IndicatorCheckBox:
                painter.setBrush(option.palette.highlight() if on else QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush))
                painter.drawRect(box)
                if on:      # and a tick on the fill, in the fields' colour: a plain filled square read as a button
                    w, h = box.width(), box.height()          # (QA on HiDPI, dark themes)
                    painter.setPen(QtGui.QPen(option.palette.base().color(), max(2.0, w / 7),
                                              QtCore.Qt.PenStyle.SolidLine, QtCore.Qt.PenCapStyle.RoundCap,
                                              QtCore.Qt.PenJoinStyle.RoundJoin))
                    painter.drawPolyline([box.topLeft() + QtCore.QPointF(w * 0.22, h * 0.52),
                                          box.topLeft() + QtCore.QPointF(w * 0.42, h * 0.72),
                                          box.topLeft() + QtCore.QPointF(w * 0.78, h * 0.28)])
            else:
                painter.setBrush(QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush))
                painter.drawEllipse(box)
                if on:
                    painter.setPen(QtCore.Qt.PenStyle.NoPen)
                    painter.setBrush(option.palette.highlight())
                    painter.drawEllipse(box.adjusted(3, 3, -3, -3))
            painter.restore()
        elif element == pe.PE_FrameLineEdit and not isinstance(widget, QtWidgets.QAbstractSpinBox):
            self._frame(option, painter)

    def drawComplexControl(self, control, option, painter, widget=None) -> None:
        super().drawComplexControl(control, option, painter, widget)
        cc = QtWidgets.QStyle.ComplexControl
        if control in (cc.CC_SpinBox, cc.CC_ComboBox):
            self._frame(option, painter)
        elif control == cc.CC_ToolButton and option.state & QtWidgets.QStyle.StateFlag.State_HasFocus:
            self._frame(option, painter)          # (a button with the keyboard, as drawControl's)

    def drawControl(self, element, option, painter, widget=None) -> None:
        super().drawControl(element, option, painter, widget)
        # a push button with the keyboard framed as a field is: Fusion's 1-pixel line hid it on black (QA as a
        # teacher: "Measure head effects" could not be told focused)
        if element == QtWidgets.QStyle.ControlElement.CE_PushButtonBevel and \
                option.state & QtWidgets.QStyle.StateFlag.State_HasFocus:
            self._frame(option, painter)
        # a dock's tab with the keyboard too: Fusion marks it by no more than a faint fill (QA, a keyboard user)
        if element == QtWidgets.QStyle.ControlElement.CE_TabBarTabLabel and \
                option.state & QtWidgets.QStyle.StateFlag.State_HasFocus:
            self._frame(option, painter)

    def _frame(self, option, painter, focused: bool | None = None) -> None:
        """A field's frame: the placeholder grey, or where the keyboard is, 2.5 pixels of the highlight colour (a
        1-pixel blue line, and none at all on a high-contrast drop-down list, hid it from a keyboard user)."""
        if focused is None:
            focused = bool(option.state & QtWidgets.QStyle.StateFlag.State_HasFocus)
        if not (self.frames or focused):
            return
        painter.save()
        colour = option.palette.highlight().color() if focused else option.palette.placeholderText().color()
        painter.setPen(QtGui.QPen(colour, 2.5 if focused else 1.5))
        painter.setBrush(QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush))
        painter.drawRoundedRect(QtCore.QRectF(option.rect).adjusted(1.25, 1.25, -1.25, -1.25), 2, 2)
        painter.restore()


# Plots are figures: black on white in every theme, like the exported files, and as readable on a projector
# as ink on paper. Only the window around them follows the theme.
PLOT_BACKGROUND, PLOT_FOREGROUND = "w", "k"


def palette(theme: Theme) -> QtGui.QPalette:
    p = QtGui.QPalette()
    role = QtGui.QPalette.ColorRole
    for r, c in ((role.Window, theme.window), (role.Base, theme.base), (role.AlternateBase, theme.window),
                 (role.Button, theme.window), (role.WindowText, theme.text), (role.Text, theme.text),
                 (role.ButtonText, theme.text), (role.ToolTipBase, theme.base), (role.ToolTipText, theme.text),
                 (role.Highlight, theme.highlight), (role.HighlightedText, theme.base),
                 (role.PlaceholderText, theme.placeholder), (role.Link, theme.highlight),
                 (role.LinkVisited, theme.highlight)):     # the About box's link was #0000ff on the dark theme
        p.setColor(r, QtGui.QColor(c))
    # setColor(role, …) sets every group, the disabled one too: a disabled beam width read as black as an enabled
    # one. Disabled text is dimmer, still readable (at least 3:1 against the base)
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QtGui.QPalette.ColorGroup.Disabled, r, QtGui.QColor(theme.disabled))
    return p


def apply_theme(app: QtWidgets.QApplication, name: str, point_size: float | None = None) -> Theme:
    """Set the application's palette, font size and pyqtgraph's default colours; returns the theme."""
    theme = THEMES.get(name, THEMES["light"])
    # the application owns the style (and deletes the one before); frames and boxes drawn on the dark themes
    app.setStyle(VisibleControls("Fusion", frames=theme.name != "light"))
    app.setPalette(palette(theme))
    if point_size:
        font = app.font()
        font.setPointSizeF(max(6.0, min(float(point_size), 48.0)))
        app.setFont(font)
    pg.setConfigOptions(background=PLOT_BACKGROUND, foreground=PLOT_FOREGROUND, antialias=True)
    for window in app.topLevelWidgets():        # toolbars' "more" buttons keep the icon they were made with
        for toolbar in window.findChildren(QtWidgets.QToolBar):
            button = toolbar.findChild(QtWidgets.QToolButton, "qt_toolbar_ext_button")
            if button is not None:
                button.setIcon(more_icon(app.palette().buttonText().color(),
                                         vertical=toolbar.orientation() == QtCore.Qt.Orientation.Vertical))
    # widgets whose colours are a style sheet's: each ToneLabel alive (going through app.allWidgets() made a Python
    # object for every widget, some of them windows being destroyed, and crashed the test suite now and then)
    from .panels.widgets import ToneLabel
    for label in list(ToneLabel.shown):
        try:
            label.theme_changed()
        except RuntimeError:                 # its Qt widget is gone, its Python object not yet
            ToneLabel.shown.discard(label)
    return theme
