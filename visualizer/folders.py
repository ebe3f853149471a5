"""Where the window's file dialogs open: the folder of the last file saved or opened through one of them, kept
between starts (settings "folder"), else the home folder. Never the program's working directory: a teacher
saving a session was shown the app's own assets/, model/ and tests/."""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets


def start_folder(window) -> Path:
    """The folder a dialog of this window opens in (a remembered one that no longer exists: home)."""
    settings = getattr(window, "settings", None)
    remembered = settings.get("folder") if settings is not None else ""
    if remembered and Path(remembered).is_dir():
        return Path(remembered)
    return Path.home()


def suggest(window, file_name: str) -> str:
    """A dialog's suggested path: file_name in start_folder."""
    return str(start_folder(window) / file_name)


def remember(window, path: str | Path) -> None:
    """A file (or folder) was saved or opened there: the next dialog opens in its folder."""
    settings = getattr(window, "settings", None)
    if settings is None or not str(path):
        return
    p = Path(path)
    settings.set("folder", str(p if p.is_dir() else p.parent))


def with_type(path: str | Path, suffix: str) -> Path:
    """A name typed in a save dialog, with its file type's suffix (".json") added when it ends in another or none:
    Qt's own dialog adds none, and a session saved as "lesson1" was then hidden by the open dialog's filter."""
    p = Path(path)
    return p if p.suffix.lower() == suffix.lower() else p.with_name(p.name + suffix)


def ask_open_file(parent, caption: str, folder: str, name_filter: str, suffix: str) -> str:
    """A file's path from an open dialog ("" when cancelled); a name typed without suffix is taken with it, as the
    save dialog writes it: "lesson" was "File not found" beside "lesson.json", and "lesson 30.11" beside
    "lesson 30.11.json" (QA as a teacher). A name that is no file comes back as typed: its opener says so."""
    dialog = QtWidgets.QFileDialog(parent, caption, folder, name_filter)
    dialog.setFileMode(QtWidgets.QFileDialog.FileMode.AnyFile)      # (ExistingFile refused "lesson 30.11" itself)
    dialog.setAcceptMode(QtWidgets.QFileDialog.AcceptMode.AcceptOpen)
    try:
        path = dialog.selectedFiles()[0] if dialog.exec() and dialog.selectedFiles() else ""
    finally:
        dialog.deleteLater()
    typed = Path(path) if path else None
    if typed is not None and not typed.exists() and typed.with_name(f"{typed.name}.{suffix}").is_file():
        return str(typed.with_name(f"{typed.name}.{suffix}"))
    return path
