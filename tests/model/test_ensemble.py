"""Ensemble decoding (`evaluate --ensemble`): several models that share one vocabulary choose each token by the mean
of their log-probabilities; with --hyps it writes the targets for distilling an ensemble into one model."""
from __future__ import annotations

import pytest
import torch

from model.checkpoint import load_model
from model.decoding import encode_source, greedy_batch
from model.evaluate import main as evaluate_main
from model.transformer import BOS, PAD


EN = ["the cat sat on the mat", "a red car is fast", "i love you", "where is the station", "the dog runs",
      "she reads a book", "we eat bread", "the house is big"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, tiny_model_factory):
    """Three tiny random models with the same tokenizers: two seeds of one width and one of another width."""
    root = tmp_path_factory.mktemp("ensemble")
    return [load_model(tiny_model_factory(root / f"m{seed}", seed=seed, d_model=d))
            for seed, d in ((0, 16), (1, 16), (2, 24))]


def sources(lm):
    return [encode_source(lm, s).ids for s in EN]


def test_an_ensemble_of_one_model_decodes_as_the_model_alone(pair):
    a = pair[0]
    assert greedy_batch([a.model], sources(a), max_new=6) == greedy_batch(a.model, sources(a), max_new=6)


def test_each_token_is_the_argmax_of_the_models_mean_log_probability(pair):
    models = [lm.model for lm in pair]
    src_ids = sources(pair[0])
    out = greedy_batch(models, src_ids, max_new=6)
    for ids, got in zip(src_ids, out):
        src = torch.tensor([ids])
        for t, token in enumerate(got):
            prefix = torch.tensor([[BOS] + got[:t]])
            with torch.no_grad():
                logp = [torch.log_softmax(m(src, prefix)[0, -1].index_fill(0, torch.tensor([PAD]), float("-inf")),
                                          -1) for m in models]
            assert token == int(torch.stack(logp).mean(0).argmax())
    # the ensemble is not one of its members under another name
    for m in models:
        assert out != greedy_batch(m, src_ids, max_new=6)


def test_the_command_writes_the_ensembles_translations(pair, tmp_path, capsys):
    src, ref, hyps = tmp_path / "s.en", tmp_path / "r.fr", tmp_path / "hyps.txt"
    src.write_text("\n".join(EN) + "\n", encoding="utf-8")
    ref.write_text("\n".join(EN) + "\n", encoding="utf-8")
    code = evaluate_main(["--model", str(pair[0].path), "--ensemble", str(pair[1].path), str(pair[2].path),
                          "--src", str(src), "--ref", str(ref), "--hyps", str(hyps)])
    assert code == 0
    expected = [pair[0].tgt_tok.decode(o) for o in greedy_batch([lm.model for lm in pair], sources(pair[0]))]
    assert hyps.read_text(encoding="utf-8").splitlines() == expected


@pytest.mark.parametrize("extra, message", [(["--beam", "3"], "an ensemble decodes greedily"),
                                            (["--ensemble", "en-de"], "has other tokenizers than")])
def test_what_cannot_decode_together_is_one_line(pair, tmp_path, capsys, extra, message):
    src = tmp_path / "s.en"
    src.write_text("\n".join(EN) + "\n", encoding="utf-8")
    argv = ["--model", str(pair[0].path), "--src", str(src), "--ref", str(src)]
    argv += extra if extra[0] == "--ensemble" else ["--ensemble", str(pair[1].path), *extra]
    assert evaluate_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
