"""Runs the model off the GUI thread. When requests come faster than the model runs, only the newest is run."""
from __future__ import annotations

import gc
import os
import threading
import traceback
from typing import Any, Callable

from PySide6 import QtCore


_default_threads: int | None = None       # torch's own choice (the cores), read before the first change


def one_torch_thread(large: bool = False) -> None:
    """Translating one sentence is hundreds of tiny tensor operations, for which a second torch thread costs
    more in synchronisation than it saves (measured in one run: 56 against 63 ms for a 12-word sentence,
    93 against 110 ms for 120 words); the other core is left to the GUI thread, which paints meanwhile.
    large: a model of tens of millions of parameters (see model.families.can_preview), whose matrix products are
    big enough to share among threads: torch's default less one core, left to the GUI thread (on 2 cores, one
    thread: with the other core busy, a GPT-2-small pass over 108 tokens took 11.5 s on two threads against 3.2 s
    on one). OMP_NUM_THREADS, when set, decides instead. The setting belongs to the calling thread (OpenMP), so
    every thread that runs the model calls this."""
    global _default_threads
    import torch
    if "OMP_NUM_THREADS" in os.environ:
        return
    if _default_threads is None:
        _default_threads = torch.get_num_threads()
    want = max(1, _default_threads - 1) if large else 1
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)


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
                self._emit(self.failed, seq, f"{type(e).__name__}: {e}".splitlines()[0])
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
