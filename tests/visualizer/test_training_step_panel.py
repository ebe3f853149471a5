"""The training-step panel shows the stepper's numbers; a step lowers the loss; reset restores the weights."""
from __future__ import annotations

import numpy as np
import torch

from model import load, translate
from model.gradient_step import GradientStepper
from visualizer.panels.training_step import TrainingStepPanel
from visualizer.state import ViewState


def test_loss_gradients_step_and_reset(qtbot, tiny_model_dir):
    lm = load(tiny_model_dir)
    original = {k: v.clone() for k, v in lm.model.state_dict().items()}
    panel = TrainingStepPanel()
    qtbot.addWidget(panel)
    panel.set_model(lm)
    s = ViewState(sentence="the cat sat on the mat", target="le chat était assis")
    s.set_shape(lm.schema, 5)
    s.update(kind="cross", layer=1, head=1)
    tr = translate(lm, s.sentence, target=s.target).trace
    panel.render(tr, s)
    expected = GradientStepper(load(tiny_model_dir)).evaluate(s.sentence, s.target, "cross", 1, 1)
    np.testing.assert_allclose(panel.losses, expected.token_losses, rtol=1e-5)
    np.testing.assert_allclose(panel.grad_images["W_K"].image, expected.grads["W_K"], rtol=1e-4, atol=1e-7)
    with qtbot.waitSignal(panel.weights_changed):
        panel.take_step()
    before, after = panel.history[-1]
    assert after < before
    panel.render(translate(lm, s.sentence, target=s.target).trace, s)
    assert "→" in panel.status.text()
    with qtbot.waitSignal(panel.weights_changed):
        panel.reset()
    for k, v in original.items():
        assert torch.equal(v, lm.model.state_dict()[k])


def test_disabled_without_a_target(qtbot, tiny_lm):
    panel = TrainingStepPanel()
    qtbot.addWidget(panel)
    panel.set_model(tiny_lm)
    s = ViewState(sentence="the cat", target="  ")
    panel.render(translate(tiny_lm, "the cat").trace, s)
    assert not panel.step_button.isEnabled()
    panel.take_step()                      # does nothing, raises nothing
    assert panel.history == []


def test_the_plots_fit_a_narrow_dock(qtbot, tiny_model_dir):
    """Three gradient plots side by side: their titles must not make the panel wider than a side dock."""
    from PySide6 import QtCore
    lm = load(tiny_model_dir)
    panel = TrainingStepPanel()
    qtbot.addWidget(panel)
    panel.set_model(lm)
    s = ViewState(sentence="the cat sat on the mat", target="le chat était assis sur le tapis")
    s.set_shape(lm.schema, 5)
    panel.render(translate(lm, s.sentence, target=s.target).trace, s)
    needed = panel.plots.ci.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).width()
    assert needed <= 460, needed
    for plot in panel.grad_plots.values():              # index axes: never "d_model (x0.001)" when empty
        assert not plot.getAxis("left").autoSIPrefix and not plot.getAxis("bottom").autoSIPrefix
