"""panels/background.py: work for the trace in view runs in the background and stops when another trace is shown."""
from __future__ import annotations

import threading

from visualizer.panels.background import TraceBackground


class Trace:          # any object a weak reference can point to
    pass


def test_work_for_a_trace_stops_once_a_newer_one_is_followed():
    bg = TraceBackground("test")
    old, new = Trace(), Trace()
    started, go = threading.Event(), threading.Event()
    done = []

    def do(trace, item):
        if item == 0:
            started.set()
            go.wait(timeout=10)
        done.append((trace, item))

    assert bg.follow(old) and not bg.follow(old)
    bg.submit(lambda t: range(5), do)
    assert started.wait(timeout=10)
    assert bg.follow(new)            # while item 0 of the old trace is under way
    go.set()
    bg.submit(lambda t: range(3), do)
    bg.wait()
    assert done == [(old, 0), (new, 0), (new, 1), (new, 2)]
    assert bg.current(new) and not bg.current(old)


def test_work_for_a_trace_gone_does_nothing():
    bg = TraceBackground("test")
    trace = Trace()
    bg.follow(trace)
    gate = threading.Event()
    bg.submit(lambda t: [0], lambda t, i: gate.wait(10))     # holds the thread until the trace is dropped
    done = []
    bg.submit(lambda t: range(3), lambda t, i: done.append(i))
    del trace
    gate.set()
    bg.wait()
    assert done == []


def test_no_garbage_collection_runs_in_the_background_thread():
    """As in the model's worker (test_worker.py): a collection in this thread could free a closed window's Qt
    objects off the GUI thread, so the collector is off while the work runs, and on again after it."""
    import gc
    assert gc.isenabled()
    bg = TraceBackground("test")
    trace = Trace()
    bg.follow(trace)
    seen = []
    bg.submit(lambda t: range(3), lambda t, i: seen.append(gc.isenabled()))
    bg.wait()
    assert seen == [False, False, False]
    assert gc.isenabled()
