"""The training-step panel shows the stepper's numbers; a step lowers the loss; reset restores the weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6 import QtWidgets

from model import load, translate
from model.tokenizer import EOS
from model.gradient_step import GradientStepper
from visualizer.panels.training_step import TrainingStepPanel
from visualizer.state import ViewState


def shown_panel(qtbot, lm, target="le chat était assis"):
    """A panel on lm showing "the cat sat on the mat" with target, once the worker's numbers are shown."""
    panel = TrainingStepPanel()
    qtbot.addWidget(panel)
    panel.set_model(lm)
    s = ViewState(sentence="the cat sat on the mat", target=target)
    s.set_shape(lm.schema, 5)
    tr = translate(lm, s.sentence, target=s.target).trace
    with qtbot.waitSignal(panel.computed, timeout=10000):
        panel.render(tr, s)                # the worker computes; the panel shows the numbers when they come
    return panel, s, tr


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
    with qtbot.waitSignal(panel.computed, timeout=10000):
        panel.render(tr, s)                # the worker computes; the panel shows the numbers when they come
    expected = GradientStepper(load(tiny_model_dir)).evaluate(s.sentence, s.target, "cross", 1, 1)
    np.testing.assert_allclose(panel.losses, expected.token_losses, rtol=1e-5)
    ids = lm.tgt_tok.encode(s.target) + [EOS]                           # the reference and </s>, teacher-forced
    # natural log of the softmax over every logit, as training takes it (the Output panel's probs leave out <pad>,
    # which decoding never draws: trace.never_drawn)
    logits = tr["logits"].astype(np.float64)
    log_z = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    nats = [log_z[t] - logits[t, i] for t, i in enumerate(ids)]
    np.testing.assert_allclose(panel.losses, nats, rtol=1e-4)
    assert "nats" in panel.status.text() and "nats" in panel.loss_plot.getAxis("left").labelText
    np.testing.assert_allclose(panel.grad_images["W_K"].image, expected.grads["W_K"], rtol=1e-4, atol=1e-7)
    with qtbot.waitSignal(panel.weights_changed):
        panel.take_step()
    before, after = panel.history[-1]
    assert after < before
    with qtbot.waitSignal(panel.computed, timeout=10000):
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
    panel, _, _ = shown_panel(qtbot, load(tiny_model_dir), "le chat était assis sur le tapis")
    needed = panel.plots.ci.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).width()
    assert needed <= 460, needed
    row = panel.layout().itemAt(0).layout().minimumSize().width()   # η, the step and reset buttons
    assert row <= panel.fontMetrics().horizontalAdvance("n" * 46), row    # ~350 pixels: a laptop's side dock
    for plot in panel.grad_plots.values():              # index axes: never "d_model (x0.001)" when empty
        assert not plot.getAxis("left").autoSIPrefix and not plot.getAxis("bottom").autoSIPrefix
    # a class's text size: η above the buttons in a narrow dock, whose width the panel then keeps (at 720p
    # "Reset weights" read "Res" and the status line ran past the dock's edge)
    font = panel.font()
    font.setPointSizeF(font.pointSizeF() * 1.8)
    panel.setFont(font)
    panel.show()
    panel.resize(360, 600)
    qtbot.waitUntil(lambda: panel.controls.direction() == QtWidgets.QBoxLayout.Direction.TopToBottom)
    assert panel.layout().minimumSize().width() <= 360 or panel.controls.minimumSize().width() < row * 1.8
    panel.resize(1400, 600)
    qtbot.waitUntil(lambda: panel.controls.direction() == QtWidgets.QBoxLayout.Direction.LeftToRight)


def test_forward_and_backward_run_in_the_worker_with_the_model_lock_held(qtbot, tiny_model_dir, monkeypatch):
    """Evaluating a view and taking a step never run on the GUI thread; while they run, nobody else can take the
    model's lock (a translation in the run controller's worker waits)."""
    import threading

    lm = load(tiny_model_dir)
    seen = []
    real = GradientStepper._evaluate

    def spy(self, *args):
        other = []                         # can another thread take the lock now?
        t = threading.Thread(target=lambda: other.append(lm.lock.acquire(blocking=False)))
        t.start()
        t.join()
        seen.append((threading.current_thread() is threading.main_thread(), other[0]))
        return real(self, *args)

    monkeypatch.setattr(GradientStepper, "_evaluate", spy)
    panel, _, _ = shown_panel(qtbot, lm)
    with qtbot.waitSignal(panel.weights_changed, timeout=10000):
        panel.take_step()                  # loss before, step, loss after
    panel.wait()
    assert len(seen) >= 3 and seen == [(False, False)] * len(seen)
    assert panel.steps_taken() == 1 and len(panel.history) == 1


