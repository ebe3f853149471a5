"""One training step, as in the notes: per-token loss under teacher forcing, the gradient for W_Q, W_K, W_V
of the selected head, a gradient step with learning rate η, and reset. Only weights in memory change.

The forward and backward passes run in a worker thread (with the model's lock held, see model.gradient_step);
the panel shows their numbers when they come."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtWidgets

from model.threads import one_torch_thread

from .. import accessible
from ..plotting.colormaps import GRADIENT_COLORMAP
from ..plotting.heatmap import plain_numbers
from ..plotting.titles import free_title_width
from ..plotting.token_axis import TokenAxis
from ..worker import ModelRunner
from .widgets import DecimalBox


@dataclass(frozen=True)
class Evaluation:
    """What a job of the worker hands back: the weight changes it made and the loss and gradients of a view."""
    stepper: Any                               # the model.gradient_step.GradientStepper it worked with
    changes: list[tuple[str, Any]]             # ("step", (loss before, loss after)) or ("reset", None), in order
    view: tuple | None                         # (sentence, target, kind, layer, head) evaluated, if any
    result: Any = None                         # its model.gradient_step.StepResult, or the message of a ValueError


def nats(loss: float) -> str:
    """A loss as the panel writes it: four decimals, three significant digits when that would say 0.0000 or run
    to 24 digits (η = 10 took it to 675372139983458575531904.0000)."""
    return f"{loss:.4f}" if loss == 0 or 0.001 <= abs(loss) < 1e5 else f"{loss:.3g}"


class TrainingStepPanel(QtWidgets.QWidget):
    weights_changed = QtCore.Signal()          # a step or reset is done: the window re-runs the model to show it
    computed = QtCore.Signal()                 # the loss and gradients of the newest view are shown

    def __init__(self, parent=None):
        super().__init__(parent)
        self.stepper = None                     # a model.gradient_step.GradientStepper once a model is open
        self.runner = ModelRunner(self)         # forward and backward off the GUI thread
        self.runner.finished.connect(self._on_done)
        self.runner.failed.connect(lambda _seq, message: self.status.setText(message))
        self._lock = threading.Lock()           # guards the two below, shared with the worker
        self._changes: list[tuple[str, Callable[[], Any]]] = []   # weight changes asked for, not made yet
        self._wanted: tuple | None = None       # the newest view to evaluate, not evaluated yet
        self._seq = 0
        self.lr = DecimalBox(decimals=4, minimum=0.0001, maximum=10.0, singleStep=0.01, value=0.05)
        self.lr.setPrefix("η = ")
        self.step_button = QtWidgets.QPushButton("One gradient step")     # short: the row fits a narrow dock
        self.step_button.setToolTip("Take one gradient step of size η on the loss of the target (teacher forcing)")
        self.reset_button = QtWidgets.QPushButton("Reset weights")
        self.reset_button.setToolTip("Put back the model's weights as they were before the steps")
        for w in (self.lr, self.step_button, self.reset_button):
            w.setEnabled(False)                 # until a model that can take steps and a target are there
        self.step_button.clicked.connect(self.take_step)
        self.reset_button.clicked.connect(self.reset)
        self.status = QtWidgets.QLabel("Type a reference translation in the target field to compute the loss.")
        self.status.setWordWrap(True)
        # η beside the buttons, or above them in a narrow dock (in class at 720p "Reset weights" read "Res" and the
        # status line ran past the dock's edge: the row made the panel wider than its dock)
        self.buttons = buttons = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        buttons.addWidget(self.step_button)
        buttons.addWidget(self.reset_button)
        buttons.addStretch(1)
        self.controls = controls = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        controls.addWidget(self.lr)
        controls.addLayout(buttons, 1)
        self.plots = pg.GraphicsLayoutWidget()
        accessible.name(self.plots, "Loss per reference token, and the gradients of the head in view")
        accessible.name(self.lr, "Learning rate η")
        self.plots.setBackground("w")
        self.loss_plot = self.plots.addPlot(row=0, col=0, colspan=3, title="Cross-entropy loss per reference token",
                                            axisItems={"bottom": TokenAxis("bottom")}, enableMenu=False)
        # natural log, as training uses; short: a dock's plot is short, and the title names the token
        self.loss_plot.setLabel("left", "−ln P (nats)")
        plain_numbers(self.loss_plot)           # 0.25 nats, never "250" under "nats (x0.001)"
        free_title_width(self.loss_plot.titleLabel)
        self.loss_plot.setTitle("Cross-entropy loss per reference token")
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush="#3b75af")
        self.loss_plot.addItem(self.bars)
        self.grad_images = {}
        self.grad_plots = {}
        for col, name in enumerate(("W_Q", "W_K", "W_V")):
            plot = self.plots.addPlot(row=1, col=col, enableMenu=False)     # the right-click menu is plot_menu's
            plot.setLabel("left", "d_model")
            plot.setLabel("bottom", "d_k")
            plain_numbers(plot)                   # row and column numbers: never "d_model (x0.001)"
            plot.invertY(True)
            free_title_width(plot.titleLabel)     # three titles side by side must not widen a narrow dock
            plot.setTitle(f"∂L/∂{name}")                  # of the head the status line names
            img = pg.ImageItem(axisOrder="row-major")
            img.setColorMap(pg.colormap.get(GRADIENT_COLORMAP))   # diverging: blue negative, red positive
            plot.addItem(img)
            self.grad_images[name], self.grad_plots[name] = img, plot
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.plots, 1)
        self.losses: np.ndarray | None = None
        self.grads: dict[str, np.ndarray] = {}
        self.history: list[tuple[float, float]] = []
        self._loss_top, self._loss_key = 0.0, None   # the loss axis' top for one sentence and target (see _show)
        self._numbers = ""                           # the status line of the numbers shown
        self._view: tuple | None = None         # the view whose loss and gradients are to be shown

    def set_model(self, lm) -> None:
        from model.gradient_step import GradientStepper     # torch: imported once a model is open
        seed = getattr(lm, "family", "seed") == "seed"       # gradient steps know the seed transformer's weights only
        self.unsupported = "" if seed else f"The training step works on this app's own models, not on {lm.name}."
        self.stepper = GradientStepper(lm) if seed else None
        self.lr.setEnabled(seed)
        self.step_button.setEnabled(False)      # render enables it once there is a target
        self.reset_button.setEnabled(False)
        self.history.clear()
        self._clear()
        with self._lock:                        # what was asked of the last model is no longer wanted
            self._changes, self._wanted = [], None

    def has_content(self) -> bool:
        """Whether the panel shows a loss and gradients (a target is given): Export all pictures it only then."""
        return self.plots.isVisibleTo(self)

    def steps_taken(self) -> int:
        return self.stepper.steps_taken if self.stepper is not None else 0

    def wait(self, msecs: int = 10000) -> bool:
        return self.runner.wait(msecs)

    def _target(self, state) -> str:
        return (state.target or "").strip()

    def view_key(self, state):
        return (state.kind, state.stack, state.sublayer, state.layer, state.head, state.sentence, state.target,
                self.steps_taken())

    def render(self, trace, state) -> None:
        """Ask the worker for the loss and gradients of this view (shown when they come)."""
        self._state = state
        target = self._target(state)
        enabled = self.stepper is not None and bool(target)
        self.step_button.setEnabled(enabled)
        self.reset_button.setEnabled(self.steps_taken() > 0)
        if not enabled:
            self._view = None
            with self._lock:
                self._wanted = None
            self._clear()                       # the last target's loss is not this view's
            # no empty axes (0 … 1 nats, d_model −100 … 100) under the words that say what to type (QA as a teacher)
            self.plots.setVisible(False)
            self.status.setText(getattr(self, "unsupported", "") or
                                "Type a reference translation in the Target field (in presentation mode View ▸ "
                                "Target and decoding controls shows it): the loss and its gradients are computed "
                                "for it under teacher forcing.")
            return
        self.plots.setVisible(True)
        schema = self.stepper.lm.schema
        here = schema.kind_at(state.stack, state.sublayer)
        kind = here.name if here is not None else state.kind
        if kind not in schema.kind_names:
            kind = schema.kinds[0].name
        layer = state.attention_layer(schema.stack(schema.kind(kind).stack).n_layers)    # (at the output, the last)
        self._view = (state.sentence, target, kind, layer, state.head)
        with self._lock:
            self._wanted = self._view
        self._submit()

    def _submit(self) -> None:
        """A job that makes the weight changes asked for, then evaluates the newest view asked for; jobs still
        waiting are superseded, never what they were to do (the next job does it)."""
        stepper = self.stepper

        def job() -> Evaluation:
            one_torch_thread()
            with self._lock:
                changes, self._changes = self._changes, []
                view, self._wanted = self._wanted, None
            from model.gradient_step import StepDiverged     # (torch: imported with the model, not at start)
            made = []
            for what, change in changes:
                try:
                    made.append((what, change()))
                except StepDiverged as e:               # not taken: the weights are as before it
                    made.append(("refused", str(e)))
            try:
                result = stepper.evaluate(*view) if view is not None else None
            except ValueError as e:
                result = str(e)
            return Evaluation(stepper, made, view, result)

        self._seq += 1
        self.runner.submit(self._seq, job)

    def _on_done(self, _seq: int, done: Evaluation) -> None:
        if done.stepper is not self.stepper:
            return                              # another model opened meanwhile
        refused = [message for what, message in done.changes if what == "refused"]
        for what, losses in done.changes:
            if what == "step":
                self.history.append(losses)
            elif what == "reset":
                self.history.clear()
                self._loss_top = 0.0             # the loss axis of the weights as loaded (it kept a diverged run's)
        if len(refused) < len(done.changes):
            self.weights_changed.emit()
        elif refused:                            # nothing changed: the numbers shown still hold
            self.status.setText(f"{refused[-1]} {self._numbers}")
            self.computed.emit()
            return
        with self._lock:
            newer = self._wanted is not None    # a newer view is on its way: show that one
        if done.view is None or newer or done.view != self._view:
            return                              # the view on screen is another one (its target cleared, say)
        if isinstance(done.result, str):
            self.status.setText(done.result)
        else:
            self._show(done.view, done.result)
        if refused:
            self.status.setText(f"{refused[-1]} {self._numbers}")
        self.computed.emit()

    def _show(self, view: tuple, result) -> None:
        _sentence, target, kind, layer, head = view
        self.losses, self.grads = result.token_losses, result.grads
        labels = self.stepper.lm.tgt_tok.pieces(self.stepper.lm.tgt_tok.encode(target)) + ["</s>"]
        x = np.arange(len(self.losses))
        self.bars.setOpts(x=x, height=self.losses, width=0.7)
        self.loss_plot.getAxis("bottom").set_labels(labels)
        # the bars' axis keeps the highest loss of this sentence and target: rescaled at every step, the bars looked
        # as tall after the loss had fallen 10,000-fold (QA)
        key = (view[0], view[1])
        self._loss_top = max(float(np.nanmax(self.losses)), self._loss_top if self._loss_key == key else 0.0)
        self._loss_key = key
        self.loss_plot.setYRange(0, self._loss_top or 1.0, padding=0.05)
        for name, g in self.grads.items():
            m = float(np.abs(g).max()) or 1.0
            self.grad_images[name].setImage(g, levels=(-m, m))
            # each map is coloured to its own largest |g|: its title says how large that is (the maps looked as
            # strong at a loss of 0.0000 as at 0.42)
            self.grad_plots[name].setTitle(f"∂L/∂{name}, max |g| {m:.2g}")
        steps = self.stepper.steps_taken
        text = f"Mean loss L = {nats(result.loss)} nats (natural log) over {len(self.losses)} tokens"
        if self.history:
            before, after = self.history[-1]
            text += f"; last step: {nats(before)} → {nats(after)} ({steps} step{'s' if steps != 1 else ''} taken)"
        title = self.stepper.lm.schema.kind(kind).title
        self._numbers = (text + f". A step changes every weight of the model; shown are the gradients of one "
                                f"head's: {title}, layer {layer + 1}, head {head + 1}.")
        self.status.setText(self._numbers)

    def _fit_controls(self) -> None:
        """η and the buttons on one row where they fit, else the buttons under η (nothing while the panel is being
        destroyed: an application font change reached it with its spin box gone, and this raised)."""
        if not all(map(shiboken6.isValid, (self, self.lr, self.step_button, self.reset_button, self.controls,
                                           self.buttons))):
            return
        pair = self.step_button.sizeHint().width() + self.reset_button.sizeHint().width() + 30
        # the room its dock gives: a scroll area widens the panel to the panel's own minimum, which the row sets
        room = min(self.width(), self.parentWidget().width()) if self.parentWidget() is not None else self.width()
        across, down = QtWidgets.QBoxLayout.Direction.LeftToRight, QtWidgets.QBoxLayout.Direction.TopToBottom
        # and the buttons one under the other where even they do not fit side by side (in class at 1024 × 768 the
        # pair made the panel 357 pixels wide, scrolled sideways in its 292-pixel dock; QA)
        for layout, want in ((self.controls, across if room >= pair + self.lr.sizeHint().width() + 10 else down),
                             (self.buttons, across if room >= pair else down)):
            if layout.direction() != want:
                layout.setDirection(want)

    def resizeEvent(self, event) -> None:
        self._fit_controls()
        super().resizeEvent(event)

    def event(self, event) -> bool:
        if event.type() == QtCore.QEvent.Type.ParentChange and self.parentWidget() is not None:
            self.parentWidget().installEventFilter(self)     # a scroll area's viewport narrower than the panel
        return super().event(event)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.parentWidget() and event.type() == QtCore.QEvent.Type.Resize:
            self._fit_controls()
        return super().eventFilter(watched, event)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QtCore.QEvent.Type.FontChange, QtCore.QEvent.Type.ApplicationFontChange):
            QtCore.QTimer.singleShot(0, self, self._fit_controls)

    def _clear(self) -> None:
        """Empty plots: no bars, labels or gradients of a sentence, target or model no longer on screen."""
        self.losses, self.grads = None, {}
        self.bars.setOpts(x=[], height=[], width=0.7)
        self.loss_plot.getAxis("bottom").set_labels([])
        for name, img in self.grad_images.items():
            img.clear()
            self.grad_plots[name].setTitle(f"∂L/∂{name}")   # no "max |g|" of a model or target gone (QA)

    def _change(self, what: str, change: Callable[[], Any]) -> None:
        with self._lock:
            self._changes.append((what, change))
        self._submit()

    def take_step(self) -> None:
        state = getattr(self, "_state", None)
        if self.stepper is None or state is None or not self._target(state):
            return
        stepper, sentence, target, lr = self.stepper, state.sentence, self._target(state), self.lr.value()
        self._change("step", lambda: stepper.step(sentence, target, lr))

    def reset(self) -> None:
        if self.stepper is not None:
            self._change("reset", self.stepper.reset)
