"""Synthetic Traces: every array a schema promises, filled with consistent random numbers, with no weights and no
torch. For tests of the panels on shapes the bundled models do not have (decoder-only, encoder-only, 6+6 layers,
grouped-query heads) and for benchmarks at sizes no small model reaches (12 layers × 12 heads × 512 tokens).

Consistent means: attention weights are the masked softmax of the scores, head outputs are weights · values of
the head's key/value head, norm statistics describe the residual they normalise, probabilities are the softmax of
the logits, and the chosen output tokens are their argmax.
"""
from __future__ import annotations

import numpy as np

from .schema import ATTENTION_CAUSAL, ATTENTION_CROSS, LAYER_NORM, NORM_AFTER, Schema
from .trace import Trace


def _softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _norm(schema: Schema, v: np.ndarray, gamma: np.ndarray, beta: np.ndarray | None, eps: float = 1e-5):
    """(mean, sigma, out) of the schema's norm over the last axis."""
    mean = v.mean(-1)
    if schema.norm == LAYER_NORM:
        sigma = np.sqrt(v.var(-1) + eps)
        return mean, sigma, (v - mean[:, None]) / sigma[:, None] * gamma + beta
    rms = np.sqrt((v ** 2).mean(-1) + eps)                                   # RMSNorm: no centring, no β
    return mean, rms, v / rms[:, None] * gamma


def synthetic_trace(schema: Schema, src_tokens: list[str] | None = None, tgt_tokens: list[str] | None = None,
                    vocab: int = 40, seed: int = 0, sentence: str = "synthetic") -> Trace:
    """A Trace of the schema's shape. Token lists default to short made-up words; a stack reads the list its
    schema names ("src" or "tgt"); the output layer's rows are the output stack's positions."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    d, H, Hkv, dk, dff = schema.d_model, schema.n_heads, schema.n_kv_heads, schema.d_k, schema.d_ff
    tokens = {"src": list(src_tokens or ["The", "cat", "sat", "."]),
              "tgt": list(tgt_tokens or ["<s>", "Le", "chat", "dort"])}
    used = {st.tokens for st in schema.stacks}
    for side in ("src", "tgt"):
        if side not in used:
            tokens[side] = []
    arrays: dict[str, np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    for st in schema.stacks:
        T = len(tokens[st.tokens])
        e = rng.normal(0, 1, (T, d)).astype(f32)
        p = (np.sin(np.arange(T)[:, None] / 10000 ** (np.arange(d)[None] / d)) if schema.positions in
             ("sinusoidal", "learned") else np.zeros((T, d))).astype(f32)
        arrays |= {f"{st.tokens}.embedding": e, f"{st.tokens}.pe": p, f"{st.tokens}.x": e + p}
        x = e + p
        for layer in range(st.n_layers):
            for sub in st.sublayers:
                key = f"{st.key}.{layer}.{sub.key}"
                inp = x
                if sub.is_attention:
                    Tk = len(tokens[schema.stacks[0].tokens]) if sub.kind == ATTENTION_CROSS else T
                    mask = np.tril(np.ones((T, Tk), bool)) if sub.kind == ATTENTION_CAUSAL else np.ones((T, Tk), bool)
                    q = rng.normal(0, 1, (H, T, dk)).astype(f32)
                    k = rng.normal(0, 1, (Hkv, Tk, dk)).astype(f32)
                    v = rng.normal(0, 1, (Hkv, Tk, dk)).astype(f32)
                    kk = np.repeat(k, schema.gqa_group, axis=0)                       # (H, Tk, d_k)
                    vv = np.repeat(v, schema.gqa_group, axis=0)
                    scores = (q @ kk.transpose(0, 2, 1) / np.sqrt(dk)).astype(f32)    # (H, T, Tk)
                    weights = _softmax(np.where(mask, scores, -np.inf)).astype(f32)
                    head_out = (weights @ vv).astype(f32)                             # (H, T, d_k)
                    out = (head_out.transpose(1, 0, 2).reshape(T, H * dk) @
                           rng.normal(0, (H * dk) ** -0.5, (H * dk, d))).astype(f32)
                    arrays |= {f"{key}.q": q, f"{key}.k": k, f"{key}.v": v, f"{key}.scores": scores,
                               f"{key}.weights": weights, f"{key}.mask": mask, f"{key}.head_out": head_out,
                               f"{key}.out": out}
                else:
                    hidden = np.maximum(rng.normal(0, 1, (T, dff)), 0).astype(f32)
                    out = (hidden @ rng.normal(0, dff ** -0.5, (dff, d))).astype(f32)
                    arrays |= {f"{key}.hidden": hidden, f"{key}.out": out}
                residual = (inp + out).astype(f32)
                gamma = rng.normal(1, 0.1, d).astype(f32)
                beta = rng.normal(0, 0.1, d).astype(f32) if schema.norm == LAYER_NORM else None
                mean, sigma, ln_out = _norm(schema, residual, gamma, beta)
                arrays |= {f"{key}.residual": residual, f"{key}.ln_mean": mean.astype(f32),
                           f"{key}.ln_sigma": sigma.astype(f32), f"{key}.gamma": gamma,
                           f"{key}.ln_out": ln_out.astype(f32)}
                if beta is not None:
                    arrays[f"{key}.beta"] = beta
                x = ln_out.astype(f32) if schema.norm_place == NORM_AFTER else residual
        outputs[st.key] = x
        arrays[f"{st.key}.out"] = x
    rows = len(tokens[schema.output_stack.tokens])
    words = [f"w{i}" for i in range(vocab)]
    out_tokens: list[str] = []
    if schema.has_output:
        logits = rng.normal(0, 3, (rows, vocab)).astype(f32)
        arrays |= {"logits": logits, "probs": _softmax(logits.astype(np.float64)).astype(f32)}
        out_tokens = [words[i] for i in logits.argmax(-1)]
    meta = {"sentence": sentence, "model": f"synthetic {schema.layout}", "mode": "teacher-forced",
            "positional": schema.positions != "none", "scale_scores": True, "vocab": words}
    return Trace(tokens["src"], tokens["tgt"], out_tokens, arrays, meta, schema)
