"""Python's cyclic garbage collector, run by the GUI thread's event loop between events instead of wherever an
allocation happens to trigger it.

Triggered inside a Qt call, a collection can destroy a Qt object left over from a closed window or menu while Qt holds
one of its signal-slot mutexes there, and that destruction waits for the same mutex for ever. Seen in the test suite:
QObject::disconnect, a Python override looked up under its lock, a collection, ~QMenu → ~QAction waiting on the lock
(the window hung with no worker thread running; see also worker.NO_COLLECTION, the collector off during model jobs).
"""
from __future__ import annotations

import gc

from PySide6 import QtCore

TICK_MS = 250       # how often the thresholds are looked at: a generation-0 collection takes well under a millisecond


def collect_due() -> int | None:
    """Collect the oldest generation whose count passed its threshold, as the automatic collector would have;
    the generation collected, or None."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    due = [g for g in range(3) if thresholds[g] and counts[g] > thresholds[g]]
    if not due:
        return None
    gc.collect(due[-1])
    return due[-1]


class EventLoopCollector(QtCore.QObject):
    """Automatic collection off for the app's lifetime; the event loop collects what is due every TICK_MS."""

    def __init__(self, parent: QtCore.QObject):
        super().__init__(parent)
        gc.disable()
        self.timer = QtCore.QTimer(self, interval=TICK_MS)
        self.timer.timeout.connect(collect_due)
        self.timer.start()
