"""BPE-dropout (--bpe-dropout): other splits of the same words for training, the text itself unchanged."""
from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from model.data import PieceDropout
from model.tokenizer import TextTokenizer
from model.train import main as train_main

from test_train_pipeline import TINY, synthetic_tsv

TEXTS = ["the teacher is writing on the board", "we are going to the cinema tonight", "the shop opens at nine",
         "the students are listening to the teacher"] * 50


@pytest.fixture(scope="module")
def tok() -> TextTokenizer:
    return TextTokenizer.train(TEXTS, vocab_size=120)


def test_a_dropout_copy_leaves_the_tokenizer_as_it_was_and_keeps_the_text(tok):
    plain = tok.encode("the teacher is writing")
    every = tok.with_dropout(1.0)          # every merge left out: one piece a character
    split = every.encode("the teacher is writing")
    assert tok.tok.model.dropout is None and tok.encode("the teacher is writing") == plain
    assert len(split) > len(plain)
    assert all(len(p.strip("▁")) <= 1 for p in every.tok.encode("the teacher").tokens)
    assert every.decode(split) == tok.decode(plain) == "the teacher is writing"


def test_piece_dropout_draws_other_splits_of_a_batch_and_keeps_long_ones_plain(tok):
    texts = [(t, t) for t in TEXTS[:4]]
    plain = [(tok.encode(s), tok.encode(t)) for s, t in texts]
    drop = PieceDropout(texts, plain, tok, tok, 0.5, max_len=64)
    draws = [drop.pairs([0, 1, 2, 3]) for _ in range(20)]
    assert {tuple(d[1][0]) for d in draws} != {tuple(plain[1][0])}          # other splits were drawn
    for d in draws:
        assert sorted(d) == [0, 1, 2, 3]
        for i, (si, ti) in d.items():
            assert tok.decode(si) == tok.decode(plain[i][0]) and tok.decode(ti) == tok.decode(plain[i][1])
            assert len(si) >= len(plain[i][0])                            # fewer merges: never fewer pieces
    short = PieceDropout(texts, plain, tok, tok, 0.99, max_len=max(len(s) for s, _ in plain) + 1)
    assert short.pairs([1]) == {1: plain[1]}       # its characters would pass the model's maximum length


def test_a_run_with_bpe_dropout_trains_on_other_splits(tmp_path, capsys):
    """The same seed and steps: without the option two runs give equal weights (resume tests rely on it); with it
    the weights differ, so the splits reached the model."""
    tsv = synthetic_tsv(tmp_path / "train.tsv")
    common = ["--tsv", str(tsv), "--average", "1", "--steps", "6", *TINY]
    assert train_main([*common, "--out", str(tmp_path / "a")]) == 0
    assert train_main([*common, "--out", str(tmp_path / "b"), "--bpe-dropout", "0.3"]) == 0
    wa = load_file(str(tmp_path / "a" / "model" / "model.safetensors"))
    wb = load_file(str(tmp_path / "b" / "model" / "model.safetensors"))
    assert any(not torch.equal(wa[k], wb[k]) for k in wa)
    assert train_main([*common, "--out", str(tmp_path / "c"), "--bpe-dropout", "1"]) == 2
    assert "--bpe-dropout must be in [0, 1)" in capsys.readouterr().err
