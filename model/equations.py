"""The notes' equations filled in with the numbers of one traced sentence (for the math inspector).

Everything is read from a Trace, so the inspector shows exactly what the model computed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .schema import LAYER_NORM, NORM_AFTER
from .top_k import top_k_ids
from .trace import Trace


@dataclass
class AttentionEquation:
    """softmax(q_i · k_j / sqrt(d_k)) weighted sum of v_j, for one query token of one head."""
    kind: str
    layer: int
    head: int
    query: int
    query_token: str
    key_tokens: list[str]
    x: np.ndarray          # (d_model,) the sublayer's input at the query position
    embedding: np.ndarray | None  # (d_model,) e_i, only for layer 0 (x = e + p there)
    pe: np.ndarray | None         # (d_model,) p_i, only for layer 0
    q: np.ndarray          # (d_k,)
    K: np.ndarray          # (Tk, d_k)
    V: np.ndarray          # (Tk, d_k)
    dots: np.ndarray       # (Tk,) q · k_j
    scale: float           # sqrt(d_k) (sqrt(schema.score_scalar) where set), or 1 when the model does not scale
    scores: np.ndarray     # (Tk,) q · k_j / scale (+ bias_j), as the model computed it
    allowed: np.ndarray    # (Tk,) bool
    alpha: np.ndarray      # (Tk,) softmax weights (0 where masked)
    output: np.ndarray     # (d_k,) sum_j alpha_j v_j
    bias: np.ndarray | None = None   # (Tk,) the relative position bias added to the scores (T5), else None
    rotated: bool = False            # q and k are shown after the rotary rotation of their positions


def sublayer_input(trace: Trace, stack: str, layer: int, sublayer: str) -> np.ndarray:
    """The x that entered a sublayer: the embedding sum, or the previous sublayer's output (after its norm when the
    norm follows the residual; the residual stream itself when each sublayer normalises its own input)."""
    st = trace.schema.stack(stack)
    order = [s.key for s in st.sublayers]
    after = "ln_out" if trace.schema.norm_place == NORM_AFTER else "residual"
    i = order.index(sublayer)
    if i > 0:
        return trace.get(stack, layer, order[i - 1], after)
    if layer > 0:
        return trace.get(stack, layer - 1, order[-1], after)
    return trace[f"{st.tokens}.x"]


def attention_equation(trace: Trace, kind: str, layer: int, head: int, query: int) -> AttentionEquation:
    k = trace.schema.kind(kind)
    stack, sub = k.stack, k.sublayer
    kv = trace.schema.kv_head(head)                                        # grouped-query attention: shared k, v
    q = trace.get(stack, layer, sub, "q", head)[query]                     # (d_k,)
    K = trace.get(stack, layer, sub, "k", kv)                              # (Tk, d_k)
    V = trace.get(stack, layer, sub, "v", kv)                              # (Tk, d_k)
    scores = trace.get(stack, layer, sub, "scores", head)[query]           # (Tk,)
    dots = K @ q
    scale = math.sqrt(trace.schema.score_scalar or q.shape[0]) if trace.meta.get("scale_scores", True) else 1.0
    x_all = sublayer_input(trace, stack, layer, sub)
    first = layer == 0 and sub == trace.schema.stack(stack).sublayers[0].key
    prefix = trace.schema.stack(stack).tokens
    rows, cols = trace.axis_tokens(kind)
    keys = trace.schema.bias_keys(kind)
    bias = trace[keys.bias][head, query] if keys is not None and keys.bias in trace.arrays else None
    return AttentionEquation(
        kind, layer, head, query, rows[query], list(cols), x_all[query],
        trace[f"{prefix}.embedding"][query] if first else None, trace[f"{prefix}.pe"][query] if first else None,
        q, K, V, dots, scale, scores, trace.mask(kind, layer)[query],
        trace.attention(kind, layer, head)[query], trace.get(stack, layer, sub, "head_out", head)[query], bias,
        trace.schema.positions == "rotary")


@dataclass
class LayerNormEquation:
    """LN(v) = gamma * (v - mu) / sigma + beta for one token."""
    v: np.ndarray
    mu: float
    sigma: float
    normalised: np.ndarray   # (v - mu) / sigma; RMSNorm does not centre: v / sigma, sigma the root mean square
    gamma: np.ndarray
    beta: np.ndarray
    out: np.ndarray


def layernorm_equation(trace: Trace, stack: str, layer: int, sublayer: str, token: int) -> LayerNormEquation:
    v_key = f"{stack}.{layer}.{sublayer}.ln_in"                          # pre-norm: the norm's input, kept apart
    v = (trace[v_key] if v_key in trace.arrays else trace.get(stack, layer, sublayer, "residual"))[token]
    mu = float(trace.get(stack, layer, sublayer, "ln_mean")[token])
    sigma = float(trace.get(stack, layer, sublayer, "ln_sigma")[token])
    gamma = trace.get(stack, layer, sublayer, "gamma")
    beta_key = f"{stack}.{layer}.{sublayer}.beta"                        # RMSNorm has no β
    beta = trace[beta_key] if beta_key in trace.arrays else np.zeros_like(gamma)
    centre = mu if trace.schema.norm == LAYER_NORM else 0.0
    return LayerNormEquation(v, mu, sigma, (v - centre) / sigma, gamma, beta,
                             trace.get(stack, layer, sublayer, "ln_out")[token])


@dataclass
class OutputEquation:
    """logits -> softmax -> the chosen word, at one generation step."""
    step: int
    top_ids: np.ndarray      # (k,) ids of the most probable tokens
    top_logits: np.ndarray   # (k,)
    top_probs: np.ndarray    # (k,)
    chosen: str
    temperature: float


def output_equation(trace: Trace, step: int, k: int = 5, temperature: float = 1.0, top_k: int = 0) -> OutputEquation:
    """The k most probable tokens at a step; top_k: sampling's cut (the distribution a sampled token was drawn from,
    as the output panel shows it)."""
    logits = trace["logits"][step]
    probs = trace.probs(step, temperature, top_k)
    top = top_k_ids(probs, k)
    return OutputEquation(step, top, logits[top], probs[top], trace.out_tokens[step], temperature)
