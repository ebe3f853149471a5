"""Without positional encoding the encoder is permutation-equivariant; with it, it is not."""
from __future__ import annotations

import pytest
import torch

SRC = torch.tensor([[5, 6, 7, 8, 9, 10, 3]])
PERMS = [torch.tensor([3, 0, 5, 1, 4, 2, 6]), torch.tensor([6, 5, 4, 3, 2, 1, 0]), torch.tensor([1, 0, 2, 3, 4, 5, 6])]


@pytest.fixture
def no_positions(model):
    model.positional = False
    try:
        yield model
    finally:
        model.positional = True


@torch.no_grad()
@pytest.mark.parametrize("perm", PERMS, ids=["shuffle", "reverse", "swap-first-two"])
def test_without_positional_encoding_permuting_tokens_permutes_outputs(no_positions, perm):
    a, _ = no_positions.encode(SRC)
    b, _ = no_positions.encode(SRC[:, perm])
    torch.testing.assert_close(a[:, perm], b, atol=1e-5, rtol=1e-5)


@torch.no_grad()
@pytest.mark.parametrize("perm", PERMS, ids=["shuffle", "reverse", "swap-first-two"])
def test_with_positional_encoding_it_is_not(model, perm):
    assert model.positional
    a, _ = model.encode(SRC)
    b, _ = model.encode(SRC[:, perm])
    assert (a[:, perm] - b).abs().max() > 1e-2


@torch.no_grad()
def test_switching_positions_off_zeroes_the_recorded_pe(no_positions):
    rec: dict = {}
    no_positions.encode(SRC, record=rec)
    assert (rec["src"]["pe"] == 0).all()
    torch.testing.assert_close(rec["src"]["x"], rec["src"]["embedding"], rtol=0, atol=0)
