"""Preferences remembered between runs through Qt's QSettings (theme, font size, colour map, model, layout)."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from PySide6 import QtCore

from .file_schema import SETTINGS_RANGES

ORG, APP = "AttentionVisualizer", "attention-visualizer"
LAST_SESSION = "last-session.json"
DEFAULTS = {"theme": "light", "font_size": 11.0, "colormap": "viridis", "model": "", "colour_scale": "layer",
            "folder": "",        # where file dialogs open (visualizer/folders.py)
            "metrics_hidden": "",   # the Head metrics table's hidden columns, by their CSV names, comma-separated
            "front_tabs": ""}       # the docks in front of their tab groups when the window closed, comma-separated


class Settings:
    """Typed access to QSettings with defaults and validation: a stored value of the wrong type or out of range
    (see file_schema) is removed and the default used, and a settings file that cannot be read is renamed aside
    (to NAME.damaged), each with a notice in `notices` (the app prints them)."""

    def __init__(self, qsettings: QtCore.QSettings | None = None):
        self.q = qsettings or QtCore.QSettings(ORG, APP)
        self.notices: list[str] = []
        # Qt reads the file at the first question: status() said NoError before, and a file of NULs was written over
        # at close (QA); what it cannot decode in a value, _read_layout and get() say in the app's words
        with qt_messages():
            self.q.allKeys()
        if self.q.status() != QtCore.QSettings.Status.NoError:
            self._set_aside()
        self._layout = self._read_layout()

    def _set_aside(self) -> None:
        path = Path(self.q.fileName())
        aside = path.with_name(path.name + ".damaged")
        try:
            os.replace(path, aside)
            self.notices.append(f"the settings file {path} could not be read; it was set aside as {aside.name} "
                                "and the app starts with its default settings")
        except OSError as e:
            self.notices.append(f"the settings file {path} could not be read ({e.strerror}); default settings used")
        self.q = QtCore.QSettings(str(path), self.q.format())

    def get(self, key: str):
        default = DEFAULTS[key]
        value = self.q.value(key, default)
        try:
            value = self._checked(key, value)
        except (TypeError, ValueError) as e:
            self.notices.append(f"setting {key}: {e}; the default {default!r} is used")
            self.q.remove(key)
            return default
        return value

    @staticmethod
    def _checked(key: str, value):
        """The value of a setting as its type (INI files give text back), or ValueError saying what is wrong."""
        default = DEFAULTS[key]
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            if str(value).lower() not in ("1", "true", "yes", "0", "false", "no"):
                raise ValueError(f"{value!r} is not true or false")
            return str(value).lower() in ("1", "true", "yes")
        if isinstance(default, float):
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"{value!r} is not a number") from None
            low, high = SETTINGS_RANGES[key]
            if not low <= value <= high:
                raise ValueError(f"{value!r} is not between {low:g} and {high:g}")
            return value
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not text")
        from .theme import COLORMAPS, THEMES   # here: it imports pyqtgraph, and a start reads the frame first
        from .plotting.colormaps import COLOUR_SCALES
        choices = {"theme": THEMES, "colormap": COLORMAPS, "colour_scale": COLOUR_SCALES}.get(key)
        if choices is not None and value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(choices)}")
        return value

    def frame_path(self) -> Path:
        """Where the last frame is kept (see last_frame): beside the settings file, so that tests, with their
        own settings, keep their own frame."""
        from .last_frame import FILE_NAME
        return Path(self.q.fileName()).parent / FILE_NAME

    def session_path(self) -> Path:
        """Where the window's session at its last close is kept (a session file, see session.py), for the next
        start: beside the settings file, as the frame is."""
        return Path(self.q.fileName()).parent / LAST_SESSION

    def cannot_keep(self) -> str | None:
        """Why nothing of this run will be kept for the next (the settings' folder cannot be written: a read-only
        home), in one line; None when it can. A Quit there lost the session and the settings without a word (QA)."""
        from model.files import can_create_in
        folder = Path(self.q.fileName()).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            return f"{folder} cannot be made ({e.strerror}): the settings and the session will not be kept"
        if not can_create_in(folder):
            return f"{folder} is not writable: the settings and the session will not be kept"
        return None

    def set(self, key: str, value) -> None:
        if key not in DEFAULTS:
            raise KeyError(key)
        self.q.setValue(key, value)

    def save_layout(self, geometry: QtCore.QByteArray, state: QtCore.QByteArray) -> None:
        self.q.setValue("geometry", geometry)
        self.q.setValue("window_state", state)
        self._layout = geometry, state

    def layout(self) -> tuple[QtCore.QByteArray | None, QtCore.QByteArray | None]:
        """The window's geometry and docks as saved when it last closed (None: not saved, or damaged)."""
        return self._layout

    def _read_layout(self) -> tuple[QtCore.QByteArray | None, QtCore.QByteArray | None]:
        """The saved layout, read first (Qt decodes the file's values at the first read): a damaged value made Qt
        print "QVariant::load: unknown user type" at start. It is removed instead, with a notice."""
        keys = ("geometry", "window_state")
        with qt_messages():         # (what Qt could not decode in another setting, get() then names and removes:
            saved = tuple(self.q.value(key) for key in keys)    # it had cost the layout, with a notice blaming it, QA)
        if any(self.q.contains(k) and not isinstance(v, QtCore.QByteArray) for k, v in zip(keys, saved)):
            for key in keys:
                self.q.remove(key)
            self.notices.append("the saved window layout could not be read; the default layout is used")
            return None, None
        return saved

    def sync(self) -> None:
        self.q.sync()


@contextmanager
def qt_messages():
    """The messages Qt prints inside the block, kept in a list instead of printed."""
    heard: list[str] = []
    previous = QtCore.qInstallMessageHandler(lambda _mode, _context, message: heard.append(message))
    try:
        yield heard
    finally:
        QtCore.qInstallMessageHandler(previous)
