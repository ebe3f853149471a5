"""Runs the model off the GUI thread. When requests come faster than the model runs, only the newest is run."""
from __future__ import annotations

import gc
import os
import threading
import traceback
from typing import Any, Callable

from PySide6 import QtCore

from model.assets import ModelLoadError


class _NoCollectionHere:
    """Python's cyclic garbage collector off while any model job runs.

    A collection runs in whichever thread happens to allocate. Run in a worker, it can free a Qt object
    left over from a closed window there, off the GUI thread, and Qt deadlocks against the GUI thread (seen
    in the tests: a worker destroying a menu's QAction while the GUI thread deleted widgets). With the
    collector off during jobs, collections happen on the GUI thread, between jobs.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._running = 0
        self._was_enabled = False

    def __enter__(self):
        with self._lock:
            if self._running == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._running += 1

    def __exit__(self, *exc):
        with self._lock:
            self._running -= 1
            if self._running == 0 and self._was_enabled:
                gc.enable()


NO_COLLECTION = _NoCollectionHere()


class _Job(QtCore.QRunnable):
    def __init__(self, runner: "ModelRunner"):
        super().__init__()
        self.runner = runner

    def run(self) -> None:
        with NO_COLLECTION:
            self.runner._drain()


class ModelRunner(QtCore.QObject):
    """One worker thread; submit() replaces any request still waiting, so stale work is skipped."""

    finished = QtCore.Signal(int, object)     # (request number, result)
    failed = QtCore.Signal(int, str)          # (request number, one-line message)
    progress = QtCore.Signal(int, object)     # (request number, a result on the way: see report)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pool = QtCore.QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._lock = threading.Lock()
        self._pending: tuple[int, Callable[[], Any]] | None = None
        self._busy = False
        self.runs = 0                          # requests actually run (the rest were superseded)

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._busy or self._pending is not None

    def submit(self, seq: int, fn: Callable[[], Any]) -> None:
        with self._lock:
            self._pending = (seq, fn)
            if self._busy:
                return
            self._busy = True
        self.pool.start(_Job(self))

    def _drain(self) -> None:
        while True:
            with self._lock:
                if self._pending is None:
                    self._busy = False
                    return
                seq, fn = self._pending
                self._pending = None
            self.runs += 1
            try:
                result = fn()
            except Exception as e:  # any model error becomes a one-line message, never a traceback
                if os.environ.get("ATTENTION_VISUALIZER_DEBUG"):
                    traceback.print_exc()
                # a model folder's own one-line message as it is ("ModelLoadError: …" read as a program's)
                said = str(e) if isinstance(e, ModelLoadError) else f"{type(e).__name__}: {e}"
                self._emit(self.failed, seq, said.splitlines()[0] if said else type(e).__name__)
            else:
                self._emit(self.finished, seq, result)

    def report(self, seq: int, partial) -> None:
        """From inside a job: hand the GUI thread something to show before the job ends (unless a newer request
        waits, which will supersede it anyway)."""
        with self._lock:
            if self._pending is not None:
                return
        self._emit(self.progress, seq, partial)

    @staticmethod
    def _emit(signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:      # the window closed while the model ran: nobody is listening any more
            pass

    def wait(self, msecs: int = 30000) -> bool:
        return self.pool.waitForDone(msecs)
