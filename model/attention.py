"""Multi-head scaled dot-product attention written out by hand, so the weights can be shown.

A fused kernel never forms the attention matrix; here every step of
softmax(Q K^T / sqrt(d_k)) V is an ordinary tensor that a trace can keep.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    """h heads of attention; W_Q, W_K, W_V hold the h per-head projections side by side."""

    def __init__(self, d_model: int, h: int, dropout: float = 0.0, scale_scores: bool = True):
        super().__init__()
        assert d_model % h == 0
        self.h, self.d_k = h, d_model // h
        self.scale_scores = scale_scores
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.ablated: tuple[int, ...] = ()    # heads switched off: their slice of the concatenation is zero

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)  # (B, H, T, d_k)

    def project_kv(self, kv_in: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of the given positions, per head."""
        return self.split_heads(self.W_K(kv_in)), self.split_heads(self.W_V(kv_in))  # (B, H, Tk, d_k) x2

    def ablate(self, heads: torch.Tensor) -> torch.Tensor:
        """heads (B, H, Tq, d_k) with the switched-off heads' outputs set to zero (before W_O)."""
        if not self.ablated:
            return heads
        keep = torch.ones(self.h, 1, 1, dtype=heads.dtype, device=heads.device)
        keep[list(self.ablated)] = 0
        return heads * keep

    def forward(
        self,
        q_in: torch.Tensor,                 # (B, Tq, d_model)
        kv_in: torch.Tensor | None,         # (B, Tk, d_model), or None when kv is given
        mask: torch.Tensor | None = None,   # bool, broadcastable to (B, H, Tq, Tk); True = may attend
        kv: tuple[torch.Tensor, torch.Tensor] | None = None,  # precomputed (K, V), each (B, H, Tk, d_k)
        record: dict | None = None,
    ) -> torch.Tensor:
        q = self.split_heads(self.W_Q(q_in))                       # (B, H, Tq, d_k)
        k, v = kv if kv is not None else self.project_kv(kv_in)     # (B, H, Tk, d_k)
        if record is None:   # nothing to show: the same formula as one fused call, without keeping the matrix
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=None if self.scale_scores else 1.0,
                                                   dropout_p=self.dropout.p if self.training else 0.0)
            heads = self.ablate(heads)
            B, H, Tq, d_k = heads.shape
            return self.W_O(heads.transpose(1, 2).reshape(B, Tq, H * d_k))
        scores = q @ k.transpose(-2, -1)                            # (B, H, Tq, Tk)
        if self.scale_scores:
            scores = scores / math.sqrt(self.d_k)
        masked = scores if mask is None else scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(masked, dim=-1)                     # (B, H, Tq, Tk); masked cells exactly 0
        heads = self.ablate(self.dropout(weights) @ v)              # (B, H, Tq, d_k)
        B, H, Tq, d_k = heads.shape
        concat = heads.transpose(1, 2).reshape(B, Tq, H * d_k)      # (B, Tq, d_model)
        out = self.W_O(concat)                                      # (B, Tq, d_model)
        if record is not None:
            record.update(q=q, k=k, v=v, scores=scores, weights=weights, head_out=heads, out=out)
            if mask is not None:
                record["mask"] = mask.expand(B, H, Tq, k.shape[-2])[:, 0]  # (B, Tq, Tk)
        return out
