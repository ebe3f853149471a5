"""Light, dark and high-contrast (projector) themes, font scaling, and colour-blind-safe colour maps."""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

# perceptually uniform maps that stay readable with colour-vision deficiencies and in greyscale
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")


@dataclass(frozen=True)
class Theme:
    name: str
    window: str
    base: str
    text: str
    highlight: str
    plot_background: str
    plot_foreground: str


THEMES = {
    "light": Theme("light", "#f4f4f4", "#ffffff", "#111111", "#1f6fd1", "w", "k"),
    "dark": Theme("dark", "#2b2b2b", "#1e1e1e", "#e8e8e8", "#4c9aff", "#1e1e1e", "#e8e8e8"),
    "high-contrast": Theme("high-contrast", "#000000", "#000000", "#ffffff", "#ffd400", "k", "w"),
}


def palette(theme: Theme) -> QtGui.QPalette:
    p = QtGui.QPalette()
    role = QtGui.QPalette.ColorRole
    for r, c in ((role.Window, theme.window), (role.Base, theme.base), (role.AlternateBase, theme.window),
                 (role.Button, theme.window), (role.WindowText, theme.text), (role.Text, theme.text),
                 (role.ButtonText, theme.text), (role.ToolTipBase, theme.base), (role.ToolTipText, theme.text),
                 (role.Highlight, theme.highlight), (role.HighlightedText, theme.base)):
        p.setColor(r, QtGui.QColor(c))
    return p


def apply_theme(app: QtWidgets.QApplication, name: str, point_size: float | None = None) -> Theme:
    """Set the application's palette, font size and pyqtgraph's default colours; returns the theme."""
    theme = THEMES.get(name, THEMES["light"])
    app.setStyle("Fusion")
    app.setPalette(palette(theme))
    if point_size:
        font = app.font()
        font.setPointSizeF(max(6.0, min(float(point_size), 48.0)))
        app.setFont(font)
    pg.setConfigOptions(background=theme.plot_background, foreground=theme.plot_foreground, antialias=True)
    return theme
