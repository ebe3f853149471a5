"""One training step, as in the notes: per-token loss under teacher forcing, the gradient for W_Q, W_K, W_V
of the selected head, a gradient step with learning rate η, and reset. Only weights in memory change."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ..plotting.colormaps import GRADIENT_COLORMAP
from ..plotting.titles import free_title_width
from ..plotting.token_axis import TokenAxis
from ..state import KIND_OF


class TrainingStepPanel(QtWidgets.QWidget):
    weights_changed = QtCore.Signal()          # the window re-runs the model to show the new attention

    def __init__(self, parent=None):
        super().__init__(parent)
        self.stepper = None                     # a model.gradient_step.GradientStepper once a model is open
        self.lr = QtWidgets.QDoubleSpinBox(decimals=4, minimum=0.0001, maximum=10.0, singleStep=0.01, value=0.05)
        self.lr.setPrefix("η = ")
        self.step_button = QtWidgets.QPushButton("Take one gradient step")
        self.reset_button = QtWidgets.QPushButton("Reset weights")
        self.step_button.clicked.connect(self.take_step)
        self.reset_button.clicked.connect(self.reset)
        self.status = QtWidgets.QLabel("Type a reference translation in the target field to compute the loss.")
        self.status.setWordWrap(True)
        controls = QtWidgets.QHBoxLayout()
        for w in (self.lr, self.step_button, self.reset_button):
            controls.addWidget(w)
        controls.addStretch(1)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground("w")
        self.loss_plot = self.plots.addPlot(row=0, col=0, colspan=3, title="Cross-entropy loss per reference token",
                                            axisItems={"bottom": TokenAxis("bottom")})
        self.loss_plot.setLabel("left", "−log P(reference token)")
        free_title_width(self.loss_plot.titleLabel)
        self.loss_plot.setTitle("Cross-entropy loss per reference token")
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush="#3b75af")
        self.loss_plot.addItem(self.bars)
        self.grad_images = {}
        self.grad_plots = {}
        for col, name in enumerate(("W_Q", "W_K", "W_V")):
            plot = self.plots.addPlot(row=1, col=col)
            plot.setLabel("left", "d_model")
            plot.setLabel("bottom", "d_k")
            for side in ("left", "bottom"):       # row and column numbers: never "d_model (x0.001)"
                plot.getAxis(side).enableAutoSIPrefix(False)
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

    def set_model(self, lm) -> None:
        from model.gradient_step import GradientStepper     # torch: imported once a model is open
        self.stepper = GradientStepper(lm)
        self.history.clear()

    def _target(self, state) -> str:
        return (state.target or "").strip()

    def view_key(self, state):
        return (state.kind, state.stack, state.sublayer, state.layer, state.head, state.sentence, state.target,
                self.stepper.steps_taken if self.stepper else 0)

    def render(self, trace, state) -> None:
        self._state = state
        target = self._target(state)
        enabled = self.stepper is not None and bool(target)
        self.step_button.setEnabled(enabled)
        self.reset_button.setEnabled(self.stepper is not None and self.stepper.steps_taken > 0)
        if not enabled:
            self.status.setText("Type a reference translation in the target field: the loss and its gradients "
                                "are computed for it under teacher forcing.")
            return
        kind = KIND_OF.get((state.stack, state.sublayer), state.kind)
        stack = "enc" if kind == "enc_self" else "dec"
        n_layers = self.stepper.lm.cfg.N_enc if stack == "enc" else self.stepper.lm.cfg.N_dec
        layer = min(state.layer, n_layers - 1)
        try:
            result = self.stepper.evaluate(state.sentence, target, kind, layer, state.head)
        except ValueError as e:
            self.status.setText(str(e))
            return
        self.losses, self.grads = result.token_losses, result.grads
        labels = self.stepper.lm.tgt_tok.pieces(self.stepper.lm.tgt_tok.encode(target)) + ["</s>"]
        x = np.arange(len(self.losses))
        self.bars.setOpts(x=x, height=self.losses, width=0.7)
        self.loss_plot.getAxis("bottom").set_labels(labels)
        for name, g in self.grads.items():
            m = float(np.abs(g).max()) or 1.0
            self.grad_images[name].setImage(g, levels=(-m, m))
        steps = self.stepper.steps_taken
        text = f"Mean loss L = {result.loss:.4f} over {len(self.losses)} tokens"
        if self.history:
            before, after = self.history[-1]
            text += f"; last step: {before:.4f} → {after:.4f} ({steps} step{'s' if steps != 1 else ''} taken)"
        self.status.setText(text + f". Gradients for {kind.replace('_', ' ')} layer {layer + 1}, head {state.head + 1}.")

    def take_step(self) -> None:
        state = getattr(self, "_state", None)
        if self.stepper is None or state is None or not self._target(state):
            return
        self.history.append(self.stepper.step(state.sentence, self._target(state), self.lr.value()))
        self.weights_changed.emit()

    def reset(self) -> None:
        if self.stepper is not None:
            self.stepper.reset()
            self.history.clear()
            self.weights_changed.emit()
