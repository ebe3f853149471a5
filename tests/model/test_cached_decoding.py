"""Decoding with the key/value cache gives the same tokens as recomputing the prefix; batched greedy agrees."""
from __future__ import annotations

import pytest
import torch

from model import DecodingSettings, load
from model.decoding import _next_logits, beam_search, decode_ids, encode_source, greedy, greedy_batch, sample
from model.transformer import BOS, PAD

SENTENCES = ["the cat sat on the mat", "where is the station", "i love you", "the dog runs to the big house"]


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return load(tiny_model_dir)


@pytest.mark.parametrize("text", SENTENCES)
def test_greedy_beam_and_sampling_agree_with_and_without_cache(lm, text):
    src = encode_source(lm, text).ids
    g = greedy(lm.model, src, 20, use_cache=True)
    assert len(g) >= 5                                                # long enough for the cache to matter
    assert g == greedy(lm.model, src, 20, use_cache=False)
    b = beam_search(lm.model, src, 20, 3, use_cache=True)
    assert len(b) >= 5 and b == beam_search(lm.model, src, 20, 3, use_cache=False)
    s = sample(lm.model, src, 20, 0.8, 5, 7, use_cache=True)
    assert len(s) >= 5 and s == sample(lm.model, src, 20, 0.8, 5, 7, use_cache=False)


@torch.no_grad()
def test_cached_logits_equal_uncached_logits_at_every_step(lm):
    """Stronger than equal argmaxes: the next-token logits agree to float precision at each of 30 steps."""
    m = lm.model
    src = torch.tensor([encode_source(lm, SENTENCES[0]).ids])
    memory, src_mask = m.encode(src)
    tgt = torch.tensor([[BOS] + list(range(10, 39))])                 # an arbitrary 30-token prefix
    cache = m.new_cache()
    for t in range(1, tgt.shape[1] + 1):
        cached = _next_logits(m, tgt[:, :t], memory, src_mask, cache)
        full = _next_logits(m, tgt[:, :t], memory, src_mask, None)
        torch.testing.assert_close(cached, full, atol=1e-5, rtol=1e-5)
    assert cache[0]["self_k"].shape[2] == tgt.shape[1]                 # the cache grew one position per step


@pytest.mark.parametrize("method", ["greedy", "beam", "sample"])
def test_pad_is_never_generated_even_when_the_model_prefers_it(tiny_model_dir, method):
    """A generated <pad> would be masked as padding without the cache but not with it (and in the Trace)."""
    lm = load(tiny_model_dir)
    with torch.no_grad():
        lm.model.generator.bias[PAD] += 50.0
    src = encode_source(lm, SENTENCES[1]).ids
    s = DecodingSettings(method=method, beam=3, max_new=12, seed=1)
    with_cache, without = decode_ids(lm, src, s, use_cache=True), decode_ids(lm, src, s, use_cache=False)
    assert PAD not in with_cache and with_cache == without
    assert PAD not in greedy_batch(lm.model, [src], max_new=12)[0]


def test_greedy_batch_equals_greedy_one_by_one(lm):
    srcs = [encode_source(lm, t).ids for t in SENTENCES]
    assert len({len(s) for s in srcs}) > 1                             # different lengths: the batch is padded
    batched = greedy_batch(lm.model, srcs, max_new=20)
    assert batched == [greedy(lm.model, s, 20) for s in srcs]


def test_sampling_is_repeatable_with_a_seed_and_varies_with_it(lm):
    src = encode_source(lm, SENTENCES[0]).ids
    a = sample(lm.model, src, 15, 1.5, 0, 3)
    assert a == sample(lm.model, src, 15, 1.5, 0, 3)
    assert len({tuple(sample(lm.model, src, 15, 1.5, 0, k)) for k in range(5)}) > 1


def test_beam_of_width_one_is_greedy(lm):
    src = encode_source(lm, SENTENCES[1]).ids
    g = greedy(lm.model, src, 20)
    b = beam_search(lm.model, src, 20, 1, alpha=0.0)
    assert b[: len(g)] == g[: len(b)] and len(b) >= 5
