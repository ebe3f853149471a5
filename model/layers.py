"""LayerNorm, the position-wise FFN, and the post-LN encoder and decoder layers of the paper."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .attention import MultiHeadAttention
from .config import ModelConfig


class LayerNorm(nn.Module):
    """gamma * (v - mu) / sigma + beta, over the last dimension (sigma includes eps, as torch does)."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, v: torch.Tensor, record: dict | None = None) -> torch.Tensor:
        out = F.layer_norm(v, self.gamma.shape, self.gamma, self.beta, self.eps)   # (B, T, d_model), fused
        if record is not None:   # the statistics it used, for the trace (tests check out = γ(v − μ)/σ + β)
            var, mu = torch.var_mean(v, -1, unbiased=False, keepdim=True)             # (B, T, 1) each
            sigma = torch.sqrt(var + self.eps)
            record.update(residual=v, ln_mean=mu[..., 0], ln_sigma=sigma[..., 0], ln_out=out,
                          gamma=self.gamma, beta=self.beta)
        return out


class FeedForward(nn.Module):
    """max(0, x W_1 + b_1) W_2 + b_2, applied to every position alike."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, record: dict | None = None) -> torch.Tensor:
        hidden = torch.relu(self.W_1(x))            # (B, T, d_ff)
        out = self.W_2(self.dropout(hidden))        # (B, T, d_model)
        if record is not None:
            record.update(hidden=hidden, out=out)
        return out


def _sub(records: dict | None, name: str) -> dict | None:
    """The record of one sublayer, created on demand (None when not tracing)."""
    if records is None:
        return None
    return records.setdefault(name, {})


class EncoderLayer(nn.Module):
    """x -> LayerNorm(x + SelfAttention(x)) -> LayerNorm(. + FFN(.))"""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.h, cfg.dropout, cfg.scale_scores)
        self.norm1 = LayerNorm(cfg.d_model, cfg.ln_eps)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm2 = LayerNorm(cfg.d_model, cfg.ln_eps)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, records: dict | None = None) -> torch.Tensor:
        r = _sub(records, "self")
        x = self.norm1(x + self.dropout(self.self_attn(x, x, mask, record=r)), r)        # (B, T, d_model)
        r = _sub(records, "ffn")
        return self.norm2(x + self.dropout(self.ffn(x, r)), r)                           # (B, T, d_model)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output (memory), FFN; each Add & Norm."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.h, cfg.dropout, cfg.scale_scores)
        self.norm1 = LayerNorm(cfg.d_model, cfg.ln_eps)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.h, cfg.dropout, cfg.scale_scores)
        self.norm2 = LayerNorm(cfg.d_model, cfg.ln_eps)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm3 = LayerNorm(cfg.d_model, cfg.ln_eps)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(
        self,
        y: torch.Tensor,                       # (B, Tt, d_model) the new target positions
        memory: torch.Tensor | None,           # (B, Ts, d_model) encoder output
        self_mask: torch.Tensor | None,        # (B|1, 1, Tt, Tt_total)
        memory_mask: torch.Tensor | None,      # (B, 1, 1, Ts)
        cache: dict | None = None,             # this layer's key/value cache, updated in place
        records: dict | None = None,
    ) -> torch.Tensor:
        self_kv = None
        if cache is not None:
            k_new, v_new = self.self_attn.project_kv(y)                           # (B, H, Tt, d_k)
            if "self_k" in cache:
                k_new = torch.cat([cache["self_k"], k_new], dim=2)
                v_new = torch.cat([cache["self_v"], v_new], dim=2)
            cache["self_k"], cache["self_v"] = k_new, v_new
            self_kv = (k_new, v_new)                                              # (B, H, Tt_total, d_k)
            if "cross_k" not in cache:
                cache["cross_k"], cache["cross_v"] = self.cross_attn.project_kv(memory)
        r = _sub(records, "self")
        y = self.norm1(y + self.dropout(self.self_attn(y, y, self_mask, kv=self_kv, record=r)), r)
        cross_kv = (cache["cross_k"], cache["cross_v"]) if cache is not None else None
        r = _sub(records, "cross")
        y = self.norm2(y + self.dropout(self.cross_attn(y, memory, memory_mask, kv=cross_kv, record=r)), r)
        r = _sub(records, "ffn")
        return self.norm3(y + self.dropout(self.ffn(y, r)), r)                    # (B, Tt, d_model)
