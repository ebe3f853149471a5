"""Start-up: the window opens before its model. Until the model runs it shows the frame saved last time, or the frame a
helper process translates (see first_run); the first model (and torch) opens in the background; at close, the run
on screen is saved for the next start (see last_frame)."""
from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import Any

from PySide6 import QtCore, QtWidgets

from model.assets import ModelLoadError

from .controls import model_label
from .first_run import Helper
from .last_frame import frame_key, save_frame, saved_frame
from .runs import load
from .state import default_model
from .worker import ModelRunner


@dataclass(frozen=True)
class Opened:
    """The model the background loader opened."""
    name: str                 # its bundled name or folder
    lm: Any                   # model.LoadedModel
    message: str              # why it is not the one asked for ("" when it is)


class Startup(QtCore.QObject):
    """The window's first seconds: the frame shown meanwhile, the helper process, the model loader."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.frame = None                          # the frame on screen until the model runs (a last_frame.Frame)
        self.frame_origin = ""                     # where it came from, for the status bar
        self.helper: Helper | None = None          # a process translating the first run (see first_run)
        self.helper_waiter = ModelRunner(self)     # waits for it off the GUI thread
        self.helper_waiter.finished.connect(self._helper_done)
        self.loader = ModelRunner(self)            # opens the first model (importing torch) off the GUI thread
        self.loader.finished.connect(self._model_opened)
        self.loader.failed.connect(self._open_failed)
        self.first_paint_at: float | None = None   # perf_counter() once the window was first painted
        self._start_model_loader = None

    def begin(self, first) -> None:
        """Show first (a saved frame, or a helper translating; by default the frame saved for this run, if any) and
        open the state's model in the background."""
        w = self.window
        first = first if first is not None else saved_frame(w.settings.frame_path(), w.state)
        if isinstance(first, Helper):
            self.helper = first
            self.helper_waiter.submit(0, first.wait)
        elif first is not None:
            self.show_frame(first)
        self.open_in_background(w.state.model_name)

    def live_run_shown(self) -> None:
        """The model's own run is on screen: no frame any more, and a helper still running is of no use."""
        self.frame = None
        if self.helper is not None:
            self.helper.stop()                   # the live run came first: the other core is free again

    def show_frame(self, frame, origin: str = "a saved run") -> None:
        """Show a frame (last_frame.Frame) until the model runs; origin: where it came from, for the status bar."""
        self.frame, self.frame_origin = frame, origin
        w = self.window
        w.set_vocab(frame.vocab)
        w.show_result(frame, 0.0, frame.cut_chars)
        w.trace_shown.emit()

    def _helper_done(self, _seq: int, frame) -> None:
        """Show the helper's frame if nothing newer is on screen and the run asked for is still the same."""
        w = self.window
        if frame is not None and w.trace is None and w.runs.shown is None and not w.state.ablations and \
                frame_key(w.state.model_name, *w.state.run_fields()) == self.helper.key:
            self.show_frame(frame, "translated while the app opened")
        if w.lm is None and self.loader.runs == 0:
            self._start_model_loader()

    def open_in_background(self, name: str) -> None:
        w = self.window
        w.status_model.setText(f"Loading {model_label(name)}…")
        if w.trace is None:                      # no saved frame to show meanwhile: say what is happening
            w.inputs.translation.setText(f"<i>Loading the model {html.escape(model_label(name))}… "
                                         "the translation appears in a moment.</i>")
        fallback = default_model()

        def job() -> Opened:
            try:
                return Opened(name, load(name), "")
            except ModelLoadError as e:
                if name == fallback:
                    raise
                return Opened(fallback, load(fallback), f"Cannot open {name}: {e}; opened {fallback}")

        # after the first paint: importing torch next to building and painting the window slows both (the GIL).
        # With a helper process translating meanwhile, after its frame: the helper imports torch quicker alone, and
        # its frame is painted sooner (measured, 5 starts each: median 2.43 against 2.69 s to the first frame)
        self._start_model_loader = lambda: self._start_loader(job)
        if self.helper is None:
            QtCore.QTimer.singleShot(0, self._start_model_loader)

    def _start_loader(self, job) -> None:
        QtWidgets.QApplication.processEvents()     # paint the window (and the last frame, if there is one)
        self.first_paint_at = time.perf_counter()
        self.loader.submit(0, job)

    def _model_opened(self, _seq: int, opened: Opened) -> None:
        w = self.window
        if w.lm is not None:
            return                                 # the user opened another model meanwhile
        if opened.message:
            w.statusBar().showMessage(opened.message, 15000)
        w.open_model(opened.name, lm=opened.lm)

    def _open_failed(self, _seq: int, message: str) -> None:
        w = self.window
        if w.lm is None:
            w.status_model.setText("No model")
            w.error("Cannot open the model", message)

    def stop_threads(self) -> None:
        """Wait for the loader and stop the helper (its frame would come too late to be seen)."""
        self.loader.wait(30000)
        if self.helper is not None:
            self.helper.stop()
            self.helper_waiter.wait(10000)

    def close(self, stepped: bool) -> None:
        """The window closes: wait for the loader, stop the helper, and save the run on screen for the next start
        (unless training steps changed the weights it ran with)."""
        w = self.window
        self.stop_threads()
        shown = w.runs.shown
        # a run with heads switched off has no key (a saved frame is the plain model's), nor has a first look
        if shown is not None and shown.key is not None and not shown.partial and w.translation is not None \
                and self.frame is None and not stepped:
            try:                             # the next start shows this at once (see last_frame)
                save_frame(w.settings.frame_path(), shown.key, w.translation, shown.cut_chars, shown.lm)
            except Exception:                # a read-only home, a full disk: the next start waits for the model
                pass
