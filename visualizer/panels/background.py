"""Work for the trace in view, done in one background thread (numpy releases the interpreter lock for most of it):
a newer trace stops what an older one started. The small heads' images and the LayerNorm statistics use it."""
from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

from ..worker import NO_COLLECTION


class TraceBackground:
    def __init__(self, name: str):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._ref = None

    def follow(self, trace) -> bool:
        """Make trace the current one; True when it was not already (the work of the one before stops)."""
        if self.current(trace):
            return False
        self._ref = weakref.ref(trace)
        return True

    def current(self, trace) -> bool:
        return self._ref is not None and self._ref() is trace

    def submit(self, items: Callable[[object], Iterable], do: Callable[[object, object], None]) -> None:
        """In the background, do(trace, item) for each of items(trace) while the current trace stays current
        (after follow())."""
        self._pool.submit(self._run, self._ref, items, do)

    def _run(self, ref, items, do) -> None:
        with NO_COLLECTION:        # a collection here could free a closed window's Qt objects off the GUI thread
            self._each(ref, items, do)

    def _each(self, ref, items, do) -> None:
        trace = ref()
        if trace is None:
            return
        for item in items(trace):
            if self._ref is not ref:
                return
            do(trace, item)

    def wait(self, timeout: float = 30.0) -> None:
        """Until the work submitted so far is done (for tests and benchmarks)."""
        self._pool.submit(lambda: None).result(timeout=timeout)
