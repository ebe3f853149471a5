"""File dialogs open in the folder last saved to or opened from (kept between starts), else home: never the
program's working directory, which showed a teacher the app's own source folders."""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets


def test_dialogs_open_where_the_last_file_went_and_remember_it_across_starts(qtbot, window, tmp_path, monkeypatch):
    asked = []

    def save_name(parent, caption, suggestion, *filters):
        asked.append(suggestion)
        return str(tmp_path / "lesson" / "class.json"), filters[0] if filters else ""

    def open_name(parent, caption, start, *filters):
        asked.append(start)
        return ""

    (tmp_path / "lesson").mkdir()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", save_name)
    monkeypatch.setattr("visualizer.window.ask_open_file", open_name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    window.settings.set("folder", str(tmp_path / "gone"))                 # remembered, since removed: home
    window.save_session_dialog()
    assert Path(asked[0]) == tmp_path / "home" / "session.json"
    assert (tmp_path / "lesson" / "class.json").is_file()
    window.open_session_dialog()
    assert Path(asked[1]) == tmp_path / "lesson"
    assert window.settings.get("folder") == str(tmp_path / "lesson")       # in the settings: the next start too
    menu = window.exports.attention_menu
    menu.save("png")                                                        # a plot's Save image as PNG…
    assert Path(asked[2]).parent == tmp_path / "lesson" and asked[2].endswith(".png")


def test_a_session_named_without_its_type_is_saved_as_json_and_opens_again(qtbot, window, tmp_path, monkeypatch):
    """Qt's own dialog adds no suffix: "lesson1" was written as is, and the open dialog's "Sessions (*.json)"
    filter then hid it."""
    from visualizer.session import read_session
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        lambda *args: (str(tmp_path / "lesson1"), "Sessions (*.json)"))
    window.save_session_dialog()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lesson1.json"]
    assert read_session(tmp_path / "lesson1.json")["sentence"] == window.state.sentence
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        lambda *args: (str(tmp_path / "lesson.v2"), "Sessions (*.json)"))
    window.save_session_dialog()
    assert (tmp_path / "lesson.v2.json").is_file()


def test_a_session_typed_without_its_type_in_the_open_dialog_opens(qtbot, tmp_path):
    """QA as a teacher: "lesson" typed in Open session was "File not found" beside lesson.json, which Save had
    written for "lesson"."""
    from PySide6 import QtCore

    from visualizer.folders import ask_open_file
    for name in ("lesson", "lesson 30.11"):                # a date in the name: Qt adds no suffix after a dot
        (tmp_path / f"{name}.json").write_text("{}", encoding="utf-8")
        typed = []

        def type_name(name=name, typed=typed):
            dialog = QtWidgets.QApplication.activeModalWidget()
            if not isinstance(dialog, QtWidgets.QFileDialog):
                QtCore.QTimer.singleShot(50, type_name)
                return
            dialog.findChild(QtWidgets.QLineEdit, "fileNameEdit").setText(name)
            typed.append(True)
            dialog.accept()
        QtCore.QTimer.singleShot(50, type_name)
        path = ask_open_file(None, "Open session", str(tmp_path), "Sessions (*.json)", "json")
        assert path == str(tmp_path / f"{name}.json") and typed
