"""The sinusoidal table follows the paper's formula; the √d_model and √d_k switches do what they say."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.config import ModelConfig
from model.transformer import BOS, Transformer, sinusoidal_table


@pytest.mark.parametrize("pos,i", [(0, 0), (7, 3), (49, 7), (20, 0)])
def test_sinusoidal_table_follows_the_formula(pos, i):
    pe = sinusoidal_table(50, 16).numpy()
    assert pe[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / 16)), abs=1e-6)
    assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / 16)), abs=1e-6)


@torch.no_grad()
@pytest.mark.parametrize("scale_embedding,scale_scores", [(False, False), (True, True), (True, False)])
def test_embedding_and_score_scaling_switches(scale_embedding, scale_scores):
    torch.manual_seed(1)
    cfg = ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, h=2, d_ff=32, N_enc=1, N_dec=1,
                      dropout=0.0, scale_embedding=scale_embedding, scale_scores=scale_scores)
    m = Transformer(cfg).eval()
    rec: dict = {}
    src = torch.tensor([[4, 5, 6]])
    m(src, torch.tensor([[BOS, 4]]), record=rec)
    factor = math.sqrt(16) if scale_embedding else 1.0
    torch.testing.assert_close(rec["src"]["embedding"], m.src_embed(src) * factor)
    torch.testing.assert_close(rec["src"]["pe"][0], sinusoidal_table(cfg.max_len, 16)[:3])
    r = rec["enc.0"]["self"]
    raw = r["q"] @ r["k"].transpose(-2, -1)
    torch.testing.assert_close(r["scores"], raw / math.sqrt(cfg.d_k) if scale_scores else raw)


def test_translate_switches_the_positional_encoding(tmp_path, tiny_model_factory):
    """translate(positional=...) sets the switch for this run and after; a model without positions stays without."""
    from model import load
    from model.decoding import translate

    lm = load(tiny_model_factory(tmp_path / "m"))
    off = translate(lm, "the cat sat", positional=False).trace
    assert off.meta["positional"] is False and not off["src.pe"].any()
    assert not translate(lm, "the cat sat").trace["src.pe"].any()          # None keeps the switch as it is
    on = translate(lm, "the cat sat", positional=True).trace
    assert on.meta["positional"] is True
    pe = on["src.pe"]                                                      # (source tokens, d_model)
    np.testing.assert_allclose(pe, sinusoidal_table(lm.cfg.max_len, lm.cfg.d_model)[: len(pe)], atol=1e-6)
    bare = load(tiny_model_factory(tmp_path / "n", pe="none"))
    assert translate(bare, "the cat sat", positional=True).trace.meta["positional"] is False
