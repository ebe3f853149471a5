"""The whole stack learns: a small model learns to reverse sequences, and its cross-attention turns anti-diagonal."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.config import ModelConfig
from model.decoding import greedy_batch
from model.transformer import BOS, EOS, PAD, Transformer

N, V = 6, 10            # sequence length, symbols (ids 4 .. 4+V-1)


def make_batch(gen, B):
    x = torch.randint(4, 4 + V, (B, N), generator=gen)
    src = torch.cat([x, torch.full((B, 1), EOS)], 1)
    y = x.flip(1)
    tgt_in = torch.cat([torch.full((B, 1), BOS), y], 1)
    tgt_out = torch.cat([y, torch.full((B, 1), EOS)], 1)
    return src, tgt_in, tgt_out


@pytest.mark.slow
def test_reversal_is_learned_with_anti_diagonal_cross_attention():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    cfg = ModelConfig(src_vocab_size=4 + V, tgt_vocab_size=4 + V, d_model=32, h=2, d_ff=64, N_enc=1, N_dec=1,
                      max_len=16, dropout=0.0)
    model = Transformer(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98))
    for step in range(400):
        src, tin, tout = make_batch(gen, 64)
        loss = F.cross_entropy(model(src, tin).reshape(-1, cfg.tgt_vocab_size), tout.reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    src, tin, tout = make_batch(torch.Generator().manual_seed(123), 200)
    out = greedy_batch(model, src.tolist(), max_new=N + 1)
    exact = np.mean([o == t for o, t in zip(out, tout.tolist())])
    assert exact >= 0.9, f"only {exact:.0%} of held-out sequences reversed exactly (loss {loss.item():.3f})"
    rec: dict = {}
    with torch.no_grad():
        model(src, tin, record=rec)
    w = rec["dec.0"]["cross"]["weights"].mean(0)                     # (H, Tt, Ts), averaged over the batch
    rows = np.arange(N)
    anti = N - 1 - rows                                             # row t predicts x[N-1-t]
    best = max(float(w[h, rows, anti].mean()) for h in range(cfg.h))
    assert best >= 0.6, f"the best head puts only {best:.2f} of its attention on the anti-diagonal"
