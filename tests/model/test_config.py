"""The config rejects bad values with one ValueError listing the problems, and survives a JSON round trip."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.config import PE_KINDS, ModelConfig

OK = dict(src_vocab_size=10, tgt_vocab_size=12)


@pytest.mark.parametrize("bad", [
    dict(d_model=30, h=4), dict(h=0), dict(d_model=0), dict(N_enc=-1), dict(N_dec=0), dict(max_len=0),
    dict(d_ff=2.5), dict(src_vocab_size=True), dict(tgt_vocab_size="12"),
    dict(dropout=1.0), dict(dropout=1.5), dict(dropout=-0.1), dict(dropout=float("nan")), dict(dropout="0.1"),
    dict(pe="rotary"), dict(pe=None),
    dict(scale_scores="false"), dict(scale_embedding=1), dict(tie_output=None),
    dict(ln_eps=0.0), dict(ln_eps=-1e-5), dict(share_embeddings="yes"),
    dict(share_embeddings=True, tie_output=True),                      # 10 source ids against 12 target ids
    dict(share_embeddings=True, tgt_vocab_size=10),                    # without the tied output
], ids=repr)
def test_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="invalid model config"):
        ModelConfig(**(OK | bad))


def test_shared_embeddings_are_one_table_and_stored_once():
    cfg = ModelConfig(src_vocab_size=10, tgt_vocab_size=10, share_embeddings=True, tie_output=True)
    assert cfg.shared_keys == {"generator.weight", "tgt_embed.weight"}
    assert ModelConfig(**OK, tie_output=True).shared_keys == {"generator.weight"}
    assert ModelConfig(**OK).shared_keys == set()


def test_lists_every_problem_at_once():
    with pytest.raises(ValueError) as err:
        ModelConfig(src_vocab_size=0, tgt_vocab_size=10, dropout=2.0, pe="x")
    msg = str(err.value)
    assert "src_vocab_size" in msg and "dropout" in msg and "pe must be" in msg and "\n" not in msg


def test_unknown_keys_are_rejected():
    with pytest.raises(ValueError, match="unknown config keys: colour"):
        ModelConfig.from_dict(OK | {"colour": "red"})


@settings(max_examples=200, deadline=None)
@given(d_model=st.integers(-4, 80), h=st.integers(-2, 9), d_ff=st.integers(-2, 100),
       dropout=st.floats(-1, 2) | st.just(float("nan")), pe=st.sampled_from(PE_KINDS + ("rope", "")))
def test_accepts_exactly_the_valid_configs(d_model, h, d_ff, dropout, pe):
    valid = d_model >= 1 and h >= 1 and d_ff >= 1 and d_model % h == 0 and 0 <= dropout < 1 and pe in PE_KINDS
    args = OK | dict(d_model=d_model, h=h, d_ff=d_ff, dropout=dropout, pe=pe)
    if valid:
        cfg = ModelConfig(**args)
        assert cfg.d_k * cfg.h == cfg.d_model
        assert ModelConfig.from_dict(json.loads(cfg.to_json())) == cfg           # saved beside the weights
    else:
        with pytest.raises(ValueError):
            ModelConfig(**args)


def test_attention_projections_start_like_torch_multihead_attention():
    """W_Q, W_K, W_V start with the spread of torch's stacked in-projection, not a larger one."""
    import torch

    from model.config import ModelConfig
    from model.transformer import Transformer
    cfg = ModelConfig(src_vocab_size=50, tgt_vocab_size=50, d_model=256, h=4, d_ff=512, N_enc=1, N_dec=1)
    torch.manual_seed(0)
    ours = Transformer(cfg).encoder[0].self_attn
    torch_mha = torch.nn.MultiheadAttention(256, 4)
    for W in (ours.W_Q, ours.W_K, ours.W_V):
        assert abs(float(W.weight.detach().std()) / float(torch_mha.in_proj_weight.detach().std()) - 1) < 0.03
    assert abs(float(ours.W_O.weight.detach().std()) * (2 ** -0.5) / float(torch_mha.in_proj_weight.detach().std())
               - 1) < 0.03
