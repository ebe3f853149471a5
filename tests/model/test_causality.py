"""Changing a later target token never changes the decoder's outputs at earlier positions."""
from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model.transformer import BOS

SRC = torch.tensor([[5, 6, 7, 8, 9, 3]])
TGT = torch.tensor([[BOS, 4, 5, 6, 7, 8, 9, 10]])


@torch.no_grad()
@settings(max_examples=25, deadline=None)
@given(pos=st.integers(1, TGT.shape[1] - 1), token=st.integers(4, 39))
def test_earlier_outputs_are_bit_identical(model, pos, token):
    changed = TGT.clone()
    changed[0, pos] = token
    ra, rb = {}, {}
    a, b = model(SRC, TGT, record=ra), model(SRC, changed, record=rb)
    torch.testing.assert_close(a[0, :pos], b[0, :pos], rtol=0, atol=0)
    torch.testing.assert_close(ra["dec.out"][0, :pos], rb["dec.out"][0, :pos], rtol=0, atol=0)
    for l in range(model.cfg.N_dec):                                # and every internal decoder row
        for sub in ("self", "cross", "ffn"):
            torch.testing.assert_close(ra[f"dec.{l}"][sub]["ln_out"][0, :pos], rb[f"dec.{l}"][sub]["ln_out"][0, :pos],
                                       rtol=0, atol=0)


@torch.no_grad()
def test_the_changed_position_itself_does_change(model):
    """The check above is not vacuous: the changed token's own row (and later rows) move."""
    changed = TGT.clone()
    changed[0, 3] = 20
    a, b = model(SRC, TGT), model(SRC, changed)
    assert (a[0, 3:] - b[0, 3:]).abs().amax(-1).min() > 1e-4
