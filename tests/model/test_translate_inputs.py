"""translate() on awkward input: over-long sentences are cut at the model's maximum, odd text never crashes."""
from __future__ import annotations

import numpy as np
import pytest

from model import DecodingSettings, translate


def test_long_input_is_cut_at_the_maximum_length(tiny_lm):
    r = translate(tiny_lm, "the cat " * 200)
    n_pieces = len(tiny_lm.src_tok.encode("the cat " * 200))
    assert r.truncated == n_pieces - (tiny_lm.cfg.max_len - 1) > 0
    assert len(r.trace.src_tokens) == tiny_lm.cfg.max_len and r.trace.src_tokens[-1] == "</s>"
    assert len(r.trace.tgt_tokens) <= tiny_lm.cfg.max_len and r.trace.meta["truncated"] == r.truncated


def test_max_new_bounds_the_output(tiny_lm):
    r = translate(tiny_lm, "the cat sat", DecodingSettings(max_new=7))
    assert len(r.out_ids) <= 7 and r.trace.n_steps == len(r.out_ids)


@pytest.mark.parametrize("text", ["", "   ", "😀🐈", "\x00\x07\u202e", "مرحبا", "the\tcat\n\nsat"])
def test_odd_input_translates_to_a_finite_trace(tiny_lm, text):
    r = translate(tiny_lm, text)
    assert r.trace.src_tokens[-1] == "</s>" and isinstance(r.text, str) and len(r.out_ids) >= 1
    assert all(np.isfinite(a).all() for a in r.trace.arrays.values() if a.dtype != bool)
