"""Attention rows sum to 1, causally masked cells are exactly 0, padding never receives attention."""
from __future__ import annotations

import numpy as np
import torch

from model.decoding import trace_run
from model.transformer import EOS, PAD


def check_weights(w, allowed) -> None:
    """w (..., Tq, Tk) attention weights, allowed (..., Tq, Tk) bool broadcastable to w (tensors or arrays)."""
    w = np.asarray(w)
    blocked = ~np.broadcast_to(np.asarray(allowed), w.shape)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6, rtol=0)
    assert blocked.any()
    assert (w[blocked] == 0).all(), "a masked cell got attention (not exactly 0)"
    assert (w[~blocked] > 0).all()                                    # the mask is not over-broad


@torch.no_grad()
def test_through_encode_and_decode_records(model, padded_batch):
    src, tgt = padded_batch
    rec: dict = {}
    memory, src_mask = model.encode(src, record=rec)
    model.decode(tgt, memory, src_mask, record=rec)
    B, Ts, Tt = src.shape[0], src.shape[1], tgt.shape[1]
    src_real = (src != PAD)[:, None, None, :]                          # (B, 1, 1, Ts)
    tgt_real = (tgt != PAD)[:, None, None, :]                          # (B, 1, 1, Tt)
    causal = torch.ones(Tt, Tt, dtype=torch.bool).tril()               # (Tt, Tt)
    for l in range(model.cfg.N_enc):
        check_weights(rec[f"enc.{l}"]["self"]["weights"], src_real)
        assert (rec[f"enc.{l}"]["self"]["weights"][1, :, :, 4:] == 0).all()   # the two pads of sentence 2
    for l in range(model.cfg.N_dec):
        check_weights(rec[f"dec.{l}"]["self"]["weights"], causal & tgt_real)
        check_weights(rec[f"dec.{l}"]["cross"]["weights"], src_real)
        w = rec[f"dec.{l}"]["self"]["weights"]
        assert (w[:, :, ~causal] == 0).all()                           # above the diagonal: exactly 0
        assert (w[1, :, :, 3:] == 0).all()                             # padded target keys


@torch.no_grad()
def test_a_fully_causal_row_keeps_its_first_token(model, padded_batch):
    """Row 0 of decoder self-attention can see only <s>, so all its weight is there."""
    src, tgt = padded_batch
    rec: dict = {}
    model(src, tgt, record=rec)
    w = rec["dec.0"]["self"]["weights"][:, :, 0]                        # (B, H, Tt)
    assert (w[..., 0] == 1).all() and (w[..., 1:] == 0).all()


def test_through_the_trace(tiny_lm):
    """A Trace of a source with trailing pads: the pads get no attention; rows sum to 1; causal zeros exact."""
    src_ids = tiny_lm.src_tok.encode("the cat sat on the mat") + [EOS, PAD, PAD]
    out_ids = tiny_lm.tgt_tok.encode("le chat") + [EOS]
    t = trace_run(tiny_lm, src_ids, out_ids)
    Ts, Tt = len(src_ids), len(out_ids)
    src_real = np.array(src_ids) != PAD                                # (Ts,)
    causal = np.tril(np.ones((Tt, Tt), dtype=bool))
    for l in range(t.n_layers("enc")):
        check_weights(t.attention("enc_self", l), np.broadcast_to(src_real, (Ts, Ts)))
        np.testing.assert_array_equal(t.mask("enc_self", l), np.broadcast_to(src_real, (Ts, Ts)))
    for l in range(t.n_layers("dec")):
        check_weights(t.attention("dec_self", l), causal)
        np.testing.assert_array_equal(t.mask("dec_self", l), causal)
        check_weights(t.attention("cross", l), np.broadcast_to(src_real, (Tt, Ts)))
        for h in range(t.n_heads):
            assert (t.attention("cross", l, h)[:, ~src_real] == 0).all()
