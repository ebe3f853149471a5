"""The run controller: a model run per request, in the worker; the newest request wins; the repaint waits for typing
to pause; the last run of each model is kept as the next one's draft."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6 import QtCore

from model.families import can_preview, require
from model.threads import one_torch_thread

from .last_frame import frame_key
from .worker import ModelRunner

DEBOUNCE_MS = 150


def load(name_or_folder):
    """model.load, imported on first use: it imports torch, the slow part of starting."""
    from model import load as load_model
    one_torch_thread()
    return load_model(name_or_folder)


def translate(*args, **kwargs):
    """model.translate, imported on first use (torch)."""
    from model import translate as run
    return run(*args, **kwargs)


@dataclass(frozen=True)
class RunResult:
    """A finished model run, as the worker hands it back."""
    translation: Any          # model.decoding.Translation (its trace is what the panels show)
    ms: float                 # how long the model ran
    cut_chars: bool           # the sentence was cut to MAX_CHARS characters when the run was asked for
    key: str | None           # the run as last_frame keys it (None: not a model folder on disk, or partial)
    lm: Any                   # the model.LoadedModel that ran it
    partial: bool = False     # a first look before generation (large models): the full run follows


class RunController(QtCore.QObject):
    """Asks the worker for runs of the ViewState's run fields and says which result to show, and when.

    Typing: the model starts at each keystroke (a newer one supersedes it); the debounce holds only the repaint,
    so that the panels are drawn once the user pauses, with a result that is usually ready by then."""

    ready = QtCore.Signal(object)      # a RunResult to show now: the newest request's
    failed = QtCore.Signal(str)        # the newest request failed (one-line message)
    requested = QtCore.Signal()        # a run was asked for: what is on screen may be out of date until it shows

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.runner = ModelRunner(self)
        self.runner.finished.connect(self._on_result)
        self.runner.failed.connect(self._on_failure)
        self.runner.progress.connect(self._on_partial)
        self.seq = 0                       # the newest request
        self.rendered_seq = -1             # the newest request shown
        self.previous: RunResult | None = None    # the last run of any request: the next one's draft (same model)
        self.shown: RunResult | None = None       # the last run shown
        self.held: tuple[int, RunResult] | None = None     # a result that came before the debounce ran out
        self.debounce = QtCore.QTimer(self, singleShot=True, interval=DEBOUNCE_MS,
                                      timerType=QtCore.Qt.TimerType.PreciseTimer)
        self.debounce.timeout.connect(self.debounced)

    def request(self, lm, typing: bool = False) -> None:
        """Start a run of lm on the current state (in the worker; the newest request wins). typing: show it only once
        the user pauses (DEBOUNCE_MS after the last keystroke)."""
        if typing:
            self.debounce.start()
        if lm is None:
            return
        self.seq += 1
        self.requested.emit()
        cut_chars = self.state.cut_chars      # read now: the state may change while the job waits
        text, target, settings, positional = self.state.run_fields()
        ablations = self.state.ablations
        # a saved frame is the plain model's: a run with heads switched off is never saved as one
        key = None if ablations else frame_key(self.state.model_name, text, target, settings, positional)
        # the translation on screen, if this model made it: given again if the run reads the same (a space between
        # words, or the same weights' version: see model.decoding), else greedy decoding checks its output first,
        # as a keystroke seldom changes more than the end
        previous = self.previous.translation if self.previous is not None and self.previous.lm is lm else None
        seq, runner = self.seq, self.runner

        def job() -> RunResult:
            one_torch_thread(large=can_preview(lm))
            with lm.lock:                         # a gradient step (another worker) waits for the run, and vice versa
                t0 = time.perf_counter()
                require(lm, ablations)            # one line in the notice when the family cannot switch heads off
                extra = {"ablations": ablations} if ablations else {}
                if can_preview(lm):               # a large model: its input's attention shows while it generates
                    extra["preview"] = lambda tr: runner.report(seq, RunResult(
                        tr, (time.perf_counter() - t0) * 1000, cut_chars, None, lm, partial=True))
                result = translate(lm, text, settings, target=target or None, positional=positional,
                                   previous=previous, **extra)
            return RunResult(result, (time.perf_counter() - t0) * 1000, cut_chars, key, lm)

        self.runner.submit(self.seq, job)

    def debounced(self) -> None:
        """The user paused typing: show the newest run's result if it came meanwhile (else it shows when it comes)."""
        held, self.held = self.held, None
        if held is not None and held[0] == self.seq:
            self._on_result(*held)

    def _on_result(self, seq: int, run: RunResult) -> None:
        self.previous = run                      # any run of this model: the next one's draft
        if seq != self.seq:
            return                               # a newer request is on its way: never show stale results
        if self.debounce.isActive():
            self.held = (seq, run)               # drawn when the user pauses
            return
        self.shown, self.rendered_seq = run, seq
        self.ready.emit(run)

    def _on_partial(self, seq: int, run: RunResult) -> None:
        """A first look at a run still going (never a draft, never saved): shown unless the user is typing, or a
        newer request or this run's full result came first."""
        if seq == self.seq and self.rendered_seq < seq and not self.debounce.isActive():
            self.shown = run
            self.ready.emit(run)

    def _on_failure(self, seq: int, message: str) -> None:
        if seq == self.seq:
            self.failed.emit(message)

    def wait(self, msecs: int = 10000) -> bool:
        return self.runner.wait(msecs)