def test_requests_made_while_the_worker_is_busy_are_all_done_in_order(qtbot, tiny_model_dir):
    """Two steps and a view change asked for at once: both steps are taken (none is superseded), then the newest
    view is shown, with the weights after both steps."""
    lm = load(tiny_model_dir)
    panel, s, tr = shown_panel(qtbot, lm)
    panel.take_step()
    panel.take_step()
    s.update(kind="cross", layer=1, head=1)
    with qtbot.waitSignal(panel.computed, timeout=10000):
        panel.render(tr, s)
    panel.wait()
    assert panel.steps_taken() == 2 and len(panel.history) == 2
    expected = GradientStepper(lm).evaluate(s.sentence, s.target, "cross", 1, 1)     # the weights after two steps
    np.testing.assert_allclose(panel.losses, expected.token_losses, rtol=1e-5)
    np.testing.assert_allclose(panel.grad_images["W_K"].image, expected.grads["W_K"], rtol=1e-4, atol=1e-7)


def test_a_cleared_target_or_another_model_empties_the_plots(qtbot, tiny_model_dir):
    """The bars and gradients belong to one sentence, target and model: with the target gone, or another model
    open, none of them stays on screen; the loss axis reads nats, never "nats (x0.001)"."""
    lm = load(tiny_model_dir)
    panel, s, tr = shown_panel(qtbot, lm)
    assert len(panel.bars.opts["height"]) == len(lm.tgt_tok.encode(s.target)) + 1
    assert not panel.loss_plot.getAxis("left").autoSIPrefix and panel.has_content()
    s.update(target="")
    panel.render(tr, s)
    assert len(panel.bars.opts["height"]) == 0 and panel.loss_plot.getAxis("bottom").labels == []
    assert all(img.image is None for img in panel.grad_images.values())
    # and no empty axes under the words that say to type a target (QA as a teacher), nor a picture of them
    assert panel.plots.isHidden() and not panel.has_content() and "Type a reference" in panel.status.text()
    s.update(target="le chat")
    panel.render(tr, s)
    assert not panel.plots.isHidden() and panel.has_content()
    panel, s, tr = shown_panel(qtbot, lm)
    panel.set_model(load(tiny_model_dir))
    assert len(panel.bars.opts["height"]) == 0 and panel.losses is None
    # nor the last model's largest gradients in the titles (QA: "max |g| 0.00014" stayed over empty maps)
    assert [plot.titleLabel.text for plot in panel.grad_plots.values()] == ["∂L/∂W_Q", "∂L/∂W_K", "∂L/∂W_V"]


def test_runs_and_figures_after_training_steps_say_so(qtbot, tiny_model_dir):
    """QA as a researcher: after three gradient steps in the window, an exported figure was titled as the stock
    model's and run.json said only "model": "en-fr"; the numbers were the trained weights'."""
    import json

    from visualizer.export import heatmap_specs, run_record
    lm = load(tiny_model_dir)
    panel, s, _ = shown_panel(qtbot, lm)
    plain = translate(lm, s.sentence).trace
    assert "training_steps" not in plain.meta and "training" not in heatmap_specs(plain, "tiny")[0].title
    for _ in range(2):
        with qtbot.waitSignal(panel.weights_changed):
            panel.take_step()
    panel.wait()
    trained = translate(lm, s.sentence).trace
    assert trained.meta["training_steps"] == 2
    assert all(spec.title.endswith("(tiny, weights after 2 training steps)") for spec in heatmap_specs(trained, "tiny"))
    assert json.loads(run_record(trained, "tiny"))["training_steps"] == 2
    with qtbot.waitSignal(panel.weights_changed):
        panel.reset()
    assert "training_steps" not in translate(lm, s.sentence).trace.meta
    assert "training_steps" not in json.loads(run_record(translate(lm, s.sentence).trace, "tiny"))


def test_a_late_result_for_a_cleared_target_is_not_shown(qtbot, tiny_model_dir):
    lm = load(tiny_model_dir)
    panel = TrainingStepPanel()
    qtbot.addWidget(panel)
    panel.set_model(lm)
    s = ViewState(sentence="the cat sat on the mat", target="le chat")
    s.set_shape(lm.schema, 5)
    tr = translate(lm, s.sentence, target=s.target).trace
    panel.render(tr, s)                    # the worker computes it ...
    assert panel.wait()                    # ... and is done; its result waits in the event queue
    s.update(target="")
    panel.render(tr, s)                    # the target is cleared before the result is delivered
    qtbot.wait(100)
    assert len(panel.bars.opts["height"]) == 0 and "Type a reference" in panel.status.text()


