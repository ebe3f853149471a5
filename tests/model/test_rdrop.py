"""R-Drop's training loss (model/losses.py) and its --rdrop option, on tiny models."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model import load
from model.config import ModelConfig
from model.losses import cross_entropy, symmetric_kl, training_loss
from model.train import main as train_main
from model.transformer import BOS, EOS, PAD, Transformer

from test_train_pipeline import TINY, synthetic_tsv


def test_symmetric_kl_is_the_sum_of_both_divergences_over_real_tokens():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 3, 5))
    targets = torch.tensor([[7, 8, PAD], [9, PAD, PAD]])
    p = np.exp(a) / np.exp(a).sum(-1, keepdims=True)
    q = np.exp(b) / np.exp(b).sum(-1, keepdims=True)
    per_position = (p * np.log(p / q)).sum(-1) + (q * np.log(q / p)).sum(-1)
    expected = (per_position[0, 0] + per_position[0, 1] + per_position[1, 0]) / 3      # padding left out
    got = symmetric_kl(torch.tensor(a), torch.tensor(b), targets)
    assert float(got) == pytest.approx(expected, rel=1e-9)
    assert float(symmetric_kl(torch.tensor(a), torch.tensor(a), targets)) == pytest.approx(0.0, abs=1e-12)


def _tiny_model(dropout: float) -> Transformer:
    torch.manual_seed(0)
    return Transformer(ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, h=2, d_ff=32, N_enc=1, N_dec=1,
                                   max_len=16, dropout=dropout))


BATCH = (torch.tensor([[5, 6, 7, EOS], [8, 9, EOS, PAD]]), torch.tensor([[BOS, 10, 11], [BOS, 12, PAD]]),
         torch.tensor([[10, 11, EOS], [12, EOS, PAD]]))


def test_without_dropout_r_drop_adds_nothing_to_the_cross_entropy():
    model = _tiny_model(0.3).eval()            # eval: no dropout, so both passes give the same distributions
    src, tin, tout = BATCH
    plain = training_loss(model, src, tin, tout, 0.1)
    assert training_loss(model, src, tin, tout, 0.1, rdrop=5.0).item() == pytest.approx(plain.item(), rel=1e-6)


def test_with_dropout_the_two_passes_differ_and_the_term_is_weighted_by_alpha_over_four():
    model = _tiny_model(0.3).train()
    src, tin, tout = BATCH
    torch.manual_seed(1)
    loss = training_loss(model, src, tin, tout, 0.1, rdrop=5.0)
    torch.manual_seed(1)                       # the same dropout masks again, for the parts
    logits = model(torch.cat([src, src]), torch.cat([tin, tin]))
    kl = symmetric_kl(*logits.chunk(2), tout)
    assert kl.item() > 1e-4                    # independent masks: the two halves are two sub-models
    ce = cross_entropy(logits, torch.cat([tout, tout]), 0.1)
    assert loss.item() == pytest.approx(ce.item() + 5.0 / 4 * kl.item(), rel=1e-6)


def _passes_disagreement(folder) -> float:
    """Mean symmetric KL between two dropout passes of a trained folder's model on a fixed batch."""
    lm = load(folder)
    model = Transformer(ModelConfig.from_dict({**lm.cfg.__dict__, "dropout": 0.3}))
    model.load_state_dict(lm.model.state_dict())
    model.train()
    src = torch.tensor([lm.src_tok.encode("red cat big dog") + [EOS]] * 8)
    tgt = lm.tgt_tok.encode("rouge chat grand chien")
    tin, tout = torch.tensor([[BOS] + tgt] * 8), torch.tensor([tgt + [EOS]] * 8)
    torch.manual_seed(3)
    with torch.no_grad():
        return float(symmetric_kl(*model(torch.cat([src, src]), torch.cat([tin, tin])).chunk(2), tout))


def test_an_r_drop_run_makes_dropout_sub_models_agree_more(tmp_path):
    """The point of the term: after the same updates, two dropout passes of the R-Drop model disagree less."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    options = [*TINY[: TINY.index("--dropout")], "--dropout", "0.3", *TINY[TINY.index("--dropout") + 2:]]
    for name, alpha in (("plain", "0"), ("rdrop", "5")):
        assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / name), "--steps", "60", "--average", "1",
                           "--rdrop", alpha, *options]) == 0
    plain = _passes_disagreement(tmp_path / "plain" / "model")
    rdrop = _passes_disagreement(tmp_path / "rdrop" / "model")
    print(f"disagreement: plain {plain:.4f}, R-Drop {rdrop:.4f}")
    assert math.isfinite(plain) and rdrop < 0.7 * plain


@pytest.mark.parametrize("extra, message", [(["--rdrop", "-1"], "--rdrop must not be negative"),
                                            (["--rdrop", "5"], "--rdrop needs --dropout above 0")])
def test_bad_r_drop_settings_are_refused(tmp_path, capsys, extra, message):
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    assert train_main(["--tsv", str(tsv), "--out", str(tmp_path / "r"), "--steps", "1", *TINY, *extra]) == 2
    assert message in capsys.readouterr().err
