"""The whole stack learns: a small model learns to reverse sequences, and its cross-attention turns anti-diagonal.

Plain training loop (Adam, no dropout) on a synthetic task: reverse 6 symbols drawn from 10. After 400 steps
the model reverses held-out sequences, and target position t attends to source position N-1-t.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.config import ModelConfig
from model.decoding import greedy_batch
from model.transformer import BOS, EOS, Transformer

N, V = 6, 10            # sequence length, symbols (ids 4 .. 4+V-1)
ROWS = np.arange(N)     # decoder rows 0..N-1 predict y_t = x[N-1-t]; row N predicts </s>
ANTI = N - 1 - ROWS


def make_batch(gen, B):
    x = torch.randint(4, 4 + V, (B, N), generator=gen)
    src = torch.cat([x, torch.full((B, 1), EOS)], 1)                    # (B, N+1)
    y = x.flip(1)
    tgt_in = torch.cat([torch.full((B, 1), BOS), y], 1)                 # (B, N+1)
    tgt_out = torch.cat([y, torch.full((B, 1), EOS)], 1)                # (B, N+1)
    return src, tgt_in, tgt_out


@torch.no_grad()
def anti_diagonal_mass(model, src, tin) -> tuple[float, np.ndarray]:
    """Mean attention weight on the anti-diagonal of the last decoder layer's cross-attention (averaged over
    heads and sentences), and that averaged (Tt, Ts) matrix."""
    rec: dict = {}
    model(src, tin, record=rec)
    w = rec[f"dec.{model.cfg.N_dec - 1}"]["cross"]["weights"].mean((0, 1)).numpy()   # (Tt, Ts)
    return float(w[ROWS, ANTI].mean()), w


@pytest.mark.slow
def test_reversal_is_learned_with_anti_diagonal_cross_attention():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    cfg = ModelConfig(src_vocab_size=4 + V, tgt_vocab_size=4 + V, d_model=32, h=2, d_ff=64, N_enc=1, N_dec=1,
                      max_len=16, dropout=0.0)
    model = Transformer(cfg)
    held_src, held_in, held_out = make_batch(torch.Generator().manual_seed(123), 200)
    before, _ = anti_diagonal_mass(model.eval(), held_src, held_in)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98))
    seen: set[tuple] = set()
    for step in range(400):
        src, tin, tout = make_batch(gen, 64)
        seen.update(map(tuple, src.tolist()))
        loss = F.cross_entropy(model(src, tin).reshape(-1, cfg.tgt_vocab_size), tout.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    unseen = [i for i, s in enumerate(held_src.tolist()) if tuple(s) not in seen]
    assert len(unseen) > 150
    out = greedy_batch(model, held_src[unseen].tolist(), max_new=N + 1)
    exact = np.mean([o == t for o, t in zip(out, held_out[unseen].tolist())])
    assert exact >= 0.95, f"only {exact:.0%} of unseen sequences reversed exactly (last loss {loss.item():.3f})"
    after, w = anti_diagonal_mass(model, held_src, held_in)
    assert before < 0.3, f"untrained attention already on the anti-diagonal ({before:.2f})?"
    assert after >= 0.6, f"only {after:.2f} of the cross-attention lies on the anti-diagonal (untrained: {before:.2f})"
    assert (w[ROWS].argmax(-1) == ANTI).all(), f"rows attend most to {w[ROWS].argmax(-1)}, not {ANTI}"
