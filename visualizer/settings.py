"""Preferences remembered between runs through Qt's QSettings (theme, font size, colour map, model, layout)."""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore

ORG, APP = "AttentionVisualizer", "attention-visualizer"
DEFAULTS = {"theme": "light", "font_size": 11.0, "colormap": "viridis", "model": "", "shared_scale": True}


class Settings:
    """Typed access to QSettings with defaults and validation (a bad stored value falls back to the default)."""

    def __init__(self, qsettings: QtCore.QSettings | None = None):
        self.q = qsettings or QtCore.QSettings(ORG, APP)

    def get(self, key: str):
        default = DEFAULTS[key]
        value = self.q.value(key, default)
        try:
            if isinstance(default, bool):
                value = value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
            elif isinstance(default, float):
                value = float(value)
            else:
                value = str(value)
        except (TypeError, ValueError):
            return default
        from .theme import COLORMAPS, THEMES   # here: it imports pyqtgraph, and a start reads the frame first
        if key == "theme" and value not in THEMES:
            return default
        if key == "colormap" and value not in COLORMAPS:
            return default
        if key == "font_size" and not 6 <= value <= 48:
            return default
        return value

    def frame_path(self) -> Path:
        """Where the last frame is kept (see last_frame): beside the settings file, so that tests, with their
        own settings, keep their own frame."""
        from .last_frame import FILE_NAME
        return Path(self.q.fileName()).parent / FILE_NAME

    def set(self, key: str, value) -> None:
        if key not in DEFAULTS:
            raise KeyError(key)
        self.q.setValue(key, value)

    def save_layout(self, geometry: QtCore.QByteArray, state: QtCore.QByteArray) -> None:
        self.q.setValue("geometry", geometry)
        self.q.setValue("window_state", state)

    def layout(self) -> tuple[QtCore.QByteArray | None, QtCore.QByteArray | None]:
        return self.q.value("geometry"), self.q.value("window_state")

    def sync(self) -> None:
        self.q.sync()
