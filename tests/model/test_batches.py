"""Training batches: collate's padded tensors, built in one step through a mask, hold exactly what a row-by-row
construction holds (random pairs, empty sides, one pair, many)."""
from __future__ import annotations

import torch
from hypothesis import given, settings, strategies as st

from model.data import collate, padded, token_batches
from model.transformer import BOS, EOS, PAD

piece = st.integers(min_value=4, max_value=9999)
pair = st.tuples(st.lists(piece, max_size=12), st.lists(piece, max_size=12))


def row_by_row(pairs, idx):
    srcs = [pairs[i][0] + [EOS] for i in idx]
    tgts = [[BOS] + pairs[i][1] + [EOS] for i in idx]
    ts, tt = max(map(len, srcs)), max(map(len, tgts)) - 1
    src = torch.full((len(idx), ts), PAD)
    tin, tout = torch.full((len(idx), tt), PAD), torch.full((len(idx), tt), PAD)
    for b, (s, t) in enumerate(zip(srcs, tgts)):
        src[b, : len(s)] = torch.tensor(s)
        tin[b, : len(t) - 1] = torch.tensor(t[:-1])
        tout[b, : len(t) - 1] = torch.tensor(t[1:])
    return src, tin, tout


@settings(max_examples=200, deadline=None)
@given(st.lists(pair, min_size=1, max_size=30), st.data())
def test_collate_equals_a_row_by_row_construction(pairs, data):
    idx = data.draw(st.lists(st.integers(0, len(pairs) - 1), min_size=1, max_size=len(pairs)))
    got, want = collate(pairs, idx), row_by_row(pairs, idx)
    for g, w in zip(got, want):
        assert g.dtype == torch.long and g.shape == w.shape
        assert torch.equal(g, w)


def test_padded_puts_the_markers_at_each_rows_ends():
    t = padded([[7, 8, 9], [], [5]], first=BOS, last=EOS)
    assert t.tolist() == [[BOS, 7, 8, 9, EOS], [BOS, EOS, PAD, PAD, PAD], [BOS, 5, EOS, PAD, PAD]]
    assert padded([[7], [5, 6]]).tolist() == [[7, PAD], [5, 6]]


def test_every_pair_is_in_one_batch_of_a_real_sized_plan():
    pairs = [([4] * (1 + i % 17), [5] * (1 + i % 13)) for i in range(3000)]
    batches = token_batches(pairs, 1000, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(3000))
    for b in batches:
        src, tin, _ = collate(pairs, b)
        assert src.numel() <= 1000 + src.shape[0] and tin.shape[1] <= 14
