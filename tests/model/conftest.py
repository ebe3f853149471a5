"""Fixtures for the model tests: a random model with non-trivial LayerNorm parameters and biases, and a padded batch."""
from __future__ import annotations

import pytest
import torch

from model.config import ModelConfig
from model.transformer import BOS, EOS, PAD, Transformer

CFG = ModelConfig(src_vocab_size=50, tgt_vocab_size=40, d_model=32, h=4, d_ff=64, N_enc=2, N_dec=2, max_len=32,
                  dropout=0.0)


def random_model(cfg: ModelConfig = CFG, seed: int = 0) -> Transformer:
    """A Transformer in eval mode whose gammas, betas and biases are not the 1s and 0s of a fresh init."""
    torch.manual_seed(seed)
    m = Transformer(cfg).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith(("gamma", "beta", "bias")):
                p.add_(0.1 * torch.randn_like(p))
    return m


@pytest.fixture(scope="module")
def model() -> Transformer:
    return random_model()


@pytest.fixture
def padded_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Two sentences of different lengths: src (2, 6) and tgt (2, 5), the second padded on both sides."""
    src = torch.tensor([[5, 6, 7, 8, 9, EOS], [10, 11, 12, EOS, PAD, PAD]])
    tgt = torch.tensor([[BOS, 4, 5, 6, 7], [BOS, 8, 9, PAD, PAD]])
    return src, tgt


@pytest.fixture(scope="session")
def make_random_model():
    """The factory random_model(cfg=CFG, seed=0), for tests that need their own shape."""
    return random_model


@pytest.fixture(scope="session")
def base_cfg() -> ModelConfig:
    return CFG