def test_a_step_that_diverges_is_not_taken_and_said(qtbot, tiny_model_dir):
    """η = 10 (the box's largest), a dozen steps: the weights became NaN, the output panel raised a traceback and
    the others drew nothing (QA). A step that makes the loss or a weight infinite or NaN is undone and said; a huge
    loss is written in three significant digits, not 24; the loss axis keeps its top as the loss falls; each
    gradient map's title says its largest |g|."""
    import math

    import torch

    from model.gradient_step import StepDiverged
    from visualizer.panels.training_step import nats
    lm = load(tiny_model_dir)
    stepper = GradientStepper(lm)
    before = {k: v.clone() for k, v in lm.model.state_dict().items()}
    with pytest.raises(StepDiverged, match="The step was not taken: with η = 1e\\+30"):
        stepper.step("the cat sat on the mat", "le chat était assis", 1e30)
    assert stepper.steps_taken == 0
    for k, v in lm.model.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert math.isfinite(stepper.evaluate("the cat sat on the mat", "le chat était assis").loss)
    assert (nats(675372139983458575531904.0), nats(0.00002), nats(0.4215), nats(0.0)) == \
        ("6.75e+23", "2e-05", "0.4215", "0.0000")

    panel, s, tr = shown_panel(qtbot, lm)
    top = panel.loss_plot.getViewBox().viewRange()[1][1]
    assert top >= panel.losses.max() and all(f"max |g| {float(np.abs(g).max()):.2g}" in
                                             panel.grad_plots[n].titleLabel.text for n, g in panel.grads.items())
    first = panel.losses.copy()
    panel.lr.setValue(0.1)
    for _ in range(3):
        with qtbot.waitSignal(panel.weights_changed, timeout=10000):
            panel.take_step()
        with qtbot.waitSignal(panel.computed, timeout=10000):       # the window runs the model again, then this
            panel.render(translate(lm, s.sentence, target=s.target).trace, s)
    assert panel.losses.max() < first.max() and panel.losses.mean() < first.mean()
    assert panel.loss_plot.getViewBox().viewRange()[1][1] == pytest.approx(top)       # the axis kept its top
    panel.lr.setValue(10.0)
    for _ in range(40):                              # until a step diverges
        with qtbot.waitSignal(panel.computed, timeout=10000):
            panel.take_step()
            panel.render(translate(lm, s.sentence, target=s.target).trace, s)
        if panel.status.text().startswith("The step was not taken"):
            break
    assert panel.status.text().startswith("The step was not taken: with η = 10 it made the weights")
    assert all(bool(torch.isfinite(p).all()) for p in lm.model.parameters())
    assert all(np.isfinite(g).all() for g in panel.grads.values())         # no blank "max |g| nan" maps
    with qtbot.waitSignal(panel.weights_changed, timeout=10000):             # Reset: the loss axis of the loaded
        panel.reset()                                                        # weights, not the diverged run's
    with qtbot.waitSignal(panel.computed, timeout=10000):
        panel.render(translate(lm, s.sentence, target=s.target).trace, s)
    assert panel.loss_plot.getViewBox().viewRange()[1][1] == pytest.approx(top)


def test_the_window_says_training_steps_are_in_no_session_and_gone_with_another_model(qtbot, window, tmp_path,
                                                                                       monkeypatch):
    """QA as a researcher: Save session kept no word of the trained weights (the session reopened on other numbers),
    and opening another model discarded three steps without a word."""
    window.docks["training"].raise_()
    qtbot.waitUntil(lambda: "training" in window.panels)
    panel = window.panels["training"]
    window.inputs.target.setText("le chat")
    qtbot.waitUntil(lambda: panel.step_button.isEnabled(), timeout=10000)
    with qtbot.waitSignal(panel.weights_changed, timeout=10000):
        panel.take_step()
    assert window.training_steps() == 1
    path = tmp_path / "class.json"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    window.save_session_dialog()
    assert path.is_file()
    assert window.statusBar().whole_message().endswith(
        "; the training of the weights (1 step) is not saved in it: it reopens on the model as loaded")
    before = window.model_name
    picker = window.inputs.model
    picker.setCurrentIndex(picker.findData("seed-example"))
    picker.activated.emit(picker.currentIndex())
    qtbot.waitUntil(lambda: window.state.model_name == "seed-example")
    assert window.statusBar().whole_message().endswith(
        f"; the training of {before}'s weights (1 step) is gone: it opens as loaded")
    assert window.training_steps() == 0


def test_at_the_output_the_gradient_is_of_the_last_layers_head(qtbot, tiny_model_dir):
    """At Linear + softmax the attention panel shows the last layer (ViewState.attention_layer); the training step's
    head followed layer 1 there, as the Rollout tab had (QA)."""
    from model.schema import OUTPUT, Stage
    lm = load(tiny_model_dir)
    panel, s, tr = shown_panel(qtbot, lm)
    s.update(layer=0)
    s.go_to(Stage(OUTPUT))
    with qtbot.waitSignal(panel.computed, timeout=10000):
        panel.render(tr, s)
    assert panel._view[3] == lm.schema.stack(lm.schema.kind(panel._view[2]).stack).n_layers - 1


def test_the_loss_plots_token_labels_are_drawn_whole(qtbot, tiny_model_dir):
    """The axis had the height pyqtgraph gives a label: 0.8 of a line, the rest meant to overlap an axis title. This
    one has none, and its descenders were cut: "jupe" read "iupe", a comma a full stop (QA, a French class)."""
    from PySide6 import QtGui
    panel, _, _ = shown_panel(qtbot, load(tiny_model_dir), target="le chat gris")
    panel.resize(700, 500)
    panel.show()
    qtbot.waitExposed(panel)
    axis = panel.loss_plot.getAxis("bottom")
    assert "g" in axis.labels and not axis.label.isVisible()
    qtbot.wait(50)
    line = QtGui.QFontMetricsF(axis.style["tickFont"] or axis.font()).height()
    assert axis.height() >= line + axis.style["tickTextOffset"][1] - 0.5
