"""The transformer computes what the paper says: checked against torch.nn.Transformer and by its invariants."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from model.config import ModelConfig
from model.transformer import BOS, PAD, Transformer, causal_mask, sinusoidal_table

CFG = ModelConfig(src_vocab_size=50, tgt_vocab_size=40, d_model=32, h=4, d_ff=64, N_enc=2, N_dec=2, max_len=32,
                  dropout=0.0)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = Transformer(CFG).eval()
    with torch.no_grad():                       # non-trivial LayerNorm parameters and biases
        for name, p in m.named_parameters():
            if name.endswith(("gamma", "beta", "bias")):
                p.add_(0.1 * torch.randn_like(p))
    return m


def batch():
    src = torch.tensor([[5, 6, 7, 8, 9, 3], [10, 11, 12, 3, PAD, PAD]])
    tgt = torch.tensor([[BOS, 4, 5, 6, 7], [BOS, 8, 9, PAD, PAD]])
    return src, tgt


def peer_of(m: Transformer) -> nn.Transformer:
    """A torch.nn.Transformer (post-LN, ReLU, no final norms) holding the same weights."""
    c = m.cfg
    enc_layer = nn.TransformerEncoderLayer(c.d_model, c.h, c.d_ff, 0.0, batch_first=True, norm_first=False)
    dec_layer = nn.TransformerDecoderLayer(c.d_model, c.h, c.d_ff, 0.0, batch_first=True, norm_first=False)
    peer = nn.Transformer(c.d_model, c.h, c.N_enc, c.N_dec, c.d_ff, 0.0, batch_first=True,
                          custom_encoder=nn.TransformerEncoder(enc_layer, c.N_enc, norm=None, enable_nested_tensor=False),
                          custom_decoder=nn.TransformerDecoder(dec_layer, c.N_dec, norm=None)).eval()

    def copy_mha(dst: nn.MultiheadAttention, src):
        dst.in_proj_weight.copy_(torch.cat([src.W_Q.weight, src.W_K.weight, src.W_V.weight]))
        dst.in_proj_bias.copy_(torch.cat([src.W_Q.bias, src.W_K.bias, src.W_V.bias]))
        dst.out_proj.weight.copy_(src.W_O.weight)
        dst.out_proj.bias.copy_(src.W_O.bias)

    def copy_ln(dst: nn.LayerNorm, src):
        dst.weight.copy_(src.gamma)
        dst.bias.copy_(src.beta)

    def copy_ffn(dst, src):
        dst.linear1.weight.copy_(src.ffn.W_1.weight); dst.linear1.bias.copy_(src.ffn.W_1.bias)
        dst.linear2.weight.copy_(src.ffn.W_2.weight); dst.linear2.bias.copy_(src.ffn.W_2.bias)

    with torch.no_grad():
        for d, s in zip(peer.encoder.layers, m.encoder):
            copy_mha(d.self_attn, s.self_attn); copy_ln(d.norm1, s.norm1); copy_ln(d.norm2, s.norm2); copy_ffn(d, s)
        for d, s in zip(peer.decoder.layers, m.decoder):
            copy_mha(d.self_attn, s.self_attn); copy_mha(d.multihead_attn, s.cross_attn)
            copy_ln(d.norm1, s.norm1); copy_ln(d.norm2, s.norm2); copy_ln(d.norm3, s.norm3); copy_ffn(d, s)
    return peer


def test_peer_equivalence_with_torch_nn_transformer(model):
    src, tgt = batch()
    peer = peer_of(model)
    with torch.no_grad():
        x = model.embed(src, model.src_embed)
        y = model.embed(tgt, model.tgt_embed)
        memory, src_mask = model.encode(src)
        out = model.decode(tgt, memory, src_mask)
        logits = model(src, tgt)
        T = tgt.shape[1]
        p_memory = peer.encoder(x, src_key_padding_mask=src == PAD)
        p_out = peer.decoder(y, p_memory, tgt_mask=nn.Transformer.generate_square_subsequent_mask(T),
                             tgt_key_padding_mask=tgt == PAD, memory_key_padding_mask=src == PAD)
        p_logits = model.generator(p_out)
    real_src, real_tgt = src != PAD, tgt != PAD
    torch.testing.assert_close(memory[real_src], p_memory[real_src], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[real_tgt], p_out[real_tgt], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits[real_tgt], p_logits[real_tgt], atol=1e-5, rtol=1e-5)


def attention_records(model, src, tgt):
    rec: dict = {}
    with torch.no_grad():
        model(src, tgt, record=rec)
    return rec


def test_rows_sum_to_one_causal_zeros_and_no_attention_to_padding(model):
    src, tgt = batch()
    rec = attention_records(model, src, tgt)
    for l in range(CFG.N_enc):
        w = rec[f"enc.{l}"]["self"]["weights"]                          # (B, H, Ts, Ts)
        torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))
        assert (w[1, :, :, 4:] == 0).all()                           # padded source keys get nothing
    for l in range(CFG.N_dec):
        w = rec[f"dec.{l}"]["self"]["weights"]                          # (B, H, Tt, Tt)
        torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)))
        T = w.shape[-1]
        upper = ~causal_mask(T)[0, 0]
        assert (w[:, :, upper] == 0).all()                           # exactly 0, not just small
        assert (w[1, :, :, 3:] == 0).all()                           # padded target keys
        c = rec[f"dec.{l}"]["cross"]["weights"]
        assert (c[1, :, :, 4:] == 0).all()
        torch.testing.assert_close(c.sum(-1), torch.ones_like(c.sum(-1)))


def test_a_later_target_token_never_changes_earlier_outputs(model):
    src, tgt = batch()
    changed = tgt.clone()
    changed[0, 3] = 11
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    torch.testing.assert_close(a[0, :3], b[0, :3], rtol=0, atol=0)
    assert not torch.allclose(a[0, 3:], b[0, 3:])


def test_permutation_equivariance_without_positional_encoding(model):
    src = torch.tensor([[5, 6, 7, 8, 9, 10]])
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    try:
        model.positional = False
        with torch.no_grad():
            a, _ = model.encode(src)
            b, _ = model.encode(src[:, perm])
        torch.testing.assert_close(a[:, perm], b, atol=1e-5, rtol=1e-5)
    finally:
        model.positional = True
    with torch.no_grad():
        a, _ = model.encode(src)
        b, _ = model.encode(src[:, perm])
    assert (a[:, perm] - b).abs().max() > 1e-2


def test_sinusoidal_table_follows_the_formula():
    pe = sinusoidal_table(50, 16).numpy()
    pos, i = 7, 3
    assert pe[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 16)), abs=1e-6)
    assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 16)), abs=1e-6)


def test_embedding_scaling_and_score_scaling_switches():
    torch.manual_seed(1)
    cfg = ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, h=2, d_ff=32, N_enc=1, N_dec=1,
                      dropout=0.0, scale_embedding=False, scale_scores=False)
    m = Transformer(cfg).eval()
    rec: dict = {}
    src = torch.tensor([[4, 5, 6]])
    with torch.no_grad():
        m(src, torch.tensor([[BOS, 4]]), record=rec)
    torch.testing.assert_close(rec["src"]["embedding"], m.src_embed(src))
    r = rec["enc.0"]["self"]
    torch.testing.assert_close(r["scores"], r["q"] @ r["k"].transpose(-2, -1))


@pytest.mark.parametrize("bad", [dict(d_model=30, h=4), dict(h=0), dict(dropout=1.5), dict(pe="rotary"),
                                 dict(N_enc=-1), dict(src_vocab_size=True)])
def test_config_rejects_bad_values(bad):
    args = dict(src_vocab_size=10, tgt_vocab_size=10) | bad
    with pytest.raises(ValueError):
        ModelConfig(**args)
