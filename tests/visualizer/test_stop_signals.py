"""A kill, a closed terminal or Ctrl+C closes the window as Quit does, and the session is saved (QA: SIGTERM and
SIGHUP lost what was typed, Ctrl+C did nothing)."""
from __future__ import annotations

import json
import os
import signal

import pytest

from visualizer.stop_signals import close_on_stop_signals


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_closes_the_window_and_saves_the_session(qtbot, window, signum):
    window.keeps_session = True
    window.inputs.sentence.setText("the dog sat")
    qtbot.waitUntil(lambda: window.trace is not None and window.trace.meta["sentence"] == "the dog sat"
                    and not window.runs.runner.busy, timeout=20000)
    before = signal.getsignal(signum)
    with close_on_stop_signals(window) as asked:
        os.kill(os.getpid(), signum)
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
    assert asked == [signum]
    assert signal.getsignal(signum) == before                    # as it was after the window's run
    saved = json.loads(window.settings.session_path().read_text(encoding="utf-8"))
    assert saved["sentence"] == "the dog sat"
