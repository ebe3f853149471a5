"""Decoding strategies (cache or not), traces and their files, and the seed example's numbers."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from model import DecodingSettings, Trace, generate_steps, load, translate
from model.decoding import beam_search, encode_source, greedy, greedy_batch, sample
from model.transformer import EOS


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return load(tiny_model_dir)


SENTENCES = ["the cat sat on the mat", "where is the station", "i love you", "the dog runs to the big house"]


@pytest.mark.parametrize("text", SENTENCES)
def test_cached_generation_equals_uncached(lm, text):
    src = encode_source(lm, text).ids
    assert greedy(lm.model, src, 20, use_cache=True) == greedy(lm.model, src, 20, use_cache=False)
    assert beam_search(lm.model, src, 20, 3, use_cache=True) == beam_search(lm.model, src, 20, 3, use_cache=False)
    assert sample(lm.model, src, 20, 0.8, 5, 7, use_cache=True) == sample(lm.model, src, 20, 0.8, 5, 7, use_cache=False)


def test_greedy_batch_equals_greedy_one_by_one(lm):
    srcs = [encode_source(lm, t).ids for t in SENTENCES]
    batched = greedy_batch(lm.model, srcs, max_new=20)
    single = [greedy(lm.model, s, 20) for s in srcs]
    assert batched == single


def test_sampling_is_repeatable_with_a_seed_and_varies_without(lm):
    s = DecodingSettings(method="sample", temperature=1.5, seed=3)
    a, b = translate(lm, SENTENCES[0], s).out_ids, translate(lm, SENTENCES[0], s).out_ids
    assert a == b
    others = {tuple(translate(lm, SENTENCES[0], DecodingSettings(method="sample", temperature=1.5, seed=k)).out_ids)
              for k in range(5)}
    assert len(others) > 1


def test_beam_one_equals_greedy(lm):
    src = encode_source(lm, SENTENCES[1]).ids
    g = greedy(lm.model, src, 20)
    b = beam_search(lm.model, src, 20, 1, alpha=0.0)
    assert b[: len(g)] == g[: len(b)]


def test_trace_shapes_and_consistency(lm):
    r = translate(lm, "the cat sat", target="le chat")
    t = r.trace
    H, d, d_k = lm.cfg.h, lm.cfg.d_model, lm.cfg.d_k
    Ts, Tt = len(t.src_tokens), len(t.tgt_tokens)
    assert t.tgt_tokens[0] == "<s>" and t.out_tokens[-1] == "</s>" and len(t.out_tokens) == Tt
    assert t.tgt_tokens[1:] == t.out_tokens[:-1]
    assert t["src.x"].shape == (Ts, d) and t["tgt.x"].shape == (Tt, d)
    np.testing.assert_allclose(t["src.embedding"] + t["src.pe"], t["src.x"], atol=1e-6)
    assert t.get("enc", 0, "self", "q").shape == (H, Ts, d_k)
    assert t.attention("cross", 1).shape == (H, Tt, Ts)
    assert t.attention("dec_self", 0, 1).shape == (Tt, Tt)
    assert t.get("dec", 1, "ffn", "hidden").shape == (Tt, lm.cfg.d_ff)
    assert (t.get("dec", 1, "ffn", "hidden") >= 0).all()                # after ReLU
    assert t["logits"].shape == (Tt, lm.cfg.tgt_vocab_size)
    np.testing.assert_allclose(t["probs"].sum(-1), 1.0, atol=1e-5)
    assert t.mask("dec_self", 0)[0, 1] == False and t.mask("dec_self", 0)[1, 0] == True  # noqa: E712
    # the head outputs are the weights applied to the values
    w, v = t.attention("enc_self", 1), t.get("enc", 1, "self", "v")
    np.testing.assert_allclose(w @ v, t.get("enc", 1, "self", "head_out"), atol=1e-5)
    # LayerNorm output from its recorded statistics
    ln = t.get("enc", 0, "ffn", "residual")
    mu, sigma = t.get("enc", 0, "ffn", "ln_mean"), t.get("enc", 0, "ffn", "ln_sigma")
    g, b = t.get("enc", 0, "ffn", "gamma"), t.get("enc", 0, "ffn", "beta")
    np.testing.assert_allclose(g * (ln - mu[:, None]) / sigma[:, None] + b, t.get("enc", 0, "ffn", "ln_out"), atol=1e-5)
    # teacher forcing used the given target
    assert t.out_tokens[:-1] == lm.tgt_tok.pieces(lm.tgt_tok.encode("le chat"))


def test_trace_npz_round_trip(lm, tmp_path):
    t = translate(lm, "i love you").trace
    t.save_npz(tmp_path / "t.npz")
    u = Trace.load_npz(tmp_path / "t.npz")
    assert (u.src_tokens, u.tgt_tokens, u.out_tokens, u.meta) == (t.src_tokens, t.tgt_tokens, t.out_tokens, t.meta)
    assert u.arrays.keys() == t.arrays.keys()
    for k in t.arrays:
        np.testing.assert_array_equal(u[k], t[k])


def test_generate_steps_yields_one_trace_per_token(lm):
    full = translate(lm, "the dog runs").out_ids
    steps = list(generate_steps(lm, "the dog runs"))
    assert len(steps) == len(full)
    for t, trace in enumerate(steps):
        assert trace.n_steps == t + 1
        assert trace.out_tokens == lm.tgt_tok.pieces(full[: t + 1])
    last = translate(lm, "the dog runs").trace
    np.testing.assert_allclose(steps[-1].attention("cross", 1), last.attention("cross", 1), atol=1e-6)


def test_long_input_is_cut_at_the_maximum_length(lm):
    r = translate(lm, "the cat " * 200)
    assert r.truncated > 0 and len(r.trace.src_tokens) == lm.cfg.max_len
    assert len(r.trace.tgt_tokens) <= lm.cfg.max_len


@pytest.mark.parametrize("text", ["", "   ", "😀🐈", "\x00\x07\u202e", "مرحبا"])
def test_odd_input_translates_without_error(lm, text):
    r = translate(lm, text)
    assert r.trace.src_tokens[-1] == "</s>" and r.out_ids[-1] in (EOS, *r.out_ids)


def test_seed_example_numbers():
    t = translate(load("seed-example"), "The cat sat on the mat").trace
    assert t.src_tokens[:6] == ["The", "cat", "sat", "on", "the", "mat"]
    q, k, v = (t.get("enc", 0, "self", n, 0) for n in ("q", "k", "v"))
    np.testing.assert_allclose(q[1], [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(k[1], [1.4, 1.6], atol=1e-6)
    np.testing.assert_allclose(v[1], [2.2, 2.4], atol=1e-6)
    np.testing.assert_allclose(k[2], [1.7, 2.0], atol=1e-6)
    np.testing.assert_allclose(v[2], [2.9, 3.2], atol=1e-6)
    scores = t.get("enc", 0, "self", "scores", 0)
    assert scores[1, 1] == pytest.approx(2.12, abs=1e-5)
    assert scores[1, 2] == pytest.approx(2.62, abs=1e-5)
    assert abs(scores[1, 2] - 3.92) > 1                             # the note's slip
    w = t.attention("enc_self", 0, 0)[1]
    z = np.exp(scores[1] - scores[1].max())
    np.testing.assert_allclose(w, z / z.sum(), atol=1e-6)
