"""Our hand-written transformer computes what torch.nn.Transformer computes, given the same weights."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from model.config import ModelConfig
from model.transformer import PAD, Transformer


def peer_of(m: Transformer) -> nn.Transformer:
    """A torch.nn.Transformer (post-LN, ReLU, dropout 0, no final norms) holding the same weights."""
    c = m.cfg
    enc_layer = nn.TransformerEncoderLayer(c.d_model, c.h, c.d_ff, 0.0, activation="relu", batch_first=True,
                                           norm_first=False, layer_norm_eps=c.ln_eps)
    dec_layer = nn.TransformerDecoderLayer(c.d_model, c.h, c.d_ff, 0.0, activation="relu", batch_first=True,
                                           norm_first=False, layer_norm_eps=c.ln_eps)
    peer = nn.Transformer(c.d_model, c.h, c.N_enc, c.N_dec, c.d_ff, 0.0, batch_first=True,
                          custom_encoder=nn.TransformerEncoder(enc_layer, c.N_enc, norm=None, enable_nested_tensor=False),
                          custom_decoder=nn.TransformerDecoder(dec_layer, c.N_dec, norm=None)).eval()

    def copy_mha(dst: nn.MultiheadAttention, src):
        dst.in_proj_weight.copy_(torch.cat([src.W_Q.weight, src.W_K.weight, src.W_V.weight]))   # stacked Q, K, V
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
        for d, s in zip(peer.encoder.layers, m.encoder, strict=True):
            copy_mha(d.self_attn, s.self_attn); copy_ln(d.norm1, s.norm1); copy_ln(d.norm2, s.norm2); copy_ffn(d, s)
        for d, s in zip(peer.decoder.layers, m.decoder, strict=True):
            copy_mha(d.self_attn, s.self_attn); copy_mha(d.multihead_attn, s.cross_attn)
            copy_ln(d.norm1, s.norm1); copy_ln(d.norm2, s.norm2); copy_ln(d.norm3, s.norm3); copy_ffn(d, s)
    return peer


def peer_run(m: Transformer, src: torch.Tensor, tgt: torch.Tensor):
    """Encoder output, decoder output and logits of the peer, fed our embeddings (with positions)."""
    peer = peer_of(m)
    T = tgt.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)                     # True = may NOT attend (torch's sense)
    x, y = m.embed(src, m.src_embed), m.embed(tgt, m.tgt_embed)
    memory = peer.encoder(x, src_key_padding_mask=src == PAD)
    out = peer.decoder(y, memory, tgt_mask=causal, tgt_key_padding_mask=tgt == PAD,
                       memory_key_padding_mask=src == PAD)
    return memory, out, m.generator(out)


@torch.no_grad()
@pytest.mark.parametrize("cfg", [None, ModelConfig(src_vocab_size=30, tgt_vocab_size=30, d_model=24, h=3, d_ff=40,
                                                  N_enc=1, N_dec=3, max_len=16, dropout=0.0, pe="learned")],
                         ids=["4-heads-2+2", "3-heads-1+3-learned-pe"])
def test_encoder_decoder_and_logits_match_torch_nn_transformer(cfg, padded_batch, make_random_model, base_cfg):
    m = make_random_model(cfg or base_cfg, seed=1)
    src, tgt = padded_batch
    memory, src_mask = m.encode(src)
    out = m.decode(tgt, memory, src_mask)
    logits = m(src, tgt)
    p_memory, p_out, p_logits = peer_run(m, src, tgt)
    assert bool((src == PAD).any()) and bool((tgt == PAD).any())          # the masks are exercised
    real_src, real_tgt = src != PAD, tgt != PAD                           # padded rows: no one reads them
    torch.testing.assert_close(memory[real_src], p_memory[real_src], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out[real_tgt], p_out[real_tgt], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits[real_tgt], p_logits[real_tgt], atol=1e-5, rtol=1e-5)
    assert logits.abs().max() > 0.1                                       # not trivially equal zeros


@torch.no_grad()
def test_peer_disagrees_when_one_weight_differs(model, padded_batch):
    """The comparison has teeth: nudging one of our W_K weights breaks the agreement."""
    src, tgt = padded_batch
    peer_logits = peer_run(model, src, tgt)[2]
    saved = model.decoder[1].cross_attn.W_K.weight.clone()
    try:
        model.decoder[1].cross_attn.W_K.weight[0, 0] += 0.5
        ours = model(src, tgt)
    finally:
        model.decoder[1].cross_attn.W_K.weight.copy_(saved)
    real = tgt != PAD
    assert (ours[real] - peer_logits[real]).abs().max() > 1e-4


@torch.no_grad()
def test_recording_does_not_change_the_output(model, padded_batch):
    """Untraced runs use fused LayerNorm and attention calls; traced runs spell each step out. Same numbers."""
    src, tgt = padded_batch
    real = tgt != PAD
    torch.testing.assert_close(model(src, tgt, record={})[real], model(src, tgt)[real], rtol=1e-5, atol=1e-5)


def test_fused_paths_train_like_the_spelled_out_ones(model, padded_batch):
    """In training mode too (dropout off), the fused path gives the recorded path's logits and gradients."""
    src, tgt = padded_batch
    real = tgt != PAD
    model.train()
    saved = {m: m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)}
    try:
        for m in saved:
            m.p = 0.0
        with torch.enable_grad():
            fused = model(src, tgt)[real].sum()
            (g_fused,) = torch.autograd.grad(fused, model.encoder[0].self_attn.W_Q.weight)
            spelled = model(src, tgt, record={})[real].sum()
            (g_spelled,) = torch.autograd.grad(spelled, model.encoder[0].self_attn.W_Q.weight)
    finally:
        for m, p in saved.items():
            m.p = p
        model.eval()
    torch.testing.assert_close(fused, spelled, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(g_fused, g_spelled, rtol=1e-4, atol=1e-5)
