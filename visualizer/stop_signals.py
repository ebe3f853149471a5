"""The window closed as File ▸ Quit closes it when the process is asked to stop: SIGTERM (a kill, a logout),
SIGHUP (its terminal closed) and SIGINT (Ctrl+C in the terminal that started it). The session is saved for the
next start as at a Quit; before, SIGTERM and SIGHUP ended the process at once and lost what was typed since the
last start, and Ctrl+C did nothing while Qt's event loop ran (QA).

Python runs a signal's handler only when it runs Python code, which it does not while Qt waits for events: the
signal also writes a byte to a socket (signal.set_wakeup_fd) that a QSocketNotifier watches, and reading it
gives Python the moment to run the handler, which asks the window to close from the event loop."""
from __future__ import annotations

import contextlib
import signal
import socket
import threading

from PySide6 import QtCore

SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n))


@contextlib.contextmanager
def close_on_stop_signals(window):
    """Inside, SIGTERM, SIGHUP and SIGINT close window (its closeEvent saves the session); the handlers and the
    wakeup socket as they were after. Nothing changes outside the main thread (signals go to it alone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QtCore.QSocketNotifier(reader.fileno(), QtCore.QSocketNotifier.Type.Read)

    def drain() -> None:
        with contextlib.suppress(OSError):
            reader.recv(256)

    notifier.activated.connect(drain)
    asked = []

    def stop(signum, _frame) -> None:
        asked.append(signum)
        QtCore.QTimer.singleShot(0, window.close)

    previous_fd = signal.set_wakeup_fd(writer.fileno())
    previous = {sig: signal.signal(sig, stop) for sig in SIGNALS}
    try:
        yield asked
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()
