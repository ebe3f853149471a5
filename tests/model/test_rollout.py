"""Attention rollout against the formula of Abnar & Zuidema (2020) on a hand-made 3-token example."""
from __future__ import annotations

import numpy as np
import pytest

from model.analysis.rollout import rollout, self_attention_kinds, trace_rollout
from model.synthetic import synthetic_trace


def test_rollout_on_a_hand_made_three_token_example():
    a1 = np.array([[1.0, 0.0, 0.0],
                   [0.5, 0.5, 0.0],
                   [0.2, 0.3, 0.5]])
    a2 = np.array([[0.0, 1.0, 0.0],
                   [0.0, 0.0, 1.0],
                   [1 / 3, 1 / 3, 1 / 3]])
    # 0.5·A + 0.5·I by hand; each row already sums to 1
    m1 = np.array([[1.0, 0.0, 0.0],
                   [0.25, 0.75, 0.0],
                   [0.1, 0.15, 0.75]])
    m2 = np.array([[0.5, 0.5, 0.0],
                   [0.0, 0.5, 0.5],
                   [1 / 6, 1 / 6, 2 / 3]])
    r = rollout([a1, a2])
    np.testing.assert_allclose(r[0], m1)
    np.testing.assert_allclose(r[1], m2 @ m1)
    # row 0 after layer 2, written out: 0.5·m1[0] + 0.5·m1[1]
    np.testing.assert_allclose(r[1][0], [0.625, 0.375, 0.0])
    np.testing.assert_allclose(r.sum(-1), 1.0)


def test_rows_are_renormalised():
    a = np.array([[2.0, 0.0], [0.0, 2.0]])          # rows summing to 2: 0.5·A + 0.5·I sums to 1.5
    np.testing.assert_allclose(rollout([a])[0], np.eye(2))


def test_trace_rollout_averages_the_heads(shaped_trace):
    kinds = self_attention_kinds(shaped_trace.schema)
    assert kinds and all(k.queries == k.keys for k in kinds)
    for k in kinds:
        n = shaped_trace.n_layers(k.stack)
        expected = rollout([shaped_trace.attention(k.name, l).mean(0) for l in range(n)])
        np.testing.assert_allclose(trace_rollout(shaped_trace, k.name), expected, rtol=1e-6)
    cross = [k.name for k in shaped_trace.schema.kinds if k not in kinds]
    for name in cross:
        with pytest.raises(ValueError, match="not a self-attention kind"):
            trace_rollout(shaped_trace, name)


def test_heads_switched_off_add_nothing_to_the_rollout(shaped_trace):
    """A run with heads off: each layer's average is the sum of the heads on over all heads (a head off adds
    nothing to the layer's output), and a layer with every head off passes its input on through the residual alone:
    the rollout of a run with all of them off is the identity (it had counted every pattern: QA)."""
    import dataclasses
    from model.ablation import spec
    kind = self_attention_kinds(shaped_trace.schema)[0]
    n = shaped_trace.n_layers(kind.stack)
    H = shaped_trace.attention(kind.name, 0).shape[0]
    one = dataclasses.replace(shaped_trace, meta=dict(shaped_trace.meta, ablations=[spec((kind.name, 0, 0))]))
    w0 = shaped_trace.attention(kind.name, 0).astype(np.float64)
    expected = rollout([w0[1:].sum(0) / H] + [shaped_trace.attention(kind.name, l).mean(0) for l in range(1, n)])
    np.testing.assert_allclose(trace_rollout(one, kind.name), expected, rtol=1e-6)
    every = [spec((kind.name, l, h)) for l in range(n) for h in range(H)]
    off = dataclasses.replace(shaped_trace, meta=dict(shaped_trace.meta, ablations=every))
    T = w0.shape[-1]
    np.testing.assert_allclose(trace_rollout(off, kind.name), np.broadcast_to(np.eye(T), (n, T, T)))
