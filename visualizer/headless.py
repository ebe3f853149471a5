"""Headless runs (--screenshot) never wait for a person: what would open a dialog ends the run with one line on
stderr and exit code 1 instead."""
from __future__ import annotations

import sys

from model.command_line import one_line


def has_display() -> bool:
    """Whether Qt has a screen to open windows on (or was told which platform to use): a DISPLAY or WAYLAND_DISPLAY
    that can be reached (one set but gone, as in a tmux session reattached without X forwarding or a cron job,
    aborted Qt with a core dump, QA)."""
    import os
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    wayland = os.environ.get("WAYLAND_DISPLAY")
    if wayland and _wayland_reachable(wayland):
        return True
    display = os.environ.get("DISPLAY")
    return bool(display) and _x_reachable(display)


def _wayland_reachable(name: str) -> bool:
    import os
    from pathlib import Path
    path = Path(name) if os.path.isabs(name) else Path(os.environ.get("XDG_RUNTIME_DIR") or "/nonexistent") / name
    return path.exists()


def _x_reachable(display: str) -> bool:
    """Whether an X display takes a connection within a second: a local one on its socket, Linux's abstract one or
    the file (a file left by a server that exited is no display; a container may have the abstract one alone), a
    remote one on its TCP port (ssh's forwarding, localhost:10.0). A DISPLAY that is no display's name is none."""
    import re
    import socket
    m = re.fullmatch(r"(?P<host>[^:]*):(?P<n>\d+)(?:\.\d+)?", display)
    if m is None:
        return False
    host, n = m["host"], int(m["n"])
    if host in ("", "unix"):
        for address in (f"\0/tmp/.X11-unix/X{n}", f"/tmp/.X11-unix/X{n}"):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(1.0)
                    s.connect(address)
                    return True
            except OSError:
                continue
        return False
    try:
        with socket.create_connection((host, 6000 + n), timeout=1.0):
            return True
    except OSError:
        return False


def draw_offscreen() -> None:
    """Commands that draw pictures without showing them (export, animate, --screenshot) draw offscreen where there
    is no display (Qt aborted with a core dump there), without the offscreen platform's warning at every window."""
    import os
    if not has_display():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        return
    from PySide6 import QtCore

    def quiet(_mode, _context, message: str) -> None:
        if "propagateSizeHints" not in message:
            print(message, file=sys.stderr)
    QtCore.qInstallMessageHandler(quiet)


def report_unexpected(window, argv: list[str], guard=None) -> None:
    """An unexpected error in the window's code (a slot of Qt's event loop): its traceback goes to the errors log,
    not the terminal, and the status bar says so in one line; the app goes on (a headless run fails, exit code 1).
    Such an error had left a window half-changed with tracebacks on a terminal no one watched (QA)."""
    from model.command_line import write_report

    def hook(kind, exc, tb) -> None:
        if issubclass(kind, KeyboardInterrupt):
            return sys.__excepthook__(kind, exc, tb)
        where = write_report(exc.with_traceback(tb), "window", argv)
        text = (f"Something went wrong ({kind.__name__}: {one_line(str(exc))[:160]}); the app goes on"
                + (f", and the details are in {where}" if where else ""))
        if guard is not None:
            guard.fail(text)
            return
        print(f"error: {text}", file=sys.stderr)
        try:
            window.statusBar().showMessage(text, 30000)
        except RuntimeError:                 # the window is gone (an error while it closed)
            pass
    sys.excepthook = hook


class Headless:
    """Installed on a window and on QMessageBox/QDialog while the app runs without a person watching."""

    def __init__(self, app):
        self.app = app
        self.code = 0

    def fail(self, message: str) -> None:
        if not self.code:                                # the first failure is the one to tell
            print(f"error: {one_line(message)}", file=sys.stderr, flush=True)
            self.code = 1
        self.app.quit()

    def install(self, window) -> None:
        from PySide6 import QtWidgets

        window._error = lambda title, message: self.fail(f"{title}: {message}")

        def no_box(*args, **_kw):
            text = next((a for a in args[2:] if isinstance(a, str)), args[1] if len(args) > 1 else "a dialog")
            self.fail(f"{args[1] if len(args) > 1 else 'dialog'}: {text}")
            return QtWidgets.QMessageBox.StandardButton.NoButton

        for name in ("warning", "critical", "information", "question"):
            setattr(QtWidgets.QMessageBox, name, staticmethod(no_box))
        QtWidgets.QDialog.exec = lambda dialog, *a: (self.fail(f"a dialog ({dialog.windowTitle()}) would wait "
                                                               "for a person"), 0)[1]
