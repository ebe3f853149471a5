"""The math inspector's numbers come from the Trace; one gradient step lowers the loss; reset is exact."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model import load, translate
from model.equations import attention_equation, layernorm_equation, output_equation, sublayer_input
from model.gradient_step import GradientStepper


def test_seed_example_equation_for_cat():
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    e = attention_equation(tr, "enc_self", 0, 0, query=1)
    assert e.query_token == "cat" and e.scale == 1.0
    np.testing.assert_allclose(e.embedding + e.pe, e.x, atol=1e-6)
    np.testing.assert_allclose(e.q, [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(e.K[1], [1.4, 1.6], atol=1e-6)
    np.testing.assert_allclose(e.K[2], [1.7, 2.0], atol=1e-6)
    np.testing.assert_allclose(e.V[2], [2.9, 3.2], atol=1e-6)
    np.testing.assert_allclose(e.scores[1:3], [2.12, 2.62], atol=1e-5)
    np.testing.assert_allclose(e.output, e.alpha @ e.V, atol=1e-5)


def test_attention_equation_matches_the_trace(tiny_lm):
    tr = translate(tiny_lm, "the red car is fast", target="une voiture rouge").trace
    for kind, layer in (("enc_self", 0), ("dec_self", 1), ("cross", 1)):
        e = attention_equation(tr, kind, layer, head=1, query=2)
        np.testing.assert_allclose(e.dots / e.scale, e.scores, rtol=1e-5, atol=1e-6)
        assert e.scale == pytest.approx(math.sqrt(tiny_lm.cfg.d_k))
        z = np.where(e.allowed, e.scores, -np.inf)
        soft = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(soft, e.alpha, atol=1e-6)
        np.testing.assert_allclose(e.alpha @ e.V, e.output, atol=1e-5)
    # the input of decoder layer 2's self-attention is the output of layer 1's last LayerNorm
    np.testing.assert_array_equal(sublayer_input(tr, "dec", 1, "self"), tr.get("dec", 0, "ffn", "ln_out"))


def test_layernorm_and_output_equations(tiny_lm):
    tr = translate(tiny_lm, "i love you").trace
    ln = layernorm_equation(tr, "enc", 1, "ffn", token=0)
    np.testing.assert_allclose(ln.mu, ln.v.mean(), atol=1e-5)
    np.testing.assert_allclose(ln.gamma * ln.normalised + ln.beta, ln.out, atol=1e-5)
    out = output_equation(tr, step=0, k=3, temperature=2.0)
    np.testing.assert_allclose(out.top_probs, np.sort(tr.probs(0, 2.0))[::-1][:3], atol=1e-12)
    assert out.chosen == tr.out_tokens[0]


def test_one_gradient_step_lowers_the_loss_and_reset_restores_exactly(tiny_model_dir):
    lm = load(tiny_model_dir)
    weights_file = (tiny_model_dir / "model.safetensors").read_bytes()
    original = {k: v.clone() for k, v in lm.model.state_dict().items()}
    g = GradientStepper(lm)
    r = g.evaluate("the cat sat on the mat", "le chat était assis", "cross", 1, 0)
    assert r.grads["W_Q"].shape == (lm.cfg.d_model, lm.cfg.d_k)
    assert np.abs(r.grads["W_K"]).sum() > 0
    np.testing.assert_allclose(r.token_losses.mean(), r.loss, rtol=1e-6)
    before, after = g.step("the cat sat on the mat", "le chat était assis", lr=0.1)
    assert before == pytest.approx(r.loss) and after < before
    changed = any(not torch.equal(v, lm.model.state_dict()[k]) for k, v in original.items())
    assert changed
    g.reset()
    for k, v in original.items():
        assert torch.equal(v, lm.model.state_dict()[k]), k
    assert (tiny_model_dir / "model.safetensors").read_bytes() == weights_file   # the file is never written


def test_a_gradient_step_waits_while_another_thread_runs_the_model(tiny_model_dir):
    """The app translates in a worker thread; a step taken meanwhile must not change weights under that run."""
    import threading

    import torch

    from model import load
    from model.gradient_step import GradientStepper
    lm = load(tiny_model_dir)
    stepper = GradientStepper(lm)
    weights = {k: v.clone() for k, v in lm.model.state_dict().items()}
    done = threading.Event()
    with lm.lock:                                              # what the worker holds during translate()
        worker = threading.Thread(target=lambda: (stepper.step("the cat", "le chat", 0.5), done.set()))
        worker.start()
        assert not done.wait(0.5)
        assert all(torch.equal(v, lm.model.state_dict()[k]) for k, v in weights.items())
    worker.join(30)
    assert done.is_set()
    assert not all(torch.equal(v, lm.model.state_dict()[k]) for k, v in weights.items())


def test_tied_probabilities_keep_one_order_at_every_step():
    """The seed example ties four tokens at p ≈ 0.1009287 at every step, up to float32's rounding (…0055 at one
    step, …9454 at the next): the Math tab's softmax, as the output panel, lists them by id at every step."""
    tr = translate(load("seed-example"), "The cat sat on the mat").trace
    orders = {tuple(output_equation(tr, step=s, k=8).top_ids) for s in range(tr.n_steps)}
    assert len(orders) == 1
    (order,) = orders
    p = tr.probs(0)
    tied = [i for i in order if abs(p[i] - 0.1009287) < 1e-7]
    assert len(tied) >= 3 and tied == sorted(tied)


def test_ties_to_float32s_precision_go_by_id_and_a_nan_never_shortens_the_list():
    """Rounding mantissas had left 6% of neighbouring float32 values untied (a tie could still swap between steps),
    and a NaN became the cut: fewer than k ids came back (QA)."""
    from model.top_k import top_k_ids
    rng = np.random.default_rng(1)
    for x in rng.uniform(1e-4, 0.9, 300).astype(np.float32):
        up = float(np.nextafter(x, np.float32(1)))
        probs = np.array([0.001, up, 0.002, float(x)])              # the larger one first by id: still by id
        assert top_k_ids(probs, 2).tolist() == [1, 3] and top_k_ids(probs[::-1].copy(), 2).tolist() == [0, 2]
    assert top_k_ids(np.array([0.1, np.nan, 0.5, 0.2]), 3).tolist() == [2, 3, 0]
    assert top_k_ids(np.array([np.nan, np.nan]), 2).tolist() == [0, 1]
