"""Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers").

Each layer's attention, averaged over heads, is mixed with the identity for the residual connection and its rows
renormalised: Â_l = rownorm(0.5·A_l + 0.5·I). The rollout to layer l is the product Â_l · Â_{l-1} · … · Â_1: row i
says how much of position i's representation after layer l flows from each input token.

Only self-attention kinds have a rollout (queries and keys the same tokens). In an encoder-decoder, a decoder
self-attention rollout follows the decoder's own path only, not what cross-attention brings in. numpy only.
"""
from __future__ import annotations

import numpy as np

from ..schema import ATTENTION_CROSS


def rollout(layers: list[np.ndarray] | np.ndarray, residual: float = 0.5) -> np.ndarray:
    """layers: L attention matrices (T, T) (each already averaged over heads), first layer first. Returns
    (L, T, T): the rollout to each layer, R_l = Â_l R_{l-1}, Â = rownorm((1 − residual)·A + residual·I)."""
    mats = [np.asarray(a, dtype=np.float64) for a in layers]
    if not mats:
        return np.zeros((0, 0, 0))
    T = mats[0].shape[0]
    eye = np.eye(T)
    out = []
    acc = eye
    for a in mats:
        mixed = (1 - residual) * a + residual * eye
        mixed = mixed / mixed.sum(-1, keepdims=True)
        acc = mixed @ acc
        out.append(acc)
    return np.stack(out)


def self_attention_kinds(schema) -> tuple:
    """The attention kinds whose queries and keys are the same positions (every kind but cross-attention)."""
    return tuple(k for k in schema.kinds if schema.stack(k.stack).sublayer(k.sublayer).kind != ATTENTION_CROSS)


def trace_rollout(trace, kind: str) -> np.ndarray:
    """(L, T, T) rollout of a self-attention kind of a trace, heads averaged (see rollout). A head switched off in
    the run adds nothing to its layer's output: it adds nothing to the layer's average either (the sum of the heads
    on, over all heads), so that a layer with every head off passes its input on through the residual alone (the
    rollout of a run with all of them off had counted every pattern: QA)."""
    from ..ablation import ablated_heads
    schema = trace.schema
    if kind not in [k.name for k in self_attention_kinds(schema)]:
        raise ValueError(f"{kind!r} is not a self-attention kind: rollout needs queries and keys of one sequence "
                         f"(this model's are {', '.join(k.name for k in self_attention_kinds(schema))})")
    n = trace.n_layers(schema.kind(kind).stack)
    off = ablated_heads(trace)
    layers = []
    for layer in range(n):
        w = trace.attention(kind, layer).astype(np.float64)
        on = [h for h in range(len(w)) if (kind, layer, h) not in off]
        layers.append(w[on].sum(0) / len(w) if on else np.zeros(w.shape[1:]))
    return rollout(layers)
