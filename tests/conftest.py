"""Shared fixtures. Qt runs offscreen, so the suite needs no display."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
import torch

EN = ["the cat sat on the mat", "a red car is fast", "i love you", "where is the station",
      "the dog runs", "she reads a book", "we eat bread", "the house is big"]
FR = ["le chat était assis sur le tapis", "une voiture rouge est rapide", "je t'aime", "où est la gare",
      "le chien court", "elle lit un livre", "nous mangeons du pain", "la maison est grande"]


def make_tiny_model(folder, d_model=16, h=2, layers=2, seed=0, pe="sinusoidal", tie_output=False, lowercase=False):
    """An untrained but complete model folder (weights, config, tokenizers) built in a second; lowercase=True: its
    tokenizers lowercase every input, as en-de's do."""
    from model.checkpoint import save_model
    from model.config import ModelConfig
    from model.tokenizer import TextTokenizer
    from model.transformer import Transformer

    src_tok = TextTokenizer.train(EN * 3, vocab_size=120, min_frequency=1, lowercase=lowercase)
    tgt_tok = TextTokenizer.train(FR * 3, vocab_size=120, min_frequency=1, lowercase=lowercase)
    cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=d_model,
                      h=h, d_ff=2 * d_model, N_enc=layers, N_dec=layers, max_len=64, dropout=0.0, pe=pe,
                      tie_output=tie_output)
    torch.manual_seed(seed)
    model = Transformer(cfg)
    return save_model(folder, model, src_tok, tgt_tok)


@pytest.fixture(scope="session")
def tiny_model_factory():
    """make_tiny_model(folder, **options), for tests that need a model folder of another kind."""
    return make_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """Path of a tiny random model folder (d_model 16, 2 heads, 2+2 layers, max_len 64)."""
    return make_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture(scope="session")
def tiny_lm(tiny_model_dir):
    from model import load
    return load(tiny_model_dir)


def three_shapes():
    """The three model shapes the panels must handle beyond the bundled ones (schemas only, no weights)."""
    from model.families.shapes import decoder_only, encoder_decoder, encoder_only
    from model.schema import GATED_MLP, NORM_BEFORE, RMS_NORM
    return {
        "decoder-only": decoder_only("test", 2, 32, 4, 64, norm=RMS_NORM, norm_place=NORM_BEFORE, positions="rotary",
                                     n_kv_heads=2, ffn=GATED_MLP, scale_embedding=False),
        "encoder-only": encoder_only("test", 2, 32, 4, 64, positions="learned", scale_embedding=False),
        "encoder-decoder": encoder_decoder("test", 6, 6, 64, 8, 128),
    }


@pytest.fixture(scope="session", params=["decoder-only", "encoder-only", "encoder-decoder"])
def shaped_trace(request):
    """A synthetic Trace (no weights) of each of the three shapes, by name."""
    from model.synthetic import synthetic_trace
    schema = three_shapes()[request.param]
    return synthetic_trace(schema, ["The", "cat", "sat", "on", "the", "mat", "."],
                           ["<s>", "Le", "chat", "s'est", "assis", "."], seed=1)


@pytest.fixture(scope="session")
def shapes():
    """three_shapes(), as a fixture: {"decoder-only": Schema, "encoder-only": ..., "encoder-decoder": ...}."""
    return three_shapes()

@pytest.fixture
def run_command(capsys, monkeypatch, tmp_path):
    """run_command(argv) -> (exit code, stdout, stderr): `attention-visualizer ARGV` in this process, its log
    folder in tmp_path (XDG_STATE_HOME), checked with command_checks.check_command_output."""
    from command_checks import check_command_output

    from visualizer.cli import main
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def run(argv: list[str], check: bool = True):
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        if check:
            check_command_output(code, err)
        return code, out, err
    return run
