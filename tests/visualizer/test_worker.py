"""The model worker: one run at a time, only the newest waiting request runs, errors become one line."""
from __future__ import annotations

import threading

import pytest

from visualizer.worker import ModelRunner


@pytest.fixture
def runner(qtbot):
    r = ModelRunner()
    yield r
    r.wait(10000)


def collect(runner):
    done, failed = [], []
    runner.finished.connect(lambda seq, result: done.append((seq, result)))
    runner.failed.connect(lambda seq, message: failed.append((seq, message)))
    return done, failed


def test_requests_arriving_while_busy_collapse_to_the_newest(qtbot, runner):
    done, _ = collect(runner)
    release = threading.Event()
    started = threading.Event()

    def slow():
        started.set()
        release.wait(10)
        return "first"

    runner.submit(1, slow)
    assert started.wait(10)
    for seq in (2, 3, 4):
        runner.submit(seq, lambda seq=seq: f"request {seq}")
    release.set()
    qtbot.waitUntil(lambda: len(done) == 2 and not runner.busy, timeout=10000)
    assert done == [(1, "first"), (4, "request 4")]       # 2 and 3 were superseded before they ran
    assert runner.runs == 2


def test_an_error_becomes_one_line_and_the_worker_goes_on(qtbot, runner, capfd):
    done, failed = collect(runner)

    def broken():
        raise RuntimeError("the model fell over\nsecond line of detail")

    runner.submit(1, broken)
    qtbot.waitUntil(lambda: bool(failed) and not runner.busy, timeout=10000)
    assert failed == [(1, "RuntimeError: the model fell over")]
    assert "Traceback" not in capfd.readouterr().err
    runner.submit(2, lambda: 42)
    qtbot.waitUntil(lambda: bool(done), timeout=10000)
    assert done == [(2, 42)]


def test_no_garbage_collection_runs_in_a_worker(qtbot):
    """A collection in a worker could free a leftover Qt object off the GUI thread (a deadlock seen in the
    suite); the collector is off while any job of any runner runs, and back on after the last one."""
    import gc

    first, second = ModelRunner(), ModelRunner()
    done, _ = collect(first)
    done2, _ = collect(second)
    release = threading.Event()
    seen = []

    def job():
        seen.append(gc.isenabled())
        release.wait(5)
        return 1

    assert gc.isenabled()
    first.submit(1, job)
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    second.submit(1, lambda: gc.isenabled())
    qtbot.waitUntil(lambda: bool(done2), timeout=5000)
    assert done2 == [(1, False)] and seen == [False]
    release.set()
    qtbot.waitUntil(lambda: bool(done), timeout=5000)
    first.wait(5000)
    second.wait(5000)
    assert gc.isenabled()
